import { existsSync, statSync } from 'node:fs';
import { basename, isAbsolute, join } from 'node:path';
import {
  agent, PROTOCOL_VERSION, RequestError, type AgentApp, type AgentContext, type ClientCapabilities, type InitializeResponse, type McpServer, type SessionInfo,
} from '@agentclientprotocol/sdk';
import { z } from 'zod';
import type { AgentFlags, McpServerConfig } from '../agent/base/config.ts';
import { Session } from '../agent/session/session.ts';
import { AcpSession, EXT_EDIT_REVIEW, EXT_UNDO } from './session.ts';

// `rift acp`: the Agent Client Protocol v1 (agentclientprotocol.com) over stdio, on the ACP
// SDK. Each ACP session is one agent assembly on the session's folder, saved as a rift session
// file whose name is the session id, so `session/load` and `session/list` reach every saved
// session. The SDK validates every request's params against the ACP schema before a handler
// runs; handlers answer ACP errors (`RequestError`) naming the field.

export interface AcpOptions {
  version: string;
  flags: AgentFlags;
  /** undefined: the configuration decides. */
  approve: boolean | undefined;
  /** Skip the code index (tests and benchmarks). */
  noIndex: boolean;
  /** Diagnostics for stderr. */
  log: (text: string) => void;
}

/** A saved session's id is its file name without `.json`: digits, optionally `-n`. */
const SESSION_ID = /^\d+(-\d+)?$/;

const UndoParams = z.object({ sessionId: z.string() });

/** An editor's MCP server (session/new, session/load) as the agent's config; SSE is not offered. */
function mcpConfig(s: McpServer): McpServerConfig {
  if ('type' in s && s.type === 'sse') throw RequestError.invalidParams({ mcpServers: s.name }, `MCP server '${s.name}' uses SSE, which rift does not speak (mcpCapabilities.sse is false); use its Streamable HTTP endpoint`);
  if ('type' in s && s.type === 'http') {
    return { name: s.name, scope: 'client', transport: { kind: 'http', url: s.url, headers: Object.fromEntries(s.headers.map((h) => [h.name, h.value])) }, sandbox: false };
  }
  const stdio = s as Extract<McpServer, { command: string }>;
  return { name: stdio.name, scope: 'client', transport: { kind: 'stdio', command: stdio.command, args: stdio.args, env: Object.fromEntries(stdio.env.map((e) => [e.name, e.value])) }, sandbox: false };
}

function folder(cwd: string): string {
  if (!isAbsolute(cwd)) throw RequestError.invalidParams({ cwd }, `'cwd' must be an absolute path, got ${JSON.stringify(cwd)}`);
  if (!existsSync(cwd) || !statSync(cwd).isDirectory()) throw RequestError.invalidParams({ cwd }, `'cwd' is not a directory: ${cwd}`);
  return cwd;
}

export class AcpServer {
  private peer: AgentContext | null = null;
  private caps: ClientCapabilities = {};
  private readonly sessions = new Map<string, AcpSession>();

  constructor(private readonly o: AcpOptions) {}

  private session(id: string): AcpSession {
    const s = this.sessions.get(id);
    if (!s) throw RequestError.sessionNotFound(id);
    return s;
  }

  private async open(cwd: string, mcpServers: readonly McpServer[], resume?: string): Promise<AcpSession> {
    const servers = mcpServers.map(mcpConfig);
    const s = await AcpSession.open({
      cwd: folder(cwd),
      resume,
      mcpServers: servers,
      version: this.o.version,
      flags: this.o.flags,
      approve: this.o.approve,
      noIndex: this.o.noIndex,
      caps: this.caps,
      peer: () => this.peer!,
      log: this.o.log,
    });
    this.sessions.set(s.id, s);
    return s;
  }

  initialize(caps: ClientCapabilities | undefined): InitializeResponse {
    this.caps = caps ?? {};
    return {
      protocolVersion: PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: false, audio: false, embeddedContext: true },
        mcpCapabilities: { http: true, sse: false },
        sessionCapabilities: { list: {}, close: {} },
        _meta: { rift: { undo: EXT_UNDO, editReview: EXT_EDIT_REVIEW } },
      },
      // Local models need no sign-in.
      authMethods: [],
      agentInfo: { name: 'rift', title: 'rift', version: this.o.version },
    };
  }

  list(cwd: string | null | undefined): SessionInfo[] {
    return Session.list(Session.dir())
      .filter((it) => it.cwd !== '' && isAbsolute(it.cwd) && (!cwd || it.cwd === cwd))
      .map((it) => ({ sessionId: basename(it.path, '.json'), cwd: it.cwd, title: it.title, updatedAt: new Date(it.saved_at * 1000).toISOString() }));
  }

  /** The ACP agent: every method rift implements, registered on the SDK's agent side. */
  app(): AgentApp {
    return agent({ name: 'rift' })
      .onConnect((c) => {
        this.peer = c.client;
      })
      .onRequest('initialize', ({ params }) => this.initialize(params.clientCapabilities))
      .onRequest('authenticate', () => ({}))
      .onRequest('session/new', async ({ params }) => {
        const s = await this.open(params.cwd, params.mcpServers);
        // After the answer, so the client knows the session the update belongs to.
        setImmediate(() => s.announceCommands());
        return { sessionId: s.id, configOptions: s.configOptions() };
      })
      .onRequest('session/load', async ({ params }) => {
        const id = params.sessionId;
        if (!SESSION_ID.test(id)) throw RequestError.invalidParams({ sessionId: id }, `'sessionId' is not a rift session id (digits, optionally -n), got ${JSON.stringify(id)}`);
        const path = join(Session.dir(), `${id}.json`);
        if (!existsSync(path)) throw RequestError.sessionNotFound(id);
        const live = this.sessions.get(id);
        if (live) {
          // Reopened from its file, which every turn saved.
          this.sessions.delete(id);
          await live.close();
        }
        const s = await this.open(params.cwd, params.mcpServers, path);
        await s.replay();
        setImmediate(() => s.announceCommands());
        return { configOptions: s.configOptions() };
      })
      .onRequest('session/list', ({ params }) => ({ sessions: this.list(params.cwd) }))
      .onRequest('session/prompt', async ({ params }) => ({ stopReason: await this.session(params.sessionId).prompt(params.prompt) }))
      .onNotification('session/cancel', ({ params }) => {
        this.sessions.get(params.sessionId)?.cancel();
      })
      .onRequest('session/set_config_option', async ({ params }) => ({ configOptions: await this.session(params.sessionId).setConfig(params.configId, params.value) }))
      .onRequest('session/close', async ({ params }) => {
        const s = this.session(params.sessionId);
        this.sessions.delete(params.sessionId);
        await s.close();
        return {};
      })
      .onRequest(EXT_UNDO, UndoParams, ({ params }) => this.session(params.sessionId).undo());
  }

  /** The connection ended: every turn is cancelled, every session saved and closed. */
  async closeAll(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(all.map((s) => s.close()));
  }
}
