import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { RiftError, storageFailure } from '../core/errors.ts';
import { EXECUTE_REFRESH_LOCK_WAIT_MS, CHANGE_LOCK_BACKOFF_MAX_MS } from '../core/limits.ts';
import { pause, sqliteBusy } from '../change/tree-lock.ts';
import { ensureStateDir, STATE_DIR } from '../workspace/state-dir.ts';

// Locks `execute` holds across every rift process on a workspace: the `[execution]
// max_concurrent` evaluation slots, and one refresh lock per execution copy. Each lock is an
// exclusive SQLite transaction on its own file under `.rift/exec/` (the same mechanism as the
// tree lock, change/tree-lock.ts): SQLite locks with POSIX record locks, which the kernel drops
// when the holder dies, so a SIGKILLed server never keeps a slot. A process keeps one connection
// per file (closing another descriptor of it would drop the lock) and tries without waiting.

class FileLock {
  private db: Database.Database | null = null;
  held = false;

  constructor(
    readonly path: string,
    /** The project path errors name. */
    private readonly shown: string,
  ) {}

  /** Takes the lock if no process (this one included) holds it; false when one does. */
  tryTake(): boolean {
    if (this.held) return false;
    try {
      this.db ??= new Database(this.path, { timeout: 0 });
      this.db.exec('BEGIN EXCLUSIVE');
      this.held = true;
      return true;
    } catch (e) {
      if (sqliteBusy(e)) return false;
      throw storageFailure(this.shown, e);
    }
  }

  release(): void {
    if (!this.held) return;
    this.held = false;
    try {
      this.db?.exec('COMMIT');
    } catch {
      // the connection is closed below: the lock goes with it
      this.db?.close();
      this.db = null;
    }
  }

  close(): void {
    this.release();
    this.db?.close();
    this.db = null;
  }
}

export class ExecLocks {
  private readonly slots = new Map<number, FileLock>();
  private readonly copies = new Map<string, FileLock>();

  /** `root`: the workspace's canonical root; the locks live in its `.rift/exec/`. */
  constructor(private readonly root: string) {}

  private ensureDir(sub: string): string {
    const abs = join(this.root, STATE_DIR, 'exec', sub);
    try {
      ensureStateDir(this.root);
      mkdirSync(abs, { recursive: true });
    } catch (e) {
      throw storageFailure(`.rift/exec/${sub}`, e);
    }
    return abs;
  }

  /**
   * One of `max` evaluation slots, or `temporarily_unavailable` when every one is taken (by
   * this process or another). Returns the release.
   */
  takeSlot(max: number): () => void {
    const dir = this.ensureDir('slots');
    for (let i = 0; i < max; i++) {
      let lock = this.slots.get(i);
      if (!lock) {
        lock = new FileLock(join(dir, `${i}.lock`), `.rift/exec/slots/${i}.lock`);
        this.slots.set(i, lock);
      }
      if (lock.tryTake()) return () => lock.release();
    }
    throw new RiftError(
      'temporarily_unavailable',
      [
        ['operation', 'execute'],
        ['max_concurrent', max],
        ['detail', 'every evaluation slot of the workspace is in use'],
      ],
      { retry: 'same_request', phase: 'read' },
    );
  }

  /** Holds the refresh lock of execution copy `id` while `work` runs (waiting a bounded time for it). */
  async withCopy<T>(id: string, work: () => Promise<T>): Promise<T> {
    let lock = this.copies.get(id);
    if (!lock) {
      lock = new FileLock(join(this.ensureDir(''), `${id}.lock`), `.rift/exec/${id}.lock`);
      this.copies.set(id, lock);
    }
    const deadline = performance.now() + EXECUTE_REFRESH_LOCK_WAIT_MS;
    let wait = 1;
    while (!lock.tryTake()) {
      const now = performance.now();
      if (now >= deadline) {
        throw new RiftError(
          'temporarily_unavailable',
          [
            ['operation', 'execution copy refresh'],
            ['timeout_ms', EXECUTE_REFRESH_LOCK_WAIT_MS],
          ],
          { retry: 'same_request', phase: 'read' },
        );
      }
      await pause(Math.min(wait, deadline - now));
      wait = Math.min(wait * 2, CHANGE_LOCK_BACKOFF_MAX_MS);
    }
    try {
      return await work();
    } finally {
      lock.release();
    }
  }

  close(): void {
    for (const l of [...this.slots.values(), ...this.copies.values()]) l.close();
    this.slots.clear();
    this.copies.clear();
  }
}
