import assert from 'node:assert/strict';
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'node:test';
import {
  client, ndJsonStream, type ClientCapabilities, type ClientConnection, type ClientContext, type RequestPermissionRequest, type RequestPermissionResponse, type SessionNotification,
} from '@agentclientprotocol/sdk';
import { z } from 'zod';
import { useModelServer, type ModelServerOptions } from '../support/agent-harness.ts';
import type { RecordedRequest, ScriptedModelServer } from '../support/model-server.ts';
import { schemaProblems, type WireMessage } from './schema.ts';
import { RIFT_ARGS } from '../support/rift-process.ts';

// Drives `rift acp` the way an editor does: the process spawned over stdio and spoken to by the
// ACP SDK's client side. Every message both ways is kept (for the schema check); the client's
// side of the protocol — permission answers, the file system, terminals, rift's review
// extension — is real and scripted per test.

export interface AcpClientOptions {
  cwd: string;
  home: string;
  args?: string[];
  caps?: ClientCapabilities;
  /** Answers each permission request (default: the first option). */
  permission?: (req: RequestPermissionRequest) => RequestPermissionResponse | Promise<RequestPermissionResponse>;
  /** Answers rift's `_rift/edit_review` extension request. */
  review?: (params: Record<string, any>) => unknown;
}

interface Term {
  child: ChildProcess;
  output: string;
  exit: Promise<{ exitCode: number | null; signal: string | null }>;
  done: { exitCode: number | null; signal: string | null } | null;
}

/** The option of `kind` in a permission request, selected. */
export function pick(req: RequestPermissionRequest, kind: string): RequestPermissionResponse {
  const option = req.options.find((o) => o.kind === kind);
  if (!option) throw new Error(`no ${kind} option in ${JSON.stringify(req.options)}`);
  return { outcome: { outcome: 'selected', optionId: option.optionId } };
}

export class AcpClient {
  readonly transcript: WireMessage[] = [];
  readonly updates: SessionNotification[] = [];
  readonly permissions: RequestPermissionRequest[] = [];
  readonly reviews: Array<Record<string, any>> = [];
  readonly terminals = new Map<string, Term>();
  stderr = '';
  readonly child: ChildProcessWithoutNullStreams;
  readonly connection: ClientConnection;
  readonly exit: Promise<number | null>;
  private waiters: Array<() => void> = [];

