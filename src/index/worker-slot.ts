import type { Worker } from 'node:worker_threads';
import { RiftError } from '../core/errors.ts';
import { PARSE_TIME_MAX_MS, WORKER_EXITS_MAX, WORKER_STALL_MS } from '../core/limits.ts';
import { log } from '../core/log.ts';
import type { ParseItem, ParseOutcome } from './parse-job.ts';

// Supervision of parse workers: a worker thread that exits (out of memory, a crash, terminated)
// or stops answering is replaced, never waited on. The batch it held is parsed again file by
// file, so one file that kills its worker every time is left out with that reason while the rest
// of the tree is indexed; a pool whose workers keep dying fails the build with a clear error.

/** A worker exited, or stopped answering, with a request outstanding. */
export class WorkerExit extends Error {}

interface Reply {
  id: number;
  results: ParseOutcome[];
}

/** One worker thread of the pool, started again after it dies. */
export class WorkerSlot {
  private worker: Worker;
  /** Why the current worker is gone, once it is. */
  private gone: string | null = null;
  private lastError: string | null = null;
  private nextId = 1;
  private closed = false;

  constructor(private readonly start: () => Worker) {
    this.worker = this.spawn();
  }

  private spawn(): Worker {
    const w = this.start();
    this.gone = null;
    this.lastError = null;
    // Without a listener an 'error' event would be thrown in the main thread.
    w.on('error', (e: Error & { code?: string }) => {
      if (w === this.worker) this.lastError = e.code ?? e.message;
    });
    w.once('exit', (code) => {
      if (w === this.worker) this.gone = this.lastError ? `${this.lastError}, exit code ${code}` : `exit code ${code}`;
    });
    return w;
  }

  /** Replaces the worker (terminating it first when it still runs). */
  restart(): void {
    if (this.closed) return;
    const old = this.worker;
    if (this.gone === null) void old.terminate();
    this.worker = this.spawn();
  }

  /** Sends one batch; rejects with WorkerExit when the worker exits or stays silent past its budget. */
  parse(root: string, maxFileBytes: number, items: readonly ParseItem[]): Promise<ParseOutcome[]> {
    const worker = this.worker;
    if (this.gone !== null) return Promise.reject(new WorkerExit(this.gone));
    const id = this.nextId++;
    // Each file may use its whole parse budget; past that, and a margin for reading, it is stuck.
    const stallMs = WORKER_STALL_MS + items.length * PARSE_TIME_MAX_MS;
    return new Promise((resolve, reject) => {
      const onMessage = (msg: Reply) => {
        if (msg.id !== id) return;
        cleanup();
        resolve(msg.results);
      };
      const onExit = () => {
        cleanup();
        reject(new WorkerExit(this.gone ?? 'exited'));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new WorkerExit(`no answer within ${stallMs} ms`));
      }, stallMs);
      timer.unref();
      const cleanup = () => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('exit', onExit);
      };
      worker.on('message', onMessage);
      worker.on('exit', onExit);
      worker.postMessage({ id, root, maxFileBytes, items });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.worker.terminate();
  }
}

/** Worker exits one pool run tolerates in a row, with no answer between them, before it fails. */
export class ExitBudget {
  private inRow = 0;

  /** Counts an exit; throws the build's error past WORKER_EXITS_MAX in a row. */
  spend(err: WorkerExit): void {
    this.inRow++;
    log('warn', 'index.worker', 'parse worker exited; restarting it', { reason: err.message, in_row: this.inRow });
    if (this.inRow > WORKER_EXITS_MAX) {
      throw new RiftError('internal_error', [
        ['component', 'index parse workers'],
        ['exits in a row', this.inRow],
        ['last', err.message],
        ['next', 'the index could not be built; see the server log'],
      ]);
    }
  }

  /** A worker answered: the workers can work, and a later exit is about its file. */
  answered(): void {
    this.inRow = 0;
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
      budget.spend(e);
      slot.restart();
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
