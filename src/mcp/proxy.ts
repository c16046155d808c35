import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  isInitializeRequest, isJSONRPCErrorResponse, isJSONRPCRequest, isJSONRPCResultResponse,
  type JSONRPCMessage, type JSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { RiftError, limitExceeded } from '../core/errors.ts';
import { SERVER_REQUEST_BYTES_MAX } from '../core/limits.ts';
import { log } from '../core/log.ts';
import { changeOutcomeUnknown, toErrorData } from './errors.ts';
import type { ServerLock } from './lock.ts';
import { failureKind } from './remote.ts';
import { ensureServer, serverUrl, stopServer } from './discovery.ts';

// `rift mcp` as a thin proxy (reference G.5): stdio MCP from the client is forwarded message by
// message to the workspace's `rift server` over Streamable HTTP, and every answer comes back
// unchanged — the same tool list, results, errors and notifications. When the server dies the
// proxy starts a new one, replays the client's initialize, and resends what is safe to resend:
// reads. A change whose answer was lost may have applied, so it is answered, never resent.

/** Methods that only read: resent once after the server restarts. */
const READ_METHODS = new Set(['ping', 'tools/list', 'resources/list', 'resources/templates/list', 'resources/read', 'prompts/list', 'completion/complete']);
/** The read tools (`phase: 'read'` in the tool table, which this module does not load: the proxy stays small). */
export const READ_TOOLS: ReadonlySet<string> = new Set(['get_symbol', 'search', 'nodes']);

