import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { serveWorkspace } from '../helpers/mcp.ts';
import { eventually } from '../helpers/workspace.ts';

// get_symbol and nodes rules (reference F.3, F.5, F.8).

type Hit = { symbol: { name: string; id: string }; path: string; range: { start: number; end: number }; line: number; node?: { id: string }; source?: { text: string } };
type Page = { hits: Hit[]; pagination: { page_index: number; total_pages: number }; warnings: unknown[] };

const FILES = {
  'a/parse.py': 'def parse(): pass\n\n\ndef parse_all(): pass\n\n\nclass Parser:\n    def parse(self): pass\n',
  'b/parse.py': 'def parse(): pass\n\n\ndef reparse(): pass\n',
  'c/x.rs': 'pub fn PARSE() {}\n',
  'notes/justfile': 'build:\n\techo hi\n',
  'notes/README.md': '# notes\n',
  'notes/.gitignore': '*.tmp\n',
  // Visible and claimed by a provider, but left out of the index.
  'skip/latin1.py': Uint8Array.from([0x78, 0x20, 0x3d, 0x20, 0x27, 0xe9, 0x27, 0x0a]),
  'skip/nul.py': 'x = 1\n\0\n',
  'skip/big.py': `# ${'x'.repeat(1100)}\n`,
  'rift.toml': '[source]\nmax_file_bytes = "1kb"\n',
};

