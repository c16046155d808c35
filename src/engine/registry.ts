import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Diagnostic as LspDiagnostic } from 'vscode-languageserver-protocol';
import { digest8 } from '../core/digest.ts';
import { fileId } from '../core/ids.ts';
import { cutUtf8 } from '../core/lines.ts';
import {
  ENGINE_DIAGNOSTICS_MAX,
  ENGINE_DIAGNOSTICS_WAIT_MS,
  ENGINE_OPEN_DOCUMENTS_MAX,
  ENGINE_RESTART_BACKOFF_MAX_MS,
  ENGINE_RESTART_BACKOFF_MS,
  ENGINE_RESTARTS_MAX,
} from '../core/limits.ts';
import { log } from '../core/log.ts';
import type { ConfigLoader } from '../config/loader.ts';
import { languageFor, type LanguageEntry, type WorkspaceConfig } from '../config/workspace-config.ts';
import type { FileChangeEvent, Indexer } from '../index/indexer.ts';
import type { Diagnostic } from '../protocol/change.ts';
import { engineFailed, engineUnavailable, FILE_CHANGED, FILE_CREATED, FILE_DELETED, LspClient, unavailableDetail } from './client.ts';
import { lspLanguageId, resolveDefinition, type EngineDefinition, type EngineTrust } from './definitions.ts';
import { LineIndex } from './position.ts';

// One long-lived engine process per engine definition and root, started on first need,
// restarted with backoff when it crashes, and shut down with the workspace. Languages that
// share a definition (typescript, tsx and javascript) share the process. Every file the index
// sees change reaches the running engines: open documents get the new text, and every engine
// hears `workspace/didChangeWatchedFiles`.

/** An engine's lifecycle as `states()` reports it. */
export type EngineState = 'idle' | 'starting' | 'loading' | 'ready' | 'restarting' | 'failed' | 'stopped';

export interface EngineStatus {
  /** The language entry, in configuration order. */
  language: string;
  /** The engine's name, or null when the language has none. */
  engine: string | null;
  /** `unavailable` when the language has no engine (see `reason`). */
  state: EngineState | 'unavailable';
  /** Why the language has no engine, or why it failed. */
  reason?: string;
  /** Project path of the engine's root ('' for the workspace root). */
  root?: string;
  pid?: number;
  restarts?: number;
}

/** An engine that serves a path, started or not. */
export interface EngineHandle {
  name: string;
  language: string;
  readyTimeoutMs: number;
  /** The running client, started (or awaited through a restart) on demand. */
  client(): Promise<LspClient>;
}

export type EngineLookup = { ok: true; handle: EngineHandle } | { ok: false; engine: string | null; reason: string };

class Instance {
  state: EngineState = 'idle';
  current: LspClient | null = null;
  private starting: Promise<LspClient> | null = null;
  crashes = 0;
  restarts = 0;
  failure: string | null = null;
  private closing = false;
  /** Languages of the configuration entries that selected this instance. */
  readonly languages = new Set<string>();

  constructor(
    readonly key: string,
    readonly definition: EngineDefinition,
    readonly workspace: string,
    readonly rootPath: string,
  ) {}

  get observedState(): EngineState {
    if (this.state === 'loading' && this.current?.ready) return 'ready';
    if (this.state === 'ready' && this.current && !this.current.ready) return 'loading';
    return this.state;
  }

  client(): Promise<LspClient> {
    if (this.current?.alive) return Promise.resolve(this.current);
    if (this.state === 'failed') return Promise.reject(engineFailed(this.definition.name, this.failure ?? 'the engine failed'));
    if (this.state === 'stopped') return Promise.reject(engineUnavailable(this.definition.name, 'the workspace is closing'));
    this.starting ??= this.spawn(0);
    return this.starting;
  }

  private async spawn(delayMs: number): Promise<LspClient> {
    this.state = delayMs > 0 ? 'restarting' : 'starting';
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    if (this.closing) throw engineUnavailable(this.definition.name, 'the workspace is closing');
    this.state = 'starting';
    const started = performance.now();
    const stateDir = join(this.workspace, '.rift', 'engines', `${this.definition.name}-${digest8(this.rootPath)}`);
    let started_: LspClient | undefined;
    try {
      const client = await LspClient.start(this.definition, this.workspace, join(this.workspace, this.rootPath), stateDir, (code, signal, stderr) =>
        this.exited(started_, code, signal, stderr),
      );
      started_ = client;
      if (this.closing) {
        await client.shutdown();
        throw engineUnavailable(this.definition.name, 'the workspace is closing');
      }
      this.current = client;
      this.state = 'loading';
      this.starting = null;
      log('info', 'engine', 'engine started', { engine: this.definition.name, pid: client.pid, elapsed_ms: Math.round(performance.now() - started) });
      void client.waitReady(this.definition.readyTimeoutMs + ENGINE_RESTART_BACKOFF_MAX_MS).then((ready) => {
        if (ready && this.current === client) this.crashes = 0;
      });
      return client;
    } catch (e) {
      this.starting = null;
      if (!this.closing) this.giveUpOrRetry(unavailableDetail(e));
      throw e;
    }
  }

