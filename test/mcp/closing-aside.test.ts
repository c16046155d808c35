import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { graphEdges, pythonModules } from '../helpers/graph.ts';
import { runCli } from '../helpers/cli.ts';
import { RIFT_ARGS } from '../support/rift-process.ts';
import { startRift, type RiftMcp } from '../helpers/mcp.ts';
import { eventually, holdStoreWriteLock, removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// A serving engine runs a build's closing work — what a bulk build owes the store (the full-text
// merge, the name count, the graph's fact indexes) and a large resolve pass — on a worker thread
// with its own connection: reads answer meanwhile, a walk of the graph waits for the pass, and the
// store ends as a one-shot build's inline work leaves it. A process killed during that work leaves
// it recorded as owed, and the next one does it. The work is held up here the way another process
// would hold it up: by holding the store's write lock (a one-shot `rift index` elsewhere, say).

const MODULES = 240;

/** An indexed workspace (one-shot build, inline pass) and its edges, then its graph marked pending. */
function pendingWorkspace(): { root: string; edges: string[] } {
  const root = tempWorkspace(pythonModules(MODULES));
  const built = runCli(['index'], root);
  assert.equal(built.code, 0, built.stderr);
  const edges = graphEdges(root);
  assert.ok(edges.length > MODULES * 4, `${edges.length} edges`);
  // What a process killed between recording facts and resolving them leaves behind.
  const db = new Database(join(root, '.rift', 'rift.db'));
  db.prepare(`INSERT OR REPLACE INTO meta(key, value) VALUES ('graph_pending', '1')`).run();
  db.close();
  return { root, edges };
}

function graphPending(root: string): boolean {
  const db = new Database(join(root, '.rift', 'rift.db'), { readonly: true });
  try {
    return db.prepare(`SELECT value FROM meta WHERE key = 'graph_pending'`).get() !== undefined;
  } finally {
    db.close();
  }
}

async function helperId(rift: RiftMcp, name: string): Promise<string> {
  const r = (await rift.call('get_symbol', { name })) as { hits: Array<{ symbol: { id: string; name: string } }> };
  const exact = r.hits.filter((h) => h.symbol.name === name);
  assert.equal(exact.length, 1, JSON.stringify(r.hits.map((h) => h.symbol.id)));
  return exact[0].symbol.id;
}

/** The paths of what calls `helper7` (Base8.step, and Child172.step through `m7.helper7()`). */
async function callersOfHelper7(rift: RiftMcp, seed: string): Promise<string[]> {
  const r = (await rift.call('search', { traversal: { seed, direction: 'incoming', depth: 1, facets: ['calls'] } })) as { results: Array<{ path: string }> };
  return [...new Set(r.results.map((h) => h.path))].sort();
}

test('reads answer while a large resolve pass waits; a walk of the graph waits for it and sees every edge', async () => {
  const { root, edges } = pendingWorkspace();
  const lock = holdStoreWriteLock(root);
  let released = false;
  let rift: RiftMcp | null = null;
  try {
    rift = await startRift(root, {}, { standalone: true });
    // The pass cannot take the lock: on the serving thread it would hold every read with it.
    const seed = await helperId(rift, 'helper7');
    const search = (await rift.call('search', { query: 'helper8' })) as { results: unknown[]; warnings: unknown[] };
    assert.ok(search.results.length > 0);
    assert.deepEqual(search.warnings, []);
    let walkedAt: 'before' | 'after' | null = null;
    const walk = callersOfHelper7(rift, seed).then((paths) => {
      walkedAt = released ? 'after' : 'before';
      return paths;
    });
    // Several more reads round-trip while the walk is outstanding.
    for (let i = 0; i < 5; i++) await helperId(rift, `helper${i}`);
    assert.equal(walkedAt, null, 'a walk of the graph answered before the resolve pass could run');
    assert.ok(graphPending(root));
    released = true;
    lock.release();
    assert.deepEqual(await walk, ['pkg/m172.py', 'pkg/m8.py']);
    assert.equal(walkedAt, 'after');
    assert.equal(graphPending(root), false);
    assert.deepEqual(graphEdges(root), edges);
  } finally {
    lock.release();
    await rift?.close();
    removeWorkspace(root);
  }
});

test('a one-shot build that finds the store sealed with its walk but the graph pending still resolves the graph', () => {
  const { root, edges } = pendingWorkspace();
  try {
    const run = runCli(['index'], root);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /re-parsed 0 changed files/);
    assert.equal(graphPending(root), false);
    assert.deepEqual(graphEdges(root), edges);
  } finally {
    removeWorkspace(root);
  }
});

