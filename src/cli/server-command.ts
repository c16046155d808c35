import { SERVER_IDLE_MS_DEFAULT } from '../core/limits.ts';
import { findServer, stopServer } from '../mcp/discovery.ts';
import { runWorkspaceServer } from '../mcp/workspace-server.ts';
import { canonicalRoot } from '../workspace/root.ts';
import { intFlag, parse, UsageError, WORKSPACE } from './args.ts';

// `rift server`: the one long-lived MCP server of a workspace, over Streamable HTTP on
// 127.0.0.1 (docs/server.md). `rift mcp` starts it on demand; starting it by hand is for
// choosing the port or the idle period, and `--stop` ends it.

const OPTIONS = {
  ...WORKSPACE,
  port: { type: 'string' },
  'idle-timeout': { type: 'string' },
  stop: { type: 'boolean' },
} as const;

/** `30m`, `90s`, `2h` or a bare number of minutes, as milliseconds; `0` never idles out. */
export function parseDuration(v: string | undefined, flag: string): number | undefined {
  if (v === undefined) return undefined;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(v.trim());
  if (!m) throw new UsageError(`--${flag} takes a duration like 30m, 90s or 2h, got ${v}`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 'm') as 'ms' | 's' | 'm' | 'h'];
  return Math.round(Number(m[1]) * unit);
}

export async function runServerCommand(argv: readonly string[], version: string): Promise<number> {
  const { values } = parse(argv, OPTIONS, 0);
  const root = canonicalRoot(values.workspace);
  const note = (s: string) => process.stderr.write(`${s}\n`);
  if (values.stop) {
    const found = await findServer(root);
    if (!found) {
      note('no rift server is running for this workspace');
      return 0;
    }
    await stopServer(root, found.lock);
    note(`stopped rift server (pid ${found.lock.pid})`);
    return 0;
  }
  const port = intFlag(values.port, 'port') ?? 0;
  if (port > 65535) throw new UsageError(`--port must be at most 65535, got ${port}`);
  // A server started on demand by `rift mcp` takes its idle period from RIFT_SERVER_IDLE.
  const idle = parseDuration(values['idle-timeout'], 'idle-timeout') ?? parseDuration(process.env.RIFT_SERVER_IDLE, 'idle-timeout (RIFT_SERVER_IDLE)') ?? SERVER_IDLE_MS_DEFAULT;
  return runWorkspaceServer({
    root,
    port,
    idleMs: idle === 0 ? Number.POSITIVE_INFINITY : idle,
    version,
    note,
    open: async () => {
      // Loaded once the server listens and holds its lock: a client waiting for it connects
      // (and initializes) while the engine's code loads.
      const { Engine } = await import('../services/engine.ts');
      const { userTrusts } = await import('../agent/policy/trust.ts');
      const { LogCapture } = await import('../services/log-capture.ts');
      const engine = await Engine.open(root, { watch: true, engineTrust: userTrusts });
      // The server's own diagnostics, for rift://logs, from the moment the store is open.
      const logs = new LogCapture(engine.root, engine.config);
      let built: Record<string, unknown> | null = null;
      void engine.buildInBackground().then((stats) => {
        if (stats) built = { files: stats.files, symbols: stats.symbols, elapsed_ms: stats.elapsedMs };
      });
      return {
        services: {
          read: engine.read,
          search: engine.search,
          change: engine.change,
          execute: engine.execute,
          projections: engine.projections,
          resources: { gate: engine.gate, map: engine.map, workspace: engine.workspace, logs, projections: engine.projections, fs: engine.fs },
        },
        indexState: () => ({
          state: built ? (engine.indexer.observedRevision() ? 'catching_up' : 'current') : 'building',
          revision: engine.indexer.snapshot.revision,
          generation: engine.indexer.snapshot.generation,
          ...(built ? { build: built } : {}),
        }),
        close: async () => {
          await engine.close();
          logs.close();
        },
      };
    },
  });
}
