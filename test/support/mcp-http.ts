import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

// A real Streamable HTTP MCP server on 127.0.0.1 (the MCP SDK's server side, one MCP session
// per `Mcp-Session-Id`) with one tool, `lookup`. It answers only requests that carry
// `Authorization: Bearer <token>` and records what each request carried.

export interface HttpMcpServer {
  url: string;
  /** The authorization and session id of every request, in order. */
  seen: Array<{ auth: string | undefined; session: string | undefined }>;
  close(): Promise<void>;
}

export async function startHttpMcpServer(token: string): Promise<HttpMcpServer> {
  const seen: HttpMcpServer['seen'] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http: Server = createServer(async (req, res) => {
    seen.push({ auth: req.headers.authorization, session: req.headers['mcp-session-id'] as string | undefined });
    if (req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(401).end();
      return;
    }
    const id = req.headers['mcp-session-id'] as string | undefined;
    let transport = id ? sessions.get(id) : undefined;
    if (!transport) {
      transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (sid) => void sessions.set(sid, transport!) });
      const mcpServer = new McpServer({ name: 'remote', version: '1.0.0' });
      mcpServer.registerTool('lookup', { description: 'Look a key up.', inputSchema: { key: z.string() } }, async ({ key }) => ({ content: [{ type: 'text', text: `value of ${key}` }] }));
      await mcpServer.connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    seen,
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}
