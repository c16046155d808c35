import Database from 'better-sqlite3';
import { join } from 'node:path';
import { RiftError, storageFailure } from '../core/errors.ts';
import { Lane } from '../core/lane.ts';
import { CHANGE_LOCK_BACKOFF_MAX_MS, CHANGE_LOCK_WAIT_MS, CHANGE_LOG_ENTRIES_MAX, msFromEnv } from '../core/limits.ts';
import { log } from '../core/log.ts';
import { ensureStateDir } from '../workspace/state-dir.ts';
import { recoverChanges } from './journal.ts';

// One writer per tree across every rift process (issue 10; spec "Changes": changes to one tree
// apply one after the other). Inside a process a FIFO lane orders the changes; across
// processes each holds an exclusive SQLite transaction on `.rift/lock.db` while it resolves,
// verifies and publishes. SQLite locks with POSIX record locks, which the kernel drops when the
// holder dies, so a killed holder never blocks the tree. better-sqlite3 is synchronous: the
// lock is tried without waiting (busy timeout 0) and retried after a short async pause, so the
// event loop never blocks on it.
//
// POSIX locks belong to the process, and closing any descriptor of the file drops them all.
// SQLite keeps its own connections safe from that, so this process opens lock.db through one
// connection per tree (this module's registry) and never through plain fs calls.
//
// The same transaction keeps the tree's change log: each change appends the paths it wrote,
// so a process taking the lock next refreshes its index for what the others changed before it
// resolves against it (the spec's "the later one meets its preconditions against the earlier
// one's result").

export const LOCK_FILE = join('.rift', 'lock.db');

/** What a holder of the lock may do besides holding it. */
export interface Held {
  /**
   * Paths other processes recorded after change-log position `since`, and the position now;
   * `paths` is null when the log no longer reaches back that far (or `since` is unknown).
   */
  missed(since: number | null): { paths: string[] | null; position: number };
  /** Appends the paths this change wrote; returns the new log position. */
  record(paths: readonly string[]): number;
}

const registry = new Map<string, TreeLock>();

/** The lock wait a change allows itself; `RIFT_CHANGE_LOCK_WAIT_MS` shortens it for tests. */
export function changeLockBudget(): number {
  return msFromEnv('RIFT_CHANGE_LOCK_WAIT_MS', CHANGE_LOCK_WAIT_MS);
}

/**
 * Restores what changes a dead process left half-published (only a holder of the lock may:
 * then none of them is live), logging the paths so other processes re-read them.
 */
export async function recoverInterrupted(root: string, held: Held): Promise<void> {
  const restored = await recoverChanges(root);
  if (restored.length > 0) held.record(restored);
}

/**
 * Whether a SQLite error says another connection holds the lock, extended codes included
 * (SQLITE_BUSY_RECOVERY: another connection is recovering the WAL after a holder died).
 */
export function sqliteBusy(e: unknown): boolean {
  const code = (e as { code?: string }).code;
  return typeof code === 'string' && /^SQLITE_(BUSY|LOCKED)(_|$)/.test(code);
}

