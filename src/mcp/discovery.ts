import { spawn } from 'node:child_process';
import { closeSync, openSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { RiftError } from '../core/errors.ts';
import { SERVER_START_WAIT_MS } from '../core/limits.ts';
import { log } from '../core/log.ts';
import { ensureStateDir, STATE_DIR } from '../workspace/state-dir.ts';
import type { ServerStatus } from './http.ts';
import { pidAlive, readLock, removeLock, type ServerLock } from './lock.ts';
import { MCP_PATH } from './wire.ts';

// Finding, starting and stopping a workspace's `rift server` from another process (a `rift mcp`
// proxy, the agent, `rift status`). A lock is stale only when its server fails an authenticated
// health check and its pid is dead; only then is it removed. Of many clients that find no server,
// one starts it (the start mark) and the rest wait for it.

/** How long one health check waits for `/status` (a busy cold build can hold the event loop briefly). */
const PROBE_TIMEOUT_MS = 3000;
const POLL_MS = 50;
/** Present while a client is starting the server (see `takeStartMark`). */
const STARTING_FILE = 'server.starting';

export function serverUrl(lock: Pick<ServerLock, 'port'>, path = MCP_PATH): URL {
  return new URL(`http://127.0.0.1:${lock.port}${path}`);
}

/** The server's status when it answers an authenticated request in time, else null. */
export async function probe(lock: ServerLock, timeoutMs = PROBE_TIMEOUT_MS): Promise<ServerStatus | null> {
  try {
    const res = await fetch(serverUrl(lock, '/status'), { headers: { authorization: `Bearer ${lock.token}` }, signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return null;
    const status = (await res.json()) as ServerStatus;
    return status.pid === lock.pid ? status : null;
  } catch {
    return null;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The live server of this workspace, or null when none runs. A stale lock (no answer and a
 * dead pid, or a damaged file) is removed on the way; a lock whose process lives but does not
 * answer is waited on until `waitMs`, then reported.
 */
export async function findServer(root: string, waitMs = SERVER_START_WAIT_MS): Promise<{ lock: ServerLock; status: ServerStatus } | null> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const lock = readLock(root);
    if (lock === null) return null;
    if (lock === 'malformed') {
      removeLock(root, 'malformed');
      continue;
    }
    const status = await probe(lock);
    if (status) return { lock, status };
    if (!pidAlive(lock.pid)) {
      log('info', 'server.lock', 'stale lock removed', { pid: lock.pid });
      removeLock(root, lock);
      continue;
    }
    if (Date.now() > deadline) {
      throw new RiftError('temporarily_unavailable', [
        ['server', `pid ${lock.pid} holds .rift/server.json but does not answer`],
        ['next', `stop that process, or run rift mcp --standalone`],
      ]);
    }
    await sleep(POLL_MS * 4);
  }
}

/**
 * Marks that a server is being started, so that of many clients finding no server only one
 * spawns it: true when this call took the mark. A mark older than the start wait is stale.
 */
function takeStartMark(root: string): boolean {
  const mark = join(ensureStateDir(root), STARTING_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      closeSync(openSync(mark, 'wx', 0o600));
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    try {
      if (Date.now() - statSync(mark).mtimeMs < SERVER_START_WAIT_MS) return false;
      unlinkSync(mark);
    } catch {
      // gone meanwhile: try again
    }
  }
  return false;
}

/**
 * Starts the workspace's server at once when no lock names one (and no other client is starting
 * it), without probing anything: a client calls it first, so the server starts up while the
 * client loads the rest of itself; `ensureServer` then finds it as usual.
 */
export function startServerIfAbsent(root: string): void {
  if (readLock(root) === null && takeStartMark(root)) spawnServer(root);
}

export function clearStartMark(root: string): void {
  try {
    unlinkSync(join(root, STATE_DIR, STARTING_FILE));
  } catch {
    // not there
  }
}

/** Starts `rift server` for the workspace in the background (its log goes to `.rift/server.log`). */
export function spawnServer(root: string): void {
  const logFd = openSync(join(ensureStateDir(root), 'server.log'), 'a', 0o600);
  try {
    // The same program and loader this process runs under (compiled, or sources through tsx).
    const child = spawn(process.execPath, [...process.execArgv, process.argv[1], 'server', '--workspace', root], {
      cwd: root,
      detached: true,
      stdio: ['ignore', 'ignore', logFd],
      env: process.env,
    });
    child.unref();
  } finally {
    closeSync(logFd);
  }
}

/** The live server, started first when none runs; waits until it answers. */
export async function ensureServer(root: string, waitMs = SERVER_START_WAIT_MS): Promise<{ lock: ServerLock; status: ServerStatus }> {
  const deadline = Date.now() + waitMs;
  let spawned = false;
  for (;;) {
    const found = await findServer(root, Math.max(0, deadline - Date.now()));
    if (found) return found;
    if (!spawned && takeStartMark(root)) {
      spawnServer(root);
      spawned = true;
    }
    if (Date.now() > deadline) {
      throw new RiftError('temporarily_unavailable', [
        ['server', `rift server did not start within ${Math.round(waitMs / 1000)} s`],
        ['log', '.rift/server.log'],
      ]);
    }
    await sleep(POLL_MS);
  }
}

/** Asks a server to stop and waits until its lock is gone. */
export async function stopServer(root: string, lock: ServerLock, waitMs = SERVER_START_WAIT_MS): Promise<void> {
  await fetch(serverUrl(lock, '/shutdown'), { method: 'POST', headers: { authorization: `Bearer ${lock.token}` }, signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) }).catch(() => {});
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline) {
    const now = readLock(root);
    if (now === null || now === 'malformed' || now.token !== lock.token) return;
    if (!pidAlive(lock.pid)) {
      removeLock(root, lock);
      return;
    }
    await sleep(POLL_MS);
  }
  throw new RiftError('temporarily_unavailable', [['server', `pid ${lock.pid} did not stop within ${Math.round(waitMs / 1000)} s`]]);
}

