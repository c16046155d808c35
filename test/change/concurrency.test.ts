import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startRift, type RiftMcp } from '../helpers/mcp.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';
import { runRift, tempDir, useModelServer } from '../support/agent-harness.ts';
import { ollamaReply } from '../support/model-server.ts';

// Many processes, one tree (issue 10): two `rift mcp` servers and a headless `rift -p` agent
// change one file at once. Every change a process answered `applied` is on disk afterwards —
// inserts beside one anchor, read-modify-write increments of a counter, the agent's
// replacements — because every process takes the same tree lock around resolve → verify →
// publish and resolves against what the others published.

const ROUNDS = 30;
const AGENT_EDITS = 8;
const ATTEMPTS = 200;
const CROWD = 8;
const CROWD_ROUNDS = 5;

type Result = { status: string; reason?: string; preconditions?: Array<{ kind: string }> };

const LIST = 'def anchor():\n    pass\n\n\ndef agent_fn():\n    return 0\n';

/**
 * One change call as a client should send it: `temporarily_unavailable` with `retry:
 * same_request` (the tree lock stayed busy for the whole call budget, so nothing was written) is
 * resent; any other error fails the test.
 */
async function send(rift: RiftMcp, name: string, args: Record<string, unknown>): Promise<Result> {
  for (let attempt = 1; ; attempt++) {
    try {
      return (await rift.call(name, args)) as Result;
    } catch (e) {
      const data = (e as { data?: { code?: string; retry?: string } }).data;
      if (attempt >= 5 || data?.code !== 'temporarily_unavailable' || data.retry !== 'same_request') throw e;
    }
  }
}

/** Increments `count = N` in counter.txt by a patch against what this client last read; retries a stale read. */
async function increment(root: string, rift: RiftMcp): Promise<number> {
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const n = Number(/count = (\d+)/.exec(readFileSync(join(root, 'counter.txt'), 'utf8'))![1]);
    const r = await send(rift, 'patch', { patch: `--- a/counter.txt\n+++ b/counter.txt\n@@ -1 +1 @@\n-count = ${n}\n+count = ${n + 1}\n` });
    if (r.status === 'applied') return attempt;
    assert.equal(r.reason, 'unmet_precondition', JSON.stringify(r));
  }
  throw new Error('an increment never applied');
}

/** Inserts `body` after the anchor; a refusal because the index lagged a moment is retried. */
async function insert(rift: RiftMcp, body: string): Promise<void> {
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const r = await send(rift, 'insert_symbol', { anchor: 'rift://symbol/python/list.py/anchor', position: 'after', body });
    if (r.status === 'applied') return;
    assert.deepEqual(r.preconditions?.map((p) => p.kind), ['source_unchanged'], JSON.stringify(r));
  }
  throw new Error(`insert never applied: ${body}`);
}

