import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { declarationAtRange, extractDeclarations } from '../../src/syntax/declarations.ts';
import { nodeFacets, nodesAt } from '../../src/syntax/nodes.ts';
import { initSyntax } from '../../src/syntax/runtime.ts';
import type { LanguageId, SyntaxNode } from '../../src/syntax/types.ts';
import { utf8 } from './support.ts';

before(() => initSyntax());

/** Nodes at the first occurrence of `needle` (plus `offset` characters). */
function at(language: LanguageId, source: string, needle: string, offset = 0): SyntaxNode[] {
  const index = source.indexOf(needle);
  assert.ok(index >= 0, needle);
  return nodesAt(language, utf8(source), utf8(source.slice(0, index + offset)).length);
}

function kinds(nodes: SyntaxNode[]): string[] {
  return nodes.map((n) => n.kind);
}

describe('nodesAt', () => {
  it('lists named nodes outermost first, root included, ranges nested', () => {
    const src = 'fn main() {\n    let total = add(1, 2);\n}\n';
    const nodes = at('rust', src, 'add');
    assert.deepEqual(kinds(nodes), ['source_file', 'function_item', 'block', 'let_declaration', 'call_expression', 'identifier']);
    for (let i = 1; i < nodes.length; i++) {
      assert.ok(nodes[i - 1].range.start <= nodes[i].range.start && nodes[i].range.end <= nodes[i - 1].range.end);
    }
    assert.deepEqual(nodes[1].facets, ['declaration', 'definition']);
    assert.deepEqual(nodes[2].facets, ['block']);
    assert.deepEqual(nodes[4].facets, ['expression']);
    assert.deepEqual(nodes[5].facets, ['identifier']);
    assert.deepEqual(nodes[1].range, { start: 0, end: src.length - 1 });
  });

  it('identifies expression, statement, comment, literal and annotation facets', () => {
    const src = '// note\n#[inline]\nfn f() { x + 1; }\n';
    assert.deepEqual(at('rust', src, 'note').at(-1)!.facets, ['comment']);
    assert.deepEqual(at('rust', src, 'inline').map((n) => n.facets.join('+')), ['', 'annotation', '', 'identifier']);
    const sum = at('rust', src, '+');
    assert.deepEqual(kinds(sum).slice(-2), ['expression_statement', 'binary_expression']);
    assert.deepEqual(sum.at(-2)!.facets, ['statement']);
    assert.deepEqual(sum.at(-1)!.facets, ['expression']);
    assert.deepEqual(at('rust', src, '1;').at(-1)!.facets, ['literal']);
  });

  it('a position at or past EOF, or in trailing space outside every node, yields []', () => {
    const bytes = utf8('fn a() {}\n');
    assert.deepEqual(nodesAt('rust', bytes, bytes.length), []);
    assert.deepEqual(nodesAt('rust', bytes, bytes.length + 5), []);
    assert.deepEqual(nodesAt('python', utf8('x = 1\n'), 6), []);
    assert.deepEqual(nodesAt('rust', new Uint8Array(0), 0), []);
  });

  it('positions and ranges are UTF-8 byte offsets', () => {
    const src = 'const s = "héllo 😀 wörld";\n';
    const bytes = utf8(src);
    const inside = utf8(src.slice(0, src.indexOf('wörld'))).length;
    const nodes = nodesAt('typescript', bytes, inside);
    const str = nodes.find((n) => n.kind === 'string')!;
    assert.deepEqual(str.range, { start: 10, end: bytes.length - 2 });
    // A byte inside a multi-byte character belongs to the node holding the character.
    const mid = utf8(src.slice(0, src.indexOf('😀'))).length + 2;
    assert.equal(nodesAt('typescript', bytes, mid).some((n) => n.kind === 'string'), true);
  });

  it('maps grammar kinds of every language onto facets', () => {
    assert.deepEqual(kinds(at('python', 'import os\nprint(os.sep)\n', 'print')), ['module', 'expression_statement', 'call', 'identifier']);
    assert.deepEqual(at('python', 'import os\n', 'os')[1].facets, ['import']);
    assert.deepEqual(at('python', '@deco\ndef f(a): pass\n', 'deco')[2].facets, ['annotation']);
    assert.deepEqual(at('python', 'def f(a=1): pass\n', 'a=').map((n) => n.kind).slice(-2), ['default_parameter', 'identifier']);
    assert.deepEqual(at('python', 'def f(a=1): pass\n', 'a=').at(-2)!.facets, ['parameter']);
    assert.deepEqual(at('go', 'package p\nimport "fmt"\n', 'fmt')[1].facets, ['import']);
    assert.deepEqual(at('java', 'class A { void m() { run(); } }\n', 'run').map((n) => n.facets.join('+')), [
      '', 'declaration+definition', 'body', 'declaration+definition', 'block', 'statement', 'expression', 'identifier',
    ]);
    assert.deepEqual(at('typescript', 'export const x = f(1);\n', 'f(').map((n) => n.facets.join('+')), [
      '', 'statement+export', 'declaration+definition', '', 'expression', 'identifier',
    ]);
    assert.deepEqual(nodeFacets('python', 'module'), []);
    assert.deepEqual(nodeFacets('typescript', 'module'), ['declaration', 'definition']);
  });

  it('declaration nodes link to their declaration by whole span or item span; impl blocks link nothing', () => {
    const src = '/// Doc.\n#[derive(Debug)]\nstruct Doc;\nstruct Bare;\nimpl Bare { fn m(&self) {} }\n';
    const bytes = utf8(src);
    const { declarations } = extractDeclarations('rust', bytes);
    const link = (needle: string, kind: string): string | null => {
      const node = at('rust', src, needle).find((n) => n.kind === kind)!;
      return declarationAtRange(declarations, node.range)?.qualifiedName ?? null;
    };
    assert.equal(link('struct Doc', 'struct_item'), 'Doc');
    assert.equal(link('struct Bare', 'struct_item'), 'Bare');
    assert.equal(link('impl', 'impl_item'), null);
    assert.equal(link('fn m', 'function_item'), 'Bare::m');
    assert.equal(link('/// Doc.', 'line_comment'), null);
  });

  it('links decorated Python definitions and exported TypeScript declarations', () => {
    const py = '@cache\ndef f(): pass\n';
    const pyDecls = extractDeclarations('python', utf8(py)).declarations;
    const pyNodes = at('python', py, 'def');
    for (const kind of ['decorated_definition', 'function_definition']) {
      const node = pyNodes.find((n) => n.kind === kind)!;
      assert.equal(declarationAtRange(pyDecls, node.range)?.qualifiedName, 'f', kind);
    }
    const ts = 'export function g() {}\n';
    const tsDecls = extractDeclarations('typescript', utf8(ts)).declarations;
    const tsNodes = at('typescript', ts, 'g(');
    for (const kind of ['export_statement', 'function_declaration']) {
      const node = tsNodes.find((n) => n.kind === kind)!;
      assert.equal(declarationAtRange(tsDecls, node.range)?.qualifiedName, 'g', kind);
    }
  });
});

