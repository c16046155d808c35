import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import {
  MCP_REQUEST_TIMEOUT_MS, MCP_RESULT_BYTES_MAX, MCP_START_TIMEOUT_MS, MCP_STDERR_TAIL_BYTES, MCP_TOOLS_PER_SERVER_MAX, TOOL_NAME_CHARS_MAX,
} from '../../core/limits.ts';
import type { McpServerConfig } from '../base/config.ts';
import { ToolError, type Tool } from '../base/tool.ts';
import type { Sandbox } from '../policy/sandbox.ts';
import { middleTruncate } from '../tools/bash.ts';
import type { CodeServices, ToolContext } from '../tools/context.ts';
import { ALIASES, ToolRegistry } from '../tools/registry.ts';
import { mcpServerLine } from './project-trust.ts';

// MCP servers as the agent's tools (reference B.11), on the MCP SDK's Client over stdio or
// Streamable HTTP. Each server's tools join the registry as `<server>_<tool>` with the server's
// own input schema. Failures stay with their server: one that cannot start is a warning and
// offers no tools; one that dies mid-session turns its calls into tool errors the model reads,
// never a failed turn. Results are bounded, and every call passes the permission rules by name
// (`Mcp(<glob>)`) and the approval mode before it is sent.

export interface StartOutcome {
  ok: boolean;
  /** One line for the user: the tools registered, or why the server is not available. */
  text: string;
}

interface Connection {
  spec: McpServerConfig;
  client: Client;
  transport: Transport;
  alive: boolean;
  /** Why the server stopped, once it has. */
  exit: string;
  /** The user was told it stopped (once per server). */
  reported: boolean;
  stderr: () => string;
}

/** The built-in tool names (code tools included) and their aliases: a server's tool never shadows one. */
const RESERVED = new Set([...ToolRegistry.standard({ read: {}, search: {}, change: {} } as CodeServices).names(), ...ALIASES.keys()]);

/** `[A-Za-z0-9_-]` only: what every provider accepts in a function name. */
function nameSafe(s: string): string {
  return s.replace(/[^A-Za-z0-9_-]/g, '_');
}

