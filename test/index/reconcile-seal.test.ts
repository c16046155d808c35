import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { eventually, removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';
import { runCli } from '../helpers/cli.ts';
import { startRift } from '../helpers/mcp.ts';
import { graphEdges } from '../helpers/graph.ts';
import { Store } from '../../src/index/store.ts';

// The reconcile seal (Store.sealedRevision): a reconcile that stored exactly what its walk saw
// seals the store with that walk and configuration; the next start whose walk is the same, with
// no batch written since by any process, reads nothing else. These tests pin what must unseal it.

/** A whole second (exactly representable), so a file can be put back at its very stat stamp. */
const STAMP_S = 1_700_000_000;

function pinTimes(root: string, paths: string[]): void {
  for (const p of paths) utimesSync(join(root, p), STAMP_S, STAMP_S);
}

function index(root: string): { files: number; parsed: number; symbols: number; reparsed: number; skipped: number; revision: string } {
  const r = runCli(['index', '--json'], root);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/** The store's bytes (database and write-ahead log), to tell a start that wrote nothing. */
function storeBytes(root: string): string {
  const h = createHash('sha256');
  for (const f of ['rift.db', 'rift.db-wal']) {
    const p = join(root, '.rift', f);
    h.update(f).update(existsSync(p) ? readFileSync(p) : Buffer.alloc(0));
  }
  return h.digest('hex');
}

function symbolNames(root: string, query: string): string[] {
  const r = runCli(['symbol', query, '--json'], root);
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as { hits: Array<{ symbol: { name: string } }> }).hits.map((h) => h.symbol.name).sort();
}

test('a sealed start writes nothing and answers as the full reconcile did, skipped files included', () => {
  const root = tempWorkspace({ 'a.py': 'def alpha():\n    pass\n', 'b.py': 'def beta():\n    pass\n', 'data.bin': 'x\0y', 'notes.md': '# notes\n' });
  try {
    pinTimes(root, ['a.py', 'b.py', 'data.bin', 'notes.md']);
    const first = index(root);
    assert.equal(first.parsed, 2);
    const before = storeBytes(root);
    const second = index(root);
    assert.equal(storeBytes(root), before, 'a start over an unchanged tree wrote to the store');
    assert.deepEqual({ ...second, elapsedMs: 0 }, { ...first, reparsed: 0, elapsedMs: 0 });
    const skipped = runCli(['index', '--skipped'], root);
    assert.equal(skipped.code, 0, skipped.stderr);
    assert.match(skipped.stdout, /^data\.bin\tthe file contains a NUL byte\n/);
  } finally {
    removeWorkspace(root);
  }
});

test('a batch another process wrote unseals the store, even when the tree is then put back at the sealed stat stamps', async () => {
  const original = 'def alpha():\n    pass\n';
  const root = tempWorkspace({ 'a.py': original, 'b.py': 'def beta():\n    pass\n' });
  try {
    pinTimes(root, ['a.py', 'b.py']);
    index(root);
    const sealed = storeBytes(root);
    assert.equal(index(root).reparsed, 0);
    assert.equal(storeBytes(root), sealed, 'the premise: the walk of the tree as it stands is the sealed one');

    // A server's watcher stores an edit (a batch, no new seal)...
    const rift = await startRift(root, {}, { standalone: true });
    try {
      writeFileSync(join(root, 'a.py'), 'def alpha_changed():\n    pass\n');
      await eventually(async () => {
        const r = await rift.call('get_symbol', { name: 'alpha_changed' });
        return (r.hits as unknown[]).length === 1 ? true : undefined;
      }, 30_000);
    } finally {
      await rift.close();
    }
    // ...then the file gets its old bytes back at its old stat stamp, with no process watching:
    // the walk is the sealed walk again, but the store holds the edit.
    writeFileSync(join(root, 'a.py'), original);
    pinTimes(root, ['a.py']);

    const after = index(root);
    assert.equal(after.reparsed, 1, 'the file was not read again: the store kept the bytes of the edit');
    assert.deepEqual(symbolNames(root, 'alpha'), ['alpha']);
  } finally {
    removeWorkspace(root);
  }
});

test('a configuration change unseals the store even when the walk is the same', () => {
  // rift.toml is ignored, so changing it leaves the walk as it was.
  const root = tempWorkspace({ '.gitignore': 'rift.toml\n', 'rift.toml': '', 'a.py': 'def alpha():\n    pass\n', 'b.ts': 'export function beta() {}\n' });
  try {
    pinTimes(root, ['.gitignore', 'rift.toml', 'a.py', 'b.ts']);
    assert.equal(index(root).parsed, 2);
    assert.equal(index(root).reparsed, 0);
    writeFileSync(join(root, 'rift.toml'), '[languages.python]\nenabled = false\n');
    pinTimes(root, ['rift.toml']);
    const after = index(root);
    assert.equal(after.parsed, 1, 'the sealed counts were served under the new configuration');
    assert.deepEqual(symbolNames(root, 'alpha'), []);
    assert.deepEqual(symbolNames(root, 'beta'), ['beta']);
  } finally {
    removeWorkspace(root);
  }
});

test('a graph left pending or emptied is resolved by the next start, even over the sealed walk', () => {
  const root = tempWorkspace({ 'a.py': 'from b import beta\n\n\ndef alpha():\n    beta()\n', 'b.py': 'def beta():\n    pass\n' });
  try {
    pinTimes(root, ['a.py', 'b.py']);
    index(root);
    const edges = graphEdges(root);
    assert.ok(edges.some((e) => e.includes('a.py#alpha -calls/') && e.endsWith('b.py#beta')), edges.join('\n'));
    // As a process leaves it that recorded facts and stopped before resolving them...
    let db = new Database(join(root, '.rift', 'rift.db'));
    db.exec(`DELETE FROM graph_edges; INSERT OR REPLACE INTO meta(key, value) VALUES ('graph_pending', '1')`);
    db.close();
    index(root);
    assert.deepEqual(graphEdges(root), edges, 'the sealed start left the pending graph unresolved');
    // ...and as one leaves it whose relationship tables were emptied.
    db = new Database(join(root, '.rift', 'rift.db'));
    db.exec(`DELETE FROM graph_edges; DELETE FROM graph_nodes; DELETE FROM graph_refs; DELETE FROM graph_decls; DELETE FROM graph_imports;
      DELETE FROM graph_members; DELETE FROM graph_ref_words; DELETE FROM graph_files; DELETE FROM meta WHERE key = 'graph_built'`);
    db.close();
    index(root);
    assert.deepEqual(graphEdges(root), edges, 'the sealed start left the emptied graph empty');
  } finally {
    removeWorkspace(root);
  }
});

test("a projection's copy of the store carries no seal and no read stamps for the files it restamps", () => {
  const root = tempWorkspace({ 'a.py': 'def alpha():\n    pass\n' });
  try {
    index(root);
    const copy = join(root, 'copy.db');
    const store = Store.openFile(join(root, '.rift', 'rift.db'), root);
    try {
      assert.notEqual(store.meta('reconciled'), null, 'the premise: the store is sealed');
      store.copyFor(copy, new Map([['a.py', { size: 23, mtimeMs: 1 }]]), []);
    } finally {
      store.close();
    }
    const db = new Database(copy, { readonly: true });
    try {
      assert.equal(db.prepare(`SELECT value FROM meta WHERE key = 'reconciled'`).get(), undefined);
      assert.deepEqual(db.prepare(`SELECT path, size, mtime_ms AS mtimeMs, stamp FROM files`).all(), [{ path: 'a.py', size: 23, mtimeMs: 1, stamp: null }]);
    } finally {
      db.close();
    }
  } finally {
    removeWorkspace(root);
  }
});