describe('declaration item spans are exact syntax nodes', () => {
  const samples: [LanguageId, string][] = [
    ['rust', '/// d\npub struct S;\nimpl S { fn m(&self) {} }\nmod m { const C: u8 = 1; macro_rules! mm { () => {} } }\n'],
    ['typescript', '/** d */\nexport class A { x = 1; m() {} }\nexport const f = () => 1, g = 2;\ninterface I { p: string }\nexport default function () {}\n'],
    ['tsx', 'export const C = () => <div />;\n'],
    ['javascript', 'class A { #p = 1; static m() {} }\nvar v = 1;\n'],
    ['python', 'LIMIT = 1\n@d\nclass A:\n    def m(self): pass\n'],
    ['go', 'package p\n// d\ntype T struct{}\nconst (\n\tA = 1\n\tB = 2\n)\nfunc (t *T) M() {}\n'],
    ['java', 'class A { /** d */ int x, y; @Deprecated A() {} interface I { void m(); } }\n'],
  ];
  for (const [language, src] of samples) {
    it(language, () => {
      const bytes = utf8(src);
      const { declarations } = extractDeclarations(language, bytes);
      assert.ok(declarations.length > 0);
      for (const d of declarations) {
        const nodes = nodesAt(language, bytes, d.itemSpan.start);
        const node = nodes.find((n) => n.kind === d.nodeKind && n.range.start === d.itemSpan.start && n.range.end === d.itemSpan.end);
        assert.ok(node, `${d.qualifiedName}: ${d.nodeKind} at ${JSON.stringify(d.itemSpan)} in ${nodes.map((n) => n.kind)}`);
        assert.equal(declarationAtRange(declarations, node.range)?.qualifiedName !== undefined, true);
      }
    });
  }
});