function resendable(m: JSONRPCRequest): boolean {
  if (READ_METHODS.has(m.method)) return true;
  if (m.method !== 'tools/call') return false;
  const name = (m.params as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' && READ_TOOLS.has(name);
}

export interface ProxyOptions {
  root: string;
  version: string;
  note: (text: string) => void;
  /** The client's side: process stdin and stdout unless given. */
  input?: Readable;
  output?: Writable;
}

interface Upstream {
  transport: StreamableHTTPClientTransport;
  lock: ServerLock;
}

export class McpProxy {
  private readonly stdio: StdioServerTransport;
  private upstream: Promise<Upstream> | null = null;
  /** The client's initialize, once answered, and its protocol version: replayed on a new server. */
  private initialize: JSONRPCRequest | null = null;
  private pendingInitialize: JSONRPCRequest | null = null;
  private protocolVersion: string | null = null;
  private initialized = false;
  private replaySeq = 0;
  /** Settles when the client's initialize has its answer: until then nothing else may pass. */
  private session: Promise<void> | null = null;
  private openSession: (() => void) | null = null;
  private readonly replies = new Map<string, (m: JSONRPCMessage) => void>();
  private closed = false;

  constructor(private readonly opts: ProxyOptions) {
    this.stdio = new StdioServerTransport(opts.input ?? process.stdin, opts.output ?? process.stdout, { maxBufferSize: SERVER_REQUEST_BYTES_MAX });
  }

  /** Serves until the client closes stdin. */
  async run(): Promise<void> {
    const done = new Promise<void>((resolve) => (this.stdio.onclose = () => resolve()));
    this.stdio.onmessage = (m) => void this.forward(m, 0);
    this.stdio.onerror = (e) => log('warn', 'mcp.proxy', 'client stream error', { error: e.message });
    (this.opts.input ?? process.stdin).on('end', () => void this.stdio.close());
    // Start (or find) the server while the client starts up; a failure answers every request.
    this.connect().catch((e: Error) => this.opts.note(`rift mcp: ${e.message}`));
    await this.stdio.start();
    await done;
    this.closed = true;
    const up = await this.upstream?.catch(() => null);
    await up?.transport.terminateSession().catch(() => {});
    await up?.transport.close().catch(() => {});
  }

  private connect(): Promise<Upstream> {
    this.upstream ??= this.open().catch((e) => {
      this.upstream = null;
      throw e;
    });
    return this.upstream;
  }

  private async open(): Promise<Upstream> {
    let { lock, status } = await ensureServer(this.opts.root);
    if (lock.version !== this.opts.version) {
      if (status.clients.length > 0) {
        throw new RiftError('temporarily_unavailable', [
          ['server', `rift server ${lock.version} (pid ${lock.pid}) serves this workspace with ${status.clients.length} client(s); this is rift ${this.opts.version}`],
          ['next', 'close those clients so the server can be replaced, or run rift mcp --standalone'],
        ]);
      }
      this.opts.note(`replacing rift server ${lock.version} (pid ${lock.pid}) with ${this.opts.version}`);
      await stopServer(this.opts.root, lock);
      ({ lock, status } = await ensureServer(this.opts.root));
    }
    const transport = new StreamableHTTPClientTransport(serverUrl(lock), {
      requestInit: { headers: { authorization: `Bearer ${lock.token}` } },
      // A lost server is noticed by the next send, which reconnects; the standalone
      // notification stream does not retry on its own.
      reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
    });
    transport.onmessage = (m) => this.fromServer(m, transport);
    transport.onerror = (e) => log('debug', 'mcp.proxy', 'server stream error', { error: e.message });
    await transport.start();
    const up = { transport, lock };
    if (this.initialize) await this.replayInitialize(up);
    return up;
  }

  /** Re-initializes a new server session with the client's own initialize, answered here. */
  private async replayInitialize(up: Upstream): Promise<void> {
    const id = `rift-proxy-${++this.replaySeq}`;
    const answered = new Promise<JSONRPCMessage>((resolve) => this.replies.set(id, resolve));
    await up.transport.send({ ...this.initialize!, id });
    const reply = await answered;
    if (!isJSONRPCResultResponse(reply)) throw new Error('the restarted server refused the replayed initialize');
    if (this.protocolVersion) up.transport.setProtocolVersion(this.protocolVersion);
    if (this.initialized) await up.transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }

  private fromServer(m: JSONRPCMessage, transport: StreamableHTTPClientTransport): void {
    if ((isJSONRPCResultResponse(m) || isJSONRPCErrorResponse(m)) && this.pendingInitialize && m.id === this.pendingInitialize.id) this.openSession?.();
    if ((isJSONRPCResultResponse(m) || isJSONRPCErrorResponse(m)) && typeof m.id === 'string' && this.replies.has(m.id)) {
      this.replies.get(m.id)!(m);
      this.replies.delete(m.id);
      return;
    }
    if (isJSONRPCResultResponse(m) && this.pendingInitialize && m.id === this.pendingInitialize.id) {
      this.initialize = this.pendingInitialize;
      const version = (m.result as { protocolVersion?: unknown }).protocolVersion;
      if (typeof version === 'string') {
        this.protocolVersion = version;
        transport.setProtocolVersion(version);
      }
    }
    void this.stdio.send(m);
  }

  private async forward(m: JSONRPCMessage, attempt: number): Promise<void> {
    const initializing = isJSONRPCRequest(m) && isInitializeRequest(m);
    if (initializing && attempt === 0) {
      this.pendingInitialize = m;
      // A client may send more before the answer; the server session exists only after it.
      this.session = new Promise<void>((resolve) => (this.openSession = resolve));
    } else if (this.session) {
      await this.session;
    }
    if ('method' in m && m.method === 'notifications/initialized') this.initialized = true;
    let up: Upstream;
    try {
      up = await this.connect();
    } catch (e) {
      return this.answer(m, e);
    }
    try {
      await up.transport.send(m);
    } catch (e) {
      if (this.closed) return;
      if (e instanceof StreamableHTTPError && e.code === 413) {
        return this.answer(m, limitExceeded('request bytes', SERVER_REQUEST_BYTES_MAX, Buffer.byteLength(JSON.stringify(m))));
      }
      // The server is gone (refused connection, dropped socket, unknown session after a
      // restart, a new token): start over with a fresh server session.
      log('info', 'mcp.proxy', 'workspace server lost; reconnecting', { error: (e as Error).message });
      if (this.upstream && (await this.upstream.catch(() => null)) === up) this.upstream = null;
      if (!isJSONRPCRequest(m)) return; // a notification or a reply to the server: it is moot now
      if (attempt === 0 && (resendable(m) || isInitializeRequest(m) || failureKind(e) === 'undelivered')) return this.forward(m, 1);
      if (attempt > 0) return this.answer(m, new RiftError('temporarily_unavailable', [['server', 'the workspace server stopped twice while answering this request']]));
      this.connect().catch(() => {}); // restart now, so the caller's next request finds a server
      return this.answer(m, changeOutcomeUnknown());
    }
  }

  /** Answers a request here with ErrorData (a notification gets nothing). */
  private answer(m: JSONRPCMessage, err: unknown): Promise<void> {
    if (!isJSONRPCRequest(m)) return Promise.resolve();
    if (m === this.pendingInitialize) this.openSession?.();
    const data = toErrorData(err, m.method === 'tools/call' && !resendable(m) ? 'change' : 'read');
    return this.stdio.send({ jsonrpc: '2.0', id: m.id, error: { code: -32000, message: data.message, data } });
  }
}
