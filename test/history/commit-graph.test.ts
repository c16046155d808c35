import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { CommitGraph } from '../../src/history/commit-graph.ts';
import { Repository, type LogEntry } from '../../src/history/git.ts';
import { gitEnv, gitFixture } from '../helpers/git.ts';
import { eventually, removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// rift keeps a commit-graph with changed-path filters in its own state folder (`.rift/git`) and
// hands it to `git log` as an alternate object directory (src/history/commit-graph.ts): the
// repository is never written, nothing is read or written through a link in rift's folder, and
// a log reads the same commits with the graph as without it.

let root: string;
let head: string;

before(() => {
  root = tempWorkspace();
  const fx = gitFixture(root);
  // a.py changes in every fourth commit, b.py in the others: the filters can rule most commits out for a.py.
  for (let i = 0; i < 40; i++) head = fx.commit(`c${i}`, i % 4 === 0 ? { 'a.py': `def f():\n    return ${i}\n` } : { 'b.py': `X = ${i}\n` });
  mkdirSync(join(root, '.rift'));
});

after(() => removeWorkspace(root));

async function entries(repo: Repository, path: string): Promise<LogEntry[]> {
  const out: LogEntry[] = [];
  for await (const e of repo.logEntries(head, path, 1000)) out.push(e);
  return out;
}

let traces = 0;

/** Bloom filter statistics of a `git log -- a.py` run with `env` (git's trace2 performance log). */
function bloomStatistics(env: NodeJS.ProcessEnv): { definitely_not: number } | null {
  const trace = join(root, '.rift', `trace-${++traces}.txt`);
  execFileSync('git', ['log', '--format=%H', '--', 'a.py'], { cwd: root, env: { ...env, GIT_TRACE2_PERF: trace } });
  const match = /statistics:(\{[^}]*\})/.exec(readFileSync(trace, 'utf8'));
  return match ? (JSON.parse(match[1]) as { definitely_not: number }) : null;
}

test('a history log writes a commit graph into .rift/git (not the repository); later logs read it and list the same commits', async () => {
  const graphDir = join(root, '.rift', 'git');
  const first = await Repository.open(root, true);
  const without = await entries(first!, 'a.py');
  assert.equal(without.length, 10);
  first!.close();

  // The log started the write; a graph written for the same commit is not written again.
  const graph = new CommitGraph(root, gitEnv);
  await eventually(() => (existsSync(join(graphDir, 'info', 'rift-graph-head')) ? true : undefined), 20_000);
  assert.equal(readFileSync(join(graphDir, 'info', 'rift-graph-head'), 'utf8').trim(), head);
  assert.ok(readdirSync(join(graphDir, 'info', 'commit-graphs')).some((f) => f.endsWith('.graph')));
  assert.equal(await graph.refresh(head), false, 'up to date: nothing written');
  assert.equal(existsSync(join(root, '.git', 'objects', 'info', 'commit-graph')), false, 'the repository holds no graph');
  assert.equal(existsSync(join(root, '.git', 'objects', 'info', 'commit-graphs')), false);

  // Git reads it under the environment rift's logs run with: the filters rule commits out.
  const env = graph.logEnv();
  assert.equal(env.GIT_ALTERNATE_OBJECT_DIRECTORIES, graphDir);
  assert.ok((bloomStatistics(env)?.definitely_not ?? 0) > 0, 'changed-path filters answered');
  assert.equal(bloomStatistics(gitEnv()), null, 'without it, none do');

  const second = await Repository.open(root, true);
  assert.deepEqual(await entries(second!, 'a.py'), without, 'the same commits, blobs, times and summaries');
  assert.equal((await entries(second!, 'b.py')).length, 30);
  second!.close();
});

test('a link in place of rift\'s graph folder is neither written through nor read', async () => {
  const ws = tempWorkspace();
  const outside = tempWorkspace();
  try {
    const fx = gitFixture(ws);
    const commit = fx.commit('one', { 'a.py': 'x = 1\n' });
    mkdirSync(join(ws, '.rift'));
    // The folder the link points to holds a real graph of this repository (as one planted would).
    mkdirSync(join(outside, 'info'), { recursive: true });
    execFileSync('git', ['commit-graph', 'write', '--reachable', '--changed-paths', '--split', '--object-dir', outside], { cwd: ws, env: { ...gitEnv(), GIT_ALTERNATE_OBJECT_DIRECTORIES: outside } });
    const planted = readdirSync(join(outside, 'info', 'commit-graphs')).sort();
    symlinkSync(outside, join(ws, '.rift', 'git'));

    const graph = new CommitGraph(ws, gitEnv);
    assert.equal(graph.logEnv().GIT_ALTERNATE_OBJECT_DIRECTORIES, undefined, 'not read through the link');
    assert.equal(await graph.refresh(commit), false, 'not written through the link');
    assert.deepEqual(readdirSync(join(outside, 'info', 'commit-graphs')).sort(), planted);
    assert.equal(existsSync(join(outside, 'info', 'rift-graph-head')), false);

    // Without a state folder nothing is created either (the store creates it, guarded).
    const bare = tempWorkspace();
    try {
      gitFixture(bare).commit('one', { 'a.py': 'x = 1\n' });
      assert.equal(await new CommitGraph(bare, gitEnv).refresh(commit), false);
      assert.equal(existsSync(join(bare, '.rift')), false);
    } finally {
      removeWorkspace(bare);
    }
  } finally {
    removeWorkspace(ws);
    removeWorkspace(outside);
  }
});
