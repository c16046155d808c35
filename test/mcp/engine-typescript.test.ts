import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChangeResultSeen } from '../helpers/change-result.ts';
import { serveWorkspace } from '../helpers/mcp.ts';
import { eventually, resend } from '../helpers/workspace.ts';

// rename_symbol, reference-checked removals, import-rewriting moves and engine diagnostics
// against the real typescript-language-server (reference F.13 rules 142–152), over stdio. One
// server and one engine serve the whole group: the engine loads the project once.

type Result = ChangeResultSeen;

const sym = (path: string, name: string, lang = 'typescript') => `rift://symbol/${lang}/${path}/${name}`;

const FILES = {
  'rift.toml': '[languages.javascript]\nlsp = false\n',
  'tsconfig.json': '{ "compilerOptions": { "strict": true, "target": "es2022", "module": "esnext", "moduleResolution": "bundler", "noEmit": true }, "include": ["src"] }\n',
  'src/geometry.ts': '// Geometry helpers: area is the one to call.\nexport function area(w: number, h: number): number {\n  return w * h;\n}\n\nexport function unused(): number {\n  return 0;\n}\n',
  'src/report.ts': "import { area } from './geometry';\n\nexport function report(): string {\n  return `area ${area(2, 3)}`;\n}\n",
  'src/main.ts': "import { report } from './report';\nimport { area } from './geometry';\n\nconsole.log(report(), area(1, 1));\n",
  'src/globals.ts': 'export {};\ndeclare global {\n  interface Array<T> {\n    first(): T | undefined;\n  }\n}\n',
  'src/typed.ts': 'export function double(n: number): number {\n  return n * 2;\n}\n',
  'src/util/strings.ts': "export function shout(s: string): string {\n  return s.toUpperCase();\n}\n",
  'src/cli.ts': "import { shout } from './util/strings';\n\nexport const loud = shout('hi');\n",
  'lib/plain.js': 'export function plain() {\n  return 1;\n}\n',
  'src/counter.ts': '/** Counts. */\nexport function tally(xs: number[]): number {\n  return xs.length;\n}\n',
  'src/stats.ts': "import { tally } from './counter';\n\nexport const total = tally([1, 2]);\n",
};

