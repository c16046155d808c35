// The same span, offset, overload and node rules checked for every language.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { nodesAt } from '../../src/syntax/nodes.ts';
import { initSyntax } from '../../src/syntax/runtime.ts';
import type { LanguageId } from '../../src/syntax/types.ts';
import { declare, get, utf8 } from './support.ts';

before(() => initSyntax());

interface Case {
  language: LanguageId;
  root: string;
  /** Source before and after the declarations under test. */
  head: string;
  tail: string;
  /** Qualified-name prefix the wrapper adds. */
  prefix: string;
  /** An attaching doc / attribute / decorator line. */
  doc: string;
  /** A plain comment that must not attach, or null when every comment attaches (Go). */
  plain: string | null;
  /** Does a blank line between `doc` and the item detach it? (Python decorators never detach.) */
  blankDetaches: boolean;
  decl: (name: string) => string;
  /** A string literal declaration holding `text`, to put non-ASCII bytes before a declaration. */
  literal: (text: string) => string;
}

const cases: Case[] = [
  {
    language: 'rust', root: 'source_file', head: '', tail: '', prefix: '', doc: '/// Doc.', plain: '// plain',
    blankDetaches: true, decl: (n) => `fn ${n}() {}`, literal: (t) => `const S: &str = "${t}";`,
  },
  {
    language: 'typescript', root: 'program', head: '', tail: '', prefix: '', doc: '/** Doc. */', plain: '// plain',
    blankDetaches: true, decl: (n) => `function ${n}() {}`, literal: (t) => `const s = "${t}";`,
  },
  {
    language: 'tsx', root: 'program', head: '', tail: '', prefix: '', doc: '/** Doc. */', plain: '/* plain */',
    blankDetaches: true, decl: (n) => `function ${n}() { return <b />; }`, literal: (t) => `const s = <p>${t}</p>;`,
  },
  {
    language: 'javascript', root: 'program', head: '', tail: '', prefix: '', doc: '/** Doc. */', plain: '// plain',
    blankDetaches: true, decl: (n) => `function ${n}() {}`, literal: (t) => `var s = \`${t}\`;`,
  },
  {
    language: 'python', root: 'module', head: '', tail: '', prefix: '', doc: '@decorator', plain: '# plain',
    blankDetaches: false, decl: (n) => `def ${n}():\n    pass`, literal: (t) => `s = "${t}"`,
  },
  {
    language: 'go', root: 'source_file', head: 'package p\n\n', tail: '', prefix: '', doc: '// Doc.', plain: null,
    blankDetaches: true, decl: (n) => `func ${n}() {}`, literal: (t) => `var s = "${t}"`,
  },
  {
    language: 'java', root: 'program', head: 'class C {\n', tail: '}\n', prefix: 'C.', doc: '/** Doc. */', plain: '// plain',
    blankDetaches: true, decl: (n) => `void ${n}() {}`, literal: (t) => `String s = "${t}";`,
  },
];

function source(c: Case, lines: string[], eol = '\n'): string {
  return (c.head + lines.join('\n') + '\n' + c.tail).replace(/\n/g, eol);
}

for (const c of cases) {
  describe(`${c.language} conformance`, () => {
    it('attached doc is in the span, not in the item span', () => {
      const d = get(declare(c.language, source(c, [c.doc, c.decl('a')])), c.prefix + 'a');
      assert.equal(d.text, `${c.doc}\n${c.decl('a')}`);
      assert.equal(d.item, c.decl('a'));
    });

    it('a blank line detaches (where the language allows it)', () => {
      const d = get(declare(c.language, source(c, [c.doc, '', c.decl('a')])), c.prefix + 'a');
      assert.equal(d.text, c.blankDetaches ? c.decl('a') : `${c.doc}\n\n${c.decl('a')}`);
    });

    it('a plain comment does not attach and stops the walk', () => {
      if (c.plain === null) {
        // Go: every comment group is documentation, but a comment ending a code line is not.
        const d = declare(c.language, source(c, [`${c.literal('x')} // trailing`, c.decl('a')]));
        assert.equal(get(d, c.prefix + 'a').text, c.decl('a'));
        return;
      }
      const d = declare(c.language, source(c, [c.plain!, c.decl('a'), c.doc, c.plain!, c.decl('b')]));
      assert.equal(get(d, c.prefix + 'a').text, c.decl('a'));
      // Python decorators belong to the definition whatever sits between them.
      assert.equal(get(d, c.prefix + 'b').text, c.blankDetaches ? c.decl('b') : `${c.doc}\n${c.plain}\n${c.decl('b')}`);
    });

    it('adjacent documented items do not overlap', () => {
      const d = declare(c.language, source(c, [c.doc, c.decl('a'), c.doc, c.decl('b')]));
      const a = get(d, c.prefix + 'a');
      const b = get(d, c.prefix + 'b');
      assert.equal(a.text, `${c.doc}\n${c.decl('a')}`);
      assert.equal(b.text, `${c.doc}\n${c.decl('b')}`);
      assert.ok(a.span.end < b.span.start);
    });

    it('CRLF sources keep exact spans', () => {
      const d = get(declare(c.language, source(c, [c.doc, c.decl('a')], '\r\n')), c.prefix + 'a');
      assert.equal(d.text, `${c.doc}\n${c.decl('a')}`.replace(/\n/g, '\r\n'));
    });

    it('non-ASCII text before a declaration keeps byte offsets right', () => {
      const src = source(c, [c.literal('ünïcödé 😀 日本語'), c.doc, c.decl('a')]);
      const d = get(declare(c.language, src), c.prefix + 'a');
      const start = utf8(src.slice(0, src.lastIndexOf(c.doc))).length;
      assert.equal(d.span.start, start);
      assert.equal(d.span.end, start + utf8(`${c.doc}\n${c.decl('a')}`).length);
      assert.equal(d.text, `${c.doc}\n${c.decl('a')}`);
    });

    it('a repeated qualified name gets ~2, ~3 in source order', () => {
      const d = declare(c.language, source(c, [c.decl('f'), c.decl('f'), c.decl('f')]));
      assert.deepEqual(d.filter((x) => x.name === 'f').map((x) => x.qualifiedName), [`${c.prefix}f`, `${c.prefix}f~2`, `${c.prefix}f~3`]);
    });

    it('nodesAt lists outermost first and yields [] at EOF', () => {
      const src = source(c, [c.decl('target')]);
      const bytes = utf8(src);
      const nodes = nodesAt(c.language, bytes, utf8(src.slice(0, src.indexOf('target') + 2)).length);
      assert.equal(nodes[0].kind, c.root);
      assert.deepEqual(nodes.at(-1)!.facets, ['identifier']);
      assert.equal(nodes.some((n) => n.facets.includes('declaration')), true);
      for (let i = 1; i < nodes.length; i++) {
        assert.ok(nodes[i - 1].range.start <= nodes[i].range.start && nodes[i].range.end <= nodes[i - 1].range.end);
      }
      assert.deepEqual(nodesAt(c.language, bytes, bytes.length), []);
    });
  });
}

describe('entrypoints in languages without a main convention', () => {
  for (const language of ['typescript', 'tsx', 'javascript'] as const) {
    it(`${language}: function main is no entrypoint`, () => {
      assert.equal(declare(language, 'function main() {}\n')[0].facets.includes('entrypoint'), false);
    });
  }
});
