import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { Engine } from '../../src/services/engine.ts';
import type { Store } from '../../src/index/store.ts';
import { assertNamesCounted } from '../helpers/names.ts';
import { eventually, removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';
import { RIFT_ARGS } from '../support/rift-process.ts';

// get_symbol matches and ranks distinct names (the store's `names` table: each (qualified name,
// short name) once, with how many declarations carry it) and then reads the page's declarations
// name by name. Two things must hold whatever the tree does: the table is exactly the
// declarations grouped by name, and every page is the slice of one plain order over every
// declaration — rank, qualified name, short name, path, span start, id — with the true total.
// A cold build past the bulk threshold counts the names once at its end; reads meanwhile scan
// the declarations in the same order.

const module = (tag: string, extra = '') =>
  [
    'class Foo:',
    '    def __init__(self): pass',
    '    def parse(self): pass',
    `    def parse_${tag}(self): pass`,
    'def parse(): pass',
    'def Parse(): pass',
    `PARSE_LIMIT_${tag.toUpperCase()} = 1`,
    'def reparse(): pass',
    'def p(): pass',
    // Suffixes of one- and two-character queries that are not the whole name.
    'def setup(): pass',
    'def spa(): pass',
    'def café(): pass',
    extra,
    '',
  ].join('\n');

const QUERIES = ['__init__', 'parse', 'Parse', 'PARSE', 'foo', 'Foo.__init__', 'p', 'pa', 'rse', 'x', 'limit_b', 'zzz', 'É', 'é', 'fé', 'e', '_', 'P', 'q'];
const LIMITS = [1, 2, 3, 7, 50];
/** Over 300 modules (thousands of matches a query), fewer and longer pages. */
const BULK_LIMITS = [13, 97];

type Row = { id: number; qname: string; name: string; path: string; span_start: number };

function rank(r: Row, query: string): number {
  const lower = query.toLowerCase();
  if (r.qname === query) return 0;
  if (r.name === query) return 1;
  if (r.qname.toLowerCase() === lower || r.name.toLowerCase() === lower) return 2;
  if (r.qname.toLowerCase().endsWith(lower)) return 3;
  return 4;
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Every declaration the query matches, in the documented order, computed from the symbols table. */
function expected(store: Store, query: string): number[] {
  const all = store
    .prepared('test.names.all', `SELECT s.id, s.qname, s.name, f.path, s.span_start FROM symbols s JOIN files f ON f.blob_id = s.blob_id`)
    .all() as Row[];
  const lower = query.toLowerCase();
  return all
    .filter((r) => r.qname.toLowerCase().includes(lower) || r.name.toLowerCase() === lower)
    .sort((a, b) => rank(a, query) - rank(b, query) || cmp(a.qname, b.qname) || cmp(a.name, b.name) || cmp(a.path, b.path) || a.span_start - b.span_start || a.id - b.id)
    .map((r) => r.id);
}

function assertPages(store: Store, label: string, limits: readonly number[] = LIMITS): void {
  for (const query of QUERIES) {
    const want = expected(store, query);
    for (const limit of limits) {
      const got: number[] = [];
      for (let offset = 0; offset <= want.length + limit; offset += limit) {
        const page = store.findSymbols({ query, offset, limit });
        assert.equal(page.total, want.length, `${label}: total of ${JSON.stringify(query)} at offset ${offset}, limit ${limit}`);
        assert.ok(page.rows.length <= limit);
        got.push(...page.rows.map((r) => r.id));
      }
      assert.deepEqual(got, want, `${label}: pages of ${JSON.stringify(query)} under limit ${limit}`);
    }
  }
}

test('the name table follows every change to the declarations, and every page is a slice of one order', async () => {
  const files: Record<string, string> = {};
  for (const tag of ['a', 'b', 'c', 'd']) files[`pkg_${tag}/mod.py`] = module(tag);
  files['z/Foo.py'] = module('z', 'class É:\n    def x(self): pass');
  const root = tempWorkspace(files);
  const engine = await Engine.open(root, { watch: false });
  const db = join(root, '.rift', 'rift.db');
  try {
    await engine.build();
    const store = engine.indexer.store;
    assertNamesCounted(db);
    assert.equal(store.findSymbols({ query: '__init__', offset: 0, limit: 1 }).total, 5, 'one __init__ per file');
    assertPages(store, 'built');

    // One file loses declarations and renames another; one is deleted; one arrives with names
    // already counted elsewhere and a name of its own.
    writeFileSync(join(root, 'pkg_a', 'mod.py'), 'class Foo:\n    def __init__(self): pass\n\ndef parse_renamed(): pass\n');
    rmSync(join(root, 'pkg_b', 'mod.py'));
    writeFileSync(join(root, 'new.py'), module('n', 'def only_here(): pass'));
    await engine.indexer.refresh(['pkg_a/mod.py', 'pkg_b/mod.py', 'new.py']);
    assertNamesCounted(db);
    assert.equal(store.findSymbols({ query: 'parse_b', offset: 0, limit: 5 }).total, 0, 'a deleted file leaves no name behind');
    assert.equal(store.findSymbols({ query: 'parse_renamed', offset: 0, limit: 5 }).total, 1);
    assertPages(store, 'edited');

    // Every declaration gone: the table is empty, not a row of zero counts.
    for (const path of Object.keys(files)) rmSync(join(root, path), { force: true });
    rmSync(join(root, 'new.py'));
    await engine.indexer.refresh([...Object.keys(files), 'new.py']);
    assertNamesCounted(db);
    assert.equal((store.prepared('test.names.count', `SELECT count(*) AS n FROM names`).get() as { n: number }).n, 0);
    assert.deepEqual(store.findSymbols({ query: 'p', offset: 0, limit: 5 }), { total: 0, rows: [] });
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});

/** Whether the triggers that keep `names` counting are in place. */
function counting(db: string): boolean {
  const conn = new Database(db, { readonly: true });
  try {
    return (conn.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'names_symbol_%'`).get() as { n: number }).n === 3;
  } finally {
    conn.close();
  }
}

test('a bulk cold build counts names at its end, reads during it scan in the same order, and a build killed before its end is counted at the next open', async () => {
  // Past the bulk threshold (256 files), every module declaring the shared names again.
  const files: Record<string, string> = {};
  for (let i = 0; i < 300; i++) files[`pkg/m${String(i).padStart(3, '0')}.py`] = module(`m${i}`);
  const root = tempWorkspace(files);
  const db = join(root, '.rift', 'rift.db');
  try {
    const engine = await Engine.open(root, { watch: false });
    try {
      const building = engine.build();
      // Answered once the first batch is stored, while the build goes on.
      await engine.read.getSymbol({ name: 'parse', include: [] });
      assert.equal(counting(db), false, 'names are not counted per row during a cold build');
      assertPages(engine.indexer.store, 'during the build', BULK_LIMITS);
      await building;
      assert.equal(counting(db), true);
      assertNamesCounted(db);
      assert.equal(engine.indexer.store.findSymbols({ query: 'Foo.__init__', offset: 0, limit: 1 }).total, 300);
      assertPages(engine.indexer.store, 'after the build', BULK_LIMITS);
    } finally {
      await engine.close();
    }

    // What a process killed mid-build leaves: the triggers dropped, names missing.
    const conn = new Database(db);
    conn.exec(`DROP TRIGGER names_symbol_insert; DROP TRIGGER names_symbol_delete; DROP TRIGGER names_symbol_rename; DELETE FROM names`);
    conn.close();
    const next = await Engine.open(root, { watch: false });
    try {
      assert.equal(counting(db), true, 'restored at open');
      assertNamesCounted(db);
      assertPages(next.indexer.store, 'after a killed build', BULK_LIMITS);
    } finally {
      await next.close();
    }
  } finally {
    removeWorkspace(root);
  }
});

/** True once `rift index` is inside a cold build: declarations stored, names not counted per row. */
function midBuild(db: string): true | undefined {
  if (!existsSync(db)) return undefined;
  const conn = new Database(db, { readonly: true });
  try {
    const stored = (conn.prepare(`SELECT count(*) AS n FROM symbols`).get() as { n: number }).n;
    return stored > 0 && !counting(db) ? true : undefined;
  } finally {
    conn.close();
  }
}

test('across processes: a cold build SIGKILLed mid-way is counted at the next open; a process opening during one leaves the count whole', async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 1200; i++) files[`pkg/m${String(i).padStart(4, '0')}.py`] = module(`m${i}`);
  for (const scenario of ['killed', 'opened meanwhile'] as const) {
    const root = tempWorkspace(files);
    const db = join(root, '.rift', 'rift.db');
    try {
      const build = spawn(process.execPath, [...RIFT_ARGS, 'index'], { cwd: root, stdio: 'ignore' });
      const exited = once(build, 'exit');
      await eventually(() => midBuild(db), 60_000);
      if (scenario === 'killed') {
        build.kill('SIGKILL');
        await exited;
      } else {
        // Another process opens the store mid-build (as any rift command does): it counts the
        // names stored so far and puts the triggers back; the build goes on counting per row.
        const other = spawnSync(
          process.execPath,
          ['--input-type=module', '-e', `const { openStore } = await import(${JSON.stringify(new URL('../../dist/index/store-open.js', import.meta.url).href)}); openStore(process.argv[1]).close();`, root],
          { encoding: 'utf8' },
        );
        assert.equal(other.status, 0, other.stderr);
        assert.equal(counting(db), true, 'the other process restored the triggers');
        const [code] = await exited;
        assert.equal(code, 0);
      }
      const engine = await Engine.open(root, { watch: false });
      try {
        await engine.build();
        assert.equal(counting(db), true, scenario);
        assertNamesCounted(db);
        assert.equal(engine.indexer.store.findSymbols({ query: 'Foo.__init__', offset: 0, limit: 1 }).total, 1200, scenario);
      } finally {
        await engine.close();
      }
    } finally {
      removeWorkspace(root);
    }
  }
});