  constructor(private readonly o: AcpClientOptions) {
    this.child = spawn(process.execPath, [...RIFT_ARGS, 'acp', ...(o.args ?? [])], {
      cwd: o.cwd,
      env: { PATH: process.env.PATH, HOME: o.home, RIFT_HOME: o.home, RIFT_LOG: 'error' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stderr.on('data', (d) => (this.stderr += d));
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 90_000);
    this.exit = new Promise((resolve) => this.child.on('close', (code) => (clearTimeout(timer), resolve(code))));
    const tap = (from: WireMessage['from']) => {
      let buf = '';
      return (chunk: Uint8Array) => {
        buf += Buffer.from(chunk).toString('utf8');
        let nl;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line.trim() !== '') this.transcript.push({ from, message: JSON.parse(line) });
        }
      };
    };
    const fromAgent = tap('agent');
    const fromClient = tap('client');
    const stdout = this.child.stdout;
    const stdin = this.child.stdin;
    let open = true;
    const input = new ReadableStream<Uint8Array>({
      start(ctrl) {
        stdout.on('data', (b: Buffer) => {
          fromAgent(b);
          if (open) ctrl.enqueue(new Uint8Array(b));
        });
        stdout.on('end', () => {
          if (open) ctrl.close();
          open = false;
        });
      },
      cancel() {
        // The connection closed its side first; the process's output is still recorded.
        open = false;
      },
    });
    const output = new WritableStream<Uint8Array>({
      write: (chunk) =>
        new Promise<void>((resolve, reject) => {
          fromClient(chunk);
          stdin.write(chunk, (e) => (e ? reject(e) : resolve()));
        }),
      close: () => void stdin.end(),
    });
    const app = client({ name: 'rift-test-editor' })
      .onNotification('session/update', ({ params }) => {
        this.updates.push(params);
        this.wake();
      })
      .onRequest('session/request_permission', async ({ params }) => {
        this.permissions.push(params);
        this.wake();
        return this.o.permission ? this.o.permission(params) : { outcome: { outcome: 'selected', optionId: params.options[0].optionId } };
      })
      .onRequest('fs/read_text_file', ({ params }) => {
        const lines = readFileSync(params.path, 'utf8').split('\n');
        const start = (params.line ?? 1) - 1;
        return { content: lines.slice(start, params.limit ? start + params.limit : undefined).join('\n') };
      })
      .onRequest('fs/write_text_file', ({ params }) => {
        writeFileSync(params.path, params.content);
        return {};
      })
      .onRequest('terminal/create', ({ params }) => {
        const id = `term-${this.terminals.size + 1}`;
        const child = spawn(params.command, params.args ?? [], { cwd: params.cwd ?? o.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
        const t: Term = { child, output: '', done: null, exit: Promise.resolve({ exitCode: null, signal: null }) };
        child.stdout!.on('data', (d) => (t.output += d));
        child.stderr!.on('data', (d) => (t.output += d));
        t.exit = new Promise((resolve) =>
          child.on('close', (exitCode, signal) => {
            t.done = { exitCode, signal };
            resolve(t.done);
          }),
        );
        this.terminals.set(id, t);
        return { terminalId: id };
      })
      .onRequest('terminal/output', ({ params }) => {
        const t = this.terminals.get(params.terminalId)!;
        return { output: t.output, truncated: false, ...(t.done ? { exitStatus: t.done } : {}) };
      })
      .onRequest('terminal/wait_for_exit', async ({ params }) => this.terminals.get(params.terminalId)!.exit)
      .onRequest('terminal/kill', ({ params }) => {
        this.terminals.get(params.terminalId)!.child.kill('SIGKILL');
        return {};
      })
      .onRequest('terminal/release', ({ params }) => {
        const t = this.terminals.get(params.terminalId);
        if (t && !t.done) t.child.kill('SIGKILL');
        return {};
      })
      .onRequest('_rift/edit_review', z.record(z.string(), z.unknown()), async ({ params }) => {
        this.reviews.push(params);
        return this.o.review ? this.o.review(params) : { apply: false };
      });
    this.connection = app.connect(ndJsonStream(output, input));
  }

  get agent(): ClientContext {
    return this.connection.agent;
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** initialize with this client's capabilities. */
  initialize() {
    return this.agent.request('initialize', { protocolVersion: 1, clientCapabilities: this.o.caps ?? {}, clientInfo: { name: 'rift-test-editor', version: '1.0.0' } });
  }

  /** The updates of one session, from index `from` of the whole list. */
  updatesOf(sessionId: string, from = 0): SessionNotification['update'][] {
    return this.updates.slice(from).filter((u) => u.sessionId === sessionId).map((u) => u.update);
  }

  /** Waits (bounded) until `pred` holds. */
  async until(pred: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred()) {
      if (this.child.exitCode !== null || Date.now() > deadline) throw new Error(`timed out waiting for ${what}; stderr:\n${this.stderr}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, 100);
        this.waiters.push(() => (clearTimeout(t), r()));
      });
    }
  }

  /** Closes stdin (the editor went away) and resolves with the exit code. */
  async close(): Promise<number | null> {
    this.connection.close();
    this.child.stdin.end();
    for (const t of this.terminals.values()) if (!t.done) t.child.kill('SIGKILL');
    return this.exit;
  }
}

export interface AcpFixture {
  server: ScriptedModelServer;
  /** The current test's workspace and RIFT_HOME (whose config points at the scripted server). */
  dirs(): { cwd: string; home: string };
  /** The model requests the current test made. */
  chats(): RecordedRequest[];
  /** `rift acp --no-index …` in the workspace; closed after the test, its transcript checked against the ACP schema. */
  open(o?: Partial<AcpClientOptions>): AcpClient;
  /** Closes a client early and checks its transcript. */
  done(c: AcpClient): Promise<void>;
}

/** A scripted model server and a fresh workspace per test, for the enclosing describe. */
export function useAcp(prefix: string, models?: ModelServerOptions['models']): AcpFixture {
  const { server, workspace, killAtEnd } = useModelServer({ models, clearBeforeEach: true });
  let ws = { cwd: '', home: '' };
  let from = 0;
  const clients: AcpClient[] = [];
  const done = async (c: AcpClient) => {
    clients.splice(clients.indexOf(c), 1);
    await c.close();
    assert.deepEqual(schemaProblems(c.transcript), [], 'every message conforms to the ACP schema');
  };
  beforeEach(() => {
    ws = workspace(prefix);
    writeFileSync(join(ws.home, 'config.json'), JSON.stringify({ host: server.url, model: 'test-model' }));
    from = server.chatRequests().length;
  });
  afterEach(async () => {
    for (const c of [...clients]) await done(c);
  });
  return {
    server,
    dirs: () => ws,
    chats: () => server.chatRequests().slice(from),
    open: (o = {}) => {
      const c = new AcpClient({ cwd: ws.cwd, home: ws.home, args: ['--no-index'], ...o });
      killAtEnd(c.child);
      clients.push(c);
      return c;
    },
    done,
  };
}
