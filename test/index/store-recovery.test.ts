import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { DAMAGED_STORES_KEPT } from '../../src/core/limits.ts';
import { openStore } from '../../src/index/store-open.ts';
import { Engine } from '../../src/services/engine.ts';
import { ScriptedModelServer } from '../support/model-server.ts';
import { startRift } from '../helpers/mcp.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';
import { RIFT_ARGS } from '../support/rift-process.ts';

// A damaged `.rift/rift.db` is set aside (renamed, logged) and rebuilt from the tree, and the
// server starts and serves (issue 10). Each pattern of the corpus below damages a store that a
// real `rift index` wrote, then a real `rift mcp` process is started over it.

const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const FILES = { 'a.py': 'def alpha():\n    return 1\n', 'pkg/b.py': 'class Beta:\n    def run(self):\n        pass\n', 'notes.md': '# notes\n' };

/** Deterministic bytes (xorshift), so every run damages the same way. */
function noise(n: number, seed: number): Buffer {
  const out = Buffer.alloc(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

function overwrite(file: string, offset: number, bytes: Buffer): void {
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, bytes, 0, bytes.length, offset);
  } finally {
    closeSync(fd);
  }
}

const PAGE = 4096;

/** Whether `chattr +i` works here (root on a filesystem with inode flags). */
function immutableSupported(dir: string): boolean {
  const probe = join(dir, 'probe');
  writeFileSync(probe, '');
  const ok = spawnSync('chattr', ['+i', probe]).status === 0;
  if (ok) spawnSync('chattr', ['-i', probe]);
  rmSync(probe);
  return ok;
}

interface Pattern {
  name: string;
  damage: (db: string, root: string, outside: string) => void;
  /** Undone before the workspace is removed. */
  cleanup?: (db: string, root: string) => void;
  needsImmutable?: boolean;
  /** The store cannot be set aside: the server must still start and serve (from memory). */
  unmovable?: boolean;
  /** SQLite itself discards the damage (an invalid WAL or shared-memory file): nothing is set aside. */
  sqliteRecovers?: boolean;
  /** The damage lies where opening does not look: the first read to meet it answers storage_failure, the retry is served. */
  foundByRead?: boolean;
  /**
   * Pages at random: opening, a read or the map computed after the build may meet them first, so
   * a read may answer storage_failure once (as foundByRead) or never.
   */
  foundAnywhere?: boolean;
}

/** Overwrites the root page of each named table (a small store keeps each table in its root page). */
function garbleTables(db: string, tables: readonly string[]): void {
  const open = new Database(db, { readonly: true });
  const roots = tables.map((t) => (open.prepare(`SELECT rootpage FROM sqlite_master WHERE name = ?`).get(t) as { rootpage: number }).rootpage);
  open.close();
  for (const [i, page] of roots.entries()) overwrite(db, PAGE * (page - 1), noise(PAGE, 101 + i));
}

