import { log } from '../core/log.ts';
import { parse, WORKSPACE } from './args.ts';

// `rift mcp`: MCP over stdio. By default a thin proxy to the workspace's one `rift server`
// (started on demand), so every agent on a tree shares one index and one watcher;
// `--standalone` serves in this process, as before. stdout carries only MCP frames.

const OPTIONS = { ...WORKSPACE, standalone: { type: 'boolean' } } as const;

export async function runMcp(argv: readonly string[], version: string): Promise<number> {
  const { values } = parse(argv, OPTIONS, 0);
  // The proxy loads no index, parser or store code: it stays small beside the server.
  const { canonicalRoot } = await import('../workspace/root.ts');
  const { stateDirWritable } = await import('../workspace/state-dir.ts');
  const root = canonicalRoot(values.workspace);
  // The shared server needs `.rift/` for its lock and log; where nothing can be written there
  // (a read-only checkout), this process serves alone, its index in memory.
  const shared = !values.standalone && stateDirWritable(root);
  if (!values.standalone && !shared) log('warn', 'mcp', 'serving in this process: .rift/ is not writable, so no workspace server can start');
  if (shared) {
    // The server starts up while this process loads the proxy (each takes a few hundred ms).
    const { startServerIfAbsent } = await import('../mcp/discovery.ts');
    try {
      startServerIfAbsent(root);
    } catch {
      // the proxy's own start says what went wrong
    }
    const { McpProxy } = await import('../mcp/proxy.ts');
    log('info', 'mcp', 'MCP proxy starting', { version });
    await new McpProxy({ root, version, note: (s) => process.stderr.write(`${s}\n`) }).run();
    log('info', 'mcp', 'MCP proxy stopped');
    return 0;
  }
  log('info', 'mcp', 'MCP server starting', { version, standalone: true });
  const { Engine } = await import('../services/engine.ts');
  const { userTrusts } = await import('../agent/policy/trust.ts');
  const { createMcpServer, serveStdio } = await import('../mcp/server.ts');
  const { LogCapture } = await import('../services/log-capture.ts');
  const engine = await Engine.open(root, { watch: true, engineTrust: userTrusts });
  // Captured from here on: the engine is open, so the workspace database is.
  const logs = new LogCapture(engine.root, engine.config);
  const server = createMcpServer(
    {
      read: engine.read,
      search: engine.search,
      change: engine.change,
      execute: engine.execute,
      projections: engine.projections,
      resources: { gate: engine.gate, map: engine.map, workspace: engine.workspace, logs, projections: engine.projections, fs: engine.fs },
    },
    version,
  );
  // The first build runs while the client initializes; reads wait for it.
  void engine.buildInBackground();
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await serveStdio(server);
  log('info', 'mcp', 'MCP server ready');
  process.stdin.on('end', () => void server.close());
  await closed;
  await engine.close();
  log('info', 'mcp', 'MCP server stopped');
  logs.close();
  return 0;
}
