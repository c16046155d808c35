import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// A process killed (SIGKILL) at random points during large multi-file changes leaves every
// file either wholly old or wholly new (issue 4, "Must show"), 100 times.

const RUNS = 100;
const FILES = 16;
const SIZE = 192 * 1024;
const child = fileURLToPath(new URL('./fixtures/crash-child.ts', import.meta.url));
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

function version(i: number, tag: string): Buffer {
  const line = `${tag} file ${i} `.padEnd(63, tag) + '\n';
  return Buffer.from(line.repeat(Math.ceil(SIZE / 64)).slice(0, SIZE));
}

function runOnce(root: string, delayMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', tsx, child, root, String(FILES)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.stdout.once('data', () => setTimeout(() => p.kill('SIGKILL'), delayMs));
    p.on('exit', (_code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`child exited on its own: ${err}`))));
  });
}

describe('crash safety', () => {
  test(`${RUNS} SIGKILLs mid-change leave every file wholly old or wholly new`, async () => {
    // Two trees at once: child start-up dominates, and the kills stay independent.
    const results = await Promise.all([0, 1].map((lane) => killRuns(RUNS / 2, lane)));
    assert.ok(results.reduce((x, y) => x + y, 0) > 0, 'some kill interrupted a publication part-way');
  });
});

/** Runs `runs` kills against one tree; returns how many left the tree mixed (some a, some b). */
async function killRuns(runs: number, lane: number): Promise<number> {
  const root = tempWorkspace();
  try {
    mkdirSync(join(root, 'versions'));
    mkdirSync(join(root, 'tree'));
    const a = Array.from({ length: FILES }, (_, i) => version(i, 'a'));
    const b = Array.from({ length: FILES }, (_, i) => version(i, 'b'));
    for (let i = 0; i < FILES; i++) {
      writeFileSync(join(root, 'versions', `${i}.a`), a[i]);
      writeFileSync(join(root, 'versions', `${i}.b`), b[i]);
      writeFileSync(join(root, 'tree', `f${i}.txt`), a[i]);
    }
    let mixed = 0;
    for (let run = 0; run < runs; run++) {
      await runOnce(root, Math.floor(Math.random() * 40));
      const states = new Set<string>();
      for (let i = 0; i < FILES; i++) {
        const bytes = readFileSync(join(root, 'tree', `f${i}.txt`));
        const state = bytes.equals(a[i]) ? 'a' : bytes.equals(b[i]) ? 'b' : 'torn';
        assert.notEqual(state, 'torn', `lane ${lane} run ${run}: tree/f${i}.txt is neither wholly old nor wholly new`);
        states.add(state);
      }
      if (states.size > 1) mixed++;
      assert.deepEqual(readdirSync(join(root, 'tree')).sort(), Array.from({ length: FILES }, (_, i) => `f${i}.txt`).sort());
    }
    return mixed;
  } finally {
    removeWorkspace(root);
  }
}
