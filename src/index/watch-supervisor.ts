import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { WATCH_BURST_EVENTS, WATCH_RESYNC_INTERVAL_MS, WATCH_RETRY_MAX_MS, WATCH_RETRY_MS, msFromEnv } from '../core/limits.ts';
import { log } from '../core/log.ts';
import { watchWorkspace, type WatchEvent, type WorkspaceWatcher } from '../workspace/watcher.ts';

// Keeping the watcher honest. The backend (@parcel/watcher on inotify) loses events in three
// ways, none of which it reports:
//   - a kernel queue overflow (IN_Q_OVERFLOW) is skipped without a word, so a large burst of
//     writes drops events, and with them files;
//   - a directory is watched only once its own creation is seen, so directories created below a
//     new one before that (`mkdir -p a/b/c`, an unpacked archive) are never watched, and nothing
//     written there later is reported; a renamed directory's subdirectories keep their old paths;
//   - after an error (or a failed subscription) the subscription is dead.
// The indexer asks `needsResync` after each batch; a resync replaces the subscription (the new
// one lists the tree and watches every directory) and the indexer then rescans the tree, which
// finds whatever the old one missed. A subscription that fails is retried with backoff, and the
// tree rescanned on every retry, so the index follows the tree even while nothing watches it.
// Whenever events may be lost and no rescan has begun yet (a resync put off, a watcher down),
// `onLoss` says so: the indexer then warns reads until a rescan has walked the tree.

export class WatchSupervisor {
  private subscription: WorkspaceWatcher | null = null;
  private retryMs = WATCH_RETRY_MS;
  private retry: NodeJS.Timeout | null = null;
  private closed = false;
  /** Raw events since the last batch, every path the backend reported (invisible ones too). */
  private burst = 0;
  /** Paths reported created since the last batch. */
  private readonly created = new Set<string>();
  private lastResync = 0;
  /** A resync put off because the last one was too recent (a long burst asks for one per batch). */
  private deferred: NodeJS.Timeout | null = null;
  /** Set while a put-off resync has not begun (its timer may have fired, the rescan still queued). */
  private owed = false;
  /** At most one resync per this many ms; `RIFT_WATCH_RESYNC_INTERVAL_MS` overrides it for tests. */
  private readonly resyncIntervalMs: number;

  /**
   * `onEvents` receives every batch of events; `rescan` is asked for a full rescan of the tree,
   * after resubscribing when it names a reason (a put-off resync), or after a failed
   * subscription was retried (whether or not it came back); `onLoss` hears, with the reason,
   * that events may have been lost and the rescan that finds them is still to come.
   */
  constructor(
    private readonly root: string,
    private readonly onEvents: (events: WatchEvent[]) => void,
    private readonly rescan: (resync: string | null) => void,
    private readonly onLoss: (reason: string) => void = () => undefined,
  ) {
    this.resyncIntervalMs = msFromEnv('RIFT_WATCH_RESYNC_INTERVAL_MS', WATCH_RESYNC_INTERVAL_MS);
  }

  /** Subscribes; a failure is logged and retried in the background, never thrown. */
  async start(): Promise<void> {
    await this.subscribe();
  }

  /** Whether no subscription is live (it failed and is being retried). */
  get down(): boolean {
    return this.subscription === null && !this.closed;
  }

  /** Whether a resubscription was put off (see needsResync) and has not begun yet. */
  get resyncOwed(): boolean {
    return this.owed;
  }

  /**
   * Whether the events since the last call may have lost others: a burst large enough to
   * overflow the kernel's queue, or a new directory already holding subdirectories. Resets.
   */
  needsResync(isVisibleDir: (path: string) => boolean): string | null {
    const burst = this.burst;
    const created = [...this.created];
    this.burst = 0;
    this.created.clear();
    let reason: string | null = null;
    if (burst >= WATCH_BURST_EVENTS) reason = `a burst of ${burst} events`;
    else if (created.some((path) => isVisibleDir(path) && hasSubdirectory(join(this.root, path)))) reason = 'a new directory with subdirectories';
    if (reason === null) return null;
    if (this.deferred) {
      this.onLoss(reason);
      return null;
    }
    // A long burst asks once per batch: one resync per interval, the last one after it ends.
    const wait = this.lastResync + this.resyncIntervalMs - Date.now();
    if (wait <= 0) return reason;
    log('info', 'index.watch', 'resync put off: the last one was too recent', { reason, wait_ms: wait });
    this.owed = true;
    this.onLoss(reason);
    this.deferred = setTimeout(() => {
      this.deferred = null;
      this.rescan(reason);
    }, wait);
    this.deferred.unref();
    return null;
  }

  /** Replaces the subscription with a fresh one (which watches every directory as it is now). */
  async resync(reason: string): Promise<void> {
    log('info', 'index.watch', 'watcher resubscribed; the tree is rescanned', { reason });
    this.lastResync = Date.now();
    this.owed = false;
    await this.unsubscribe();
    await this.subscribe();
  }

  private async subscribe(): Promise<boolean> {
    if (this.closed) return false;
    try {
      const sub = await watchWorkspace(this.root, (events) => this.take(events), (err) => void this.failed(sub, err));
      if (this.closed) {
        await sub.close();
        return false;
      }
      this.subscription = sub;
      this.retryMs = WATCH_RETRY_MS;
      return true;
    } catch (e) {
      void this.failed(null, e as Error);
      return false;
    }
  }

  private take(events: WatchEvent[]): void {
    this.burst += events.length;
    for (const e of events) if (e.type === 'create') this.created.add(e.path);
    this.onEvents(events);
  }

  private async unsubscribe(): Promise<void> {
    const sub = this.subscription;
    this.subscription = null;
    await sub?.close().catch(() => undefined);
  }

  /** A dead or failed subscription: log, and retry (rescanning each time) until it is back. */
  private async failed(sub: WorkspaceWatcher | null, err: Error): Promise<void> {
    if (this.closed || (sub !== null && sub !== this.subscription)) return;
    if (sub) await this.unsubscribe();
    // The backend's messages name absolute paths; logs never carry the workspace root.
    const error = String(err?.message ?? err).split(this.root).join('.');
    log('warn', 'index.watch', 'watcher failed; the tree is rescanned until it is back', { error, retry_ms: this.retryMs });
    this.onLoss('the watcher is down');
    if (this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      this.retryMs = Math.min(this.retryMs * 2, WATCH_RETRY_MAX_MS);
      void this.subscribe().then((ok) => {
        if (ok) log('info', 'index.watch', 'watcher is back');
        this.rescan(null);
      });
    }, this.retryMs);
    this.retry.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    if (this.deferred) clearTimeout(this.deferred);
    await this.unsubscribe();
  }
}

function hasSubdirectory(abs: string): boolean {
  try {
    return readdirSync(abs, { withFileTypes: true }).some((d) => d.isDirectory());
  } catch {
    return false;
  }
}