describe('reads', () => {
  const ws = serveWorkspace({ before, after }, FILES);

  const get = async (args: Record<string, unknown>) => (await ws.rift.call('get_symbol', args)) as Page;

  test('ranking: exact qualified name, exact name, case-insensitive, suffix, substring; ties by path', async () => {
    const r = await get({ name: 'parse', limit: 20, include: [] });
    assert.deepEqual(
      r.hits.map((h) => `${h.path}:${h.symbol.name}`),
      ['a/parse.py:parse', 'b/parse.py:parse', 'a/parse.py:Parser.parse', 'c/x.rs:PARSE', 'b/parse.py:reparse', 'a/parse.py:Parser', 'a/parse.py:parse_all'],
    );
  });

  test('paging: a smaller limit pages through the same total order; past the end is empty with the true total', async () => {
    const all = await get({ name: 'parse', limit: 20, include: [] });
    const seen: string[] = [];
    for (let page = 0; page < 3; page++) {
      const r = await get({ name: 'parse', limit: 3, page_index: page, include: [] });
      assert.deepEqual(r.pagination, { page_index: page, total_pages: 3 });
      seen.push(...r.hits.map((h) => h.symbol.id));
    }
    assert.deepEqual(seen, all.hits.map((h) => h.symbol.id));
    const past = await get({ name: 'parse', limit: 3, page_index: 7, include: [] });
    assert.deepEqual(past.hits, []);
    assert.deepEqual(past.pagination, { page_index: 7, total_pages: 3 });
    const none = await get({ name: 'zzz_nothing' });
    assert.deepEqual(none, { hits: [], pagination: { page_index: 0, total_pages: 1 }, warnings: [] });
    const dflt = await get({ name: 'parse' });
    assert.equal(dflt.hits.length, 5, 'default limit is 5');
    assert.deepEqual(dflt.pagination, { page_index: 0, total_pages: 2 });
  });

  test('include: omitted attaches node and source; [] attaches neither; history without a repository names the remedy', async () => {
    const dflt = await get({ name: 'reparse' });
    assert.equal(dflt.hits[0].source?.text, 'def reparse(): pass');
    assert.match(dflt.hits[0].node!.id, /^rift:\/\/node\/python\/b\/parse\.py@20-39#[0-9a-f]{8}$/);
    assert.equal(dflt.hits[0].line, 4);
    const bare = await get({ name: 'reparse', include: [] });
    assert.equal(bare.hits[0].source, undefined);
    assert.equal(bare.hits[0].node, undefined);
    assert.deepEqual(bare.hits[0].range, { start: 20, end: 39 });
    const e = await ws.rift.fail('get_symbol', { name: 'reparse', include: ['history'] });
    assert.equal(e.data.code, 'capability_unavailable');
    assert.equal(e.data.retry, 'operator_action');
    assert.match(e.data.message as string, /requires a git repository - run `git init`/);
  });

  test('rev without a git repository names the remedy', async () => {
    const e = await ws.rift.fail('get_symbol', { name: 'parse', rev: 'main' });
    assert.equal(e.data.code, 'capability_unavailable');
    assert.equal(
      e.data.message,
      `no configured provider serves this request: workspace ${ws.root}, requires a git repository - run \`git init\`, or omit \`rev\` to read the current tree; adjust the request to a served capability, or configure a provider that serves it`,
    );
    assert.equal(e.data.phase, 'read');
  });

  test('nodes: EOF yields [], missing file is resource_not_found, a path no provider parses names its extension', async () => {
    const eof = (await ws.rift.call('nodes', { path: 'c/x.rs', position: 18 })) as { nodes: unknown[]; warnings: unknown[] };
    assert.deepEqual(eof, { nodes: [], warnings: [] });
    const missing = await ws.rift.fail('nodes', { path: 'c/none.rs', position: 0 });
    assert.equal(missing.data.code, 'resource_not_found');
    assert.match(missing.data.message as string, /path c\/none\.rs/);
    const md = await ws.rift.fail('nodes', { path: 'notes/README.md', position: 0 });
    assert.equal(md.data.code, 'capability_unavailable');
    assert.match(md.data.message as string, /extension md/);
    const just = await ws.rift.fail('nodes', { path: 'notes/justfile', position: 0 });
    assert.equal(just.data.code, 'capability_unavailable');
    assert.match(just.data.message as string, /the path carries no extension/);
    const dot = await ws.rift.fail('nodes', { path: 'notes/.gitignore', position: 0 });
    assert.match(dot.data.message as string, /the path carries no extension/);
    const floor = await ws.rift.fail('nodes', { path: '.git/config', position: 0 });
    assert.equal(floor.data.code, 'resource_not_found');
  });

  test('nodes on a file the index left out is content_unavailable naming why', async () => {
    for (const [path, reason] of [
      ['skip/latin1.py', 'reason the file is not valid UTF-8'],
      ['skip/nul.py', 'reason the file contains a NUL byte'],
      ['skip/big.py', 'reason 1103 bytes, over [source].max_file_bytes'],
    ]) {
      const e = await ws.rift.fail('nodes', { path, position: 0 });
      assert.equal(e.data.code, 'content_unavailable', path);
      assert.match(e.data.message as string, new RegExp(`path ${path.replace('.', '\\.')}, ${reason.replace(/[[\]().]/g, '\\$&')}`));
    }
  });

  test('nodes link declaration nodes to their symbol, and the witness changes with the bytes', async () => {
    const before = (await ws.rift.call('nodes', { path: 'c/x.rs', position: 7 })) as { nodes: Array<{ id: string; kind: string; symbol?: string }> };
    assert.equal(before.nodes[0].kind, 'source_file');
    const fn = before.nodes.find((n) => n.kind === 'function_item');
    assert.equal(fn?.symbol, 'rift://symbol/rust/c/x.rs/PARSE');
    assert.equal(before.nodes.find((n) => n.kind === 'identifier')?.symbol, undefined);
    writeFileSync(join(ws.root, 'c/x.rs'), 'pub fn PARSE() { 1 }\n');
    const after = await eventually(async () => {
      const r = (await ws.rift.call('nodes', { path: 'c/x.rs', position: 7 })) as { nodes: Array<{ id: string; kind: string }> };
      return r.nodes[0].id !== before.nodes[0].id ? r : undefined;
    });
    assert.match(after.nodes[0].id, /^rift:\/\/node\/rust\/c\/x\.rs@0-21#[0-9a-f]{8}$/);
  });
});
