import { Worker, type ResourceLimits } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import { PARSE_WORKER_HEAP_MB } from '../core/limits.ts';
import { Feed } from '../history/feed.ts';
import type { SegmentJob, SegmentResult } from '../history/timeline.ts';
import type { ParseItem, ParseOutcome } from './parse-job.ts';
import { ExitBudget, parseSupervised, WorkerExit, WorkerSlot } from './worker-slot.ts';

// A small pool of parse workers (one per core). Work is handed out in batches so a
// worker never idles while another holds a long queue, nor while the writer stores its last batch.

const BATCH = 16;
/** Files in each of the first batches handed out, up to FIRST_BATCHES_FILES in all. */
const FIRST_BATCH = 2;
const FIRST_BATCHES_FILES = 8;
/** Batches handed to one worker before its first result is back. */
const IN_FLIGHT = 2;

/**
 * Starts a parse worker: compiled JS directly, or sources through tsx's loader (tests, dev). Its
 * heap is bounded, so a file that exhausts it ends that worker (which is replaced), not rift.
 */
export function startParseWorker(heapMb = PARSE_WORKER_HEAP_MB, warm: readonly string[] = []): Worker {
  // A small young generation keeps each worker's footprint low (measured in bench/index.ts).
  return startWorker(import.meta.url, './parse-worker', { warm }, { maxOldGenerationSizeMb: heapMb }, { maxYoungGenerationSizeMb: 8 });
}

/**
 * Starts the worker whose entry is `entry` (without extension) beside the module at `base`:
 * compiled JS directly, or the TypeScript source through tsx's loader (tests, dev). `compiled`
 * adds limits for the compiled build only.
 */
export function startWorker(base: string, entry: string, workerData: unknown, resourceLimits: ResourceLimits, compiled: ResourceLimits = {}): Worker {
  if (!fileURLToPath(base).endsWith('.ts')) return new Worker(new URL(`${entry}.js`, base), { workerData, resourceLimits: { ...resourceLimits, ...compiled } });
  // `--import` in a worker's execArgv does not install loader hooks on Node 20, so the
  // worker registers tsx itself before importing the TypeScript entry.
  const api = new URL('./index.mjs', pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api'))).href;
  const source = new URL(`${entry}.ts`, base).href;
  const code = `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(source)}); });`;
  return new Worker(code, { eval: true, workerData, resourceLimits });
}

export interface PoolOptions {
  size?: number;
  /** How a worker is started (and restarted after it dies); `startParseWorker` by default. */
  start?: () => Worker;
  /** Languages each worker warms its parser on while idle after starting (a serving engine's: see src/syntax/warm.ts). */
  warm?: readonly string[];
}

export class WorkerPool {
  private readonly slots: WorkerSlot[] = [];
  /** The slot the next single parse goes to. */
  private turn = 0;

  constructor(options: PoolOptions = {}) {
    const size = options.size ?? Math.max(1, Math.min(availableParallelism(), 8));
    for (let i = 0; i < size; i++) this.slots.push(new WorkerSlot(options.start ?? (() => startParseWorker(undefined, options.warm))));
  }

  /** How many workers parse side by side. */
  get size(): number {
    return this.slots.length;
  }

  /** Resolves once every worker has loaded what it parses with (a server's have, soon after it starts). */
  async ready(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.whenReady()));
  }

  /**
   * Parses every item; `onBatch` sees each finished batch in completion order. A worker that
   * dies is replaced (see worker-slot.ts); workers that keep dying reject the run. Once `stop`
   * is aborted no further batch is handed out: the run ends when the batches already handed out
   * have been delivered.
   */
  async run(
    root: string,
    maxFileBytes: number,
    items: readonly ParseItem[],
    onBatch: (results: ParseOutcome[]) => void,
    stop?: AbortSignal,
  ): Promise<void> {
    let cursor = 0;
    let failure: { error: unknown } | null = null;
    const next = (): ParseItem[] | null => {
      if (failure || stop?.aborted || cursor >= items.length) return null;
      // The first batches are small: a cold build's first stored files let reads in.
      const batch = items.slice(cursor, cursor + (cursor < FIRST_BATCHES_FILES ? FIRST_BATCH : BATCH));
      cursor += batch.length;
      return batch;
    };
    const budget = new ExitBudget();
    // A failed slot stops the others handing out work; the run then rejects with its error.
    await Promise.all(
      this.slots.map(async (slot) => {
        // Each worker holds up to IN_FLIGHT batches, so it parses the next one while the writer
        // stores the last; results wait for the writer in a queue no longer than that.
        const inflight: Promise<ParseOutcome[]>[] = [];
        const refill = () => {
          while (inflight.length < IN_FLIGHT) {
            const batch = next();
            if (!batch) return;
            const parsed = parseSupervised(slot, root, maxFileBytes, batch, budget);
            // Awaited in order below; a rejection is not unhandled meanwhile.
            parsed.catch(() => undefined);
            inflight.push(parsed);
          }
        };
        try {
          refill();
          while (inflight.length > 0) {
            const results = await inflight.shift()!;
            refill();
            if (!failure) onBatch(results);
          }
        } catch (error) {
          failure ??= { error };
          // The batches still held settle (their worker is restarted or the run failed) before the run ends.
          await Promise.allSettled(inflight);
        }
      }),
    );
    if (failure) throw (failure as { error: unknown }).error;
    budget.settle();
  }

  /**
   * Parses one file's bytes read elsewhere (a revision's blob), on the workers in turn. A worker
   * that exits is restarted and the parse rejects (its caller parses the bytes itself).
   */
  async parseBytes(item: ParseItem, bytes: Uint8Array, sha256: string): Promise<ParseOutcome & { ok: true }> {
    const slot = this.slots[this.turn++ % this.slots.length];
    try {
      return await slot.parseBytes(item, bytes, sha256);
    } catch (e) {
      if (e instanceof WorkerExit) slot.restart(e.generation);
      throw e;
    }
  }

  /**
   * Walks one segment of a declaration's history on the `lane`-th worker, so the segments of
   * one walk run side by side. A worker that exits is restarted and the walk rejects (its
   * caller walks the segment itself).
   */
  async walkSegment(job: SegmentJob, lane: number, ids = Feed.of(job.blobs), walked: (n: number) => void = () => undefined): Promise<SegmentResult> {
    const slot = this.slots[lane % this.slots.length];
    try {
      return await slot.walk(job, ids, walked);
    } catch (e) {
      if (e instanceof WorkerExit) slot.restart(e.generation);
      throw e;
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.close()));
  }
}
