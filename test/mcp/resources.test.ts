import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { digest8, sha256Hex, treeRevision } from '../../src/core/digest.ts';
import { symbolId } from '../../src/core/ids.ts';
import { readFails, serveWorkspace, startRift, type RiftMcp } from '../helpers/mcp.ts';
import { eventually, removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// The resources over real stdio MCP (reference B.1–B.3, F.9 rules 91–100): resources/list and
// templates, rift://map, rift://workspace, rift://logs, and their refusals.

async function read(rift: RiftMcp, uri: string): Promise<Record<string, unknown>> {
  const r = await rift.client.readResource({ uri });
  assert.equal(r.contents.length, 1);
  const [c] = r.contents as Array<{ uri: string; mimeType: string; text: string }>;
  assert.equal(c.uri, uri);
  assert.equal(c.mimeType, 'application/json');
  return JSON.parse(c.text) as Record<string, unknown>;
}

const MAP_FILES: Record<string, string> = {
  'README.md': '# project\n',
  'docs/guide.md': '# guide\n',
  'docs/deep/notes.mdx': '# notes\n',
  'docs/notes.txt': 'not markdown\n',
  'a/b/c/d/e.ts': 'export function deep(): number {\n  return hub();\n}\nimport { hub } from "../../../../core/hub";\n',
  'a/b/x.ts': 'import { hub } from "../../core/hub";\nexport function x(): number {\n  return hub();\n}\n',
  'core/hub.ts': 'export function hub(): number {\n  return leaf();\n}\nexport function leaf(): number {\n  return 1;\n}\nexport function third(): number {\n  return hub();\n}\n',
  'package.json': JSON.stringify({ name: 'tool', bin: { tool: './bin/tool.js', other: 'bin/other.js', cli: 'bin/cli.ts', m: './bin/m.ts' } }),
  'bin/tool.js': "const { run } = require('../lib/run');\nrun();\n",
  'bin/other.js': 'function main() {}\nmain();\n',
  'bin/cli.ts': "import { start } from '../lib/start';\n\nstart();\n",
  'bin/m.ts': 'export function main(): void {}\n\nmain();\n',
  'lib/run.js': 'function run() {}\nmodule.exports = { run };\n',
  'lib/start.ts': 'export function start(): void {}\n',
  'rs/src/main.rs': 'fn main() {}\n\nmod m {\n    fn main() {}\n}\n',
  'gocmd/main.go': 'package main\n\nfunc main() {}\n',
  'py/app.py': 'def main():\n    pass\n\n\nif __name__ == "__main__":\n    main()\n',
  'py/script.py': 'def run():\n    pass\n\n\nif __name__ == "__main__":\n    run()\n',
  'java/App.java': 'public class App {\n    public static void main(String[] args) {}\n}\n',
  // Not entry points: main outside package main, an instance main, main with no __main__ guard
  // (called at the top level all the same).
  'golib/lib.go': 'package lib\n\nfunc main() {}\n',
  'java/Tool.java': 'public class Tool {\n    public void main(String[] args) {}\n}\n',
  'py/noguard.py': 'def main():\n    pass\n\n\nmain()\n',
};

describe('resources', () => {
  const ws = serveWorkspace({ before, after }, MAP_FILES);

  test('resources/list and resources/templates/list advertise the five resources and the paged and addressed forms', async () => {
    assert.ok(ws.rift.client.getServerCapabilities()?.resources);
    const { resources } = await ws.rift.client.listResources();
    assert.deepEqual(resources.map((r) => [r.uri, r.name, r.mimeType]), [
      ['rift://logs', 'logs', 'application/json'],
      ['rift://map', 'map', 'application/json'],
      ['rift://workspace', 'workspace', 'application/json'],
      ['rift://fs', 'fs', 'application/json'],
      ['rift://changes', 'changes', 'application/json'],
    ]);
    const { resourceTemplates } = await ws.rift.client.listResourceTemplates();
    assert.deepEqual(resourceTemplates.map((t) => [t.uriTemplate, t.name]), [
      ['rift://logs{?page_index}', 'logs page'],
      ['rift://workspace{?page_index}', 'workspace page'],
      ['rift://fs{/path}{?page_index,start,length,projection}', 'fs'],
      ['rift://projection/{id}', 'projection'],
      ['rift://changes{?projection,page_index}', 'changes page'],
    ]);
  });

  test('rift://map: revision, languages, modules three deep, hubs, entry points, docs, one page', async () => {
    const map = (await read(ws.rift, 'rift://map')) as {
      revision: string;
      languages: Array<{ language: string; files: number; symbols: number }>;
      modules: Array<Record<string, unknown>>;
      hubs: Array<{ symbol: string; kind: string; references: number }>;
      entry_points: string[];
      docs: string[];
      pagination: unknown;
    };
    const files = Object.keys(MAP_FILES).sort();
    const expected = treeRevision(files.map((path) => ({ path, sha256: sha256Hex(readFileSync(join(ws.root, path))) })));
    assert.equal(map.revision, expected);
    assert.deepEqual(map.pagination, { page_index: 0, total_pages: 1 });
    assert.deepEqual(map.languages.map((l) => l.language), ['go', 'java', 'javascript', 'python', 'rust', 'typescript']);
    assert.deepEqual(map.languages.find((l) => l.language === 'typescript'), { language: 'typescript', files: 6, symbols: 7 });
    assert.deepEqual(map.languages.find((l) => l.language === 'rust'), { language: 'rust', files: 1, symbols: 3 });

    const a = map.modules.find((m) => m.path === 'a');
    // a/b/c/d/e.ts folds into a/b/c: three directories deep, counts inclusive of descendants.
    assert.deepEqual(a, {
      path: 'a',
      files: 2,
      symbols: 2,
      children: [{ path: 'a/b', files: 2, symbols: 2, children: [{ path: 'a/b/c', files: 1, symbols: 1 }] }],
    });
    assert.deepEqual(map.modules.map((m) => m.path), ['a', 'bin', 'core', 'docs', 'gocmd', 'golib', 'java', 'lib', 'py', 'rs']);

    assert.deepEqual(map.hubs[0], { symbol: symbolId('typescript', 'core/hub.ts', 'hub'), kind: 'function', references: 3 });
    const counts = map.hubs.map((h) => h.references);
    assert.deepEqual(counts, [...counts].sort((x, y) => y - x));

    // package.json bin names JavaScript and TypeScript files alike: their main, else what their top level calls.
    assert.deepEqual(map.entry_points, [
      symbolId('go', 'gocmd/main.go', 'main'),
      symbolId('java', 'java/App.java', 'App.main'),
      symbolId('javascript', 'bin/other.js', 'main'),
      symbolId('javascript', 'lib/run.js', 'run'),
      symbolId('python', 'py/app.py', 'main'),
      symbolId('python', 'py/script.py', 'run'),
      symbolId('rust', 'rs/src/main.rs', 'main'),
      symbolId('typescript', 'bin/m.ts', 'main'),
      symbolId('typescript', 'lib/start.ts', 'start'),
    ]);
    assert.deepEqual(map.docs, ['README.md', 'docs/deep/notes.mdx', 'docs/guide.md']);
  });

  test('rift://map is served from the cache of its publication and recomputed after the next one', async () => {
    const first = await read(ws.rift, 'rift://map');
    assert.deepEqual(await read(ws.rift, 'rift://map'), first);
    writeFileSync(join(ws.root, 'docs/added.md'), '# added\n');
    const next = await eventually(async () => {
      const m = await read(ws.rift, 'rift://map');
      return m.revision !== first.revision ? m : undefined;
    });
    assert.ok((next.docs as string[]).includes('docs/added.md'));
  });

  test('a query on rift://map, an unknown parameter, a bad page and an unknown resource refuse', async () => {
    const map = await readFails(ws.rift, 'rift://map?page_index=0');
    assert.equal(map.code, -32000);
    assert.equal(map.data.code, 'invalid_request');
    const unknown = await readFails(ws.rift, 'rift://workspace?cursor=x');
    assert.match(unknown.data.message as string, /field cursor, violation not a parameter of rift:\/\/workspace/);
    const bad = await readFails(ws.rift, 'rift://workspace?page_index=-1');
    assert.match(bad.data.message as string, /field page_index, violation not a non-negative integer/);
    const missing = await readFails(ws.rift, 'rift://files');
    assert.equal(missing.data.code, 'resource_not_found');
    assert.match(missing.data.message as string, /uri rift:\/\/files, served rift:\/\/logs rift:\/\/map rift:\/\/workspace rift:\/\/fs rift:\/\/projection\/\{id\} rift:\/\/changes/);
    const noProjection = await readFails(ws.rift, `rift://projection/prj_${'a'.repeat(26)}`);
    assert.equal(noProjection.data.code, 'resource_not_found');
    assert.match(noProjection.data.message as string, /projection prj_a{26}/);
    const badId = await readFails(ws.rift, 'rift://projection/nope');
    assert.equal(badId.data.code, 'invalid_request');
    assert.equal(missing.data.phase, 'read');
  });
});

// One standalone server (its own log records) over a workspace whose hubs and entry points only
// the binding provider can supply: reference counts, and what a bin script's top level and a
// Python __main__ guard call (no symbol here carries the entrypoint facet). The tests run in order.
describe('rift://map and the binding provider', () => {
  const settings = (binding: boolean) => `[providers.binding]\nenabled = ${binding}\n\n[logs]\ncapture = "debug"\npage_records = 1000\n`;
  const files: Record<string, string> = {
    'rift.toml': settings(false),
    'core/hub.ts': 'export function hub(): number {\n  return 1;\n}\n',
    'a.ts': "import { hub } from './core/hub';\n\nexport function a(): number {\n  return hub();\n}\n",
    'b.ts': "import { hub } from './core/hub';\n\nexport function b(): number {\n  return hub();\n}\n",
    'package.json': JSON.stringify({ name: 'tool', bin: './bin/tool.js' }),
    'bin/tool.js': "const { run } = require('../lib/run');\nrun();\n",
    'lib/run.js': 'function run() {}\nmodule.exports = { run };\n',
    'py/app.py': 'def serve():\n    pass\n\n\nif __name__ == "__main__":\n    serve()\n',
  };
  type MapShape = { revision: string; hubs: Array<{ symbol: string; references: number }>; entry_points: string[] };
  type Logs = { records: Array<{ message: string; operation: string; fields: Record<string, unknown> }> };
  const state = {} as { root: string; rift: RiftMcp };
  before(async () => {
    state.root = tempWorkspace(files);
    state.rift = await startRift(state.root, {}, { standalone: true });
  });
  after(async () => {
    await state.rift.close();
    removeWorkspace(state.root);
  });

  test('with no provider supplying the facts, hubs and entry_points are both empty; enabled, they fill', async () => {
    const disabled = (await read(state.rift, 'rift://map')) as MapShape;
    assert.deepEqual(disabled.hubs, []);
    assert.deepEqual(disabled.entry_points, []);

    // The same tree with the provider enabled has both: the emptiness was the provider's.
    writeFileSync(join(state.root, 'rift.toml'), settings(true));
    const enabled = await eventually(async () => {
      const m = (await read(state.rift, 'rift://map')) as MapShape;
      return m.hubs.length > 0 ? m : undefined;
    }, 60_000);
    assert.deepEqual(enabled.hubs[0], { symbol: symbolId('typescript', 'core/hub.ts', 'hub'), kind: 'function', references: 2 });
    assert.deepEqual(enabled.entry_points, [symbolId('javascript', 'lib/run.js', 'run'), symbolId('python', 'py/app.py', 'serve')]);
  });

  test('rift://map is computed once per publication: reads after the first are served from the cache', async () => {
    const reads = 5;
    const computed = (logs: Logs) => logs.records.filter((r) => r.operation === 'map.compute');
    const map = (await read(state.rift, 'rift://map')) as MapShape;
    for (let i = 1; i < reads; i++) assert.deepEqual(await read(state.rift, 'rift://map'), map);
    // The capture writes records in order: once a later marker call is in the log, these reads are too.
    await state.rift.call('get_symbol', { name: 'hub', include: [] });
    const logs = await eventually(async () => {
      const l = (await read(state.rift, 'rift://logs')) as Logs;
      return l.records.some((r) => r.message === 'tool answered' && r.fields.tool === 'get_symbol') ? l : undefined;
    }, 30_000);
    const generations = computed(logs).map((r) => r.fields.generation as number);
    assert.ok(computed(logs).some((r) => r.fields.revision === map.revision), 'the map read was computed and recorded');
    assert.equal(new Set(generations).size, generations.length, `one computation per publication, not per read: generations ${generations.join(', ')}`);
  });
});

describe('rift://workspace', () => {
  const toml = [
    '[languages.typescript]',
    'lsp = "typescript-language-server"',
    '',
    '[languages.markdown]',
    'include = ["*.md"]',
    '',
    '[execution]',
    'allow = ["python"]',
    '',
    '[[hooks]]',
    'id = "fmt"',
    'program = "true"',
    'role = "transform"',
    'kind = "format"',
    'include = ["*.ts"]',
    '',
  ].join('\n');
  const files: Record<string, string> = { 'rift.toml': toml, 'README.md': '# r\n' };
  for (let i = 0; i < 1004; i++) files[`src/f${String(i).padStart(4, '0')}.ts`] = `export const v${i} = ${i};\n`;
  const ws = serveWorkspace({ before, after }, files);

  test('configuration revision, languages in order with engine state, hooks, and 1000 sources a page', async () => {
    const page0 = (await read(ws.rift, 'rift://workspace')) as {
      configuration_revision: string;
      languages: Array<Record<string, unknown>>;
      hooks: unknown[];
      source: Array<{ path: string; digest: string; languages: string[] }>;
      pagination: unknown;
    };
    assert.equal(page0.configuration_revision, digest8(readFileSync(join(ws.root, 'rift.toml'))));
    assert.deepEqual(page0.languages.map((l) => l.id), ['typescript', 'tsx', 'javascript', 'python', 'rust', 'go', 'java', 'markdown']);
    assert.deepEqual(page0.languages[0], {
      id: 'typescript',
      enabled: true,
      include: ['*.ts', '*.mts', '*.cts'],
      exclude: [],
      syntax: true,
      execution: false,
      lsp: { engine: 'typescript-language-server', state: 'configured' },
    });
    assert.equal(page0.languages[3].execution, true);
    assert.deepEqual(page0.languages[7], {
      id: 'markdown', enabled: true, include: ['*.md'], exclude: [], syntax: false, execution: false,
      lsp: { engine: null, state: 'not_configured', detail: 'no language engine is configured for markdown ([languages.markdown].lsp)' },
    });
    assert.deepEqual(page0.hooks, [{ id: 'fmt', kind: 'format', role: 'transform', include: ['*.ts'], exclude: [] }]);
    assert.equal(page0.source.length, 1000);
    assert.deepEqual(page0.pagination, { page_index: 0, total_pages: 2 });
    assert.deepEqual(page0.source[0], { path: 'README.md', digest: digest8(readFileSync(join(ws.root, 'README.md'))), languages: ['markdown'] });
    assert.deepEqual(page0.source[1], { path: 'rift.toml', digest: digest8(toml), languages: [] });
    assert.deepEqual(page0.source[2].languages, ['typescript']);

    const page1 = (await read(ws.rift, 'rift://workspace?page_index=1')) as typeof page0;
    assert.equal(page1.source.length, 6);
    assert.equal(page1.source.at(-1)!.path, 'src/f1003.ts');
    assert.deepEqual(page1.languages, page0.languages);
    assert.deepEqual(page1.hooks, page0.hooks);
    assert.deepEqual(page1.pagination, { page_index: 1, total_pages: 2 });
    const past = (await read(ws.rift, 'rift://workspace?page_index=9')) as typeof page0;
    assert.deepEqual(past.source, []);
    assert.deepEqual(past.pagination, { page_index: 9, total_pages: 2 });
  });
});

// The log tests read the records of one process: the server serves in the rift mcp process.
const standalone = (root: string) => startRift(root, {}, { standalone: true });

describe('rift://logs', () => {
  test('records newest first, every field, closed spans with elapsed_ms, and the page and retention bounds', async () => {
    const root = tempWorkspace({ 'a.py': 'def f():\n    pass\n', 'rift.toml': '[logs]\ncapture = "debug"\npage_records = 3\nretention_records = 5\n' });
    const rift = await standalone(root);
    try {
      for (let i = 0; i < 6; i++) await rift.call('get_symbol', { name: 'f' });
      const page = (await read(rift, 'rift://logs')) as { records: Array<Record<string, unknown>>; record_count: number; pagination: unknown };
      assert.equal(page.records.length, 3);
      assert.equal(page.record_count, 5);
      assert.deepEqual(page.pagination, { page_index: 0, total_pages: 2 });
      const ids = page.records.map((r) => r.id as number);
      assert.deepEqual(ids, [...ids].sort((x, y) => y - x));
      const call = page.records[0];
      assert.deepEqual(Object.keys(call).sort(), ['component', 'elapsed_ms', 'fields', 'id', 'level', 'message', 'operation', 'recorded_at_ms', 'target']);
      assert.deepEqual(
        { level: call.level, target: call.target, component: call.component, operation: call.operation, message: call.message, fields: call.fields },
        { level: 'debug', target: 'rift::mcp', component: 'mcp', operation: 'mcp.call', message: 'tool answered', fields: { tool: 'get_symbol' } },
      );
      assert.equal(typeof call.elapsed_ms, 'number');
      assert.ok(Math.abs((call.recorded_at_ms as number) - Date.now()) < 60_000);
      // Reading logs is itself logged (at debug), so the next page is read one record later.
      const next = (await read(rift, 'rift://logs?page_index=1')) as typeof page;
      assert.equal(next.records.length, 2);
      assert.ok(next.records.every((r) => (r.id as number) < ids[0]));
      assert.ok((next.records[0].id as number) > (next.records[1].id as number));
    } finally {
      await rift.close();
      removeWorkspace(root);
    }
  });

  test('the capture filter admits only its level and above', async () => {
    const root = tempWorkspace({ 'a.py': 'def f():\n    pass\n', 'rift.toml': '[logs]\ncapture = "warn"\n' });
    const rift = await standalone(root);
    try {
      await rift.call('get_symbol', { name: 'f' });
      await rift.fail('get_symbol', { name: 'f', limit: 0 });
      const r = (await read(rift, 'rift://logs')) as { records: Array<{ level: string }> };
      assert.deepEqual(r.records, []);
      writeFileSync(join(root, 'rift.toml'), '[logs]\ncapture = "info"\n');
      await rift.fail('get_symbol', { name: 'f', limit: 0 });
      const after = (await read(rift, 'rift://logs')) as { records: Array<{ level: string; message: string; operation: string }> };
      // The rewritten rift.toml is a watcher event too: when it arrives before the call, the call
      // waits for the rescan, whose snapshot is published (at info) under the new filter.
      assert.ok(after.records.every((x) => x.level === 'info' || x.level === 'warn' || x.level === 'error'), JSON.stringify(after.records));
      assert.deepEqual(after.records.filter((x) => x.operation !== 'index.publish').map((x) => [x.level, x.message]), [['info', 'tool failed']]);
    } finally {
      await rift.close();
      removeWorkspace(root);
    }
  });

  test('logs answer while every other read refuses, and say why', async () => {
    const root = tempWorkspace({ 'a.py': 'def f():\n    pass\n' });
    const rift = await standalone(root);
    try {
      await rift.call('get_symbol', { name: 'f' });
      writeFileSync(join(root, 'rift.toml'), '[logs\n');
      const e = await rift.fail('search', { query: 'f' });
      assert.equal(e.data.code, 'configuration_invalid');
      assert.equal((await readFails(rift, 'rift://map')).data.code, 'configuration_invalid');
      assert.equal((await readFails(rift, 'rift://workspace')).data.code, 'configuration_invalid');
      const logs = (await read(rift, 'rift://logs')) as { records: Array<{ message: string; fields: Record<string, unknown> }> };
      // The watcher's own attempt to index under the broken file may log in between: find the read's record.
      const readFailure = logs.records.find((r) => r.message === 'resource read failed');
      assert.deepEqual(readFailure?.fields, { code: 'configuration_invalid' });
      assert.ok(logs.records.some((r) => r.message === 'tool failed' && r.fields.code === 'configuration_invalid'));
    } finally {
      await rift.close();
      removeWorkspace(root);
    }
  });

  test('a full queue drops later events and the writer records how many it dropped', async () => {
    const root = tempWorkspace({ 'a.py': 'def f():\n    pass\n', 'rift.toml': '[logs]\ncapture = "debug"\nretention_records = 100000\n' });
    const rift = await standalone(root);
    try {
      await rift.call('get_symbol', { name: 'f' });
      // Another process holds the database's write lock: the writer cannot drain the queue.
      const holder = new Database(join(root, '.rift/rift.db'));
      holder.exec('BEGIN IMMEDIATE');
      for (let i = 0; i < 600; i++) await rift.call('get_symbol', { name: 'f', include: [] });
      holder.exec('COMMIT');
      holder.close();
      const r = await eventually(async () => {
        const page = (await read(rift, 'rift://logs')) as { records: Array<{ message: string; fields: Record<string, unknown> }>; record_count: number };
        return page.records.some((x) => x.fields.dropped !== undefined) ? page : undefined;
      });
      const drop = r.records.find((x) => x.fields.dropped !== undefined)!;
      const dropped = drop.fields.dropped as number;
      assert.ok(dropped > 0);
      assert.equal(drop.message, `dropped ${dropped} log events: the capture queue was full`);
      // 600 calls, each one event: what was kept plus what was dropped accounts for all of them.
      const all = (await read(rift, 'rift://logs')) as { record_count: number };
      assert.ok(all.record_count >= 512, `${all.record_count} records kept`);
    } finally {
      await rift.close();
      removeWorkspace(root);
    }
  });

  test('a log store that cannot be opened answers an empty set with the reason', async () => {
    const root = tempWorkspace({ 'a.py': 'def f():\n    pass\n' });
    mkdirSync(join(root, '.rift'), { recursive: true });
    const db = new Database(join(root, '.rift/rift.db'));
    db.exec('CREATE VIEW logs AS SELECT 1 AS id');
    db.close();
    const rift = await standalone(root);
    try {
      await rift.call('get_symbol', { name: 'f' });
      const r = await read(rift, 'rift://logs');
      assert.deepEqual(r, {
        records: [],
        record_count: 0,
        pagination: { page_index: 0, total_pages: 1 },
        unavailable: 'the log store could not be opened: cannot modify logs because it is a view',
      });
    } finally {
      await rift.close();
      removeWorkspace(root);
    }
  });
});