/** The text a model reads from a `tools/call` result: text blocks joined by newlines, other blocks named. */
export function renderToolResult(result: Record<string, unknown>): { text: string; isError: boolean } {
  const content = Array.isArray(result.content) ? (result.content as Array<Record<string, unknown>>) : Array.isArray(result) ? (result as Array<Record<string, unknown>>) : [];
  const parts = content.map((b) => (b && b.type === 'text' && typeof b.text === 'string' ? b.text : `[unsupported content block: ${String(b?.type)}]`));
  if (parts.length === 0 && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  if (parts.length === 0 && 'toolResult' in result) parts.push(JSON.stringify(result.toolResult));
  const text = parts.join('\n');
  return { text: middleTruncate(text, MCP_RESULT_BYTES_MAX), isError: result.isError === true };
}

function keepTail(tail: string, chunk: string): string {
  const next = tail + chunk;
  return next.length > MCP_STDERR_TAIL_BYTES ? next.slice(next.length - MCP_STDERR_TAIL_BYTES) : next;
}

export class McpServers {
  private readonly connections = new Map<string, Connection>();
  /** Names taken by a server that is connected or connecting. */
  private readonly taken = new Set<string>();
  private readonly pending = new Set<Promise<StartOutcome>>();
  /** Aborts the starts still under way when the session closes. */
  private readonly closing = new AbortController();

  constructor(
    private readonly o: {
      cwd: string;
      /** rift's version, sent as the client's. */
      version: string;
      registry: ToolRegistry;
      sandbox: Sandbox;
      /** Startup lines and warnings for the user. */
      note: (text: string) => void;
    },
  ) {}

  /** Settles when every start begun so far has connected or failed. */
  async ready(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /** Servers connected so far, by name. */
  names(): string[] {
    return [...this.connections.keys()];
  }

  /** Connects and registers the server's tools; never rejects (a failure is the outcome's text, also noted). */
  start(spec: McpServerConfig): Promise<StartOutcome> {
    const p = this.connect(spec).then(
      (o) => o,
      (e: Error) => ({ ok: false, text: `MCP server '${spec.name}' failed to start: ${e.message}` }),
    );
    const tracked = p.then((o) => {
      this.pending.delete(tracked);
      if (o.ok) this.o.note(o.text);
      else this.o.note(`warning: ${o.text} — its tools are unavailable`);
      return o;
    });
    this.pending.add(tracked);
    return tracked;
  }

  private async connect(spec: McpServerConfig): Promise<StartOutcome> {
    const signal = this.closing.signal;
    if (signal.aborted) return { ok: false, text: `MCP server '${spec.name}' not started: the session is closing` };
    if (this.taken.has(spec.name)) return { ok: false, text: `MCP server '${spec.name}' not started: a server of that name is already attached` };
    this.taken.add(spec.name);
    try {
      return await this.open(spec, signal);
    } catch (e) {
      this.taken.delete(spec.name);
      throw e;
    }
  }

  private async open(spec: McpServerConfig, signal: AbortSignal): Promise<StartOutcome> {
    let stderr = '';
    let transport: Transport;
    const t = spec.transport;
    if (t.kind === 'stdio') {
      let argv = [t.command, ...t.args];
      if (spec.sandbox) {
        if (this.o.sandbox.refusal()) throw new Error(`it must run in the sandbox (sandbox.mode = "required") and none is available: ${this.o.sandbox.probe.reason}`);
        if (this.o.sandbox.active) argv = this.o.sandbox.wrap(argv, this.o.cwd);
        else this.o.note(`MCP server '${spec.name}' runs without the sandbox (${this.o.sandbox.probe.reason})`);
      }
      const stdio = new StdioClientTransport({ command: argv[0], args: argv.slice(1), env: { ...getDefaultEnvironment(), ...t.env }, cwd: this.o.cwd, stderr: 'pipe' });
      stdio.stderr?.on('data', (d: Buffer) => (stderr = keepTail(stderr, d.toString('utf8'))));
      transport = stdio;
    } else {
      transport = new StreamableHTTPClientTransport(new URL(t.url), {
        requestInit: { headers: t.headers },
        // A dropped stream is the server's failure to report, not one to hide behind retries.
        reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
      });
    }
    const client = new Client({ name: 'rift', version: this.o.version }, { capabilities: {} });
    const conn: Connection = { spec, client, transport, alive: true, exit: '', reported: false, stderr: () => stderr.trim() };
    client.onclose = () => {
      if (!conn.alive) return;
      conn.alive = false;
      conn.exit = signal.aborted ? 'rift closed it' : `it exited${conn.stderr() ? `; its last output: ${conn.stderr().split('\n').slice(-3).join(' | ')}` : ''}`;
    };
    try {
      await client.connect(transport, { timeout: MCP_START_TIMEOUT_MS, signal });
      const tools = await this.listTools(client, signal);
      this.connections.set(spec.name, conn);
      const registered = this.register(conn, tools);
      return { ok: true, text: `mcp '${spec.name}': ${registered.length} tool(s) registered${registered.length > 0 ? ` (${registered.join(', ')})` : ''}` };
    } catch (e) {
      conn.alive = false;
      await client.close().catch(() => {});
      const tail = stderr.trim();
      throw new Error(`${mcpServerLine(spec)}: ${(e as Error).message}${tail ? `; its stderr: ${tail.split('\n').slice(-3).join(' | ')}` : ''}`);
    }
  }

  /** Every page of `tools/list`, up to the per-server cap. */
  private async listTools(client: Client, signal: AbortSignal): Promise<Array<{ name: string; description?: string; inputSchema: Record<string, unknown> }>> {
    const out: Array<{ name: string; description?: string; inputSchema: Record<string, unknown> }> = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: MCP_REQUEST_TIMEOUT_MS, signal });
      out.push(...(page.tools as typeof out));
      cursor = page.nextCursor;
    } while (cursor && out.length <= MCP_TOOLS_PER_SERVER_MAX);
    return out;
  }

  private register(conn: Connection, tools: Array<{ name: string; description?: string; inputSchema: Record<string, unknown> }>): string[] {
    const server = conn.spec.name;
    const names: string[] = [];
    if (tools.length > MCP_TOOLS_PER_SERVER_MAX) {
      this.o.note(`warning: MCP server '${server}' offers ${tools.length} tools; only the first ${MCP_TOOLS_PER_SERVER_MAX} are registered`);
    }
    for (const t of tools.slice(0, MCP_TOOLS_PER_SERVER_MAX)) {
      const name = `${nameSafe(server)}_${nameSafe(t.name)}`;
      if (name.length > TOOL_NAME_CHARS_MAX) {
        this.o.note(`warning: MCP tool '${t.name}' of '${server}' not registered: '${name}' is longer than ${TOOL_NAME_CHARS_MAX} characters`);
        continue;
      }
      if (RESERVED.has(name) || this.o.registry.get(name)) {
        this.o.note(`warning: MCP tool '${t.name}' of '${server}' not registered: the name '${name}' is already taken`);
        continue;
      }
      this.o.registry.register(this.tool(conn, name, t));
      names.push(name);
    }
    return names;
  }

  private tool(conn: Connection, name: string, t: { name: string; description?: string; inputSchema: Record<string, unknown> }): Tool<ToolContext> {
    const server = conn.spec.name;
    return {
      name,
      description: `[${server} MCP] ${t.description ?? ''}`.trimEnd(),
      parameters: t.inputSchema && typeof t.inputSchema === 'object' ? t.inputSchema : { type: 'object' },
      mutating: true,
      run: async (args, ctx) => {
        await ctx.approval.authorizeTool(ctx.gate, { name, group: server, args }, ctx.signal);
        if (!conn.alive) throw new ToolError(`MCP server '${server}' is not running (${conn.exit}), so ${name} is unavailable in this session; do the step another way`);
        let result: Record<string, unknown>;
        // The SDK never removes the abort listener it adds to a request's signal, so each call
        // gets its own signal: the turn's signal keeps one listener, removed when the call ends.
        const call = new AbortController();
        const abort = () => call.abort(ctx.signal.reason);
        if (ctx.signal.aborted) abort();
        else ctx.signal.addEventListener('abort', abort, { once: true });
        try {
          result = (await conn.client.callTool({ name: t.name, arguments: args }, undefined, { signal: call.signal, timeout: MCP_REQUEST_TIMEOUT_MS })) as Record<string, unknown>;
        } catch (e) {
          if (ctx.signal.aborted) throw new ToolError('cancelled by user');
          if (!conn.alive || (e instanceof McpError && e.code === ErrorCode.ConnectionClosed)) {
            conn.alive = false;
            conn.exit ||= 'the connection closed';
            if (!conn.reported) {
              conn.reported = true;
              ctx.emit({ event: 'warning', text: `MCP server '${server}' stopped during a call to ${name} (${conn.exit}); its tools fail for the rest of this session` });
            }
            throw new ToolError(`MCP server '${server}' stopped during the call (${conn.exit}); ${name} did not finish and its tools are unavailable in this session`);
          }
          if (e instanceof McpError && e.code === ErrorCode.RequestTimeout) throw new ToolError(`${name} timed out after ${MCP_REQUEST_TIMEOUT_MS / 1000}s (MCP server '${server}')`);
          throw new ToolError(`${name} failed: ${(e as Error).message}`);
        } finally {
          ctx.signal.removeEventListener('abort', abort);
        }
        const { text, isError } = renderToolResult(result);
        if (isError) throw new ToolError(`${name} reported an error: ${text || '(no message)'}`);
        return text === '' ? '(no output)' : text;
      },
    };
  }

  /** Stops every server (a stdio server's process is ended); later starts are refused. */
  async close(): Promise<void> {
    this.closing.abort();
    await Promise.allSettled([...this.pending]);
    await Promise.allSettled(
      [...this.connections.values()].map(async (c) => {
        if (c.transport instanceof StreamableHTTPClientTransport) await c.transport.terminateSession().catch(() => {});
        await c.client.close();
      }),
    );
    this.connections.clear();
  }
}