const PATTERNS: Pattern[] = [
  { name: 'truncated to half its size', damage: (db) => truncateSync(db, Math.floor(statSync(db).size / 2) + 123) },
  { name: 'truncated inside the header', damage: (db) => truncateSync(db, 60) },
  { name: 'zeroed header', damage: (db) => overwrite(db, 0, Buffer.alloc(100)) },
  { name: 'garbage over the schema page', damage: (db) => overwrite(db, 100, noise(PAGE - 100, 7)) },
  {
    name: 'random page garbage',
    foundAnywhere: true,
    damage: (db) => {
      const pages = Math.floor(statSync(db).size / PAGE);
      for (let i = 0; i < 6; i++) overwrite(db, PAGE * (1 + ((i * 7919) % (pages - 1))), noise(PAGE, 11 + i));
    },
  },
  { name: 'garbage in the WAL', sqliteRecovers: true, damage: (db) => writeFileSync(`${db}-wal`, noise(64 * 1024, 3)) },
  { name: 'garbage in the shared-memory index', sqliteRecovers: true, damage: (db) => writeFileSync(`${db}-shm`, noise(32 * 1024, 5)) },
  { name: 'garbage in the full-text pages', foundByRead: true, damage: (db) => garbleTables(db, ['chunks_fts_data', 'symbols_fts_data']) },
  { name: 'garbage in the stored text chunks', foundByRead: true, damage: (db) => garbleTables(db, ['chunks']) },
  { name: 'a text file', damage: (db) => writeFileSync(db, 'this is not a database\n'.repeat(400)) },
  {
    name: 'the current schema version over the wrong tables',
    damage: (db) => {
      const current = new Database(db, { readonly: true });
      const { value: version } = current.prepare(`SELECT value FROM meta WHERE key = 'schema_version'`).get() as { value: string };
      current.close();
      rmSync(db);
      const other = new Database(db);
      other.exec(`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('schema_version', '${version}');
        CREATE TABLE files (name TEXT); CREATE TABLE blobs (x); CREATE TABLE symbols (x); CREATE TABLE names (x); CREATE TABLE name_grams (x); CREATE TABLE name_grams_log (x); CREATE TABLE names_trigram (x);
        CREATE TABLE chunks (x); CREATE TABLE chunks_fts (x); CREATE TABLE symbols_fts (x); CREATE TABLE docs_fts (x); CREATE TABLE skipped (x);`);
      other.close();
    },
  },
  {
    name: 'a directory in its place',
    damage: (db) => {
      rmSync(db);
      mkdirSync(join(db, 'inner'), { recursive: true });
    },
  },
  { name: 'a FIFO in its place', damage: (db) => (rmSync(db), spawnSync('mkfifo', [db])) },
  {
    name: 'a symlink to a database outside the workspace',
    damage: (db, _root, outside) => {
      cpSync(db, outside);
      rmSync(db);
      symlinkSync(outside, db);
    },
  },
  {
    name: 'a read-only (immutable) file',
    needsImmutable: true,
    unmovable: true,
    damage: (db) => {
      overwrite(db, 0, Buffer.alloc(100));
      spawnSync('chattr', ['+i', db]);
    },
    cleanup: (db) => void spawnSync('chattr', ['-i', db]),
  },
  {
    name: 'a read-only (immutable) .rift directory over a damaged file',
    needsImmutable: true,
    unmovable: true,
    damage: (db, root) => {
      overwrite(db, 0, Buffer.alloc(100));
      spawnSync('chattr', ['+i', join(root, '.rift')]);
    },
    cleanup: (_db, root) => void spawnSync('chattr', ['-i', join(root, '.rift')]),
  },
];

