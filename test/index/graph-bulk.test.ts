import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { symbolId } from '../../src/core/ids.ts';
import { BuildStopped, type BuildStats } from '../../src/index/indexer.ts';
import { Engine } from '../../src/services/engine.ts';
import { graphEdges, pythonModules } from '../helpers/graph.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// A cold build of more than the bulk threshold (256 parsed files) records the graph's facts
// without their secondary indexes and rewrites every edge in one full pass with the edge indexes
// built after it. What it stores must be exactly what file-by-file builds store, and the indexes
// must be there afterwards — also after a process that ended mid-build left them dropped.

const MODULES = 300;

const tree = () => pythonModules(MODULES);

function indexes(root: string): string[] {
  const db = new Database(join(root, '.rift', 'rift.db'), { readonly: true });
  try {
    return (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'graph_%'`).all() as Array<{ name: string }>).map((r) => r.name).sort();
  } finally {
    db.close();
  }
}

/** Builds the tree once; how many files it parsed. */
async function build(root: string): Promise<number> {
  const engine = await Engine.open(root, { watch: false });
  try {
    return (await engine.build()).reparsed;
  } finally {
    await engine.close();
  }
}

/**
 * Starts `engine`'s build and waits for a read answered during it (once the first files are
 * stored: the build's first partial publication); `done` tells whether the build had ended by then.
 */
async function readDuringBuild(engine: Engine): Promise<{ building: Promise<BuildStats>; done: boolean }> {
  let finished = false;
  const building = engine.build().then((r) => ((finished = true), r));
  await engine.search.search({ query: 'helper', limit: 1 });
  return { building, done: finished };
}

/** The tree's 300 modules again beside it (`m0_b.py`, …): a bulk-sized build into a graph that holds files. */
function addCopies(root: string): void {
  for (const [path, text] of Object.entries(tree())) writeFileSync(join(root, path.replace(/\.py$/, '_b.py')), text);
}

test('a bulk cold build stores the same graph as file-by-file builds, with every index', async () => {
  const files = tree();
  const bulk = tempWorkspace(files);
  // The same tree reached in steps below the bulk threshold: 200 files, then the other 100.
  const stepped = tempWorkspace(Object.fromEntries(Object.entries(files).slice(0, 200)));
  try {
    assert.equal(await build(bulk), MODULES);
    assert.equal(await build(stepped), 200);
    for (const [path, text] of Object.entries(files).slice(200)) writeFileSync(join(stepped, path), text);
    assert.equal(await build(stepped), 100);

    const got = graphEdges(bulk);
    assert.deepEqual(got, graphEdges(stepped));
    // Every kind of edge is there (so the comparison covers them all).
    for (const kind of ['calls', 'constructs', 'extends', 'imports', 'contains']) {
      assert.ok(got.some((e) => e.includes(` -${kind}/`)), `an edge of kind ${kind}`);
    }
    assert.ok(got.includes('pkg/m5.py#Child5 -extends/resolution-> pkg/m4.py#Base4'), 'a base class across modules');
    const expected = indexes(stepped);
    assert.ok(expected.length >= 13, expected.join(', '));
    assert.deepEqual(indexes(bulk), expected);
  } finally {
    removeWorkspace(bulk);
    removeWorkspace(stepped);
  }
});

test('graph indexes a process dropped and never rebuilt (killed mid-build) are back at the next open', async () => {
  const root = tempWorkspace(tree());
  try {
    await build(root);
    const before = indexes(root);
    const db = new Database(join(root, '.rift', 'rift.db'));
    for (const name of ['graph_refs_name', 'graph_decls_name', 'graph_edges_dst']) db.exec(`DROP INDEX ${name}`);
    db.close();
    assert.equal(indexes(root).length, before.length - 3);

    const engine = await Engine.open(root, { watch: false });
    try {
      assert.deepEqual(indexes(root), before);
      // The graph answers through the restored indexes: helper4's callers (Base5.step, Child?.step).
      const callers = await engine.search.search({ traversal: { seed: symbolId('python', 'pkg/m4.py', 'helper4'), direction: 'incoming', facets: ['calls'] }, limit: 100 });
      const ids = callers.results.map((h) => (h.hit.target === 'symbol' ? h.hit.symbol.id : h.path));
      assert.ok(ids.includes(symbolId('python', 'pkg/m5.py', 'Base5.step')), ids.join(', '));
    } finally {
      await engine.close();
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a map read while a cold build records facts unindexed answers at once; entry points come with the build', async () => {
  const root = tempWorkspace(tree());
  const engine = await Engine.open(root, { watch: false });
  try {
    const { building, done } = await readDuringBuild(engine);
    assert.equal(done, false, 'read during the build');
    assert.equal(engine.indexer.graph.store.factsIndexed(), false, 'the facts are recorded without their indexes');
    assert.deepEqual(engine.map.current().entry_points, []);
    await building;
    assert.equal(engine.indexer.graph.store.factsIndexed(), true);
    assert.deepEqual(engine.map.current().entry_points, [symbolId('python', 'pkg/m0.py', 'helper0')]);
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});

test('a bulk-sized build into a graph that already holds files keeps the fact indexes while it records', async () => {
  const root = tempWorkspace(tree());
  try {
    await build(root);
    const before = indexes(root);
    // A build past the bulk threshold, into a graph whose lookups others serve from.
    addCopies(root);
    const engine = await Engine.open(root, { watch: false });
    try {
      const { building, done } = await readDuringBuild(engine);
      assert.equal(done, false, 'read during the build');
      assert.equal(engine.indexer.graph.store.factsIndexed(), true, 'no index dropped');
      assert.equal((await building).reparsed, MODULES);
    } finally {
      await engine.close();
    }
    assert.deepEqual(indexes(root), before);
  } finally {
    removeWorkspace(root);
  }
});

/** This process's threads (Linux): a parse worker is one. */
const threads = () => readdirSync('/proc/self/task').length;

test("a one-shot engine's bulk build ends its parse workers once parsed, before resolving; the next one's starts them again", async () => {
  const root = tempWorkspace(tree());
  try {
    // libuv's thread pool starts with the first asynchronous file read: started before counting.
    await readFile(join(root, 'pkg/m0.py'));
    const idle = threads();
    for (const round of [0, 1]) {
      if (round === 1) addCopies(root);
      const engine = await Engine.open(root, { watch: false });
      try {
        const { building } = await readDuringBuild(engine);
        const during = threads();
        assert.equal((await building).reparsed, MODULES);
        assert.ok(during > idle, `workers while parsing: ${during} threads against ${idle}`);
        assert.equal(threads(), idle, 'the workers ended with the build');
      } finally {
        await engine.close();
      }
    }
    assert.ok(graphEdges(root).includes('pkg/m5_b.py#Child5 -extends/resolution-> pkg/m4.py#Base4'), 'the second build resolved');
  } finally {
    removeWorkspace(root);
  }
});

test('an engine closed during its cold build stops it; what it stored stays, flagged for resolving, and the next build reads only the rest', async () => {
  const root = tempWorkspace(tree());
  const clean = tempWorkspace(tree());
  try {
    const engine = await Engine.open(root, { watch: false });
    const { building, done } = await readDuringBuild(engine);
    assert.equal(done, false, 'closed during the build');
    const stopped = building.then(
      () => null,
      (e: Error) => e,
    );
    await engine.close();
    const err = await stopped;
    assert.ok(err instanceof BuildStopped, String(err));
    const db = new Database(join(root, '.rift', 'rift.db'), { readonly: true });
    const stored = (db.prepare(`SELECT count(*) AS n FROM files`).get() as { n: number }).n;
    // The facts recorded are not resolved yet: the flag that says so committed with them.
    const pending = db.prepare(`SELECT value FROM meta WHERE key = 'graph_pending'`).get();
    db.close();
    assert.ok(stored > 0 && stored < MODULES, `stored ${stored} of ${MODULES}`);
    assert.equal(err.stored, stored);
    assert.deepEqual(pending, { value: '1' });

    assert.equal(await build(root), MODULES - stored);
    await build(clean);
    assert.deepEqual(graphEdges(root), graphEdges(clean));
  } finally {
    removeWorkspace(root);
    removeWorkspace(clean);
  }
});
