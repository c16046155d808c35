import { test } from 'node:test';
import assert from 'node:assert/strict';
import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { Store } from '../../src/index/store.ts';
import { readSourceFileSync, readSpanSync } from '../../src/workspace/read.ts';
import { assertNamesCounted } from '../helpers/names.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';
import { runCli } from '../helpers/cli.ts';

// The indexer records the state (inode, size, mtime, ctime) each file was in when it read and
// hashed its bytes; a later process reads a span of a file still in that state without hashing
// the whole file. Any other state is hashed again, and a mismatch is stale_index as before.

/** Past the window in which a change may share its timestamps with the next one (read.ts). */
const SETTLE_MS = 120;
const STAMP_S = 1_700_000_000;

function stamps(root: string): Map<string, string | null> {
  const db = new Database(join(root, '.rift', 'rift.db'), { readonly: true });
  try {
    const rows = db.prepare(`SELECT path, stamp FROM files ORDER BY path`).all() as Array<{ path: string; stamp: string | null }>;
    return new Map(rows.map((r) => [r.path, r.stamp]));
  } finally {
    db.close();
  }
}

function symbol(root: string, name: string): { source: string | undefined; warnings: string[] } {
  const r = runCli(['symbol', name, '--source', '--json'], root);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { hits: Array<{ source?: { text: string } }>; warnings: Array<{ kind: string }> };
  assert.equal(out.hits.length, 1);
  return { source: out.hits[0].source?.text, warnings: out.warnings.map((w) => w.kind) };
}

test('a new process serves spans of files in the state they were indexed in, and refuses a same-size rewrite with the mtime put back', async () => {
  const root = tempWorkspace({ 'a.py': 'def alpha():\n    return 1\n', 'b.py': 'def beta():\n    return 2\n' });
  try {
    utimesSync(join(root, 'a.py'), STAMP_S, STAMP_S);
    await sleep(SETTLE_MS);
    const built = runCli(['index', '--json'], root);
    assert.equal(built.code, 0, built.stderr);
    const recorded = stamps(root);
    assert.match(recorded.get('a.py') ?? '', /^\d+:\d+:\d+:\d+$/, 'the indexer recorded no stamp for a settled file');
    assert.deepEqual(symbol(root, 'beta'), { source: 'def beta():\n    return 2', warnings: [] });

    // Same size, other bytes, and the mtime the index recorded: the walk takes the file as
    // unchanged; only the ctime tells the read that this is not the state that was hashed.
    writeFileSync(join(root, 'a.py'), 'def alpha():\n    return 7\n');
    utimesSync(join(root, 'a.py'), STAMP_S, STAMP_S);
    await sleep(SETTLE_MS);
    assert.deepEqual(symbol(root, 'alpha'), { source: undefined, warnings: ['stale_index'] });
  } finally {
    removeWorkspace(root);
  }
});

test('a file read within the clock-tick window of its last change carries no stamp', async () => {
  const root = tempWorkspace({ 'a.py': 'x = 1\n' });
  try {
    writeFileSync(join(root, 'a.py'), 'x = 2\n');
    const racy = readSourceFileSync(root, 'a.py', 1 << 20);
    assert.ok(racy.ok);
    assert.equal(racy.stamp, null, 'a stamp was given for a state the next write within the same tick could share');
    await sleep(SETTLE_MS);
    const settled = readSourceFileSync(root, 'a.py', 1 << 20);
    assert.ok(settled.ok && settled.stamp !== null);
    assert.deepEqual(Buffer.from(readSpanSync(root, 'a.py', 4, 5, settled.stamp)!).toString(), '2');
    writeFileSync(join(root, 'a.py'), 'x = 3\n');
    assert.equal(readSpanSync(root, 'a.py', 4, 5, settled.stamp), null, 'a span was served from a state other than the stamped one');
  } finally {
    removeWorkspace(root);
  }
});

test('a version-12 store is brought to 13 in place: stamps empty, substring totals counted, rows kept', () => {
  const root = tempWorkspace({ 'a.py': 'def alpha():\n    return 1\n' });
  try {
    const built = runCli(['index', '--json'], root);
    assert.equal(built.code, 0, built.stderr);
    const file = join(root, '.rift', 'rift.db');
    const db = new Database(file);
    const before = db.prepare(`SELECT id, name FROM symbols ORDER BY id`).all();
    // Version 12 as it was: no stamps, no substring totals or their triggers and indexes.
    db.exec(`
      ALTER TABLE files DROP COLUMN stamp;
      DROP TRIGGER names_symbol_insert; DROP TRIGGER names_symbol_delete; DROP TRIGGER names_symbol_rename;
      DROP TABLE name_grams; DROP TABLE name_grams_log; DROP INDEX names_suffix; DROP INDEX names_short;
      UPDATE meta SET value = '12' WHERE key = 'schema_version';
    `);
    db.close();
    const store = Store.openFile(file, root);
    try {
      assert.equal(store.meta('schema_version'), '13');
      assert.deepEqual(store.prepared('test.symbols', `SELECT id, name FROM symbols ORDER BY id`).all(), before);
      assert.deepEqual(store.prepared('test.stamps', `SELECT path, stamp FROM files`).all(), [{ path: 'a.py', stamp: null }]);
      assert.equal(store.findSymbols({ query: 'a', offset: 0, limit: 5 }).total, 1);
    } finally {
      store.close();
    }
    assertNamesCounted(file);
  } finally {
    removeWorkspace(root);
  }
});