  private exited(client: LspClient | undefined, code: number | null, signal: string | null, stderr: string): void {
    // An exit during start is reported by the start itself; one of a replaced client is old news.
    if (this.closing || client === undefined || this.current !== client) return;
    this.current = null;
    log('warn', 'engine', 'engine exited', { engine: this.definition.name, code: code ?? 'none', signal: signal ?? 'none', stderr_bytes: stderr.length });
    this.giveUpOrRetry(`the engine exited (${signal ?? `code ${code}`})`);
  }

  private giveUpOrRetry(reason: string): void {
    this.crashes += 1;
    if (this.crashes > ENGINE_RESTARTS_MAX) {
      this.state = 'failed';
      this.failure = `${reason}; gave up after ${ENGINE_RESTARTS_MAX} restarts — fix the engine, then edit rift.toml or restart rift`;
      return;
    }
    this.restarts += 1;
    const delay = Math.min(ENGINE_RESTART_BACKOFF_MS * 2 ** (this.crashes - 1), ENGINE_RESTART_BACKOFF_MAX_MS);
    this.state = 'restarting';
    this.starting = this.spawn(delay);
    this.starting.catch(() => {});
  }

  async close(): Promise<void> {
    this.closing = true;
    this.state = 'stopped';
    const client = this.current;
    this.current = null;
    await client?.shutdown();
  }
}

export class EngineRegistry {
  private readonly instances = new Map<string, Instance>();
  private closed = false;

  constructor(
    /** The canonical workspace root; project paths are relative to it. */
    readonly root: string,
    private readonly config: ConfigLoader,
    indexer: Indexer,
    /** Which project engine definitions the user trusts (asked at every resolution). */
    private readonly trusted: EngineTrust,
  ) {
    indexer.onFilesChanged((changes) => this.filesChanged(changes));
  }

  /** The engine for a path under the current configuration, or why it has none. Starts nothing. */
  lookup(path: string, config: WorkspaceConfig = this.config.current().config): EngineLookup {
    const entry = languageFor(config, path);
    if (!entry) return { ok: false, engine: null, reason: `no language claims ${path}` };
    const resolved = resolveDefinition(entry, this.trusted);
    if (!('definition' in resolved)) return { ok: false, engine: resolved.engine, reason: resolved.reason };
    const definition = resolved.definition;
    const rootPath = this.rootOf(definition, path);
    if (rootPath === null) {
      return { ok: false, engine: definition.name, reason: `${definition.name} needs one of ${definition.rootMarkers.join(', ')} at or above ${path}` };
    }
    const instance = this.instance(definition, rootPath, config);
    instance.languages.add(entry.id);
    return {
      ok: true,
      handle: { name: definition.name, language: entry.id, readyTimeoutMs: definition.readyTimeoutMs, client: () => instance.client() },
    };
  }

  private instance(definition: EngineDefinition, rootPath: string, config: WorkspaceConfig): Instance {
    const key = instanceKey(definition, rootPath);
    let instance = this.instances.get(key);
    if (!instance) {
      // An edited definition replaces the engine it described: the old process is shut down
      // once no language of the current configuration selects that definition any more.
      const selected = new Set(config.languages.flatMap((entry) => {
        const resolved = resolveDefinition(entry, this.trusted);
        return 'definition' in resolved ? [JSON.stringify(resolved.definition)] : [];
      }));
      for (const [k, old] of this.instances) {
        if (old.definition.name === definition.name && old.rootPath === rootPath && !selected.has(JSON.stringify(old.definition))) {
          this.instances.delete(k);
          void old.close();
        }
      }
      instance = new Instance(key, definition, this.root, rootPath);
      if (this.closed) instance.state = 'stopped';
      this.instances.set(key, instance);
    }
    return instance;
  }

