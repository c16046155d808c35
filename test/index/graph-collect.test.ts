import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Engine } from '../../src/services/engine.ts';
import { graphEdges } from '../helpers/graph.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// The graph's nodes are what its edges name. An edit re-resolves only the references it can
// affect, and a node whose last edge it dropped goes with it, checked among the nodes of the
// dropped edges alone (a scan of every node took ~1 s per edit at 70,000 files). The list of
// files the resolver starts from is kept between edits, and read again once another connection
// (another rift process) changed it.

function nodes(root: string): { all: string[]; unnamed: number } {
  const db = new Database(join(root, '.rift', 'rift.db'), { readonly: true });
  try {
    const all = (db.prepare(`SELECT path || '#' || qname AS n FROM graph_nodes ORDER BY n`).all() as Array<{ n: string }>).map((r) => r.n);
    const unnamed = (db.prepare(
      `SELECT count(*) AS n FROM graph_nodes WHERE NOT EXISTS (SELECT 1 FROM graph_edges WHERE src = graph_nodes.id)
         AND NOT EXISTS (SELECT 1 FROM graph_edges WHERE dst = graph_nodes.id)`,
    ).get() as { n: number }).n;
    return { all, unnamed };
  } finally {
    db.close();
  }
}

test('an edit drops the nodes whose last edge it removed and keeps those other edges still name', async () => {
  const root = tempWorkspace({
    'a.py': 'def helper():\n    return 1\n\n\ndef lonely():\n    return 2\n',
    'b.py': 'from a import helper, lonely\n\n\ndef both():\n    return helper() + lonely()\n',
    'c.py': 'from a import helper\n\n\ndef one():\n    return helper()\n',
  });
  const engine = await Engine.open(root, { watch: false });
  try {
    await engine.build();
    const before = nodes(root);
    assert.ok(before.all.includes('a.py#lonely'), before.all.join(' '));
    assert.ok(before.all.includes('b.py#both'));
    assert.equal(before.unnamed, 0);

    // b.py stops calling lonely (and renames its function): a.py#lonely and b.py#both lose every edge.
    writeFileSync(join(root, 'b.py'), 'from a import helper\n\n\ndef just():\n    return helper()\n');
    await engine.indexer.refresh(['b.py']);
    const after = nodes(root);
    assert.equal(after.unnamed, 0, 'no node left that no edge names');
    assert.equal(after.all.includes('a.py#lonely'), false);
    assert.equal(after.all.includes('b.py#both'), false);
    assert.ok(after.all.includes('a.py#helper'), 'still called from c.py and b.py');
    assert.ok(after.all.includes('b.py#just'));

    // A file removed takes the nodes only its edges named.
    rmSync(join(root, 'c.py'));
    await engine.indexer.refresh(['c.py']);
    const removed = nodes(root);
    assert.equal(removed.unnamed, 0);
    assert.equal(removed.all.includes('c.py#one'), false);
    assert.ok(removed.all.includes('a.py#helper'), 'b.py still calls it');
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});

test('a file another connection added to the graph is seen by the next edit resolved here', async () => {
  const root = tempWorkspace({
    'a.py': 'from d import fresh\n\n\ndef use():\n    return fresh()\n',
    'c.py': 'def other():\n    return 1\n',
    // Another `fresh`: a guess by name alone would not pick d.py's.
    'e.py': 'def fresh():\n    return 4\n',
  });
  const here = await Engine.open(root, { watch: false });
  const there = await Engine.open(root, { watch: false });
  try {
    await here.build();
    // Resolved here once: the file list is read and kept.
    writeFileSync(join(root, 'c.py'), 'def other():\n    return 2\n');
    await here.indexer.refresh(['c.py']);
    assert.equal(graphEdges(root).some((e) => e.endsWith('-> d.py#fresh')), false, 'd.py does not exist yet');

    // The other connection records d.py.
    writeFileSync(join(root, 'd.py'), 'def fresh():\n    return 3\n');
    await there.indexer.refresh(['d.py']);
    // An edit of a.py resolved here must find d.py in the file list.
    writeFileSync(join(root, 'a.py'), 'from d import fresh\n\n\ndef use():\n    # calls the new module\n    return fresh()\n');
    await here.indexer.refresh(['a.py']);
    assert.deepEqual(graphEdges(root).filter((e) => e.startsWith('a.py#use -')), ['a.py#use -calls/resolution-> d.py#fresh', 'a.py#use -imports/resolution-> d.py#fresh'], graphEdges(root).join('\n'));
  } finally {
    await here.close();
    await there.close();
    removeWorkspace(root);
  }
});

test('the kept file list forgets what a transaction that rolled back recorded', async () => {
  const root = tempWorkspace({ 'a.py': 'def one():\n    return 1\n' });
  const engine = await Engine.open(root, { watch: false });
  try {
    await engine.build();
    const store = engine.indexer.store;
    const graph = engine.indexer.graph.store;
    assert.deepEqual([...graph.recorded().keys()], ['a.py']);
    const facts = (path: string, sha256: string) => ({ path, language: 'python', sha256, declarations: [], relations: { imports: [], members: [], references: [] } });
    assert.throws(() =>
      store.transaction(() => {
        graph.put(facts('ghost.py', 'f'.repeat(64)), false);
        graph.put(facts('a.py', '0'.repeat(64)));
        assert.deepEqual([...graph.recorded().keys()].sort(), ['a.py', 'ghost.py'], 'seen inside the transaction');
        assert.equal(graph.recorded().get('a.py')?.sha256, '0'.repeat(64));
        throw new Error('rolled back');
      }),
    /rolled back/);
    assert.deepEqual([...graph.recorded().keys()], ['a.py'], 'the file the rollback undid is gone');
    assert.notEqual(graph.recorded().get('a.py')?.sha256, '0'.repeat(64), 'and the digest it changed is restored');
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});

test('a file deleted while the binding provider was off leaves the graph when it is on again', async () => {
  const root = tempWorkspace({
    'a.py': 'from b import helper\n\n\ndef caller():\n    return helper()\n',
    'b.py': 'def helper():\n    return 1\n',
  });
  const graphFiles = () => {
    const db = new Database(join(root, '.rift', 'rift.db'), { readonly: true });
    try {
      return (db.prepare(`SELECT path FROM graph_files ORDER BY path`).all() as Array<{ path: string }>).map((r) => r.path);
    } finally {
      db.close();
    }
  };
  const engine = await Engine.open(root, { watch: false });
  try {
    await engine.build();
    assert.deepEqual(graphFiles(), ['a.py', 'b.py']);
    assert.ok(nodes(root).all.includes('b.py#helper'));
    // Off: the store forgets b.py, the graph is not told.
    writeFileSync(join(root, 'rift.toml'), '[providers.binding]\nenabled = false\n');
    rmSync(join(root, 'b.py'));
    await engine.build();
    assert.deepEqual(graphFiles(), ['a.py', 'b.py']);
    // On again: the graph drops what the store no longer parses, and the edge to it.
    writeFileSync(join(root, 'rift.toml'), '[providers.binding]\nenabled = true\n');
    await engine.build();
    assert.deepEqual(graphFiles(), ['a.py']);
    assert.equal(nodes(root).all.includes('b.py#helper'), false);
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});