test('a server killed while its resolve pass runs aside leaves the graph pending, and the next resolves it', async () => {
  const { root, edges } = pendingWorkspace();
  const lock = holdStoreWriteLock(root);
  try {
    const first = await startRift(root, {}, { standalone: true });
    await helperId(first, 'helper7'); // serving: its pass waits for the lock
    process.kill(first.pid!, 'SIGKILL');
    await first.close().catch(() => undefined);
    lock.release();
    assert.ok(graphPending(root), 'the pending mark must survive a pass that never committed');

    const second = await startRift(root, {}, { standalone: true });
    try {
      assert.deepEqual(await callersOfHelper7(second, await helperId(second, 'helper7')), ['pkg/m172.py', 'pkg/m8.py']);
      assert.equal(graphPending(root), false);
      assert.deepEqual(graphEdges(root), edges);
    } finally {
      await second.close();
    }
  } finally {
    lock.release();
    removeWorkspace(root);
  }
});

test('a server asked to stop while its pass waits stops at once, leaving the graph pending', async () => {
  const { root } = pendingWorkspace();
  const lock = holdStoreWriteLock(root);
  const child = spawn(process.execPath, [...RIFT_ARGS, 'mcp', '--standalone'], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
  try {
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.resume();
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
    const send = (msg: unknown) => child.stdin.write(JSON.stringify(msg) + '\n');
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_symbol', arguments: { name: 'helper7' } } });
    // Answered while the pass waits for the lock.
    await eventually(() => (stdout.includes('"id":2') ? true : undefined), 60_000);
    // End of input stops the server: the pass aside is abandoned, not waited for.
    child.stdin.end();
    const code = await Promise.race([exited, new Promise<'waiting'>((resolve) => setTimeout(() => resolve('waiting'), 20_000))]);
    assert.equal(code, 0, 'the server waited for the lock another process holds instead of stopping');
    assert.ok(graphPending(root));
  } finally {
    child.kill('SIGKILL');
    lock.release();
    removeWorkspace(root);
  }
});

test('a restart that finds most files changed resolves aside, and so does a batch of edits: both reach the graph of a fresh build', async () => {
  const { root } = pendingWorkspace();
  const fresh = tempWorkspace(pythonModules(MODULES, 2));
  try {
    const built = runCli(['index'], fresh);
    assert.equal(built.code, 0, built.stderr);
    const freshEdges = graphEdges(fresh);
    // Changed while no server ran: the restart's reconcile re-parses every file.
    for (const [path, text] of Object.entries(pythonModules(MODULES, 2))) writeFileSync(join(root, path), text);
    const rift = await startRift(root, { RIFT_LOG: 'debug' }, { standalone: true });
    try {
      assert.deepEqual(await callersOfHelper7(rift, await helperId(rift, 'helper7')), ['pkg/m172.py', 'pkg/m9.py']);
      assert.match(rift.stderr(), /closing work done on a worker thread/);
      assert.deepEqual(graphEdges(root), freshEdges);
      // Back, while it serves: the watcher's batches (however it splits them) converge on the
      // graph a fresh build of the first tree has.
      const first = tempWorkspace(pythonModules(MODULES));
      try {
        assert.equal(runCli(['index'], first).code, 0);
        const firstEdges = graphEdges(first);
        // Each file replaced whole (written beside, renamed over), so no batch reads one half written.
        const staging = mkdtempSync(join(tmpdir(), 'rift-staging-'));
        try {
          for (const [path, text] of Object.entries(pythonModules(MODULES))) {
            writeFileSync(join(staging, 'next'), text);
            renameSync(join(staging, 'next'), join(root, path));
          }
        } finally {
          rmSync(staging, { recursive: true, force: true });
        }
        await eventually(async () => ((await callersOfHelper7(rift, await helperId(rift, 'helper7'))).includes('pkg/m8.py') ? true : undefined), 60_000);
        await eventually(() => (JSON.stringify(graphEdges(root)) === JSON.stringify(firstEdges) ? true : undefined), 60_000).catch((e: Error) => {
          const edges = new Set(graphEdges(root));
          const missing = firstEdges.filter((x) => !edges.has(x));
          const extra = [...edges].filter((x) => !firstEdges.includes(x));
          throw new Error(`${e.message}; missing ${JSON.stringify(missing.slice(0, 5))}, extra ${JSON.stringify(extra.slice(0, 5))}; server log: ${rift.stderr().split('\n').filter((l) => /WARN|ERROR|closing|failed/.test(l)).slice(-10).join(' | ')}`);
        });
      } finally {
        removeWorkspace(first);
      }
    } finally {
      await rift.close();
    }
  } finally {
    removeWorkspace(root);
    removeWorkspace(fresh);
  }
});

/** The store's closing state: whether a merge is owed, and each full-text table's automerge setting. */
function closingState(root: string): { owed: boolean; automerge: unknown[] } {
  const db = new Database(join(root, '.rift', 'rift.db'), { readonly: true });
  try {
    const owed = db.prepare(`SELECT value FROM meta WHERE key = 'fts_merge_owed'`).get() !== undefined;
    const automerge = ['chunks_fts', 'symbols_fts', 'docs_fts', 'names_trigram'].map((t) => (db.prepare(`SELECT v FROM ${t}_config WHERE k = 'automerge'`).get() as { v: unknown } | undefined)?.v);
    return { owed, automerge };
  } finally {
    db.close();
  }
}

test('a cold build while serving ends aside: the graph, the merge and the automerge setting are what a one-shot build leaves', async () => {
  // Over the bulk threshold (256 files): a cold build defers merging and counting to its end.
  const files = pythonModules(300);
  const served = tempWorkspace(files);
  const oneShot = tempWorkspace(files);
  try {
    assert.equal(runCli(['index'], oneShot).code, 0);
    const rift = await startRift(served, { RIFT_LOG: 'debug' }, { standalone: true });
    try {
      // Reads answer from the first stored batch on, warning stale_index until every file is
      // stored; a walk then waits for the pass, so once it answers the closing work is done.
      await eventually(async () => (((await rift.call('get_symbol', { name: 'helper7' })) as { warnings: unknown[] }).warnings.length === 0 ? true : undefined), 120_000);
      assert.deepEqual(await callersOfHelper7(rift, await helperId(rift, 'helper7')), ['pkg/m172.py', 'pkg/m8.py']);
      assert.match(rift.stderr(), /closing work done on a worker thread finish=true/);
      assert.deepEqual(graphEdges(served), graphEdges(oneShot));
      assert.deepEqual(closingState(served), closingState(oneShot));
      assert.deepEqual(closingState(served), { owed: false, automerge: [4, 4, 4, 4] });
    } finally {
      await rift.close();
    }
  } finally {
    removeWorkspace(served);
    removeWorkspace(oneShot);
  }
});

test('a merge a stopped cold build still owes is done aside at the next start, reads answering while it waits', async () => {
  const root = tempWorkspace(pythonModules(40));
  try {
    assert.equal(runCli(['index'], root).code, 0);
    // What a server killed after its last batch, before its closing work, leaves behind.
    const db = new Database(join(root, '.rift', 'rift.db'));
    db.prepare(`INSERT OR REPLACE INTO meta(key, value) VALUES ('fts_merge_owed', '1')`).run();
    for (const t of ['chunks_fts', 'symbols_fts', 'docs_fts', 'names_trigram']) db.exec(`INSERT INTO ${t}(${t}, rank) VALUES ('automerge', 0)`);
    db.close();
    const lock = holdStoreWriteLock(root);
    const rift = await startRift(root, {}, { standalone: true });
    try {
      await helperId(rift, 'helper7');
      const found = (await rift.call('search', { query: 'helper8' })) as { results: unknown[] };
      assert.ok(found.results.length > 0);
      assert.equal(closingState(root).owed, true);
      lock.release();
      await eventually(() => (closingState(root).owed ? undefined : true), 60_000);
      assert.deepEqual(closingState(root), { owed: false, automerge: [4, 4, 4, 4] });
    } finally {
      lock.release();
      await rift.close();
    }
  } finally {
    removeWorkspace(root);
  }
});

test('the map computed ahead of a batch resolved aside is computed again over the resolved graph', async () => {
  const consumer = (hub: string, i: number) => `from ${hub} import target\n\n\ndef use${i}():\n    return target()\n`;
  const files: Record<string, string> = { 'hub_a.py': 'def target():\n    return 1\n', 'hub_b.py': 'def target():\n    return 2\n' };
  for (let i = 0; i < MODULES; i++) files[`use/c${i}.py`] = consumer('hub_a', i);
  const root = tempWorkspace(files);
  // One batch for every rewrite below (a pass that large runs aside).
  const rift = await startRift(root, { RIFT_WATCH_DEBOUNCE_MS: '1000', RIFT_LOG: 'debug' }, { standalone: true });
  const topHub = async () => {
    const r = await rift.client.readResource({ uri: 'rift://map' });
    return (JSON.parse((r.contents[0] as { text: string }).text) as { hubs: Array<{ symbol: string }> }).hubs[0]?.symbol;
  };
  try {
    // Read once, the map is computed ahead of reads at each publication from then on.
    assert.equal(await topHub(), 'rift://symbol/python/hub_a.py/target');
    const staging = mkdtempSync(join(root, '.staging-'));
    try {
      for (let i = 0; i < MODULES; i++) {
        writeFileSync(join(staging, 'next'), consumer('hub_b', i));
        renameSync(join(staging, 'next'), join(root, `use/c${i}.py`));
      }
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
    // The batch publishes before its pass (the map is computed then, over the graph as it was),
    // and again once the pass commits: no later event is needed for the map to follow.
    await eventually(async () => ((await topHub()) === 'rift://symbol/python/hub_b.py/target' ? true : undefined), 60_000);
    assert.match(rift.stderr(), /closing work done on a worker thread finish=false/);
  } finally {
    await rift.close();
    removeWorkspace(root);
  }
});
