import type { Worker } from 'node:worker_threads';
import { RiftError } from '../core/errors.ts';
import { PARSE_TIME_MAX_MS, WORKER_EXITS_MAX, WORKER_START_MAX_MS, WORKER_STALL_MS } from '../core/limits.ts';
import { log } from '../core/log.ts';
import type { Feed } from '../history/feed.ts';
import type { SegmentJob, SegmentResult } from '../history/timeline.ts';
import type { ParseItem, ParseOutcome } from './parse-job.ts';

// Supervision of parse workers: a worker thread that exits (out of memory, a crash, terminated)
// or stops answering is replaced, never waited on. The batch it held is parsed again file by
// file, so one file that kills its worker every time is left out with that reason while the rest
// of the tree is indexed; a pool whose workers keep dying fails the build with a clear error.

/** A worker exited, or stopped answering, with a request outstanding. */
export class WorkerExit extends Error {
  constructor(
    message: string,
    /** Which of the slot's workers it was (see WorkerSlot.restart). */
    readonly generation: number,
    /** Whether that worker had started (loaded its grammars): an exit before is no file's doing. */
    readonly started = true,
  ) {
    super(message);
  }
}

interface Reply {
  id: number;
  results?: ParseOutcome[];
  walk?: SegmentResult;
  /** How many versions a walk has walked so far (the walk goes on). */
  walked?: number;
  outcome?: ParseOutcome & { ok: true };
  /** Why the worker could not do what was asked (it still runs). */
  error?: string;
}

/** One worker thread of the pool, started again after it dies. */
export class WorkerSlot {
  private worker: Worker;
  /** Why the current worker is gone, once it is. */
  private gone: string | null = null;
  private lastError: string | null = null;
  private nextId = 1;
  private closed = false;
  /** Counts the workers started, so a second report of one exit restarts nothing. */
  private generation = 0;
  /** Files sent to the current worker and not yet answered: a later batch waits behind them. */
  private queued = 0;
  /** Resolves when the current worker has loaded what it parses with (its `ready` message). */
  private ready: Promise<void> = Promise.resolve();
  /** The generation of the last worker that sent its `ready` message. */
  private readyGeneration = 0;

  constructor(private readonly start: () => Worker) {
    this.worker = this.spawn();
  }

  /** Resolves when the current worker is ready to parse. */
  whenReady(): Promise<void> {
    return this.ready;
  }

  private spawn(): Worker {
    const w = this.start();
    this.gone = null;
    this.lastError = null;
    const generation = ++this.generation;
    this.queued = 0;
    // Loading the grammars (and, from sources, compiling them) is no parse: a batch's stall clock
    // starts once the worker is ready. A start that never ends is bounded on its own.
    let startTimer: NodeJS.Timeout | null = null;
    this.ready = new Promise<void>((resolve) => {
      const onReady = (msg: { ready?: boolean }) => {
        if (msg?.ready !== true) return;
        w.off('message', onReady);
        if (startTimer) clearTimeout(startTimer);
        this.readyGeneration = Math.max(this.readyGeneration, generation);
        resolve();
      };
      w.on('message', onReady);
      startTimer = setTimeout(() => {
        if (w !== this.worker || this.gone !== null) return;
        this.lastError = `not ready within ${WORKER_START_MAX_MS} ms of its start`;
        void w.terminate();
      }, WORKER_START_MAX_MS);
      startTimer.unref();
    });
    w.on('message', (msg: { warmed?: { parses: number; ms: number } }) => {
      if (msg?.warmed) log('debug', 'parse.warm', 'parse worker warmed', { parses: msg.warmed.parses, ms: Math.round(msg.warmed.ms) });
    });
    // Without a listener an 'error' event would be thrown in the main thread.
    w.on('error', (e: Error & { code?: string }) => {
      if (w === this.worker) this.lastError = e.code ?? e.message;
    });
    w.once('exit', (code) => {
      if (startTimer) clearTimeout(startTimer);
      if (w === this.worker) this.gone = this.lastError ? `${this.lastError}, exit code ${code}` : `exit code ${code}`;
    });
    return w;
  }

  /**
   * Replaces the worker of `generation` (terminating it first when it still runs); true when
   * this call did, false when it was replaced already (another batch it held saw the same exit).
   */
  restart(generation: number): boolean {
    if (this.closed || generation !== this.generation) return false;
    const old = this.worker;
    if (this.gone === null) void old.terminate();
    this.worker = this.spawn();
    return true;
  }

  /** Sends one batch; rejects with WorkerExit when the worker exits or stays silent past its budget. */
  parse(root: string, maxFileBytes: number, items: readonly ParseItem[]): Promise<ParseOutcome[]> {
    return this.call({ root, maxFileBytes, items }, items.length, (msg) => msg.results!);
  }

  /** Parses one file's bytes read elsewhere (a blob of a revision); rejects as `parse` does. */
  parseBytes(item: ParseItem, bytes: Uint8Array, sha256: string): Promise<ParseOutcome & { ok: true }> {
    return this.call({ blob: { item, bytes, sha256 } }, 1, (msg) => msg.outcome!);
  }

  /**
   * Walks one segment of a declaration's history (each version may be parsed), its versions
   * `ids`: those still arriving are sent on as they do, and `walked` hears the worker's progress.
   * Rejects as `parse` does.
   */
  walk(job: SegmentJob, ids: Feed<string | null>, walked: (n: number) => void): Promise<SegmentResult> {
    return this.call({ walk: { ...job, blobs: ids.items.slice(), streamed: !ids.done } }, job.bound, (msg) => msg.walk!, { ids, walked });
  }

