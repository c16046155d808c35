import { mkdtempSync, mkdirSync, writeFileSync, rmSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';

/** A temporary workspace with the given files (path → text or bytes). */
export function tempWorkspace(files: Record<string, string | Uint8Array> = {}): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'rift-test-')));
  writeFiles(root, files);
  return root;
}

export function writeFiles(root: string, files: Record<string, string | Uint8Array>): void {
  for (const [path, content] of Object.entries(files)) {
    const abs = join(root, path);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, content);
  }
}

export function removeWorkspace(root: string): void {
  rmSync(root, { recursive: true, force: true });
}

/** Polls `check` until it returns a value other than undefined, within a bounded time. */
export async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Runs `call` again while it fails `temporarily_unavailable` (an engine still loading a project on
 * a busy machine), as the contract's `retry: same_request` asks of a client; bounded.
 */
export async function resend<T>(call: () => Promise<T>, attempts = 10): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await call();
    } catch (e) {
      const code = (e as { code?: unknown; data?: { code?: unknown } }).data?.code ?? (e as { code?: unknown }).code;
      if (code !== 'temporarily_unavailable' || i >= attempts) throw e;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

/**
 * Holds the write lock of `root`'s index store, as another process writing it would, until
 * `release` (which may be called again: it then does nothing).
 */
export function holdStoreWriteLock(root: string): { release: () => void } {
  const db = new Database(join(root, '.rift', 'rift.db'));
  db.exec('BEGIN IMMEDIATE');
  return {
    release: () => {
      if (!db.open) return;
      db.exec('COMMIT');
      db.close();
    },
  };
}
