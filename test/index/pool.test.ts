import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { RiftError } from '../../src/core/errors.ts';
import { WORKER_EXITS_MAX } from '../../src/core/limits.ts';
import { parseBytes, type ParseItem, type ParseOutcome } from '../../src/index/parse-job.ts';
import { initSyntax } from '../../src/syntax/runtime.ts';
import { startParseWorker, WorkerPool } from '../../src/index/pool.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// A dead parse worker is replaced and nothing waits on it (issue 10): real worker threads,
// killed mid-build, starved of heap, or unable to start.

const MAX = 4 * 1024 * 1024;

function pyFiles(n: number): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < n; i++) files[`m${String(i).padStart(3, '0')}.py`] = `def f${i}():\n    return ${i}\n`;
  return files;
}

const items = (files: Record<string, string>): ParseItem[] => Object.keys(files).map((path) => ({ path, language: 'python', keepContent: true, relations: false }));

test('workers killed mid-build are replaced and every file is parsed exactly once', async () => {
  const files = pyFiles(300);
  const root = tempWorkspace(files);
  const started: Worker[] = [];
  const pool = new WorkerPool({
    size: 2,
    start: () => {
      const w = startParseWorker();
      started.push(w);
      return w;
    },
  });
  try {
    const seen: ParseOutcome[] = [];
    let killed = false;
    await pool.run(root, MAX, items(files), (batch) => {
      seen.push(...batch);
      if (killed) return;
      killed = true;
      // Both workers hold batches they have not answered yet.
      for (const w of started) void w.terminate();
    });
    assert.ok(killed);
    // Each worker held two batches when it died: both fail, but one exit restarts it once.
    assert.equal(started.length, 4, 'each worker was replaced exactly once');
    assert.deepEqual(seen.map((r) => r.path).sort(), Object.keys(files).sort(), 'each file once');
    assert.ok(seen.every((r) => r.ok && r.symbols?.length === 1));
  } finally {
    await pool.close();
    removeWorkspace(root);
  }
});

test('a file that ends its worker every time is left out, naming why; the rest is parsed', async () => {
  const files: Record<string, string> = pyFiles(40);
  // Four MiB of comments: reading and indexing it needs more heap than these workers get.
  files['poison.py'] = Array.from({ length: 80_000 }, (_, i) => `# comment line number ${i} with some words in it`).join('\n');
  const root = tempWorkspace(files);
  const pool = new WorkerPool({ size: 2, start: () => startParseWorker(12) });
  try {
    const seen: ParseOutcome[] = [];
    await pool.run(root, MAX, items(files), (batch) => seen.push(...batch));
    assert.deepEqual(seen.map((r) => r.path).sort(), Object.keys(files).sort());
    const poison = seen.find((r) => r.path === 'poison.py')!;
    assert.deepEqual(poison, { path: 'poison.py', ok: false, reason: 'worker_exit' });
    assert.ok(seen.filter((r) => r.path !== 'poison.py').every((r) => r.ok && r.symbols?.length === 1));
  } finally {
    await pool.close();
    removeWorkspace(root);
  }
});

test('a run of only a file that ends its started worker leaves it out; the run itself succeeds', async () => {
  // As the watcher's one-file runs meet it: the workers start, so the file is at fault.
  const files = { 'poison.py': Array.from({ length: 80_000 }, (_, i) => `# comment line number ${i} with some words in it`).join('\n') };
  const root = tempWorkspace(files);
  const pool = new WorkerPool({ size: 2, start: () => startParseWorker(12) });
  try {
    const seen: ParseOutcome[] = [];
    await pool.run(root, MAX, items(files), (batch) => seen.push(...batch));
    assert.deepEqual(seen, [{ path: 'poison.py', ok: false, reason: 'worker_exit' }]);
  } finally {
    await pool.close();
    removeWorkspace(root);
  }
});

// However many files: a large run meets the limit of exits in a row, a small one runs out of
// files first (each left out after two tries) and fails because no worker ever answered.
for (const count of [1, 5, 40]) {
  test(`workers that cannot start fail the run with a clear error instead of waiting (${count} files)`, async () => {
    const files = pyFiles(count);
    const root = tempWorkspace(files);
    let starts = 0;
    const pool = new WorkerPool({
      size: 2,
      start: () => {
        starts++;
        return new Worker('process.exit(7)', { eval: true });
      },
    });
    try {
      await assert.rejects(
        pool.run(root, MAX, items(files), () => undefined),
        (e: unknown) => {
          assert.ok(e instanceof RiftError);
          assert.equal(e.code, 'internal_error');
          const m = /component index parse workers, exits in a row (\d+), last exit code 7, next the index could not be built/.exec(e.message);
          assert.ok(m, e.message);
          assert.ok(Number(m[1]) >= 1 && Number(m[1]) <= WORKER_EXITS_MAX + 1, e.message);
          if (count > 2 * (WORKER_EXITS_MAX + 1)) assert.equal(Number(m[1]), WORKER_EXITS_MAX + 1);
          return true;
        },
      );
      // Two workers started, one restart per counted exit, and one more the other worker may begin.
      assert.ok(starts <= 2 + WORKER_EXITS_MAX + 2, `bounded restarts (${starts})`);
    } finally {
      await pool.close();
      removeWorkspace(root);
    }
  });
}

test('a revision blob parsed in a worker gives the rows parsing it here gives', async () => {
  const pool = new WorkerPool({ size: 2 });
  try {
    const bytes = Buffer.from('class A:\n    def m(self):\n        return 1\n\n\ndef f(x):\n    """Doc."""\n    return x\n');
    const item: ParseItem = { path: 'pkg/a.py', language: 'python', keepContent: true, relations: false };
    const inWorker = await pool.parseBytes(item, bytes, 'sha');
    await initSyntax();
    assert.deepEqual(inWorker, parseBytes(item, bytes, 'sha', 0));
    assert.deepEqual(inWorker.symbols?.map((s) => s[1]), ['A', 'A.m', 'f']);
  } finally {
    await pool.close();
  }
});
