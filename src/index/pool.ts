import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import type { ParseItem, ParseOutcome } from './parse-job.ts';

// A small pool of parse workers (one per core). Work is handed out in batches so a
// worker never idles while another holds a long queue, nor while the writer stores its last batch.

const BATCH = 16;
/** Batches handed to one worker before its first result is back. */
const IN_FLIGHT = 2;

/** Starts a parse worker: compiled JS directly, or sources through tsx's loader (tests, dev). */
function startWorker(): Worker {
  const self = fileURLToPath(import.meta.url);
  if (!self.endsWith('.ts')) return new Worker(new URL('./parse-worker.js', import.meta.url), { resourceLimits: { maxYoungGenerationSizeMb: 8 } });
  // `--import` in a worker's execArgv does not install loader hooks on Node 20, so the
  // worker registers tsx itself before importing the TypeScript entry.
  const api = new URL('./index.mjs', pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api'))).href;
  const entry = new URL('./parse-worker.ts', import.meta.url).href;
  const code = `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(code, { eval: true });
}

export class WorkerPool {
  private readonly workers: Worker[] = [];
  private nextId = 1;

  constructor(size = Math.max(1, Math.min(availableParallelism(), 8))) {
    for (let i = 0; i < size; i++) this.workers.push(startWorker());
  }

  /** Parses every item; `onBatch` sees each finished batch in completion order. */
  async run(
    root: string,
    maxFileBytes: number,
    items: readonly ParseItem[],
    onBatch: (results: ParseOutcome[]) => void,
  ): Promise<void> {
    let cursor = 0;
    const next = (): ParseItem[] | null => {
      if (cursor >= items.length) return null;
      const batch = items.slice(cursor, cursor + BATCH);
      cursor += batch.length;
      return batch;
    };
    await Promise.all(
      this.workers.map(async (worker) => {
        // Each worker holds up to IN_FLIGHT batches, so it parses the next one while the writer
        // stores the last; results wait for the writer in a queue no longer than that.
        const inflight: Promise<ParseOutcome[]>[] = [];
        const refill = () => {
          while (inflight.length < IN_FLIGHT) {
            const batch = next();
            if (!batch) return;
            inflight.push(this.send(worker, root, maxFileBytes, batch));
          }
        };
        refill();
        while (inflight.length > 0) {
          const results = await inflight.shift()!;
          refill();
          onBatch(results);
        }
      }),
    );
  }

  private send(worker: Worker, root: string, maxFileBytes: number, items: ParseItem[]): Promise<ParseOutcome[]> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const onMessage = (msg: { id: number; results: ParseOutcome[] }) => {
        if (msg.id !== id) return;
        cleanup();
        resolve(msg.results);
      };
      const onError = (err: Error) => {
        cleanup();
        reject(err);
      };
      const cleanup = () => {
        worker.off('message', onMessage);
        worker.off('error', onError);
      };
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.postMessage({ id, root, maxFileBytes, items });
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
