import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { lineStartAt } from '../../src/core/lines.ts';
import { locateDeclaration, locateNested, type Located } from '../../src/history/classify.ts';
import { initSyntax, withTree } from '../../src/syntax/runtime.ts';
import type { LanguageId } from '../../src/syntax/types.ts';

// A history walk looks at an edit inside a method of a long class by parsing the method's own
// lines below its holders' header lines: what it finds must be what parsing the whole file finds,
// and anything it cannot show that way is refused (the walk then parses more).

before(() => initSyntax());

function located(language: LanguageId, text: string, qname: string): Located {
  const found = withTree(language, Buffer.from(text), (tree, source) => locateDeclaration(language, tree, source, qname, null));
  assert.ok(found !== null && found !== 'unparseable', `${qname} in the whole file`);
  return found;
}

/** Parses `qname` nested, from where the whole file places it. */
function nested(language: LanguageId, text: string, qname: string) {
  const bytes = Buffer.from(text);
  const { place } = located(language, text, qname);
  return locateNested(language, bytes, place.headers, { start: lineStartAt(bytes, place.span.start), end: place.span.end }, place.span.start, qname);
}

const filler = (n: number, line: (i: number) => string) => Array.from({ length: n }, (_, i) => line(i)).join('');

test('a method parsed below its holders\' headers has the parts the whole file gives it', () => {
  const cases: Array<[LanguageId, string, string]> = [
    ['python', `import os\n\n@dataclass\nclass Outer:\n    """Docs."""\n${filler(30, (i) => `    def f${i}(self):\n        return ${i}\n\n`)}    class Inner:\n        x = 1\n\n        @staticmethod\n        def m(a: int,\n              b: str = "}") -> int:\n            # a comment\n            return a  # trailing\n\n    def after(self):\n        pass\n`, 'Outer.Inner.m'],
    ['typescript', `import { a } from './a';\n\nexport class Box<T> {\n${filler(30, (i) => `  f${i}(): number {\n    return ${i};\n  }\n\n`)}  @log\n  async m<U>(y: U): Promise<void> {\n    const s = "}";\n    return;\n  }\n\n  n(): void {}\n}\n`, 'Box.m'],
    ['java', `package p;\n\npublic class Box {\n${filler(30, (i) => `  int f${i}() {\n    return ${i};\n  }\n\n`)}  static class Inner {\n    @Override\n    public <T> int m(T y) {\n      return 1;\n    }\n  }\n}\n`, 'Box.Inner.m'],
    // (A Rust or Go method's type is declared apart from it: the walk parses such a method alone.)
  ];
  for (const [language, text, qname] of cases) {
    assert.deepEqual(nested(language, text, qname), located(language, text, qname).parts, `${language} ${qname}`);
  }
});

test('a holder whose header spans lines, a numbered name, or lines that are not the whole declaration are refused', () => {
  // The class header's first line alone does not parse.
  const multiLine = `class Box(\n    Base,\n):\n    def m(self):\n        return 1\n`;
  assert.equal(nested('python', multiLine, 'Box.m'), null);
  // A second `m` is `m~2`: never looked for this way.
  const twice = `class Box:\n    def m(self):\n        return 1\n\n    def m(self):\n        return 2\n`;
  assert.equal(nested('python', twice, 'Box.m~2'), null);
  // Lines cut short where a string holds a line at column 0 (where a reading by lines would end
  // it), or running on into the next method, do not parse as exactly the declaration.
  const text = `class Box:\n    def m(self):\n        s = '''\nat column 0\n'''\n        return s\n\n    def n(self):\n        pass\n`;
  const bytes = Buffer.from(text);
  const { place } = located('python', text, 'Box.m');
  const start = lineStartAt(bytes, place.span.start);
  assert.ok(locateNested('python', bytes, place.headers, { start, end: place.span.end }, place.span.start, 'Box.m'));
  assert.equal(locateNested('python', bytes, place.headers, { start, end: text.indexOf('\nat column 0') }, place.span.start, 'Box.m'), null, 'cut short');
  assert.equal(locateNested('python', bytes, place.headers, { start, end: text.length - 1 }, place.span.start, 'Box.m'), null, 'running on');
});