  /** The directory (project path) holding the nearest root marker, '' without markers, or null. */
  private rootOf(definition: EngineDefinition, path: string): string | null {
    if (definition.rootMarkers.length === 0) return '';
    let dir = dirname(path);
    for (;;) {
      const rel = dir === '.' ? '' : dir;
      if (definition.rootMarkers.some((m) => existsSync(join(this.root, rel, m)))) return rel;
      if (rel === '') return null;
      dir = dirname(dir);
    }
  }

  /**
   * Each configured language with its engine and that engine's state, in configuration order:
   * what `rift://workspace` reports as a language's selected LSP process state. A language whose
   * engine serves several roots reports the first one started.
   */
  states(): EngineStatus[] {
    let config: WorkspaceConfig;
    try {
      config = this.config.current().config;
    } catch {
      return [];
    }
    return config.languages.map((entry): EngineStatus => {
      if (!entry.enabled) return { language: entry.id, engine: null, state: 'unavailable', reason: `[languages.${entry.id}] is disabled` };
      const resolved = resolveDefinition(entry, this.trusted);
      if (!('definition' in resolved)) return { language: entry.id, engine: resolved.engine, state: 'unavailable', reason: resolved.reason };
      const name = resolved.definition.name;
      const running = [...this.instances.values()].filter((i) => i.languages.has(entry.id) && i.key === instanceKey(resolved.definition, i.rootPath));
      const instance = running.find((i) => i.current) ?? running[0];
      if (!instance) return { language: entry.id, engine: name, state: 'idle' };
      const status: EngineStatus = { language: entry.id, engine: name, state: instance.observedState, root: instance.rootPath, restarts: instance.restarts };
      if (instance.current) status.pid = instance.current.pid;
      if (instance.failure) status.reason = instance.failure;
      return status;
    });
  }

  /** Opens (or updates) a document in a running engine with the bytes rift resolved against. */
  syncDocument(client: LspClient, language: string, path: string, bytes: Uint8Array): void {
    client.sync(path, lspLanguageId(language, path), bytes);
    this.bound(client);
  }

  private bound(client: LspClient): void {
    while (client.openPaths().length > ENGINE_OPEN_DOCUMENTS_MAX) {
      const oldest = client.oldestOpen();
      if (oldest === null) return;
      client.sync(oldest, '', null);
    }
  }

  /**
   * Engines learn of every change under their root; a file of their own languages is opened (or
   * updated) with its new bytes, so a request right after an external write already sees it
   * rather than waiting on the engine's own file watching.
   */
  private filesChanged(changes: readonly FileChangeEvent[]): void {
    let config: WorkspaceConfig;
    try {
      config = this.config.current().config;
    } catch {
      return; // an invalid rift.toml: engine-backed changes are refused anyway until it is fixed
    }
    // One definition per language for the whole batch (resolving one looks programs up on PATH).
    const definitions = new Map<string, EngineDefinition | null>();
    const definitionOf = (entry: LanguageEntry) => {
      if (!definitions.has(entry.id)) {
        const resolved = resolveDefinition(entry, this.trusted);
        definitions.set(entry.id, 'definition' in resolved ? resolved.definition : null);
      }
      return definitions.get(entry.id)!;
    };
    for (const instance of this.instances.values()) {
      const client = instance.current;
      if (!client?.alive) continue;
      const under = instance.rootPath === '' ? changes : changes.filter((c) => c.path.startsWith(`${instance.rootPath}/`));
      client.watched(under.map((c) => ({ path: c.path, type: c.kind === 'created' ? FILE_CREATED : c.kind === 'deleted' ? FILE_DELETED : FILE_CHANGED })));
      for (const c of under) {
        if (c.kind === 'deleted') {
          client.sync(c.path, '', null);
          continue;
        }
        let languageId = '';
        if (!client.isOpen(c.path)) {
          const entry = languageFor(config, c.path);
          const definition = entry ? definitionOf(entry) : null;
          if (!entry || !definition || instanceKey(definition, this.rootOf(definition, c.path)) !== instance.key) continue;
          languageId = lspLanguageId(entry.id, c.path);
        }
        client.sync(c.path, languageId, readRegular(join(this.root, c.path)));
      }
      this.bound(client);
    }
  }

