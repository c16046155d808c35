import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TreeLock } from '../../src/change/tree-lock.ts';
import { Engine } from '../../src/services/engine.ts';
import { WorkspaceFiles } from '../../src/services/workspace-files.ts';
import { startRift } from '../helpers/mcp.ts';
import { eventually, removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';
import { tempDir } from '../support/agent-harness.ts';
import { bundled } from '../support/bundle.ts';

// The tree lock (issue 10): one writer per tree across processes, taken around resolve →
// verify → publish, released when its holder dies; a wait past the call budget answers
// `temporarily_unavailable` (retry `same_request`); a live holder's change directory is never
// touched, a dead one's is rolled back by the next holder — its orphaned hooks killed first.

const fixture = (name: string) => bundled(fileURLToPath(new URL(`./fixtures/${name}.ts`, import.meta.url)));
const PATH = `${dirname(process.execPath)}:${process.env.PATH ?? ''}`;

function tryLock(root: string): string {
  return execFileSync(process.execPath, [fixture('try-lock'), root], { encoding: 'utf8', env: { ...process.env, RIFT_LOG: 'error' } }).trim();
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].startsWith('Z');
  } catch {
    return false;
  }
}

/** A tree whose `held.txt` runs a hook that never ends (it writes its pid to `marker`), so a change to it stays in flight. */
function heldTree(): { markers: string; marker: string; root: string } {
  const markers = tempDir('rift-marker-');
  const marker = join(markers, 'hook.pid');
  const hook = `require("fs").writeFileSync(${JSON.stringify(marker)}, String(process.pid)); setTimeout(() => {}, 600000)`;
  const root = tempWorkspace({
    'held.txt': 'old\n',
    'other.txt': 'o\n',
    'rift.toml': `[[hooks]]\nid = "forever"\nrole = "transform"\nprogram = "node"\narguments = ["-e", '${hook}']\ntimeout_ms = 3600000\ninclude = ["held.txt"]\n`,
  });
  return { markers, marker, root };
}

