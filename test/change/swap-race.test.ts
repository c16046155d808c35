import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Engine } from '../../src/services/engine.ts';
import { readSourceFile, readSourceFileSync } from '../../src/workspace/read.ts';
import { startRift } from '../helpers/mcp.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';
import { bundled } from '../support/bundle.ts';

// Check-then-use races (issue 10): while another process swaps a workspace directory for a
// symlink to a directory outside the workspace and back, as fast as it can, changes addressed
// below that directory never write a byte outside the workspace (each lands inside or refuses),
// and reads never serve the outside file's bytes under the workspace path.

const ATTEMPTS = 1000;
const swapper = bundled(fileURLToPath(new URL('./fixtures/swap-dir.ts', import.meta.url)));

function startSwapping(dir: string, outside: string): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [swapper, dir, outside], { stdio: ['ignore', 'pipe', 'inherit'] });
    p.stdout.once('data', () => resolve(p));
    p.once('error', reject);
  });
}

function stopSwapping(p: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    p.once('exit', () => resolve());
    p.kill('SIGTERM');
  });
}

/** Every file below `dir` with its bytes and mtime, to prove nothing there changed. */
function snapshot(dir: string, rel = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) Object.assign(out, snapshot(dir, p));
    else out[p] = `${statSync(join(dir, p)).mtimeMs}:${readFileSync(join(dir, p), 'utf8')}`;
  }
  return out;
}

describe('directory ⇄ symlink swap race', () => {
  test(`${ATTEMPTS} changes below a swapping directory write zero bytes outside the workspace`, async () => {
    const outside = tempWorkspace({ 'sub/target.txt': 'v0\n' });
    const root = tempWorkspace({ 'pkg/sub/target.txt': 'v0\n' });
    const before = snapshot(outside);
    const engine = await Engine.open(root, { watch: false });
    await engine.build();
    const outcomes = new Map<string, number>();
    const applied: number[] = [];
    const attacker = await startSwapping(join(root, 'pkg'), outside);
    try {
      for (let i = 0; i < ATTEMPTS; i++) {
        let outcome: string;
        try {
          const r = await engine.change.insertSymbol({ file: 'pkg/sub/target.txt', position: 'after', body: `line ${i}\n` });
          outcome = r.status === 'refused' ? `refused ${r.reason} ${r.preconditions.map((p) => p.kind).join(',')}` : r.status;
          if (r.status === 'applied') applied.push(i);
        } catch (e) {
          outcome = `error ${(e as { code?: string }).code}`;
        }
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
    } finally {
      await stopSwapping(attacker);
      await engine.close();
    }
    try {
      assert.deepEqual(snapshot(outside), before, `nothing outside the workspace changed (${JSON.stringify([...outcomes])})`);
      assert.ok(applied.length > 0, 'changes still apply while the tree is sound');
      assert.ok(applied.length < ATTEMPTS, `the race was hit: ${JSON.stringify([...outcomes])}`);
      for (const o of outcomes.keys()) assert.match(o, /^(applied|refused unsupported |refused unmet_precondition (source_unchanged|target_exists|target_is_file))$/, o);
      const expected = `v0\n${applied.map((i) => `\nline ${i}\n`).join('')}`;
      assert.equal(readFileSync(join(root, 'pkg/sub/target.txt'), 'utf8'), expected, 'every applied change is inside, in order');
    } finally {
      removeWorkspace(root);
      removeWorkspace(outside);
    }
  });

  test('reads below a swapping directory never return the bytes outside, directly or through the index', async () => {
    const outside = tempWorkspace({ 'sub/target.txt': 'OUTSIDE_SECRET\n' });
    const root = tempWorkspace({ 'pkg/sub/target.txt': 'inside_public\n' });
    const rift = await startRift(root);
    const attacker = await startSwapping(join(root, 'pkg'), outside);
    const seen = new Map<string, number>();
    const note = (k: string) => seen.set(k, (seen.get(k) ?? 0) + 1);
    try {
      for (let i = 0; i < ATTEMPTS; i++) {
        const sync = readSourceFileSync(root, 'pkg/sub/target.txt', 1024);
        note(sync.ok ? Buffer.from(sync.bytes).toString('utf8') : sync.reason);
        const async = await readSourceFile(root, 'pkg/sub/target.txt', 1024);
        note(async.ok ? Buffer.from(async.bytes).toString('utf8') : async.reason);
        if (i % 5 === 0) {
          const r = (await rift.call('search', { query: 'OUTSIDE_SECRET' })) as { results: unknown[] };
          note(r.results.length > 0 ? 'served OUTSIDE_SECRET' : 'search clean');
        }
      }
    } finally {
      await stopSwapping(attacker);
      await rift.close();
    }
    try {
      assert.equal(seen.get('OUTSIDE_SECRET\n'), undefined, JSON.stringify([...seen]));
      assert.equal(seen.get('served OUTSIDE_SECRET'), undefined, JSON.stringify([...seen]));
      assert.ok((seen.get('inside_public\n') ?? 0) > 0, JSON.stringify([...seen]));
      assert.ok((seen.get('symlink') ?? 0) + (seen.get('missing') ?? 0) > 0, `the race was hit: ${JSON.stringify([...seen])}`);
    } finally {
      removeWorkspace(root);
      removeWorkspace(outside);
    }
  });
});
