import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, isAbsolute, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as JsonRpcModule from 'vscode-jsonrpc/node.js';
import type { Message, MessageConnection, MessageWriter } from 'vscode-jsonrpc/node.js';
import type {
  Diagnostic as LspDiagnostic,
  InitializeParams,
  InitializeResult,
  PublishDiagnosticsParams,
  ServerCapabilities,
  WorkDoneProgressBegin,
  WorkDoneProgressEnd,
} from 'vscode-languageserver-protocol';
import { sha256Hex } from '../core/digest.ts';
import { RiftError } from '../core/errors.ts';
import { ENGINE_REQUEST_TIMEOUT_MS, ENGINE_SHUTDOWN_WAIT_MS, ENGINE_START_TIMEOUT_MS, ENGINE_STDERR_BYTES_MAX } from '../core/limits.ts';
import { log } from '../core/log.ts';
import type { EngineDefinition } from './definitions.ts';
import type { PositionEncoding } from './position.ts';

// One language server process and its JSON-RPC connection over stdio (LSP 3.17). It answers the
// requests servers make of their client, tracks readiness — the engine has published diagnostics
// for an open document and no work-done progress (a project load, an analysis) is running — and
// keeps the documents it opened equal to the bytes rift gives it.

/** A request the engine answered with an error: its message is the engine's own words. */
export class EngineDeclined extends Error {
  constructor(
    readonly engine: string,
    message: string,
  ) {
    super(message);
    this.name = 'EngineDeclined';
  }
}

export function engineUnavailable(engine: string, detail: string): RiftError {
  return new RiftError('temporarily_unavailable', [
    ['engine', engine],
    ['detail', detail],
  ]);
}

/** An engine that gave up restarting: only a fix (then a config edit or restart) brings it back. */
export function engineFailed(engine: string, detail: string): RiftError {
  return new RiftError(
    'temporarily_unavailable',
    [
      ['engine', engine],
      ['detail', detail],
    ],
    { retry: 'operator_action', action: 'operator' },
  );
}

/**
 * Why an engine could not serve, without the rendered error around it: the `detail` of an
 * `engineUnavailable`, the other evidence of a timeout. A failed engine's state and an unchecked
 * removal's warning quote this; the rendered message's advice to resend does not fit either.
 */
export function unavailableDetail(e: unknown): string {
  if (!(e instanceof RiftError)) return (e as Error).message;
  const evidence = e.evidence.filter(([k]) => k !== 'engine');
  if (evidence.length === 0) return e.message;
  return evidence.map(([k, v]) => (k === 'detail' ? String(v) : `${k} ${String(v)}`)).join(', ');
}

interface TsserverDiagnostic {
  start: { line: number; offset: number };
  end: { line: number; offset: number };
  text: string;
  code?: number;
  category: string;
}

/**
 * vscode-jsonrpc, loaded with the first engine started (tens of milliseconds of module loading
 * that a server answering no rename or references request never needs).
 */
let rpc: typeof JsonRpcModule | null = null;

async function jsonRpcModule(): Promise<typeof JsonRpcModule> {
  if (rpc === null) {
    const m = await import('vscode-jsonrpc/node.js');
    // CommonJS: Node gives its exports as the namespace and as its default; bundled, only as the
    // default; through tsx (tests of the sources), only as the namespace.
    rpc = (m.default as typeof JsonRpcModule | undefined) ?? m;
  }
  return rpc;
}

const TSSERVER_SEVERITY: Record<string, 1 | 2 | 3 | 4> = { error: 1, warning: 2, message: 3, suggestion: 4 };

/**
 * A writer whose writes never reject. vscode-jsonrpc rethrows a failed request write inside a
 * promise executor, an unhandled rejection that would end the process whenever an engine dies
 * with a request in flight; the failure still reaches `onError`, and the engine's exit disposes
 * the connection, which rejects the waiting request.
 */
class SettledWriter implements MessageWriter {
  constructor(private readonly inner: MessageWriter) {}
  get onError() {
    return this.inner.onError;
  }
  get onClose() {
    return this.inner.onClose;
  }
  write(msg: Message): Promise<void> {
    return this.inner.write(msg).catch(() => {});
  }
  end(): void {
    this.inner.end();
  }
  dispose(): void {
    this.inner.dispose();
  }
}

/** vscode-jsonrpc's own codes for a write, read or connection failure: not the engine's answer. */
const TRANSPORT_ERRORS = new Set([-32099, -32098, -32097, -32096]);

export const FILE_CREATED = 1;
export const FILE_CHANGED = 2;
export const FILE_DELETED = 3;

interface OpenDocument {
  version: number;
  digest: string;
  /** Monotonic sequence of the last sync, compared with diagnostics' arrival order. */
  syncedAt: number;
}