describe('a damaged .rift/rift.db is set aside and rebuilt; the server starts', () => {
  let template = '';
  let scratch = '';
  let immutable = false;
  before(() => {
    template = tempWorkspace(FILES);
    const r = spawnSync(process.execPath, [...RIFT_ARGS, 'index', '--json'], { cwd: template, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    scratch = tempWorkspace({});
    immutable = immutableSupported(scratch);
  });
  after(() => {
    removeWorkspace(template);
    removeWorkspace(scratch);
  });

  for (const p of PATTERNS) {
    test(p.name, async (t) => {
      if (p.needsImmutable && !immutable) {
        t.skip('needs chattr +i (root on a filesystem with inode flags)');
        return;
      }
      const root = join(scratch, p.name.replace(/\W+/g, '-'));
      cpSync(template, root, { recursive: true });
      const db = join(root, '.rift', 'rift.db');
      const outside = join(scratch, `${p.name.replace(/\W+/g, '-')}.outside.db`);
      p.damage(db, root, outside);
      const outsideBefore = existsSync(outside) ? readFileSync(outside) : null;
      const rift = await startRift(root, {}, { standalone: true });
      let failures = 0;
      /** A read, retried once when it answers storage_failure (the store is then being rebuilt). */
      const read = async (name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
        try {
          return await rift.call(name, args);
        } catch (e) {
          const data = (e as { data?: { code: string; retry: string; message: string } }).data;
          if (!(p.foundByRead || p.foundAnywhere) || !data || failures > 0) throw e;
          failures++;
          assert.equal(data.code, 'storage_failure');
          assert.equal(data.retry, 'same_request');
          assert.match(data.message, /file \.rift\/rift\.db, damage SQLITE_CORRUPT\w*, state set aside and being rebuilt from the tree/);
          return rift.call(name, args);
        }
      };
      try {
        type Search = { results: Array<{ path: string }>; warnings: Array<{ kind: string }> };
        let search = (await read('search', { query: 'notes' })) as Search;
        if ((p.foundByRead || p.foundAnywhere) && search.warnings.some((w) => w.kind === 'lexical_ranking_unavailable')) {
          // A full-text tier that fails to load falls back to identifiers for this answer (spec), and is rebuilt.
          failures++;
          search = (await read('search', { query: 'notes' })) as Search;
        }
        assert.deepEqual(search.warnings, []);
        const alpha = (await read('get_symbol', { name: 'alpha' })) as { hits: Array<{ path: string; source?: { text: string } }> };
        assert.deepEqual(alpha.hits.map((h) => [h.path, h.source?.text]), [['a.py', 'def alpha():\n    return 1']]);
        assert.ok(search.results.some((r) => r.path === 'notes.md'), 'the full-text tier was rebuilt too');
        const nodes = (await read('nodes', { path: 'pkg/b.py', position: 0 })) as { nodes: unknown[] };
        if (p.foundByRead) assert.equal(failures, 1, 'the damage was met by a read');
        assert.ok(nodes.nodes.length > 0);
        assert.ok(!rift.stderr().includes(root), 'the log never carries the workspace root');
        if (outsideBefore) assert.deepEqual(readFileSync(outside), outsideBefore, 'nothing was written through the symlink');
        const kept = readdirSync(join(root, '.rift')).filter((n) => n.includes('.damaged-'));
        if (p.sqliteRecovers) {
          assert.deepEqual(kept, []);
          assert.doesNotMatch(rift.stderr(), /WARN +index\.store: /);
          return;
        }
        // The damage is named in the log, without the workspace root.
        assert.match(rift.stderr(), /WARN +index\.store: /);
        if (p.unmovable) {
          assert.deepEqual(kept, [], 'an unmovable store is left as it was');
          assert.match(rift.stderr(), /index kept in memory/);
        } else {
          assert.ok(kept.some((n) => n.startsWith('rift.db.damaged-')), `set aside: ${kept.join(', ')}`);
          assert.match(rift.stderr(), /set aside/);
          // The new store is a working SQLite file the next start keeps.
          assert.ok(statSync(db).isFile());
        }
      } finally {
        try {
          await rift.close();
        } finally {
          p.cleanup?.(db, root);
        }
      }
      if (!p.unmovable) {
        const again = await startRift(root, {}, { standalone: true });
        try {
          assert.equal(((await again.call('get_symbol', { name: 'alpha' })) as { hits: unknown[] }).hits.length, 1);
          assert.doesNotMatch(again.stderr(), /set aside/, 'the rebuilt store is kept');
        } finally {
          await again.close();
        }
      }
    });
  }
});

test('through the workspace server (rift mcp by default), a damaged store is set aside and rebuilt', async () => {
  const root = tempWorkspace(FILES);
  try {
    const built = spawnSync(process.execPath, [...RIFT_ARGS, 'index', '--json'], { cwd: root, encoding: 'utf8' });
    assert.equal(built.status, 0, built.stderr);
    overwrite(join(root, '.rift', 'rift.db'), 0, Buffer.alloc(100));
    const rift = await startRift(root);
    try {
      assert.equal(((await rift.call('get_symbol', { name: 'alpha' })) as { hits: unknown[] }).hits.length, 1);
      assert.match(readFileSync(join(root, '.rift', 'server.log'), 'utf8'), /WARN +index\.store: damaged index set aside; rebuilding it from the tree reason=SQLITE_NOTADB kept=\.rift\/rift\.db\.damaged-/);
    } finally {
      await rift.close();
    }
  } finally {
    removeWorkspace(root);
  }
});

test('rift mcp over a .rift/ nothing can be written to serves in its own process', async (t) => {
  const root = tempWorkspace(FILES);
  if (!immutableSupported(root)) {
    removeWorkspace(root);
    t.skip('needs chattr +i (root on a filesystem with inode flags)');
    return;
  }
  mkdirSync(join(root, '.rift'));
  spawnSync('chattr', ['+i', join(root, '.rift')]);
  try {
    const rift = await startRift(root);
    try {
      assert.equal(((await rift.call('get_symbol', { name: 'alpha' })) as { hits: unknown[] }).hits.length, 1);
      assert.match(rift.stderr(), /WARN +mcp: serving in this process: \.rift\/ is not writable/);
      assert.match(rift.stderr(), /index kept in memory/);
    } finally {
      await rift.close();
    }
  } finally {
    spawnSync('chattr', ['-i', join(root, '.rift')]);
    removeWorkspace(root);
  }
});

const openStoreFixture = fileURLToPath(new URL('./fixtures/open-store.ts', import.meta.url));

/** Runs `node <args>` and resolves with its stdout; rejects on a non-zero exit. */
function runNode(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(out + err) : reject(new Error(`exit ${code}: ${err}`))));
  });
}