describe('language engine: typescript-language-server', () => {
  const ws = serveWorkspace({ before, after }, FILES);
  const read = (p: string) => readFileSync(join(ws.root, p), 'utf8');
  const call = async (tool: string, args: Record<string, unknown>) => (await resend(() => ws.rift.call(tool, args))) as unknown as Result;

  const engineStates = async () => {
    const r = await ws.rift.client.readResource({ uri: 'rift://workspace' });
    const page = JSON.parse((r.contents[0] as { text: string }).text) as { languages: Array<{ id: string; lsp: Record<string, unknown> }> };
    return Object.fromEntries(page.languages.map((l) => [l.id, l.lsp]));
  };

  test('rift://workspace reports each language\'s engine before any engine-backed change: configured, not started', async () => {
    const states = await engineStates();
    assert.deepEqual(states.typescript, { engine: 'typescript-language-server', state: 'configured' });
    assert.deepEqual(states.javascript, { engine: null, state: 'not_configured', detail: '[languages.javascript] sets lsp = false' });
    assert.deepEqual(states.python, { engine: 'pyright', state: 'configured' });
  });

  test('rename_symbol renames the declaration and its imports across files as one change', async () => {
    const r = await call('rename_symbol', { symbol: sym('src/geometry.ts', 'area'), new_name: 'surface' });
    assert.equal(r.status, 'applied', JSON.stringify(r));
    assert.deepEqual(r.summary!.files.map((f) => `${f.path}:${f.change}`), ['src/geometry.ts:modified', 'src/main.ts:modified', 'src/report.ts:modified']);
    assert.equal(read('src/geometry.ts'), '// Geometry helpers: area is the one to call.\nexport function surface(w: number, h: number): number {\n  return w * h;\n}\n\nexport function unused(): number {\n  return 0;\n}\n');
    assert.equal(read('src/report.ts'), "import { surface } from './geometry';\n\nexport function report(): string {\n  return `area ${surface(2, 3)}`;\n}\n");
    assert.equal(read('src/main.ts'), "import { report } from './report';\nimport { surface } from './geometry';\n\nconsole.log(report(), surface(1, 1));\n");
    // The comment and the template text still say "area": each surviving occurrence is a warning.
    assert.deepEqual(r.summary!.warnings, [
      { kind: 'rift.rename.surviving_occurrence', message: 'area still occurs at src/geometry.ts:1 after the rename', path: 'src/geometry.ts', line: 1 },
      { kind: 'rift.rename.surviving_occurrence', message: 'area still occurs at src/report.ts:4 after the rename', path: 'src/report.ts', line: 4 },
    ]);
    assert.deepEqual(r.summary!.diagnostics, [], 'the renamed tree type-checks');
    const hit = (await ws.rift.call('get_symbol', { name: 'surface', include: [] })) as { hits: Array<{ path: string }> };
    assert.deepEqual(hit.hits.map((h) => h.path), ['src/geometry.ts'], 'a later read sees the new name');
  });

  test('rift://workspace reports the live engine: ready once the rename has run; a language that has not used the shared process yet stays configured', async () => {
    // Readiness also waits for quiet after the rename's own diagnostics; it is reached, then held.
    const states = await eventually(async () => {
      const s = await engineStates();
      return s.typescript.state === 'ready' ? s : undefined;
    }, 60_000);
    assert.deepEqual(states.typescript, { engine: 'typescript-language-server', state: 'ready' });
    assert.deepEqual(states.tsx, { engine: 'typescript-language-server', state: 'configured' }, 'tsx has not selected the shared process yet');
    assert.deepEqual(states.python, { engine: 'pyright', state: 'configured' });
  });

  test('a rename the engine declines refuses engine_proposed_edits with the engine\'s words; nothing is written', async () => {
    const before = read('src/globals.ts');
    const id = sym('src/globals.ts', 'Array');
    const r = await call('rename_symbol', { symbol: id, new_name: 'List' });
    const words = 'Request textDocument/prepareRename failed with message: You cannot rename elements that are defined in the standard TypeScript library.';
    assert.deepEqual(r, {
      status: 'refused',
      reason: 'unmet_precondition',
      preconditions: [
        {
          kind: 'engine_proposed_edits',
          status: 'failed',
          addresses: [{ kind: 'symbol', symbol: id }],
          paths: ['src/globals.ts'],
          expected: { kind: 'text', value: 'an edit set renaming Array to List' },
          observed: { kind: 'text', value: words },
        },
      ],
      diagnostics: [
        {
          severity: 'error', code: 'rift.engine.declined', message: `typescript-language-server: ${words}`, span: null, related: [], tags: [],
          reliability: 'reliable', continuation: 'unknown', extensions: {}, language: null,
        },
      ],
    });
    assert.equal(read('src/globals.ts'), before);
  });

  test('a language with no engine refuses rename_symbol as unsupported, naming why', async () => {
    const r = await call('rename_symbol', { symbol: sym('lib/plain.js', 'plain', 'javascript'), new_name: 'simple' });
    assert.equal(r.status, 'refused');
    assert.equal(r.reason, 'unsupported');
    assert.deepEqual(r.preconditions, []);
    assert.equal(r.diagnostics![0].message, 'rename_symbol needs a language engine (lsp) for javascript: [languages.javascript] sets lsp = false');
    assert.equal(read('lib/plain.js'), FILES['lib/plain.js']);
  });

  test('remove_symbol refuses while a reference stands, then force removes it and names the references', async () => {
    const id = sym('src/geometry.ts', 'surface');
    const refused = await call('remove_symbol', { symbol: id });
    assert.deepEqual(refused, {
      status: 'refused',
      reason: 'unmet_precondition',
      preconditions: [
        { kind: 'no_references', status: 'failed', addresses: [{ kind: 'symbol', symbol: id }], paths: ['src/main.ts', 'src/report.ts'], expected: { kind: 'count', value: 0 }, observed: { kind: 'count', value: 4 } },
      ],
      diagnostics: [],
    });
    assert.ok(read('src/geometry.ts').includes('function surface'), 'nothing was removed');

    const forced = await call('remove_symbol', { symbol: id, force: true });
    assert.equal(forced.status, 'applied');
    assert.equal(read('src/geometry.ts'), '// Geometry helpers: area is the one to call.\n\nexport function unused(): number {\n  return 0;\n}\n');
    const warning = forced.summary!.warnings.find((w) => w.kind === 'rift.remove.references_forced')!;
    assert.deepEqual(warning.references, [
      { path: 'src/main.ts', line: 2 },
      { path: 'src/main.ts', line: 4 },
      { path: 'src/report.ts', line: 1 },
      { path: 'src/report.ts', line: 4 },
    ]);
    // Diagnostics cover the files the change wrote: geometry.ts is clean; the importers it broke
    // are what the warning names.
    assert.deepEqual(forced.summary!.diagnostics, []);
  });

  test('remove_symbol with no standing reference applies without a warning', async () => {
    const r = await call('remove_symbol', { symbol: sym('src/geometry.ts', 'unused') });
    assert.equal(r.status, 'applied');
    assert.deepEqual(r.summary!.warnings, []);
  });

  test('remove_node on a declaration node is checked like remove_symbol: refused while a reference stands, then forced', async () => {
    const text = read('src/counter.ts');
    const nodes = ((await ws.rift.call('nodes', { path: 'src/counter.ts', position: text.indexOf('tally') })) as { nodes: Array<{ id: string; kind: string }> }).nodes;
    const node = nodes.find((n) => n.kind === 'function_declaration')!.id;
    const refused = await call('remove_node', { node });
    assert.deepEqual(refused, {
      status: 'refused',
      reason: 'unmet_precondition',
      preconditions: [
        { kind: 'no_references', status: 'failed', addresses: [{ kind: 'node', node }], paths: ['src/stats.ts'], expected: { kind: 'count', value: 0 }, observed: { kind: 'count', value: 2 } },
      ],
      diagnostics: [],
    });
    assert.equal(read('src/counter.ts'), text, 'nothing was removed');

    const forced = await call('remove_node', { node, force: true });
    assert.equal(forced.status, 'applied', JSON.stringify(forced));
    assert.equal(read('src/counter.ts'), '', 'the declaration with its JSDoc and export');
    assert.deepEqual(forced.summary!.warnings, [
      {
        kind: 'rift.remove.references_forced',
        message: 'removed although typescript-language-server reports 2 standing references: src/stats.ts:1, src/stats.ts:3',
        references: [{ path: 'src/stats.ts', line: 1 }, { path: 'src/stats.ts', line: 3 }],
      },
    ]);
  });

  test('move_file lands the engine\'s import rewrites in the same change', async () => {
    const r = await call('move_file', { path: 'src/util/strings.ts', destination: 'src/text/strings.ts' });
    assert.equal(r.status, 'applied', JSON.stringify(r));
    assert.deepEqual(r.summary!.files.map((f) => `${f.path}:${f.change}`), ['src/cli.ts:modified', 'src/text/strings.ts:created', 'src/util/strings.ts:deleted']);
    assert.equal(read('src/cli.ts'), "import { shout } from './text/strings';\n\nexport const loud = shout('hi');\n");
    assert.equal(read('src/text/strings.ts'), FILES['src/util/strings.ts']);
    assert.equal(existsSync(join(ws.root, 'src/util/strings.ts')), false);
    assert.deepEqual(r.summary!.warnings, []);
    assert.deepEqual(r.summary!.diagnostics, []);
  });

  test('an applied change carries the engine\'s diagnostics of what it wrote, naming the engine', async () => {
    const r = await call('replace_symbol', { symbol: sym('src/typed.ts', 'double'), body: 'export function double(n: number): number {\n  return `${n}`;\n}' });
    assert.equal(r.status, 'applied');
    const start = read('src/typed.ts').indexOf('return');
    assert.deepEqual(r.summary!.diagnostics, [
      {
        severity: 'error',
        code: '2322',
        message: "Type 'string' is not assignable to type 'number'.",
        span: { unit: 'rift://file/src/typed.ts', range: { start, end: start + 'return'.length } },
        related: [],
        tags: [],
        reliability: 'reliable',
        continuation: 'unknown',
        extensions: { engine: 'typescript-language-server', source: 'typescript' },
        language: 'typescript',
      },
    ]);
    const fixed = await call('replace_symbol', { symbol: sym('src/typed.ts', 'double'), body: 'export function double(n: number): number {\n  return n + n;\n}' });
    assert.deepEqual(fixed.summary!.diagnostics, [], 'the engine sees the fix');
  });
});