export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class TreeLock {
  private db: Database.Database | null = null;
  private readonly lane = new Lane();
  private users = 0;

  private constructor(private readonly root: string) {}

  /** The lock of the tree at canonical `root`, shared by everything in this process. */
  static acquire(root: string): TreeLock {
    let lock = registry.get(root);
    if (!lock) {
      lock = new TreeLock(root);
      registry.set(root, lock);
    }
    lock.users++;
    return lock;
  }

  /**
   * Runs `work` holding the tree at `root` for a caller without a lock of its own (the agent's
   * file tools): the change budget's wait, interrupted changes recovered first.
   */
  static async hold<T>(root: string, work: (held: Held) => T | Promise<T>): Promise<T> {
    const lock = TreeLock.acquire(root);
    const budget = changeLockBudget();
    try {
      return await lock.run(performance.now() + budget, budget, async (held) => {
        await recoverInterrupted(root, held);
        return work(held);
      });
    } finally {
      await lock.release();
    }
  }

  /** Gives back one `acquire`; the last one closes the connection once the lane is idle. */
  async release(): Promise<void> {
    if (--this.users > 0) return;
    await this.lane.idle();
    if (this.users > 0) return;
    registry.delete(this.root);
    this.db?.close();
    this.db = null;
  }

  /**
   * The change log's position now, without taking the lock; null when it cannot be read (busy,
   * or a read-only workspace: a change then finds out for itself).
   */
  position(): number | null {
    try {
      const row = this.connection().prepare('SELECT coalesce(max(seq), 0) AS seq FROM changes').get() as { seq: number } | undefined;
      return row?.seq ?? 0;
    } catch (e) {
      return /no such table/.test((e as Error).message) ? 0 : null; // no table: nothing was ever recorded
    }
  }

  /**
   * Runs `work` holding the tree: after every earlier `run` in this process, and with the
   * cross-process lock taken before `deadline` (a `performance.now()` time) or
   * `temporarily_unavailable`. A `deadline` already past means one attempt.
   */
  run<T>(deadline: number, budgetMs: number, work: (held: Held) => Promise<T>): Promise<T> {
    return this.lane.run(async () => {
      const db = await this.take(deadline, budgetMs);
      try {
        return await work(this.held(db));
      } finally {
        // Whatever the work did is logged, failed or not (a recovery before a failed change
        // still restored files); the commit also lets the lock go.
        try {
          db.exec('COMMIT');
        } catch (e) {
          // Only the log entry is lost: other processes learn of the change from their watchers.
          log('warn', 'change.lock', 'change log entry not kept', { error: (e as Error).message });
          if (db.inTransaction) db.exec('ROLLBACK');
        }
      }
    });
  }

  private connection(): Database.Database {
    if (this.db) return this.db;
    try {
      ensureStateDir(this.root);
      const db = new Database(join(this.root, LOCK_FILE), { timeout: 0 });
      // The log need not survive a power cut (a lost entry only delays another index), so no fsync per change.
      db.pragma('synchronous = NORMAL');
      this.db = db;
    } catch (e) {
      throw storageFailure(LOCK_FILE, e);
    }
    return this.db;
  }

  /** Opens the lock database once (WAL, so reading the log never waits) and takes the lock. */
  private async take(deadline: number, budgetMs: number): Promise<Database.Database> {
    let wait = 1;
    for (;;) {
      try {
        const db = this.connection();
        if (db.pragma('journal_mode', { simple: true }) !== 'wal') db.pragma('journal_mode = WAL');
        db.exec('BEGIN EXCLUSIVE');
        try {
          db.exec('CREATE TABLE IF NOT EXISTS changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, paths TEXT NOT NULL)');
        } catch (e) {
          db.exec('ROLLBACK');
          throw e;
        }
        return db;
      } catch (e) {
        if (!sqliteBusy(e)) throw e instanceof RiftError ? e : storageFailure(LOCK_FILE, e);
      }
      const now = performance.now();
      if (now >= deadline) {
        throw new RiftError(
          'temporarily_unavailable',
          [
            ['operation', 'workspace change'],
            ['timeout_ms', budgetMs],
            ['detail', 'another rift process held the tree for the whole call budget'],
          ],
          { retry: 'same_request', phase: 'change' },
        );
      }
      await pause(Math.min(wait + Math.random() * wait, deadline - now));
      wait = Math.min(wait * 2, CHANGE_LOCK_BACKOFF_MAX_MS);
    }
  }

  private held(db: Database.Database): Held {
    return {
      missed(since) {
        const { low, high } = db.prepare('SELECT coalesce(min(seq), 0) AS low, coalesce(max(seq), 0) AS high FROM changes').get() as { low: number; high: number };
        if (since === null || since > high || (high > 0 && since < low - 1)) return { paths: null, position: high };
        const rows = db.prepare('SELECT paths FROM changes WHERE seq > ? ORDER BY seq').all(since) as Array<{ paths: string }>;
        const paths = new Set<string>();
        for (const r of rows) for (const p of JSON.parse(r.paths) as string[]) paths.add(p);
        return { paths: [...paths], position: high };
      },
      record(paths) {
        const seq = Number(db.prepare('INSERT INTO changes (paths) VALUES (?)').run(JSON.stringify(paths)).lastInsertRowid);
        db.prepare('DELETE FROM changes WHERE seq <= ?').run(seq - CHANGE_LOG_ENTRIES_MAX);
        return seq;
      },
    };
  }
}