  /**
   * The engines' diagnostics for files a change wrote (errors and warnings), bounded and
   * deduplicated, each naming its engine. Engines start here when they have not yet; one that
   * cannot answer in time contributes an `info` diagnostic saying so instead.
   */
  async diagnosticsAfter(files: ReadonlyArray<{ path: string; bytes: Uint8Array }>, config: WorkspaceConfig = this.config.current().config): Promise<Diagnostic[]> {
    const deadline = performance.now() + ENGINE_DIAGNOSTICS_WAIT_MS;
    const out: Diagnostic[] = [];
    const seen = new Set<string>();
    const waits = files.map(async (f) => {
      const found = this.lookup(f.path, config);
      if (!found.ok) return [];
      const { handle } = found;
      let client: LspClient;
      try {
        client = await withDeadline(handle.client(), deadline);
        this.syncDocument(client, handle.language, f.path, f.bytes);
      } catch {
        return [unanswered(handle.name, handle.language, f.path, 'it was not running')];
      }
      const items = await client.diagnosticsOf(f.path, deadline - performance.now());
      if (items === null) return [unanswered(handle.name, handle.language, f.path, `it published none within ${ENGINE_DIAGNOSTICS_WAIT_MS} ms`)];
      const lines = new LineIndex(f.bytes, client.encoding);
      return items.filter((d) => d.severity === undefined || d.severity <= 2).map((d) => toDiagnostic(d, handle.name, handle.language, f.path, lines));
    });
    for (const list of await Promise.all(waits)) {
      for (const d of list) {
        const key = JSON.stringify([d.span, d.message, d.code]);
        if (seen.has(key)) continue;
        seen.add(key);
        out.push(d);
      }
    }
    if (out.length <= ENGINE_DIAGNOSTICS_MAX) return out;
    // Past the cap, the last place says how many were left out rather than dropping them silently.
    const kept = out.slice(0, ENGINE_DIAGNOSTICS_MAX - 1);
    return [...kept, truncated(out.slice(ENGINE_DIAGNOSTICS_MAX - 1))];
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.instances.values()].map((i) => i.close()));
  }
}

function instanceKey(definition: EngineDefinition, rootPath: string | null): string {
  return JSON.stringify([definition, rootPath]);
}

function readRegular(abs: string): Buffer | null {
  try {
    return lstatSync(abs).isFile() ? readFileSync(abs) : null;
  } catch {
    return null;
  }
}

function withDeadline<T>(p: Promise<T>, deadline: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('deadline')), Math.max(0, deadline - performance.now()));
    }),
  ]).finally(() => clearTimeout(timer));
}

const SEVERITY = ['error', 'error', 'warning', 'info', 'hint'] as const;

function toDiagnostic(d: LspDiagnostic, engine: string, language: string, path: string, lines: LineIndex): Diagnostic {
  const start = lines.offset(d.range.start) ?? 0;
  const end = Math.max(start, lines.offset(d.range.end) ?? start);
  return {
    severity: SEVERITY[d.severity ?? 1],
    code: d.code === undefined || d.code === null ? null : String(d.code),
    message: cutUtf8(d.message, 4096),
    span: { unit: fileId(path), range: { start, end } },
    related: [],
    tags: (d.tags ?? []).map((t) => (t === 2 ? 'deprecated' : 'unnecessary')),
    reliability: 'reliable',
    continuation: 'unknown',
    extensions: d.source ? { engine, source: d.source } : { engine },
    language,
  };
}

/** Stands for the engine diagnostics past ENGINE_DIAGNOSTICS_MAX: how many, from which files. */
function truncated(rest: readonly Diagnostic[]): Diagnostic {
  const first = rest[0];
  const units = [...new Set(rest.map((d) => d.span?.unit ?? null))];
  return {
    severity: 'info',
    code: 'rift.engine.diagnostics_truncated',
    message: `${rest.length} more engine diagnostics (in ${units.length} file${units.length === 1 ? '' : 's'}) are not listed: a change carries at most ${ENGINE_DIAGNOSTICS_MAX}; run the engine on the changed files to see them all`,
    span: first.span === null ? null : { unit: first.span.unit, range: { start: 0, end: 0 } },
    related: [],
    tags: [],
    reliability: 'reliable',
    continuation: 'unknown',
    extensions: { omitted: rest.length },
    language: first.language,
  };
}

function unanswered(engine: string, language: string, path: string, why: string): Diagnostic {
  return {
    severity: 'info',
    code: 'rift.engine.diagnostics_unavailable',
    message: `${engine} reported no diagnostics for ${path}: ${why}; the change landed unchecked by the engine`,
    span: { unit: fileId(path), range: { start: 0, end: 0 } },
    related: [],
    tags: [],
    reliability: 'reliable',
    continuation: 'unknown',
    extensions: { engine },
    language,
  };
}
