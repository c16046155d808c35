import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ensureStateDir, STATE_DIR, stateDirUsable } from '../workspace/state-dir.ts';

// The workspace server's lock (reference G.5): `.rift/server.json` names the one `rift server`
// serving a workspace. It is created by linking a fully written, owner-only temp file into
// place, so a reader never sees half a lock and exactly one of many starters wins; it is
// removed only by its owner, or as stale after a failed health check and a dead pid.

export interface ServerLock {
  port: number;
  pid: number;
  /** Bearer token every request must carry. */
  token: string;
  /** Canonical workspace root. */
  workspace: string;
  version: string;
}

export const LOCK_FILE = join(STATE_DIR, 'server.json');
const TOKEN = /^[A-Za-z0-9_-]{32,128}$/;

export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

function lockPath(root: string): string {
  return join(root, LOCK_FILE);
}

function parseLock(text: string): ServerLock | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (!v || typeof v !== 'object') return null;
  const o = v as Record<string, unknown>;
  const ok =
    Number.isInteger(o.port) && (o.port as number) >= 1 && (o.port as number) <= 65535 &&
    Number.isInteger(o.pid) && (o.pid as number) > 0 &&
    typeof o.token === 'string' && TOKEN.test(o.token) &&
    typeof o.workspace === 'string' && typeof o.version === 'string';
  return ok ? { port: o.port as number, pid: o.pid as number, token: o.token as string, workspace: o.workspace as string, version: o.version as string } : null;
}

/** The current lock; `malformed` when a file is there but does not hold one (a damaged lock is stale). */
export function readLock(root: string): ServerLock | 'malformed' | null {
  // A `.rift` that is not a real directory holds no lock of ours (and is never read through).
  if (!stateDirUsable(root)) return null;
  let text: string;
  try {
    text = readFileSync(lockPath(root), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  return parseLock(text) ?? 'malformed';
}

/** Writes the lock if none exists; true when this call created it. */
export function createLock(root: string, lock: ServerLock): boolean {
  const dir = ensureStateDir(root);
  const tmp = join(dir, `server.json.${process.pid}.${randomBytes(6).toString('hex')}`);
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(lock)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, lockPath(root));
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  } finally {
    unlinkSync(tmp);
  }
}

/**
 * Removes the lock only while it is still `expected` (same token): it is first moved aside, so
 * a lock another server created meanwhile is put back, never deleted. True when removed.
 */
export function removeLock(root: string, expected: { token: string } | 'malformed'): boolean {
  const path = lockPath(root);
  const aside = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.old`;
  try {
    renameSync(path, aside);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
  const moved = parseLock(readFileSync(aside, 'utf8'));
  const ours = expected === 'malformed' ? moved === null : moved?.token === expected.token;
  if (!ours) {
    try {
      linkSync(aside, path);
    } catch {
      // a newer lock took the place: it wins, and this one was stale anyway
    }
  }
  unlinkSync(aside);
  return ours;
}

/** Whether a process with this pid exists (signal 0 probes without signalling). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
