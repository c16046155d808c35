import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { SERVER_REQUEST_BYTES_MAX } from '../core/limits.ts';
import { log } from '../core/log.ts';
import { createMcpServer } from './server.ts';
import type { ToolServices } from './tools.ts';
import { MCP_PATH } from './wire.ts';

// `rift server`'s transport (reference G.5): MCP over Streamable HTTP on 127.0.0.1, one MCP
// session per connected client, every request authenticated by the lock's bearer token and
// checked against DNS rebinding (only loopback `Host` values, no foreign `Origin`) before the
// SDK sees it. Beside `/mcp` it answers `/status` (who is connected, index state, memory) and
// `/shutdown`, both under the same token.

export interface ClientRecord {
  session: string;
  name: string;
  version: string;
  connected_at: number;
  last_request_at: number;
}

export interface ServerStatus {
  pid: number;
  workspace: string;
  version: string;
  port: number;
  started_at: number;
  clients: ClientRecord[];
  index: Record<string, unknown>;
  memory: { rss_bytes: number; heap_used_bytes: number };
}

export interface HttpServeOptions {
  port: number;
  token: string;
  version: string;
  workspace: string;
  /** The engine's services; reads and changes wait for it to open. */
  services: Promise<ToolServices>;
  /** Index facts for `/status`. */
  indexState: () => Record<string, unknown>;
  /** Called on every authenticated request (the idle clock). */
  onActivity: () => void;
  /** Called by `POST /shutdown`. */
  onShutdown: () => void;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** The host part of a `Host` header value (`127.0.0.1:4000` → `127.0.0.1`, `[::1]:4000` → `[::1]`). */
function hostName(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const colon = host.indexOf(':');
  return colon < 0 ? host : host.slice(0, colon);
}

/** Why a request is refused before it reaches MCP, or null when it may pass. */
export function admission(req: Pick<IncomingMessage, 'headers'>, token: string): { status: number; message: string } | null {
  const host = req.headers.host;
  if (!host || !LOOPBACK_HOSTS.has(hostName(host).toLowerCase())) {
    return { status: 403, message: `forbidden Host ${JSON.stringify(host ?? '')}: rift server answers only loopback hosts (127.0.0.1, localhost, [::1])` };
  }
  const origin = req.headers.origin;
  if (origin !== undefined) {
    let name: string | null = null;
    try {
      name = new URL(origin).hostname;
    } catch {
      // not a URL: refused below
    }
    const bracketed = name !== null && name.includes(':') && !name.startsWith('[') ? `[${name}]` : name;
    if (bracketed === null || !LOOPBACK_HOSTS.has(bracketed.toLowerCase())) {
      return { status: 403, message: `forbidden Origin ${JSON.stringify(origin)}: rift server refuses requests from non-loopback origins` };
    }
  }
  const auth = req.headers.authorization;
  if (auth !== `Bearer ${token}`) {
    return { status: 401, message: 'missing or wrong bearer token: read it from .rift/server.json (owner-only) and send Authorization: Bearer <token>' };
  }
  return null;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(`${JSON.stringify(body)}\n`);
}

export class WorkspaceHttpServer {
  private readonly sessions = new Map<string, { transport: StreamableHTTPServerTransport; record: ClientRecord }>();
  private readonly startedAt = Date.now();
  private inflight = 0;
  /** Set once the server decided to stop: new requests are refused as never taken (503). */
  private closing = false;
  private drained: (() => void) | null = null;
  /** Open client connections (keep-alive sockets included), for a close that drops none mid-request. */
  private readonly connections = new Set<Socket>();

  private constructor(
    private readonly http: HttpServer,
    readonly port: number,
    private readonly opts: HttpServeOptions,
  ) {}

