import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { serveWorkspace } from '../helpers/mcp.ts';

// Each of the seven languages over real stdio MCP: declarations with qualified names,
// whole-declaration spans with attached docs, and witnessed nodes linked to symbols.

const FILES: Record<string, string> = {
  'src/lib.rs': [
    '//! crate docs',
    '',
    '/// A beacon.',
    '#[derive(Debug)]',
    'pub struct Beacon {',
    '    level: u8,',
    '}',
    '',
    'impl Beacon {',
    '    /// Sends it.',
    '    pub fn signal(&self) -> u8 {',
    '        self.level',
    '    }',
    '}',
    '',
    '// plain comment',
    'fn helper() {}',
    '',
    'fn main() {}',
    '',
  ].join('\n'),
  'web/parser.ts': [
    'import { x } from "./x";',
    '',
    '/** Parses input. */',
    'export class Parser {',
    '  /** Parse one line. */',
    '  parse(line: string): string {',
    '    return line.trim();',
    '  }',
    '  private depth = 0;',
    '}',
    '',
    'export function run(): void {}',
    '',
  ].join('\n'),
  'web/view.tsx': ['/** A view. */', 'export function View() {', '  return <div>hi</div>;', '}', ''].join('\n'),
  'web/util.js': ['/**', ' * Adds.', ' */', 'function add(a, b) { return a + b; }', 'const twice = (x) => add(x, x);', ''].join('\n'),
  'py/solver.py': [
    'import os',
    '',
    '',
    'class Solver:',
    '    @staticmethod',
    '    def fit(x):',
    '        return x',
    '',
    '    def _private(self):',
    '        pass',
    '',
    '',
    '@cache',
    'def test_fit():',
    '    pass',
    '',
  ].join('\n'),
  'go/server.go': [
    'package main',
    '',
    '// Server serves.',
    'type Server struct{}',
    '',
    '// Handle handles one request.',
    'func (s *Server) Handle() {}',
    '',
    'func main() {}',
    '',
  ].join('\n'),
  'java/App.java': [
    'package app;',
    '',
    '/** The app. */',
    'public class App {',
    '    /** Entry. */',
    '    public static void main(String[] args) {}',
    '',
    '    @Deprecated',
    '    void old() {}',
    '}',
    '',
  ].join('\n'),
};

type Hit = {
  symbol: { id: string; language: string; name: string; kind: string; facets: string[]; visibility: string | null; container?: string };
  path: string;
  range: { start: number; end: number };
  line: number;
  node?: { id: string; symbol?: string; kind: string; range: { start: number; end: number } };
  source?: { text: string; path: string; range: { start: number; end: number } };
};

