import { log } from '../core/log.ts';
import { clearStartMark, findServer } from './discovery.ts';
import { WorkspaceHttpServer } from './http.ts';
import { createLock, newToken, readLock, removeLock, type ServerLock } from './lock.ts';
import type { ToolServices } from './tools.ts';

// One long-lived `rift server` per workspace (reference G.5): it alone opens the index, the
// watcher and the store; `rift mcp` proxies and the agent find it through `.rift/server.json`.
// Election is the lock's atomic creation: of many servers started at once exactly one wins and
// the rest exit. A lock is stale only when its server fails an authenticated health check and
// its pid is dead; only then is it removed.

/** How often a running server checks its idle clock and that the lock still names it. */
const HOUSEKEEPING_MS = 5000;
const POLL_MS = 50;
/** How long a stopping server waits for the requests it already took to be answered. */
const DRAIN_MS = 30_000;

export interface RunServerOptions {
  root: string;
  port: number;
  idleMs: number;
  version: string;
  /** Opens the workspace engine once the election is won. */
  open: () => Promise<{ services: ToolServices; indexState: () => Record<string, unknown>; close: () => Promise<void> }>;
  /** Start-up and shut-down notes for a person (stderr). */
  note: (text: string) => void;
}

/**
 * Runs the workspace server until it is idle, asked to stop, signalled, or loses its lock.
 * Returns 0; when another live server already serves the workspace, says so and returns 0.
 */
export async function runWorkspaceServer(opts: RunServerOptions): Promise<number> {
  const { root, note } = opts;
  const token = newToken();
  let lastActivity = Date.now();
  let resolveServices!: (s: ToolServices) => void;
  let rejectServices!: (e: Error) => void;
  const services = new Promise<ToolServices>((resolve, reject) => {
    resolveServices = resolve;
    rejectServices = reject;
  });
  services.catch(() => {}); // sessions opened meanwhile see the failure; nothing else awaits it
  let engine: Awaited<ReturnType<RunServerOptions['open']>> | null = null;
  let stop!: (reason: string) => void;
  const stopped = new Promise<string>((r) => (stop = r));

  const http = await WorkspaceHttpServer.listen({
    port: opts.port,
    token,
    version: opts.version,
    workspace: root,
    services,
    indexState: () => engine?.indexState() ?? { state: 'opening' },
    onActivity: () => (lastActivity = Date.now()),
    onShutdown: () => stop('asked to stop'),
  });
  const lock: ServerLock = { port: http.port, pid: process.pid, token, workspace: root, version: opts.version };

  for (;;) {
    if (createLock(root, lock)) break;
    const other = await findServer(root);
    if (other) {
      clearStartMark(root);
      await http.close();
      note(`rift server ${other.lock.version} (pid ${other.lock.pid}, port ${other.lock.port}) already serves this workspace`);
      return 0;
    }
  }
  clearStartMark(root);
  note(`rift server ${opts.version} serving on 127.0.0.1:${http.port} (pid ${process.pid}); lock .rift/server.json`);
  log('info', 'server', 'workspace server started', { port: http.port, version: opts.version });

  const onSignal = () => stop('signalled');
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  const timer = setInterval(() => {
    if (!http.busy && Date.now() - lastActivity >= opts.idleMs) return stop(`idle for ${Math.round(opts.idleMs / 1000)} s`);
    const current = readLock(root);
    if (current === null || current === 'malformed' || current.token !== token) stop('its lock was removed or replaced');
  }, Math.min(HOUSEKEEPING_MS, Math.max(POLL_MS, Math.floor(opts.idleMs / 4))));

  try {
    engine = await opts.open();
    resolveServices(engine.services);
  } catch (e) {
    rejectServices(e as Error);
    stop(`the workspace could not open: ${(e as Error).message}`);
  }

  const reason = await stopped;
  // From here no new request runs here; the lock goes first so the next call starts a new
  // server, and the requests already taken are answered before the connections close.
  const draining = http.drain(DRAIN_MS);
  clearInterval(timer);
  process.off('SIGTERM', onSignal);
  process.off('SIGINT', onSignal);
  removeLock(root, lock);
  await draining;
  await http.linger();
  await http.close();
  await engine?.close().catch(() => {});
  note(`rift server stopped: ${reason}`);
  log('info', 'server', 'workspace server stopped', { reason });
  return 0;
}
