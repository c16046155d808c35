import { startWorker } from './pool.ts';
import type { RelationGraph, ResolveJob } from './graph/graph.ts';
import type { Store } from './store.ts';

// A build's closing work on a worker thread with its own connection to the store (see
// aside-worker.ts): what a bulk build owes the store (names counted, full-text merged, the
// graph's fact indexes built) and the graph's resolve pass. A serving engine keeps answering
// meanwhile, reading the graph as it was until the pass commits.

export interface AsideRequest {
  file: string;
  root: string;
  /** End a bulk build: the graph's fact indexes, then Store.finishBulk. */
  finish: boolean;
  /** A resolve pass (after dropping the facts of files no longer parsed, when `prune`). */
  resolve: { job: ResolveJob; prune: boolean } | null;
}

/**
 * A build's closing work on `store`'s connection, wherever it runs (the serving thread, a worker):
 * what a bulk build owes (`finish`: the graph's fact indexes, then Store.finishBulk), then the
 * resolve pass, after dropping the facts of files the store no longer holds parsed when `prune`.
 */
export function closeBuild(store: Store, graph: RelationGraph, finish: boolean, resolve: { prune: boolean } | null): void {
  if (finish) {
    graph.store.endBulk();
    store.finishBulk();
  }
  if (resolve === null) return;
  store.transaction(() => {
    if (resolve.prune) {
      const parsed = store.parsedPaths();
      graph.prune((path) => parsed.has(path));
    }
    graph.resolve();
  });
}

/** The worker's one message: done, or the error it ended with (SQLite's code kept). */
export type AsideReply = { ok: true } | { ok: false; message: string; code?: string };

/** Why the work aside did not complete: SQLite's error (its code kept), or the worker's end. */
export class AsideFailed extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'AsideFailed';
  }
}

/**
 * Runs `request` on a worker thread. Resolves true once every step has committed, false when
 * `stop` aborted it first (the worker is terminated: an open transaction rolls back, and what is
 * left stays recorded as owed — names uncounted, a merge or a pass pending — for the next
 * start); rejects with AsideFailed.
 */
export function runAside(request: AsideRequest, stop: AbortSignal): Promise<boolean> {
  if (stop.aborted) return Promise.resolve(false);
  const worker = startWorker(import.meta.url, './aside-worker', request, {});
  return new Promise<boolean>((resolve, reject) => {
    let settled = false;
    const onAbort = () => {
      if (settled) return;
      settled = true;
      void worker.terminate();
      resolve(false);
    };
    stop.addEventListener('abort', onAbort, { once: true });
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      stop.removeEventListener('abort', onAbort);
      outcome();
    };
    worker.once('message', (reply: AsideReply) => settle(() => (reply.ok ? resolve(true) : reject(new AsideFailed(reply.message, reply.code)))));
    // Without a listener an 'error' event would be thrown in this thread.
    worker.on('error', (e: Error) => settle(() => reject(new AsideFailed(`the worker failed: ${e.message}`))));
    worker.once('exit', (code: number) => settle(() => reject(new AsideFailed(`the worker exited (code ${code}) before its work was done`))));
  });
}