describe('many processes, one tree', () => {
  const { server } = useModelServer();

  test('two rift mcp servers and a rift -p run: every applied change is on disk', async () => {
    const root = tempWorkspace({ 'list.py': LIST, 'counter.txt': 'count = 0\n' });
    const home = tempDir('rift-home-');
    const steps = Array.from({ length: AGENT_EDITS }, (_, i) =>
      ollamaReply({ toolCalls: [{ name: 'replace_symbol', arguments: { symbol: 'rift://symbol/python/list.py/agent_fn', body: `def agent_fn():\n    return ${i + 1}` } }] }),
    );
    server.script(...steps, ollamaReply({ content: 'bumped' }));
    // Standalone: each server is its own process (by default `rift mcp` proxies to one shared server).
    const [a, b] = await Promise.all([startRift(root, {}, { standalone: true }), startRift(root, {}, { standalone: true })]);
    try {
      const actor = async (rift: RiftMcp, tag: string) => {
        let attempts = 0;
        for (let i = 0; i < ROUNDS; i++) {
          await insert(rift, `def ${tag}_${i}():\n    pass`);
          attempts += await increment(root, rift);
        }
        return attempts;
      };
      const [agent, attemptsA, attemptsB] = await Promise.all([runRift(['-p', 'bump agent_fn', '--json', '--host', server.url, '--model', 'test-model'], root, home), actor(a, 'a'), actor(b, 'b')]);
      assert.equal(agent.code, 0, agent.stderr);
      const results = agent.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
        .filter((e) => e.event === 'tool_result');
      assert.equal(results.length, AGENT_EDITS);
      for (const r of results) assert.ok(r.ok === true && /^applied chg_/.test(r.preview), JSON.stringify(r));

      const text = readFileSync(join(root, 'list.py'), 'utf8');
      for (const tag of ['a', 'b']) {
        for (let i = 0; i < ROUNDS; i++) assert.equal(text.split(`def ${tag}_${i}():`).length, 2, `${tag}_${i} is on disk exactly once`);
      }
      assert.match(text, new RegExp(`def agent_fn\\(\\):\\n    return ${AGENT_EDITS}\\n`), 'the agent’s last replacement stands');
      assert.equal(readFileSync(join(root, 'counter.txt'), 'utf8'), `count = ${2 * ROUNDS}\n`, 'no increment was lost');
      assert.ok(attemptsA + attemptsB >= 2 * ROUNDS);
    } finally {
      await Promise.all([a.close(), b.close()]);
      removeWorkspace(root);
      removeWorkspace(home);
    }
  });

  test(`${CROWD} standalone rift mcp servers started at once on a fresh tree share one store: two rounds of calls, every server lives`, async () => {
    const root = tempWorkspace({ 'list.py': LIST });
    // All spawned in the same instant, with no `.rift/` yet: each creates the state folder, the
    // store and its schema, and builds the index, while the others do the same.
    const crowd = await Promise.all(Array.from({ length: CROWD }, () => startRift(root, {}, { standalone: true })));
    try {
      const first = await Promise.all(crowd.map((r) => r.call('get_symbol', { name: 'anchor', include: [] }) as Promise<{ hits: unknown[] }>));
      assert.deepEqual(first.map((a) => a.hits.length), crowd.map(() => 1));
      // Second round: each server changes the tree and reads its own change back.
      await Promise.all(crowd.map((rift, k) => insert(rift, `def crowd_${k}():\n    pass`)));
      const second = await Promise.all(crowd.map((r, k) => r.call('get_symbol', { name: `crowd_${k}`, include: [] }) as Promise<{ hits: unknown[] }>));
      assert.deepEqual(second.map((a) => a.hits.length), crowd.map(() => 1));
      const text = readFileSync(join(root, 'list.py'), 'utf8');
      for (let k = 0; k < CROWD; k++) assert.equal(text.split(`def crowd_${k}():`).length, 2, `crowd_${k} is on disk exactly once`);
      for (const [k, rift] of crowd.entries()) {
        assert.doesNotThrow(() => process.kill(rift.pid!, 0), `server ${k} is still running`);
        assert.doesNotMatch(rift.stderr(), /kept in memory|damaged|set aside|cannot be used/, `server ${k} kept its index in the shared store`);
      }
      assert.deepEqual(readdirSync(join(root, '.rift')).filter((n) => n.includes('damaged')), [], 'no live store was taken for a damaged one');
    } finally {
      await Promise.all(crowd.map((r) => r.close()));
      removeWorkspace(root);
    }
  });

  test(`${CROWD} standalone rift mcp servers on one tree: every change applies or refuses, none fails`, async () => {
    const root = tempWorkspace({ 'list.py': LIST, 'counter.txt': 'count = 0\n' });
    // Each server re-indexes the others' changes, all in .rift/rift.db. The first one creates the
    // store before the rest start: eight processes creating one fresh store at once is a separate
    // matter (store opening), which this test does not cover.
    const first = await startRift(root, {}, { standalone: true });
    await first.call('get_symbol', { name: 'anchor', include: [] });
    const crowd = [first, ...(await Promise.all(Array.from({ length: CROWD - 1 }, () => startRift(root, {}, { standalone: true }))))];
    try {
      await Promise.all(
        crowd.map(async (rift, k) => {
          for (let i = 0; i < CROWD_ROUNDS; i++) {
            await insert(rift, `def s${k}_${i}():\n    pass`);
            await increment(root, rift);
          }
        }),
      );
      const text = readFileSync(join(root, 'list.py'), 'utf8');
      for (let k = 0; k < CROWD; k++) {
        for (let i = 0; i < CROWD_ROUNDS; i++) assert.equal(text.split(`def s${k}_${i}():`).length, 2, `s${k}_${i} is on disk exactly once`);
      }
      assert.equal(readFileSync(join(root, 'counter.txt'), 'utf8'), `count = ${CROWD * CROWD_ROUNDS}\n`, 'no increment was lost');
    } finally {
      await Promise.all(crowd.map((r) => r.close()));
      removeWorkspace(root);
    }
  });
});
