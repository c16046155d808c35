import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { sha256Hex, treeRevision } from '../../src/core/digest.ts';
import { Store, type FileUpdate } from '../../src/index/store.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// The store keeps every file's digest in path order between reads (the tree revision of each
// edit reads them): its own batches bring them up to date, another connection's commit or a
// rolled-back transaction has them read again. Each revision here is checked against one
// computed from the table itself.

const update = (path: string, text: string): FileUpdate => ({ path, sha256: sha256Hex(text), size: text.length, mtimeMs: 1, stamp: null, language: null, lines: 1, symbols: null, unparsed: null, text: null });

/** The tree revision of what the database file holds, read by a connection of its own. */
function fromTable(file: string): string {
  const db = new Database(file, { readonly: true });
  try {
    return treeRevision(db.prepare(`SELECT f.path, b.sha256 FROM files f JOIN blobs b ON b.id = f.blob_id ORDER BY f.path`).all() as Array<{ path: string; sha256: string }>);
  } finally {
    db.close();
  }
}

test("a store's kept digests follow its own batches, another connection's commits and rollbacks", () => {
  const root = tempWorkspace();
  mkdirSync(join(root, '.rift'));
  const file = join(root, '.rift', 'rift.db');
  const here = Store.openFile(file, root);
  const there = Store.openFile(file, root);
  try {
    assert.equal(here.computeTreeRevision(), fromTable(file), 'empty');
    here.applyBatch(['b.py', 'a/z.py', 'é.py', 'a.py', '😀.py', 'a-b.py', 'a/b/c.py'].map((p) => update(p, p)), [], []);
    assert.equal(here.computeTreeRevision(), fromTable(file));

    // Its own batches: changed, new (between kept paths), deleted, deleted and written again, unknown.
    here.applyBatch([update('a.py', 'two'), update('a/c.py', 'new'), update('0.py', 'first'), update('b.py', 'again')], [], ['a/z.py', 'b.py', 'missing.py']);
    assert.equal(here.computeTreeRevision(), fromTable(file));
    here.applyBatch([], [], ['0.py', '😀.py', 'a-b.py']);
    assert.equal(here.computeTreeRevision(), fromTable(file));

    // Another connection (another rift process) commits: read again.
    const before = here.computeTreeRevision();
    there.applyBatch([update('c.py', 'theirs'), update('a.py', 'theirs too')], [], ['é.py']);
    assert.notEqual(fromTable(file), before);
    assert.equal(here.computeTreeRevision(), fromTable(file), "another connection's commit is seen");

    // A transaction that rolls back takes its batch with it.
    const committed = here.computeTreeRevision();
    assert.throws(() =>
      here.transaction(() => {
        here.applyBatch([update('ghost.py', 'x'), update('a.py', 'changed')], [], ['c.py']);
        assert.notEqual(here.computeTreeRevision(), committed, 'seen inside the transaction');
        throw new Error('rolled back');
      }),
    /rolled back/);
    assert.equal(here.computeTreeRevision(), committed);
    assert.equal(here.computeTreeRevision(), fromTable(file));

    // With changes applied (what the watcher saw and the index has not stored yet): changed,
    // gone, and new paths before, between and after the stored ones.
    const stored = (): Array<{ path: string; sha256: string }> => {
      const db = new Database(file, { readonly: true });
      try {
        return db.prepare(`SELECT f.path, b.sha256 FROM files f JOIN blobs b ON b.id = f.blob_id ORDER BY f.path`).all() as Array<{ path: string; sha256: string }>;
      } finally {
        db.close();
      }
    };
    const rows = stored();
    assert.deepEqual(rows.map((r) => r.path), ['a.py', 'a/b/c.py', 'a/c.py', 'b.py', 'c.py']);
    const changes = new Map<string, string | null>([
      ['a/c.py', sha256Hex('edited')], ['c.py', null], ['!first.py', sha256Hex('1')], ['a/b.py', sha256Hex('2')], ['zz/last.py', sha256Hex('3')], ['gone-anyway.py', null],
    ]);
    const expected = [...rows.filter((r) => r.path !== 'c.py').map((r) => (r.path === 'a/c.py' ? { path: r.path, sha256: sha256Hex('edited') } : r)),
      { path: '!first.py', sha256: sha256Hex('1') }, { path: 'a/b.py', sha256: sha256Hex('2') }, { path: 'zz/last.py', sha256: sha256Hex('3') }]
      .sort((x, y) => (Buffer.compare(Buffer.from(x.path), Buffer.from(y.path))));
    assert.equal(here.treeRevisionWith(changes), treeRevision(expected));
    assert.equal(here.treeRevisionWith(new Map()), fromTable(file));
    // A file added right before a stored one that changed too (both at one place).
    const both = new Map([['b.py', sha256Hex('b edited')], ['a/zz.py', sha256Hex('zz')]]);
    const bothRows = [...rows.map((r) => (r.path === 'b.py' ? { path: r.path, sha256: sha256Hex('b edited') } : r)), { path: 'a/zz.py', sha256: sha256Hex('zz') }]
      .sort((x, y) => Buffer.compare(Buffer.from(x.path), Buffer.from(y.path)));
    assert.equal(here.treeRevisionWith(both), treeRevision(bothRows));

    // A committed change of a stored file's digest alone (written into the kept encoding in place).
    here.applyBatch([update('a/b/c.py', 'in place')], [], []);
    assert.equal(here.computeTreeRevision(), fromTable(file));
    here.applyBatch([update('a.py', 'again'), update('b.py', 'and again')], [], []);
    assert.equal(here.computeTreeRevision(), fromTable(file));
    // A batch adding or removing many files (a build, a branch switch) has them read again.
    const many = Array.from({ length: 200 }, (_, i) => update(`many/${i}.py`, `m${i}`));
    here.applyBatch(many, [], ['a.py']);
    assert.equal(here.computeTreeRevision(), fromTable(file));
    here.applyBatch([update('many/7.py', 'changed')], [], many.slice(100).map((u) => u.path));
    assert.equal(here.computeTreeRevision(), fromTable(file));
  } finally {
    here.close();
    there.close();
    removeWorkspace(root);
  }
});