  /** Listens on 127.0.0.1 (port 0 picks a free one). */
  static async listen(opts: HttpServeOptions): Promise<WorkspaceHttpServer> {
    let self: WorkspaceHttpServer | null = null;
    const http = createServer((req, res) => {
      self!.handle(req, res).catch((e: Error) => {
        log('warn', 'server.http', 'request failed', { error: e.message });
        if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
      });
    });
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(opts.port, '127.0.0.1', () => resolve());
    });
    self = new WorkspaceHttpServer(http, (http.address() as AddressInfo).port, opts);
    const connections = self.connections;
    http.on('connection', (socket: Socket) => {
      connections.add(socket);
      socket.once('close', () => connections.delete(socket));
    });
    return self;
  }

  /** Requests being answered now (an idle server is one with none for the idle period). */
  get busy(): boolean {
    return this.inflight > 0;
  }

  status(): ServerStatus {
    const mem = process.memoryUsage();
    return {
      pid: process.pid,
      workspace: this.opts.workspace,
      version: this.opts.version,
      port: this.port,
      started_at: this.startedAt,
      clients: [...this.sessions.values()].map((s) => s.record),
      index: this.opts.indexState(),
      memory: { rss_bytes: mem.rss, heap_used_bytes: mem.heapUsed },
    };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const refused = admission(req, this.opts.token);
    if (refused) {
      log('info', 'server.http', 'request refused', { status: refused.status });
      sendJson(res, refused.status, { error: refused.message });
      return;
    }
    // A stopping server takes nothing new: 503 tells the proxy the request never ran, so it may
    // send it (a change included) to the next server.
    // `connection: close` retires the socket, so the proxy's next request opens a new connection.
    if (this.closing) {
      res.setHeader('connection', 'close');
      return sendJson(res, 503, { error: 'rift server is stopping; connect to the next one' });
    }
    this.opts.onActivity();
    // A request being answered keeps the server busy; a notification stream (GET) does not.
    if (req.method !== 'GET') {
      this.inflight++;
      res.once('close', () => {
        this.inflight--;
        this.opts.onActivity();
        if (this.inflight === 0) this.drained?.();
      });
    }
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/status' && req.method === 'GET') return sendJson(res, 200, this.status());
    if (path === '/shutdown' && req.method === 'POST') {
      sendJson(res, 200, { stopping: true });
      this.opts.onShutdown();
      return;
    }
    if (path !== MCP_PATH) return sendJson(res, 404, { error: `no such endpoint ${path}; MCP is served at ${MCP_PATH}` });

    const id = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(id) ? id[0] : id;
    if (sessionId !== undefined) {
      const session = this.sessions.get(sessionId);
      if (!session) return sendJson(res, 404, { jsonrpc: '2.0', error: { code: -32001, message: 'session not found: the server restarted; initialize again' }, id: null });
      session.record.last_request_at = Date.now();
      await session.transport.handleRequest(req, res);
      return;
    }
    if (req.method !== 'POST') return sendJson(res, 400, { jsonrpc: '2.0', error: { code: -32000, message: 'no mcp-session-id: initialize first with a POST' }, id: null });
    const body = await readBody(req);
    if (body === undefined || !isInitializeRequest(body)) {
      return sendJson(res, 400, { jsonrpc: '2.0', error: { code: -32600, message: 'the first request of a session must be initialize' }, id: null });
    }
    await this.openSession(req, res, body);
  }

  private async openSession(req: IncomingMessage, res: ServerResponse, body: { params: { clientInfo: { name: string; version: string } } }): Promise<void> {
    const now = Date.now();
    const record: ClientRecord = { session: '', name: body.params.clientInfo.name, version: body.params.clientInfo.version, connected_at: now, last_request_at: now };
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // Responses come back as one JSON body: a client sees the answer or a broken connection, never half a stream.
      enableJsonResponse: true,
      maxRequestBodySize: SERVER_REQUEST_BYTES_MAX,
      onsessioninitialized: (sid) => {
        record.session = sid;
        this.sessions.set(sid, { transport, record });
        log('info', 'server.session', 'client connected', { client: record.name, clients: this.sessions.size });
      },
    });
    transport.onclose = () => {
      if (record.session && this.sessions.delete(record.session)) {
        log('info', 'server.session', 'client disconnected', { client: record.name, clients: this.sessions.size });
      }
    };
    // Not awaited: initialize is answered while the engine opens; calls wait for it.
    const mcp = createMcpServer(this.opts.services, this.opts.version);
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  /**
   * Stops taking requests (each new one is refused with 503, never run) and resolves once the
   * requests already taken are answered, or after `timeoutMs`.
   */
  async drain(timeoutMs: number): Promise<void> {
    this.closing = true;
    if (this.inflight === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.drained = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /**
   * After a drain, waits (at most `timeoutMs`) for the clients to retire their connections. A
   * request that arrives meanwhile is refused with 503 and sent again elsewhere; closing a
   * kept-alive socket from this side instead races a client that is writing a request on it,
   * which would see a dropped connection and could not know whether its change ran. Clients
   * retire idle sockets before the keep-alive timeout this server announces, so the wait is
   * bounded by it.
   */
  async linger(timeoutMs = this.http.keepAliveTimeout + 1000): Promise<void> {
    this.closing = true;
    await this.closeSessions();
    const deadline = Date.now() + timeoutMs;
    while (this.connections.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  }

  private async closeSessions(): Promise<void> {
    for (const { transport } of [...this.sessions.values()]) await transport.close().catch(() => {});
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.closeSessions();
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }
}

/** Bytes an initialize request may carry. */
const INITIALIZE_BODY_BYTES_MAX = 1024 * 1024;

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > INITIALIZE_BODY_BYTES_MAX) return undefined;
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}