  private call<T>(payload: object, files: number, pick: (msg: Reply) => T, stream?: { ids: Feed<string | null>; walked: (n: number) => void }): Promise<T> {
    const worker = this.worker;
    const generation = this.generation;
    const exit = (message: string) => new WorkerExit(message, generation, this.readyGeneration >= generation);
    if (this.gone !== null) return Promise.reject(exit(this.gone));
    const id = this.nextId++;
    // Each file may use its whole parse budget, and this request waits behind those sent before
    // it; past that, and a margin for reading, the worker is stuck.
    const stallMs = WORKER_STALL_MS + (this.queued + files) * PARSE_TIME_MAX_MS;
    this.queued += files;
    return new Promise((resolve, reject) => {
      let settled = false;
      let timer: NodeJS.Timeout | null = null;
      const onMessage = (msg: Reply) => {
        if (msg.id !== id) return;
        if (msg.walked !== undefined) {
          stream?.walked(msg.walked);
          return;
        }
        cleanup();
        if (msg.error !== undefined) reject(new Error(msg.error));
        else resolve(pick(msg));
      };
      const onExit = () => {
        cleanup();
        reject(exit(this.gone ?? 'exited'));
      };
      void this.ready.then(() => {
        if (settled) return;
        timer = setTimeout(() => {
          cleanup();
          reject(exit(`no answer within ${stallMs} ms`));
        }, stallMs);
        timer.unref();
      });
      const cleanup = () => {
        settled = true;
        if (generation === this.generation) this.queued -= files;
        if (timer) clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('exit', onExit);
      };
      worker.on('message', onMessage);
      worker.on('exit', onExit);
      worker.postMessage({ id, ...payload });
      if (stream) void this.forward(worker, id, stream.ids, () => settled);
    });
  }

  /** Sends `worker` the versions of walk `id` that arrive after it started, then their end. */
  private async forward(worker: Worker, id: number, ids: Feed<string | null>, settled: () => boolean): Promise<void> {
    let sent = ids.items.length;
    if (ids.done) return;
    while (await ids.has(sent)) {
      if (settled()) return;
      worker.postMessage({ id, more: ids.items.slice(sent) });
      sent = ids.items.length;
    }
    if (!settled()) worker.postMessage({ id, more: [], end: true });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.worker.terminate();
  }
}

/**
 * Worker exits one pool run tolerates in a row, with no answer between them, before it fails;
 * and a run whose workers never started fails however few its exits (that is no fault of the
 * files, which a small run would otherwise leave out one by one).
 */
export class ExitBudget {
  private inRow = 0;
  private last: WorkerExit | null = null;
  private everStarted = false;
  private failed: RiftError | null = null;

  /** Counts an exit; throws the build's error past WORKER_EXITS_MAX in a row. */
  spend(err: WorkerExit): void {
    this.inRow++;
    this.last = err;
    if (err.started) this.everStarted = true;
    log('warn', 'index.worker', 'parse worker exited; restarting it', { reason: err.message, in_row: this.inRow });
    if (this.inRow > WORKER_EXITS_MAX) throw (this.failed = this.failure());
  }

  /**
   * Throws the run's error once it has failed: the batches other workers still hold then end
   * without restarting their workers (each restarted one more for nothing, and how many they
   * held decided how many).
   */
  check(): void {
    if (this.failed !== null) throw this.failed;
  }

  /** A worker answered: the workers can work, and a later exit is about its file. */
  answered(): void {
    this.inRow = 0;
  }

  /** At the end of a run: throws the build's error when workers exited and none ever started. */
  settle(): void {
    if (this.last !== null && !this.everStarted) throw this.failure();
  }

  private failure(): RiftError {
    return new RiftError('internal_error', [
      ['component', 'index parse workers'],
      ['exits in a row', this.inRow],
      ['last', this.last?.message ?? 'unknown'],
      ['next', 'the index could not be built; see the server log'],
    ]);
  }
}

/**
 * Parses `items` on `slot`, surviving worker exits: after an exit the worker is restarted and
 * the files are parsed one at a time; a file whose parse ends its worker twice is left out
 * (`worker_exit`) and the rest go on.
 */
export async function parseSupervised(
  slot: WorkerSlot,
  root: string,
  maxFileBytes: number,
  items: readonly ParseItem[],
  budget: ExitBudget,
): Promise<ParseOutcome[]> {
  const attempt = async (batch: readonly ParseItem[]): Promise<ParseOutcome[] | null> => {
    try {
      const results = await slot.parse(root, maxFileBytes, batch);
      budget.answered();
      return results;
    } catch (e) {
      if (!(e instanceof WorkerExit)) throw e;
      budget.check();
      // One exit fails every batch its worker held; it is counted, and restarted, once.
      if (slot.restart(e.generation)) budget.spend(e);
      return null;
    }
  };
  const whole = await attempt(items);
  if (whole) return whole;
  const out: ParseOutcome[] = [];
  for (const item of items) {
    // A batch of one has already had its first try.
    let outcome = items.length > 1 ? ((await attempt([item]))?.[0] ?? null) : null;
    outcome ??= (await attempt([item]))?.[0] ?? null;
    if (outcome === null) log('warn', 'index.worker', 'file left out: its parse ended the worker twice', { path: item.path });
    out.push(outcome ?? { path: item.path, ok: false, reason: 'worker_exit' });
  }
  return out;
}