describe('seven languages over MCP', () => {
  const ws = serveWorkspace({ before, after }, FILES);

  async function one(name: string, path: string): Promise<Hit> {
    const r = (await ws.rift.call('get_symbol', { name, limit: 50 })) as { hits: Hit[] };
    const hit = r.hits.find((h) => h.symbol.name === name && h.path === path);
    assert.ok(hit, `${name} in ${path}; got ${r.hits.map((h) => `${h.path}:${h.symbol.name}`).join(', ')}`);
    return hit;
  }

  function spanText(path: string, hit: Hit): string {
    return Buffer.from(FILES[path]).subarray(hit.range.start, hit.range.end).toString();
  }

  test('rust: qualified names with ::, docs and attributes attach, entrypoint on file-scope main', async () => {
    const beacon = await one('Beacon', 'src/lib.rs');
    assert.equal(beacon.symbol.kind, 'struct');
    assert.equal(beacon.symbol.visibility, 'pub');
    assert.ok(beacon.symbol.facets.includes('public'));
    assert.equal(beacon.source?.text, '/// A beacon.\n#[derive(Debug)]\npub struct Beacon {\n    level: u8,\n}');
    assert.equal(beacon.line, 3);
    const signal = await one('Beacon::signal', 'src/lib.rs');
    assert.equal(signal.symbol.id, 'rift://symbol/rust/src/lib.rs/Beacon::signal');
    assert.equal(signal.source?.text, '/// Sends it.\n    pub fn signal(&self) -> u8 {\n        self.level\n    }');
    const helper = await one('helper', 'src/lib.rs');
    assert.equal(helper.symbol.visibility, 'private');
    assert.equal(helper.source?.text, 'fn helper() {}', 'a plain // comment never attaches');
    const main = await one('main', 'src/lib.rs');
    assert.ok(main.symbol.facets.includes('entrypoint'));
    assert.ok(!signal.symbol.facets.includes('entrypoint'));
  });

  test('typescript and tsx: classes, methods qualified with `.`, JSDoc and export attach', async () => {
    const parser = await one('Parser', 'web/parser.ts');
    assert.equal(parser.symbol.kind, 'class');
    assert.equal(parser.symbol.language, 'typescript');
    assert.match(spanText('web/parser.ts', parser), /^\/\*\* Parses input\. \*\/\nexport class Parser \{/);
    const parse = await one('Parser.parse', 'web/parser.ts');
    assert.equal(parse.symbol.kind, 'method');
    assert.equal(parse.symbol.container, parser.symbol.id);
    assert.equal(parse.source?.text, '/** Parse one line. */\n  parse(line: string): string {\n    return line.trim();\n  }');
    const view = await one('View', 'web/view.tsx');
    assert.equal(view.symbol.language, 'tsx');
    assert.equal(view.source?.text, '/** A view. */\nexport function View() {\n  return <div>hi</div>;\n}');
  });

  test('javascript: functions and arrow-function constants, JSDoc blocks attach', async () => {
    const add = await one('add', 'web/util.js');
    assert.equal(add.symbol.kind, 'function');
    assert.equal(add.source?.text, '/**\n * Adds.\n */\nfunction add(a, b) { return a + b; }');
    const twice = await one('twice', 'web/util.js');
    assert.equal(twice.symbol.kind, 'function');
  });

  test('python: methods qualified by class, decorators attach, private by underscore', async () => {
    const fit = await one('Solver.fit', 'py/solver.py');
    assert.equal(fit.symbol.kind, 'method');
    assert.equal(fit.source?.text, '@staticmethod\n    def fit(x):\n        return x');
    const priv = await one('Solver._private', 'py/solver.py');
    assert.equal(priv.symbol.visibility, 'private');
    const testFit = await one('test_fit', 'py/solver.py');
    assert.equal(testFit.source?.text, '@cache\ndef test_fit():\n    pass');
  });

  test('go: methods qualified by receiver type, comment groups attach, main is an entrypoint', async () => {
    const handle = await one('Server.Handle', 'go/server.go');
    assert.equal(handle.symbol.kind, 'method');
    assert.equal(handle.symbol.visibility, 'exported');
    assert.equal(handle.source?.text, '// Handle handles one request.\nfunc (s *Server) Handle() {}');
    const main = await one('main', 'go/server.go');
    assert.ok(main.symbol.facets.includes('entrypoint'));
  });

  test('java: Javadoc and annotations attach, members qualified by class, main is an entrypoint', async () => {
    const main = await one('App.main', 'java/App.java');
    assert.equal(main.symbol.kind, 'method');
    assert.equal(main.symbol.visibility, 'public');
    assert.ok(main.symbol.facets.includes('entrypoint'));
    assert.equal(main.source?.text, '/** Entry. */\n    public static void main(String[] args) {}');
    const old = await one('App.old', 'java/App.java');
    assert.equal(old.source?.text, '@Deprecated\n    void old() {}');
    assert.equal(old.symbol.visibility, 'package');
  });

  test('nodes lists named nodes outermost first, witnessed, linking declarations to symbols in every language', async () => {
    const probes: Array<[string, string, string]> = [
      ['src/lib.rs', 'self.level', 'Beacon::signal'],
      ['web/parser.ts', 'line.trim', 'Parser.parse'],
      ['web/view.tsx', '<div>', 'View'],
      ['web/util.js', 'a + b', 'add'],
      ['py/solver.py', 'return x', 'Solver.fit'],
      ['go/server.go', 'Handle()', 'Server.Handle'],
      ['java/App.java', 'String[] args', 'App.main'],
    ];
    for (const [path, needle, owner] of probes) {
      const position = Buffer.from(FILES[path]).indexOf(needle);
      const r = (await ws.rift.call('nodes', { path, position })) as { nodes: Array<{ id: string; symbol?: string; kind: string; range: { start: number; end: number } }> };
      assert.ok(r.nodes.length >= 3, `${path}: nested nodes`);
      for (let i = 1; i < r.nodes.length; i++) {
        const outer = r.nodes[i - 1].range;
        const inner = r.nodes[i].range;
        assert.ok(outer.start <= inner.start && inner.end <= outer.end, `${path}: outermost first`);
      }
      for (const n of r.nodes) {
        assert.ok(n.range.start <= position && position < n.range.end, `${path}: contains the position`);
        const bytes = Buffer.from(FILES[path]).subarray(n.range.start, n.range.end);
        const { createHash } = await import('node:crypto');
        const witness = createHash('sha256').update(bytes).digest('hex').slice(0, 8);
        assert.ok(n.id.endsWith(`@${n.range.start}-${n.range.end}#${witness}`), `${path}: witness of ${n.kind}`);
      }
      assert.ok(
        r.nodes.some((n) => n.symbol?.endsWith(`/${path}/${owner}`)),
        `${path}: a node links to ${owner}: ${JSON.stringify(r.nodes.map((n) => [n.kind, n.symbol]))}`,
      );
    }
  });
});