interface Published {
  seq: number;
  version: number | null;
  items: LspDiagnostic[];
}

export class LspClient {
  readonly capabilities: ServerCapabilities;
  readonly encoding: PositionEncoding;
  private readonly documents = new Map<string, OpenDocument>();
  private readonly published = new Map<string, Published>();
  private readonly progress = new Set<string | number>();
  private diagnosed = false;
  private seq = 0;
  private readonly waiters = new Set<() => void>();
  private exited = false;

  private constructor(
    readonly definition: EngineDefinition,
    /** The workspace root: project paths are relative to it. */
    readonly root: string,
    private readonly child: ChildProcess,
    private readonly connection: MessageConnection,
    init: InitializeResult,
  ) {
    this.capabilities = init.capabilities;
    this.encoding = init.capabilities.positionEncoding === 'utf-8' ? 'utf-8' : 'utf-16';
    child.once('exit', () => {
      this.exited = true;
      // Rejects what is still pending (a write that failed left its request waiting).
      connection.dispose();
      this.wake();
    });
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  get name(): string {
    return this.definition.name;
  }

  /** Published diagnostics for an open document, and no work-done progress running. */
  get ready(): boolean {
    return this.diagnosed && this.progress.size === 0 && !this.exited;
  }

  /** The process runs and its stdin still takes writes (it closes before `exit` is reported). */
  get alive(): boolean {
    return !this.exited && this.child.stdin?.writable === true;
  }

  /**
   * Spawns the engine in its root and completes `initialize`. `onExit` fires once when the
   * process ends for any reason.
   */
  static async start(
    definition: EngineDefinition,
    root: string,
    engineRoot: string,
    stateDir: string,
    onExit: (code: number | null, signal: string | null, stderr: string) => void,
  ): Promise<LspClient> {
    const jsonRpc = await jsonRpcModule();
    const args = definition.args.map((a) => (a === '{state}' ? stateDirFor(stateDir) : a));
    // The engine's temporary files go to a directory of its own, removed when it exits:
    // typescript-language-server makes a directory in the system's for every start (its request
    // cancellation pipes) and never removes it.
    const temp = mkdtempSync(join(tmpdir(), 'rift-engine-'));
    const removeTemp = () => rmSync(temp, { recursive: true, force: true });
    const env = { ...process.env, TMPDIR: temp, TMP: temp, TEMP: temp };
    const child = spawn(definition.command, args, { cwd: engineRoot, stdio: ['pipe', 'pipe', 'pipe'], env });
    child.once('exit', removeTemp);
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString('utf8')).slice(-ENGINE_STDERR_BYTES_MAX);
    });
    const spawned = new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    child.once('exit', (code, signal) => onExit(code, signal, stderr.split(root).join('<root>')));
    // An engine that dies before answering `initialize` fails the start at once, not at the timeout.
    const died = new Promise<never>((_, reject) =>
      child.once('exit', (code, signal) => reject(engineUnavailable(definition.name, `exited while starting (${signal ?? `code ${code}`})`))),
    );
    died.catch(() => {});
    try {
      await spawned;
    } catch (e) {
      removeTemp();
      throw engineUnavailable(definition.name, `could not start: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    let connection: MessageConnection;
    try {
      connection = jsonRpc.createMessageConnection(new jsonRpc.StreamMessageReader(child.stdout!), new SettledWriter(new jsonRpc.StreamMessageWriter(child.stdin!)));
    } catch (e) {
      // The engine runs: a failure from here on must not leave it running (and the process alive).
      child.kill('SIGKILL');
      throw engineUnavailable(definition.name, `could not connect: ${(e as Error).message}`);
    }
    // Writes to a dead engine fail; the exit handler reports the crash, so these are only logged.
    connection.onError(([e]) => log('debug', 'engine', 'engine connection error', { engine: definition.name, error: e.message }));
    child.stdin!.on('error', () => {});
    const rootUri = pathToFileURL(engineRoot).href;
    const pending: Array<(c: LspClient) => void> = [];
    let client: LspClient | null = null;
    const later = (f: (c: LspClient) => void) => (client ? f(client) : pending.push(f));
    connection.onRequest((method, params) => answerServer(method, params, rootUri, engineRoot));
    connection.onNotification('textDocument/publishDiagnostics', (p: PublishDiagnosticsParams) => later((c) => c.onDiagnostics(p)));
    connection.onUnhandledProgress((p) => later((c) => c.onProgress(p.token, p.value as WorkDoneProgressBegin | WorkDoneProgressEnd)));
    connection.onUnhandledNotification(() => {});
    connection.listen();

    const params: InitializeParams = {
      processId: process.pid,
      clientInfo: { name: 'rift' },
      rootUri,
      rootPath: engineRoot,
      workspaceFolders: [{ uri: rootUri, name: basename(engineRoot) }],
      initializationOptions: definition.initializationOptions,
      capabilities: {
        general: { positionEncodings: ['utf-8', 'utf-16'] },
        window: { workDoneProgress: true },
        workspace: {
          workspaceFolders: true,
          configuration: true,
          applyEdit: false,
          didChangeWatchedFiles: { dynamicRegistration: true },
          fileOperations: { willRename: true },
          workspaceEdit: { documentChanges: true, resourceOperations: ['create', 'rename', 'delete'] },
        },
        textDocument: {
          synchronization: { didSave: false },
          rename: { prepareSupport: true },
          references: {},
          publishDiagnostics: { versionSupport: true, relatedInformation: true, tagSupport: { valueSet: [1, 2] } },
        },
      },
    };
    let init: InitializeResult;
    try {
      init = await withTimeout(Promise.race([connection.sendRequest('initialize', params) as Promise<InitializeResult>, died]), ENGINE_START_TIMEOUT_MS, definition.name, 'initialize');
    } catch (e) {
      child.kill('SIGKILL');
      connection.dispose();
      if (e instanceof RiftError) throw e;
      throw engineUnavailable(definition.name, `initialize failed: ${(e as Error).message}`);
    }
    connection.sendNotification('initialized', {}).catch(() => {}); // a write to an engine that just died: its exit reports it
    client = new LspClient(definition, root, child, connection, init);
    for (const f of pending) f(client);
    return client;
  }

  private onDiagnostics(p: PublishDiagnosticsParams): void {
    this.seq += 1;
    this.published.set(p.uri, { seq: this.seq, version: p.version ?? null, items: p.diagnostics });
    if (this.documents.has(uriToPath(this.root, p.uri) ?? '')) this.diagnosed = true;
    this.wake();
  }

  private onProgress(token: string | number, value: WorkDoneProgressBegin | WorkDoneProgressEnd): void {
    if (value?.kind === 'begin') this.progress.add(token);
    else if (value?.kind === 'end') this.progress.delete(token);
    this.wake();
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }

  /** Resolves true once `done()` holds, false when `ms` pass or the engine exits first. */
  private waitFor(done: () => boolean, ms: number): Promise<boolean> {
    if (done()) return Promise.resolve(true);
    if (this.exited || ms <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const check = () => {
        if (done()) finish(true);
        else if (this.exited) finish(false);
      };
      const timer = setTimeout(() => finish(false), ms);
      const finish = (v: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(v);
      };
      this.waiters.add(check);
    });
  }

  waitReady(ms: number): Promise<boolean> {
    return this.waitFor(() => this.ready, ms);
  }

  async request<R>(method: string, params: unknown, timeoutMs = ENGINE_REQUEST_TIMEOUT_MS): Promise<R> {
    // Nothing is sent to an engine whose stdin is gone: the request would wait for the exit.
    if (!this.alive) throw engineUnavailable(this.name, 'the engine exited');
    const cancel = new rpc!.CancellationTokenSource();
    try {
      return await withTimeout(this.connection.sendRequest(method, params, cancel.token) as Promise<R>, timeoutMs, this.name, method, () => cancel.cancel());
    } catch (e) {
      if (e instanceof rpc!.ResponseError && !TRANSPORT_ERRORS.has(e.code)) throw new EngineDeclined(this.name, e.message);
      if (e instanceof RiftError) throw e;
      throw engineUnavailable(this.name, this.exited ? 'the engine exited' : (e as Error).message);
    } finally {
      cancel.dispose();
    }
  }

  private notify(method: string, params: unknown): void {
    if (!this.alive) return;
    this.connection.sendNotification(method, params).catch(() => {});
  }

  isOpen(path: string): boolean {
    return this.documents.has(path);
  }

  openPaths(): string[] {
    return [...this.documents.keys()];
  }

  /** Opens the document or replaces its whole text; `bytes` null closes it. */
  sync(path: string, languageId: string, bytes: Uint8Array | null): void {
    const uri = fileUri(this.root, path);
    const doc = this.documents.get(path);
    if (bytes === null) {
      if (!doc) return;
      this.documents.delete(path);
      this.notify('textDocument/didClose', { textDocument: { uri } });
      return;
    }
    const digest = sha256Hex(bytes);
    if (doc?.digest === digest) return;
    const text = Buffer.from(bytes).toString('utf8');
    this.seq += 1;
    if (!doc) {
      this.documents.set(path, { version: 1, digest, syncedAt: this.seq });
      this.notify('textDocument/didOpen', { textDocument: { uri, languageId, version: 1, text } });
      return;
    }
    // Re-inserting keeps the map in least-recently-synced order.
    this.documents.delete(path);
    const next = { version: doc.version + 1, digest, syncedAt: this.seq };
    this.documents.set(path, next);
    this.notify('textDocument/didChange', { textDocument: { uri, version: next.version }, contentChanges: [{ text }] });
  }

  /** The least recently synced open document. */
  oldestOpen(): string | null {
    return this.documents.keys().next().value ?? null;
  }

  watched(changes: ReadonlyArray<{ path: string; type: number }>): void {
    if (changes.length === 0) return;
    this.notify('workspace/didChangeWatchedFiles', { changes: changes.map((c) => ({ uri: fileUri(this.root, c.path), type: c.type })) });
  }

  /**
   * The diagnostics the engine publishes for an open document after its last sync (the same
   * version, when the engine reports versions), or null when none arrive within `ms`.
   */
  async diagnosticsOf(path: string, ms: number): Promise<LspDiagnostic[] | null> {
    const doc = this.documents.get(path);
    if (!doc) return null;
    if (this.definition.diagnostics === 'tsserver') return this.tsserverDiagnostics(path, ms);
    const uri = fileUri(this.root, path);
    const fresh = () => {
      const p = this.published.get(uri);
      return p !== undefined && p.seq > doc.syncedAt && (p.version === null || p.version >= doc.version);
    };
    return (await this.waitFor(fresh, ms)) ? this.published.get(uri)!.items : null;
  }

  private async tsserverDiagnostics(path: string, ms: number): Promise<LspDiagnostic[] | null> {
    const file = fileUri(this.root, path);
    const out: LspDiagnostic[] = [];
    const deadline = performance.now() + ms;
    try {
      for (const command of ['syntacticDiagnosticsSync', 'semanticDiagnosticsSync']) {
        const left = deadline - performance.now();
        if (left <= 0) return null;
        const r = await this.request<{ body?: TsserverDiagnostic[] } | null>(
          'workspace/executeCommand',
          { command: 'typescript.tsserverRequest', arguments: [command, { file, includeLinePosition: false }] },
          left,
        );
        for (const d of r?.body ?? []) {
          out.push({
            range: { start: { line: d.start.line - 1, character: d.start.offset - 1 }, end: { line: d.end.line - 1, character: d.end.offset - 1 } },
            severity: TSSERVER_SEVERITY[d.category] ?? 1,
            code: d.code,
            source: 'typescript',
            message: d.text,
          });
        }
      }
    } catch {
      return null;
    }
    return out;
  }

  /** `shutdown` then `exit`; kills the process when it does not leave in time. */
  async shutdown(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    if (this.alive) {
      try {
        await withTimeout(this.connection.sendRequest('shutdown'), ENGINE_SHUTDOWN_WAIT_MS, this.name, 'shutdown');
        await this.connection.sendNotification('exit');
      } catch {
        // a hung or dying engine is killed below
      }
    } else this.child.kill('SIGKILL');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), ENGINE_SHUTDOWN_WAIT_MS);
    await gone;
    clearTimeout(timer);
    this.connection.dispose();
  }
}

function stateDirFor(dir: string): string {
  mkdirSync(dir, { recursive: true });
  return dir;
}

export function fileUri(root: string, path: string): string {
  return pathToFileURL(join(root, path)).href;
}

/** The project path a file URI names, or null when it is not a file inside the root. */
export function uriToPath(root: string, uri: string): string | null {
  let abs: string;
  try {
    abs = fileURLToPath(uri);
  } catch {
    return null;
  }
  const rel = relative(root, abs);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return null;
  return rel.split(sep).join('/');
}

/** Answers the requests a server makes of its client. */
function answerServer(method: string, params: unknown, rootUri: string, root: string): unknown {
  switch (method) {
    case 'workspace/configuration':
      return ((params as { items?: unknown[] }).items ?? []).map(() => null);
    case 'workspace/workspaceFolders':
      return [{ uri: rootUri, name: basename(root) }];
    case 'workspace/applyEdit':
      // rift applies engine edits itself, witnessed, through the change pipeline.
      return { applied: false, failureReason: 'rift applies engine edits itself' };
    case 'window/workDoneProgress/create':
    case 'client/registerCapability':
    case 'client/unregisterCapability':
    case 'window/showMessageRequest':
    case 'window/showDocument':
    case 'workspace/semanticTokens/refresh':
    case 'workspace/inlayHint/refresh':
    case 'workspace/codeLens/refresh':
    case 'workspace/diagnostic/refresh':
    case 'workspace/inlineValue/refresh':
      return null;
    default:
      return new rpc!.ResponseError(-32601, `rift does not serve ${method}`);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, engine: string, method: string, onTimeout?: () => void): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout?.();
      reject(
        new RiftError('temporarily_unavailable', [
          ['engine', engine],
          ['operation', method],
          ['timeout_ms', ms],
        ]),
      );
    }, ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