test('eight processes opening a fresh workspace store at the same instant all open the one file', async () => {
  // Before: one in a few such crowds lost the race to create `.rift/` (EEXIST) and kept its index
  // in memory. Two crowds, each released at once once every process is loaded.
  for (let round = 0; round < 2; round++) {
    const root = tempWorkspace({ 'a.py': 'def alpha(): pass\n' });
    const go = join(root, '..', `${root.split('/').pop()}.go`);
    try {
      const crowd = Array.from({ length: 8 }, (_, k) => runNode(['--import', tsx, openStoreFixture, root, go, String(k)]));
      while (Array.from({ length: 8 }, (_, k) => existsSync(`${go}.ready-${k}`)).includes(false)) await new Promise((r) => setTimeout(r, 20));
      writeFileSync(go, '');
      const outputs = await Promise.all(crowd);
      for (const out of outputs) {
        assert.doesNotMatch(out, /kept in memory|damaged/, out);
        assert.equal((JSON.parse(out.trim().split('\n').pop()!) as { inMemory: boolean }).inMemory, false, out);
      }
      assert.deepEqual(readdirSync(join(root, '.rift')).filter((n) => n.includes('damaged')), []);
    } finally {
      removeWorkspace(root);
      for (const f of [go, ...Array.from({ length: 8 }, (_, k) => `${go}.ready-${k}`)]) rmSync(f, { force: true });
    }
  }
});

/** Another process holding the write lock of `db` for 1.5 s (a long index batch); resolves once it holds it. */
async function holdLock(db: string, freshWal: boolean): Promise<{ exited: Promise<unknown> }> {
  const setup = freshWal ? `db.pragma('journal_mode = WAL');` : '';
  const holder = spawn(
    process.execPath,
    ['-e', `const D = require(${JSON.stringify(createRequire(import.meta.url).resolve('better-sqlite3'))}); const db = new D(process.argv[1]); ${setup} db.exec('BEGIN EXCLUSIVE'); console.log('held'); setTimeout(() => { db.exec('COMMIT'); db.close(); }, 1500);`, db],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise((r) => holder.once('exit', r));
  await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()));
  return { exited };
}

/** Whether another connection holds the write lock of `db` right now. */
function writeLocked(db: string): boolean {
  const probe = new Database(db, { timeout: 0 });
  try {
    probe.exec('BEGIN IMMEDIATE');
    probe.exec('ROLLBACK');
    return false;
  } catch (e) {
    if ((e as { code?: string }).code !== 'SQLITE_BUSY') throw e;
    return true;
  } finally {
    probe.close();
  }
}

test('a store another process holds busy is waited for when its schema must be written, never replaced by one in memory', async () => {
  const root = tempWorkspace(FILES);
  try {
    mkdirSync(join(root, '.rift'), { recursive: true });
    const db = join(root, '.rift', 'rift.db');
    // A fresh file another process is creating: the schema is written under the lock.
    const { exited } = await holdLock(db, true);
    const started = performance.now();
    const store = openStore(root);
    const waited = performance.now() - started;
    try {
      assert.equal(store.inMemory, false, 'busy is not damage: the file store opens once the lock is free');
      assert.ok(waited >= 500, `openStore waited for the lock (${Math.round(waited)} ms)`);
      assert.deepEqual(readdirSync(join(root, '.rift')).filter((n) => n.includes('damaged')), []);
    } finally {
      store.close();
      await exited;
    }
  } finally {
    removeWorkspace(root);
  }
});