describe('tree lock', () => {
  test('in one process every user shares one lock: another process waits while any holds it, and takes it once free', async () => {
    const root = tempWorkspace({ 'a.txt': 'a\n' });
    const first = TreeLock.acquire(root);
    const second = TreeLock.acquire(root);
    try {
      let inside = '';
      await first.run(0, 0, async () => {
        inside = tryLock(root);
        // Giving back one user (closing nothing while another holds) must not drop the OS lock.
        await second.release();
        inside += ` ${tryLock(root)}`;
      });
      assert.equal(inside, 'temporarily_unavailable temporarily_unavailable');
      assert.equal(tryLock(root), 'took');
    } finally {
      await first.release();
      removeWorkspace(root);
    }
  });

  test('two engines in one process on one tree lose no change', async () => {
    const root = tempWorkspace({ 'list.py': 'def anchor():\n    pass\n' });
    const [a, b] = [await Engine.open(root, { watch: false }), await Engine.open(root, { watch: false })];
    try {
      const bodies = Array.from({ length: 10 }, (_, i) => `def f${i}():\n    pass`);
      const results = await Promise.all(bodies.map((body, i) => (i % 2 ? a : b).change.insertSymbol({ anchor: 'rift://symbol/python/list.py/anchor', position: 'after', body })));
      assert.deepEqual(results.map((r) => r.status), Array(10).fill('applied'));
      const text = readFileSync(join(root, 'list.py'), 'utf8');
      for (let i = 0; i < 10; i++) assert.equal(text.split(`def f${i}():`).length, 2, `f${i} on disk once`);
    } finally {
      await a.close();
      await b.close();
      removeWorkspace(root);
    }
  });

  test('a live holder makes others wait (temporarily_unavailable past the budget); once it dies its change rolls back', async () => {
    const { markers, marker, root } = heldTree();
    let holder: ChildProcess | null = null;
    let hookPid = 0;
    const rift = await startRift(root, { RIFT_CHANGE_LOCK_WAIT_MS: '400', PATH }, { standalone: true });
    try {
      holder = spawn(process.execPath, [fixture('hold-change'), root, '--- a/held.txt\n+++ b/held.txt\n@@ -1 +1 @@\n-old\n+new\n'], { stdio: 'ignore', env: { ...process.env, PATH, RIFT_LOG: 'error' } });
      hookPid = await eventually(() => (existsSync(marker) ? Number(readFileSync(marker, 'utf8')) || undefined : undefined), 60_000);
      const changes = join(root, '.rift', 'changes');
      const inFlight = readdirSync(changes);
      assert.equal(inFlight.length, 1, 'the holder has its change in flight');
      assert.equal(readFileSync(join(root, 'held.txt'), 'utf8'), 'new\n', 'published, its hook still running');

      const e = await rift.fail('patch', { patch: '--- a/other.txt\n+++ b/other.txt\n@@ -1 +1 @@\n-o\n+p\n' });
      assert.equal(e.code, -32000);
      assert.deepEqual(
        { code: e.data.code, retry: e.data.retry, phase: e.data.phase, message: e.data.message },
        {
          code: 'temporarily_unavailable',
          retry: 'same_request',
          phase: 'change',
          message: 'the server cannot serve this request yet: operation workspace change, timeout_ms 400, detail another rift process held the tree for the whole call budget; resend the same request after a short delay',
        },
      );
      const starting = await Engine.open(root, { watch: false });
      await starting.close();
      assert.deepEqual(readdirSync(changes), inFlight, "neither a waiting change nor a starting engine touches a live holder's change");
      assert.equal(readFileSync(join(root, 'other.txt'), 'utf8'), 'o\n');

      holder.kill('SIGKILL');
      await new Promise((r) => holder!.once('exit', r));
      assert.ok(alive(hookPid), 'the hook outlives its killed parent');
      const r = (await rift.call('patch', { patch: '--- a/other.txt\n+++ b/other.txt\n@@ -1 +1 @@\n-o\n+p\n' })) as { status: string };
      assert.equal(r.status, 'applied', 'a dead holder never blocks the tree');
      assert.equal(readFileSync(join(root, 'held.txt'), 'utf8'), 'old\n', "the dead holder's change is rolled back");
      assert.equal(readFileSync(join(root, 'other.txt'), 'utf8'), 'p\n');
      assert.deepEqual(readdirSync(changes), []);
      assert.equal(alive(hookPid), false, 'its orphaned hook was killed before the rollback');
    } finally {
      holder?.kill('SIGKILL');
      if (hookPid && alive(hookPid)) process.kill(hookPid, 'SIGKILL');
      await rift.close();
      removeWorkspace(root);
      removeWorkspace(markers);
    }
  });

  test("the agent's file writes take the tree lock: one waits while another process's change is in flight, lands after that change is rolled back, and is logged", async () => {
    const { markers, marker, root } = heldTree();
    let holder: ChildProcess | null = null;
    let hookPid = 0;
    const lock = TreeLock.acquire(root);
    try {
      holder = spawn(process.execPath, [fixture('hold-change'), root, '--- a/held.txt\n+++ b/held.txt\n@@ -1 +1 @@\n-old\n+new\n'], { stdio: 'ignore', env: { ...process.env, PATH, RIFT_LOG: 'error' } });
      hookPid = await eventually(() => (existsSync(marker) ? Number(readFileSync(marker, 'utf8')) || undefined : undefined), 60_000);
      const since = lock.position();
      const changes = join(root, '.rift', 'changes');
      const inFlight = readdirSync(changes);

      let landed = false;
      const write = WorkspaceFiles.at(root).write('other.txt', Buffer.from('o\n'), Buffer.from('agent\n')).then(() => (landed = true));
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(landed, false, 'the write waits for the holder');
      assert.equal(readFileSync(join(root, 'other.txt'), 'utf8'), 'o\n');
      assert.deepEqual(readdirSync(changes), inFlight, "the waiting write leaves the live holder's change alone");

      holder.kill('SIGKILL');
      await write;
      assert.equal(readFileSync(join(root, 'other.txt'), 'utf8'), 'agent\n');
      assert.equal(readFileSync(join(root, 'held.txt'), 'utf8'), 'old\n', "the dead holder's change is rolled back first");
      assert.deepEqual(readdirSync(changes), []);
      const missed = await lock.run(0, 0, async (held) => held.missed(since).paths);
      assert.deepEqual(missed?.sort(), ['held.txt', 'other.txt'], 'both are in the change log other processes re-index from');
    } finally {
      holder?.kill('SIGKILL');
      if (hookPid && alive(hookPid)) process.kill(hookPid, 'SIGKILL');
      await lock.release();
      removeWorkspace(root);
      removeWorkspace(markers);
    }
  });
});
