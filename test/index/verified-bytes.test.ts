import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Engine } from '../../src/services/engine.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// The store keeps digests and spans, not file bytes: reads take bytes from the workspace and
// verify them against the indexed digest. A mismatch is found by the read itself (no watcher
// here), answered without the old bytes, warned as stale_index, and re-indexed.

test('the store holds no file contents', async () => {
  const root = tempWorkspace({ 'a.py': 'def alpha():\n    """A unique_marker_word."""\n' });
  const engine = await Engine.open(root, { watch: false });
  try {
    await engine.build();
    const db = new Database(join(root, '.rift', 'rift.db'), { readonly: true });
    try {
      const tables = (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as Array<{ name: string }>).map((r) => r.name);
      assert.ok(!tables.includes('contents'));
      // No table stores the text: the full-text tables are contentless or read from `symbols`.
      for (const t of tables) {
        const rows = db.prepare(`SELECT * FROM "${t}"`).raw().all() as unknown[][];
        for (const row of rows) for (const v of row) if (typeof v === 'string' || Buffer.isBuffer(v)) assert.ok(!String(v).includes('unique_marker_word'), `${t} stores file text`);
      }
    } finally {
      db.close();
    }
    assert.equal((await engine.search.search({ query: 'unique_marker_word' })).results[0]?.path, 'a.py');
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});

test('a read that finds a file changed behind the index serves no old bytes, warns stale_index, and re-indexes it', async () => {
  const root = tempWorkspace({ 'a.py': 'def alpha():\n    return 1\n' });
  const engine = await Engine.open(root, { watch: false });
  try {
    await engine.build();
    writeFileSync(join(root, 'a.py'), 'def alpha():\n    return 2\n');
    const stale = await engine.read.getSymbol({ name: 'alpha', include: ['source'] });
    assert.equal(stale.hits.length, 1);
    assert.equal(stale.hits[0].source, undefined);
    assert.deepEqual(stale.warnings.map((w) => w.kind), ['stale_index']);
    // The drift joined the incremental path: once applied, the new bytes are served.
    await engine.indexer.settle();
    const fresh = await engine.read.getSymbol({ name: 'alpha', include: ['source'] });
    assert.equal(fresh.hits[0].source?.text, 'def alpha():\n    return 2');
    assert.deepEqual(fresh.warnings, []);
    assert.ok(existsSync(join(root, '.rift', 'rift.db')));
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});