test('a current store opens while another process holds its write lock (reads need no lock)', async () => {
  const root = tempWorkspace(FILES);
  try {
    const first = openStore(root);
    first.commitRevision();
    first.close();
    const db = join(root, '.rift', 'rift.db');
    const { exited } = await holdLock(db, false);
    const store = openStore(root);
    try {
      // Opened, and read, while the other process still holds the lock.
      assert.equal(store.inMemory, false);
      assert.equal(typeof store.meta('tree_revision'), 'string');
      assert.equal(writeLocked(db), true, 'the lock was released before the store opened: the test proves nothing');
    } finally {
      store.close();
      await exited;
    }
  } finally {
    removeWorkspace(root);
  }
});

test('set-aside stores never pile up: the newest DAMAGED_STORES_KEPT are kept', () => {
  const root = tempWorkspace({});
  try {
    const db = join(root, '.rift', 'rift.db');
    for (let i = 0; i < DAMAGED_STORES_KEPT + 2; i++) {
      openStore(root).close();
      writeFileSync(db, `not a database, round ${i}\n`);
    }
    openStore(root).close();
    const kept = readdirSync(join(root, '.rift')).filter((n) => n.startsWith('rift.db.damaged-')).sort();
    assert.equal(kept.length, DAMAGED_STORES_KEPT);
    // The newest is the last damaged file written.
    assert.equal(readFileSync(join(root, '.rift', kept[kept.length - 1]), 'utf8'), `not a database, round ${DAMAGED_STORES_KEPT + 1}\n`);
  } finally {
    removeWorkspace(root);
  }
});

test('a .rift that is a symlink out of the workspace is set aside; nothing is written through it', async () => {
  const root = tempWorkspace({ 'a.py': 'def alpha(): pass\n' });
  const outside = tempWorkspace({ 'keep.txt': 'untouched\n' });
  try {
    symlinkSync(outside, join(root, '.rift'));
    const rift = await startRift(root);
    try {
      assert.equal(((await rift.call('get_symbol', { name: 'alpha' })) as { hits: unknown[] }).hits.length, 1);
      assert.match(rift.stderr(), /WARN +index\.store: state directory set aside reason="a symlink" kept=\.rift\.damaged-/);
    } finally {
      await rift.close();
    }
    assert.deepEqual(readdirSync(outside), ['keep.txt'], 'the link target is untouched');
    assert.ok(statSync(join(root, '.rift', 'rift.db')).isFile());
    assert.ok(readdirSync(root).some((n) => n.startsWith('.rift.damaged-')));
  } finally {
    removeWorkspace(root);
    removeWorkspace(outside);
  }
});

test('after a read meets damage and the store is replaced, revision reads and the semantic tier use the new store', async () => {
  const model = await ScriptedModelServer.start();
  model.embedConcepts = [['shrink', 'rollover', 'archive']];
  const root = tempWorkspace({
    ...FILES,
    'logs.py': 'def rollover_when_big(path):\n    """Archive the old file once it passes the size limit."""\n    return path\n',
    'rift.toml': `[search.semantic]\nenabled = true\nmodel = "embed-test"\nprovider = "ollama"\nurl = "${model.url}"\n`,
  });
  try {
    for (const args of [['init', '-q'], ['add', '-A'], ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'one']]) {
      assert.equal(spawnSync('git', args, { cwd: root }).status, 0);
    }
    const built = spawnSync(process.execPath, [...RIFT_ARGS, 'index'], { cwd: root, encoding: 'utf8' });
    assert.equal(built.status, 0, built.stderr);
    garbleTables(join(root, '.rift', 'rift.db'), ['chunks']);
    const engine = await Engine.open(root, { watch: false });
    try {
      await assert.rejects(engine.search.search({ query: 'notes' }), (e: { code?: string }) => e.code === 'storage_failure');
      await engine.build();
      await engine.semantic.idle();
      const ranked = await engine.search.search({ query: 'shrink the journal' });
      assert.deepEqual(ranked.warnings, [], 'the semantic tier prepared its vectors from the new store');
      assert.equal(ranked.results[0]?.path, 'logs.py');
      const atHead = await engine.read.getSymbol({ name: 'alpha', rev: 'HEAD' });
      assert.deepEqual(atHead.hits.map((h) => h.path), ['a.py'], 'a revision is indexed beside the new store, not the closed one');
    } finally {
      await engine.close();
    }
  } finally {
    await model.close();
    removeWorkspace(root);
  }
});
