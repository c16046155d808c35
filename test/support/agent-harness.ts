import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach } from 'node:test';
import { Agent, type AgentOptions } from '../../src/agent/loop/agent.ts';
import { Approval } from '../../src/agent/policy/approval.ts';
import { DETACHED_GATE, type Gate } from '../../src/agent/policy/gate.ts';
import type { PostEditHooks } from '../../src/agent/policy/hooks.ts';
import type { HttpOptions } from '../../src/agent/providers/http.ts';
import { PermissionRules } from '../../src/agent/policy/permissions.ts';
import { buildRoute } from '../../src/agent/providers/routing.ts';
import { BackgroundTasks } from '../../src/agent/base/tasks.ts';
import type { CodeServices, ToolContext } from '../../src/agent/tools/context.ts';
import type { AgentEvent } from '../../src/agent/base/types.ts';
import { UndoJournal } from '../../src/agent/session/undo.ts';
import { ToolError } from '../../src/agent/base/tool.ts';
import { ScriptedModelServer, type ModelSpec } from './model-server.ts';
import { RIFT_ARGS } from '../support/rift-process.ts';

// An Agent wired to the scripted model server in a temp workspace, collecting its events.

export const TEST_HTTP: HttpOptions = { connectTimeoutMs: 3000, readIdleTimeoutMs: 3000, attempts: 1, backoffMs: 10 };

export interface Harness {
  agent: Agent;
  cwd: string;
  events: AgentEvent[];
  approval: Approval;
  run(prompt: string, signal?: AbortSignal): ReturnType<Agent['runTurn']>;
  kinds(): string[];
  of<K extends AgentEvent['event']>(k: K): Array<Extract<AgentEvent, { event: K }>>;
  cleanup(): void;
}

export function tempDir(prefix = 'rift-agent-'): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

export interface HarnessOptions extends Partial<AgentOptions> {
  approve?: boolean;
  rules?: { allow?: string[]; ask?: string[]; deny?: string[] };
  model?: string;
}

export function harness(server: ScriptedModelServer, o: HarnessOptions = {}): Harness {
  const cwd = o.cwd ?? tempDir();
  const rules = new PermissionRules({ allow: o.rules?.allow ?? [], ask: o.rules?.ask ?? [], deny: o.rules?.deny ?? [] }, cwd);
  const approval = o.approval ?? new Approval(o.approve ?? false, rules, cwd);
  const gate: Gate = o.gate ?? DETACHED_GATE;
  const agent = new Agent({
    cwd,
    route: o.route ?? buildRoute(o.model ?? 'test-model', { host: server.url, providers: {} }, {}, TEST_HTTP),
    numCtx: o.numCtx ?? 32768,
    think: o.think ?? false,
    temperature: o.temperature ?? 0.2,
    maxIterations: o.maxIterations ?? 10,
    approval,
    gate,
    systemPrompt: o.systemPrompt ?? 'You are a test agent.',
    sessionPath: o.sessionPath ?? null,
    alwaysTask: o.alwaysTask,
    code: o.code,
    hooks: o.hooks,
    sandbox: o.sandbox,
    messages: o.messages,
  });
  const events: AgentEvent[] = [];
  return {
    agent,
    cwd,
    events,
    approval,
    run: (prompt, signal) => agent.runTurn(prompt, (e) => events.push(e), signal),
    kinds: () => events.map((e) => e.event),
    of: <K extends AgentEvent['event']>(k: K) => events.filter((e) => e.event === k) as Array<Extract<AgentEvent, { event: K }>>,
    cleanup: () => {
      agent.tasks.killAll();
      rmSync(cwd, { recursive: true, force: true });
    },
  };
}

export interface ModelServerOptions {
  /** The models served (default: `test-model` with tools and a 32768 context). */
  models?: Record<string, ModelSpec>;
  /** After each test, assert that every scripted reply was consumed. */
  assertConsumed?: boolean;
  /** Before each test, drop the replies an earlier (failed) test left unconsumed. */
  clearBeforeEach?: boolean;
}

export interface ModelServerFixture {
  /** The scripted server: listening from the describe's `before` until its `after`. */
  server: ScriptedModelServer;
  /** An Agent harness on the server, cleaned up after the current test. */
  harness(o?: HarnessOptions): Harness;
  /** A fresh workspace dir and RIFT_HOME (`rift-home-…`), removed after the describe. */
  workspace(prefix?: string): { cwd: string; home: string };
  /** SIGKILLs `child` after the describe, before the server closes, if it is still running. */
  killAtEnd(child: ChildProcess): void;
}

/**
 * A scripted model server for the enclosing describe: registers the node:test hooks that start
 * and close it and clean up after each test, so `const { server } = useModelServer()` works.
 */
export function useModelServer(o: ModelServerOptions = {}): ModelServerFixture {
  const server = new ScriptedModelServer(o.models);
  const harnesses: Harness[] = [];
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  before(async () => {
    await server.listen();
  });
  if (o.clearBeforeEach) beforeEach(() => server.clear());
  afterEach(() => {
    for (const h of harnesses.splice(0)) h.cleanup();
    if (o.assertConsumed) assert.equal(server.pending, 0, 'every scripted reply was consumed');
  });
  after(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await server.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  return {
    server,
    harness: (ho) => {
      const h = harness(server, ho);
      harnesses.push(h);
      return h;
    },
    workspace: (prefix) => {
      const ws = { cwd: tempDir(prefix), home: tempDir('rift-home-') };
      dirs.push(ws.cwd, ws.home);
      return ws;
    },
    killAtEnd: (child) => void children.push(child),
  };
}

export interface ToolContextOptions {
  /** Default: a fresh temp dir. */
  cwd?: string;
  files?: Record<string, string | Buffer>;
  deny?: string[];
  approve?: boolean;
  gate?: Gate;
  signal?: AbortSignal;
  code?: CodeServices;
  hooks?: PostEditHooks;
}

/** A tool context over a workspace holding `files`, collecting the events tools emit. The caller removes `cwd`. */
export function toolContext(o: ToolContextOptions = {}): ToolContext & { events: AgentEvent[] } {
  const cwd = o.cwd ?? tempDir();
  for (const [p, c] of Object.entries(o.files ?? {})) {
    mkdirSync(join(cwd, p, '..'), { recursive: true });
    writeFileSync(join(cwd, p), c);
  }
  const events: AgentEvent[] = [];
  const emit = (e: AgentEvent) => events.push(e);
  return {
    cwd,
    signal: o.signal ?? new AbortController().signal,
    gate: o.gate ?? DETACHED_GATE,
    approval: new Approval(o.approve ?? false, new PermissionRules({ allow: [], ask: [], deny: o.deny ?? [] }, cwd), cwd),
    journal: new UndoJournal(),
    plan: [],
    tasks: new BackgroundTasks(emit),
    emit,
    code: o.code ?? {},
    canAskUser: false,
    hooks: o.hooks,
    events,
  };
}

/** The message of the ToolError `p` rejects with (fails the test when it resolves). */
export async function toolError(p: Promise<string>): Promise<string> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ToolError);
    return e.message;
  }
  assert.fail('expected a tool error');
}


export interface RiftRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the rift CLI as a process in `cwd` with `home` as RIFT_HOME and HOME; stdin closed. */
export function runRift(args: string[], cwd: string, home: string, env: Record<string, string> = {}): Promise<RiftRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...RIFT_ARGS, ...args], {
      cwd,
      env: { PATH: process.env.PATH, HOME: home, RIFT_HOME: home, RIFT_LOG: 'error', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b) => (stdout += b));
    child.stderr.on('data', (b) => (stderr += b));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
