import { log } from '../core/log.ts';
import { Engine } from '../services/engine.ts';
import { createMcpServer, serveStdio } from '../mcp/server.ts';
import { parse, WORKSPACE } from './args.ts';

// `rift mcp`: serve the workspace over MCP on stdio. stdout carries only MCP frames.

export async function runMcp(argv: readonly string[], version: string): Promise<number> {
  const { values } = parse(argv, WORKSPACE, 0);
  log('info', 'mcp', 'MCP server starting', { version });
  const engine = await Engine.open(values.workspace ?? '.', { watch: true });
  const server = createMcpServer({ read: engine.read, search: engine.search, change: engine.change }, version);
  // The first build runs while the client initializes; reads wait for it.
  engine.build().catch((err: Error) => log('warn', 'index.build', 'index build failed', { error: err.message }));
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await serveStdio(server);
  log('info', 'mcp', 'MCP server ready');
  process.stdin.on('end', () => void server.close());
  await closed;
  await engine.close();
  log('info', 'mcp', 'MCP server stopped');
  return 0;
}
