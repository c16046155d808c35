import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { GlobSet } from '../core/glob.ts';
import { treeRevision } from '../core/digest.ts';
import { log } from '../core/log.ts';
import { WATCH_DEBOUNCE_MS } from '../core/limits.ts';
import type { ConfigLoader } from '../config/loader.ts';
import { languageFor } from '../config/loader.ts';
import type { WorkspaceConfig } from '../config/workspace-config.ts';
import { Visibility, type SourcePolicy } from '../workspace/visibility.ts';
import { walkWorkspace, compareProjectPaths, nfcConflict } from '../workspace/walk.ts';
import { readSourceFileSync } from '../workspace/read.ts';
import { watchWorkspace, isPolicyFile, type WatchEvent } from '../workspace/watcher.ts';
import { SYNTAX_LANGUAGES, type LanguageId } from '../syntax/types.ts';
import { initSyntax } from '../syntax/runtime.ts';
import { Store, type FileUpdate } from './store.ts';
import { WorkerPool } from './pool.ts';
import { runParseItem, type ParseItem, type ParseOutcome } from './parse-job.ts';

// Keeps `.rift/rift.db` equal to the visible tree: a full reconcile on start (parsing
// only what changed since the store last saw it), then incremental batches from the
// watcher. Every batch commits one transaction and publishes a new snapshot.

/** Batches at most this large are parsed on the main thread; larger ones use workers. */
const INLINE_PARSE_MAX = 24;
/** A reconcile that parsed more files than this merges the full-text segments it wrote. */
const OPTIMIZE_AFTER_FILES = 256;

export interface Snapshot {
  /** 8-hex tree revision of what the store holds. */
  readonly revision: string;
  /** Increases with every published batch. */
  readonly generation: number;
}

export interface BuildStats {
  files: number;
  parsed: number;
  symbols: number;
  reparsed: number;
  removed: number;
  skipped: number;
  elapsedMs: number;
}

/** A file whose indexed bytes changed in a published batch (rift's own writes and external ones). */
export interface FileChangeEvent {
  path: string;
  kind: 'created' | 'changed' | 'deleted';
}

export interface BuildProgress {
  phase: 'walk' | 'parse';
  done: number;
  total: number;
}

export function sourcePolicy(config: WorkspaceConfig): SourcePolicy {
  return {
    include: config.source.include,
    exclude: config.source.exclude,
    respectGitignore: config.source.respect_gitignore,
    maxFileBytes: config.source.max_file_bytes,
    maxFiles: config.source.max_files,
  };
}

/** The syntax language of a language entry, when a built-in provider parses it. */
function syntaxLanguageOf(entry: { id: string } | null): LanguageId | null {
  return entry && SYNTAX_LANGUAGES.has(entry.id) ? (entry.id as LanguageId) : null;
}

/** How the current configuration treats one visible path. */
export class Selection {
  private readonly text: { include: GlobSet; exclude: GlobSet };
  constructor(readonly config: WorkspaceConfig) {
    this.text = { include: new GlobSet(config.search.text.include), exclude: new GlobSet(config.search.text.exclude) };
  }

  /** The syntax language that claims the path, when an enabled entry with a provider selects it. */
  syntaxLanguage(path: string): LanguageId | null {
    return syntaxLanguageOf(languageFor(this.config, path));
  }

  item(path: string): ParseItem {
    const entry = languageFor(this.config, path);
    const language = syntaxLanguageOf(entry);
    const textSelected = this.text.include.matches(path) && !this.text.exclude.matches(path);
    return { path, language, keepContent: textSelected || entry !== null };
  }
}

export class Indexer {
  readonly root: string;
  readonly store: Store;
  private readonly configLoader: ConfigLoader;
  private current: Snapshot;
  private visibility: Visibility | null = null;
  private selection: Selection | null = null;
  private pool: WorkerPool | null = null;
  private lane: Promise<unknown> = Promise.resolve();
  private readonly pending = new Set<string>();
  private readonly inflight = new Set<string>();
  private policyDirty = false;
  private timer: NodeJS.Timeout | null = null;
  private watcher: { close(): Promise<void> } | null = null;
  private readonly debounceMs: number;
  private readonly listeners = new Set<(s: Snapshot) => void>();
  private readonly fileListeners = new Set<(changes: FileChangeEvent[]) => void>();
  private built: { config: WorkspaceConfig; promise: Promise<BuildStats> } | null = null;
  /** Path → digest of the published snapshot, loaded when a read first needs it. */
  private digests: Map<string, string> | null = null;
  /** The configuration the store was last fully reconciled under. */
  private reconciledConfig: WorkspaceConfig | null = null;

  constructor(root: string, configLoader: ConfigLoader, store: Store) {
    this.root = root;
    this.configLoader = configLoader;
    this.store = store;
    this.current = { revision: store.meta('tree_revision') ?? treeRevision([]), generation: 0 };
    const env = Number(process.env.RIFT_WATCH_DEBOUNCE_MS);
    this.debounceMs = Number.isFinite(env) && env >= 0 && process.env.RIFT_WATCH_DEBOUNCE_MS ? env : WATCH_DEBOUNCE_MS;
  }

  get snapshot(): Snapshot {
    return this.current;
  }

  /** Called after each publication. */
  onPublish(listener: (s: Snapshot) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Called with the files each published batch added, rewrote or removed. */
  onFilesChanged(listener: (changes: FileChangeEvent[]) => void): () => void {
    this.fileListeners.add(listener);
    return () => this.fileListeners.delete(listener);
  }

  private emitFiles(changes: FileChangeEvent[]): void {
    if (changes.length === 0) return;
    for (const l of this.fileListeners) l(changes);
  }

  /**
   * Resolves once the store has been reconciled under `config` (the accepted
   * configuration object); a new configuration triggers one more reconcile.
   */
  ensureBuilt(config: WorkspaceConfig, onProgress?: (p: BuildProgress) => void): Promise<BuildStats> {
    if (!this.built || this.built.config !== config) {
      const promise = this.build(onProgress);
      const entry = { config, promise };
      this.built = entry;
      promise.catch(() => {
        if (this.built === entry) this.built = null;
      });
    }
    return this.built.promise;
  }

  /** The selection of the last reconcile. */
  currentSelection(): Selection {
    if (!this.selection) throw new Error('index not built');
    return this.selection;
  }

  /** Visibility under the policy of the last reconcile. */
  isVisible(path: string): boolean {
    return this.visibility?.isVisible(path) ?? false;
  }

  /** Full reconcile of the visible tree against the store; serialized with every other batch. */
  build(onProgress?: (p: BuildProgress) => void): Promise<BuildStats> {
    return this.serialize(() => this.reconcile(onProgress));
  }

  private serialize<T>(work: () => Promise<T>): Promise<T> {
    const run = this.lane.then(work, work);
    this.lane = run.catch(() => undefined);
    return run;
  }

  private async reconcile(onProgress?: (p: BuildProgress) => void): Promise<BuildStats> {
    const started = performance.now();
    const { config } = this.configLoader.current();
    const policy = sourcePolicy(config);
    onProgress?.({ phase: 'walk', done: 0, total: 0 });
    const visibility = await Visibility.load(this.root, policy);
    const walk = await walkWorkspace(this.root, visibility, policy);
    this.visibility = visibility;
    const selection = new Selection(config);
    this.selection = selection;

    const stored = new Map(this.store.files().map((f) => [f.path, f]));
    const skippedBefore = this.store.skippedFiles();
    const work: ParseItem[] = [];
    const entries = new Map(walk.files.map((e) => [e.path, e]));
    for (const entry of walk.files) {
      const known = skippedBefore.get(entry.path);
      if (known && known.size === entry.size && known.mtimeMs === entry.mtimeMs) continue;
      const prev = stored.get(entry.path);
      // Same size and mtime under the same configuration: nothing to read. Under a new
      // configuration the file's language may have changed, which is a re-parse.
      if (prev && prev.size === entry.size && prev.mtimeMs === entry.mtimeMs) {
        if (config === this.reconciledConfig) continue;
        const item = selection.item(entry.path);
        if (prev.language === item.language) continue;
        work.push(item);
        continue;
      }
      work.push(selection.item(entry.path));
    }
    const deletions = [...stored.keys(), ...skippedBefore.keys()].filter((p) => !entries.has(p));
    const queued = new Set(work.map((w) => w.path));
    // Files skipped before and unchanged since stay skipped without being read again.
    let skipped = walk.skipped.length + [...skippedBefore.keys()].filter((p) => entries.has(p) && !queued.has(p)).length;
    let reparsed = 0;

    if (deletions.length > 0) this.store.applyBatch([], [], deletions);
    const changed: FileChangeEvent[] = deletions.map((path) => ({ path, kind: 'deleted' }));
    onProgress?.({ phase: 'parse', done: 0, total: work.length });
    let done = 0;
    const apply = (results: ParseOutcome[]) => {
      const { updates, touches, drops } = this.classify(results, stored);
      for (const u of updates) changed.push({ path: u.path, kind: stored.has(u.path) ? 'changed' : 'created' });
      for (const path of drops) changed.push({ path, kind: 'deleted' });
      const skips = results.flatMap((r) => {
        const e = entries.get(r.path);
        return !r.ok && e ? [{ path: r.path, size: e.size, mtimeMs: e.mtimeMs, reason: r.reason }] : [];
      });
      skipped += skips.length;
      reparsed += updates.filter((u) => u.declarations !== null).length;
      this.store.applyBatch(updates, touches, drops, skips);
      done += results.length;
      onProgress?.({ phase: 'parse', done, total: work.length });
    };
    if (work.length <= INLINE_PARSE_MAX) {
      if (work.some((w) => w.language)) await initSyntax();
      if (work.length > 0) apply(work.map((item) => runParseItem(this.root, policy.maxFileBytes, item)));
    } else {
      this.pool ??= new WorkerPool();
      await this.pool.run(this.root, policy.maxFileBytes, work, apply);
    }
    if (work.length > OPTIMIZE_AFTER_FILES) this.store.optimizeFullText();
    this.publish(this.store.commitRevision());
    this.emitFiles(changed);
    this.reconciledConfig = config;
    const counts = this.store.counts();
    return {
      files: counts.files,
      parsed: counts.parsed,
      symbols: counts.symbols,
      reparsed,
      removed: deletions.length,
      skipped,
      elapsedMs: Math.round(performance.now() - started),
    };
  }

  /** Splits parse outcomes into content updates, metadata-only touches and drops. */
  private classify(results: readonly ParseOutcome[], stored: ReadonlyMap<string, { sha256: string; language: string | null; parsed: boolean }>) {
    const updates: FileUpdate[] = [];
    const touches: { path: string; mtimeMs: number; size: number }[] = [];
    const drops: string[] = [];
    for (const r of results) {
      const prev = stored.get(r.path) ?? this.store.file(r.path);
      if (!r.ok) {
        if (prev) drops.push(r.path);
        continue;
      }
      if (prev && prev.sha256 === r.sha256 && prev.language === r.language && prev.parsed === (r.declarations !== null)) {
        touches.push({ path: r.path, mtimeMs: r.mtimeMs, size: r.size });
      } else {
        updates.push({
          path: r.path,
          sha256: r.sha256,
          size: r.size,
          mtimeMs: r.mtimeMs,
          language: r.language,
          bytes: r.bytes,
          declarations: r.declarations,
          text: r.text,
        });
      }
    }
    return { updates, touches, drops };
  }

  private publish(revision: string): void {
    this.digests = null;
    this.current = { revision, generation: this.current.generation + 1 };
    for (const l of this.listeners) l(this.current);
  }

  /** Starts the watcher; external creates, edits, renames and deletes apply incrementally. */
  async watch(): Promise<void> {
    if (this.watcher) return;
    this.watcher = await watchWorkspace(
      this.root,
      (events) => this.enqueue(events),
      (err) => log('warn', 'index.watch', 'watcher failed', { error: err.message }),
    );
  }

  private enqueue(events: readonly WatchEvent[]): void {
    for (const e of events) {
      if (isPolicyFile(e.path)) this.policyDirty = true;
      this.pending.add(e.path);
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.serialize(() => this.flush()).catch((err: Error) =>
        log('warn', 'index.update', 'incremental update failed', { error: err.message }),
      );
    }, this.debounceMs);
  }

  /** Applies the pending watcher paths as one batch (or a full reconcile when policy changed). */
  private async flush(): Promise<void> {
    if (this.pending.size === 0 && !this.policyDirty) return;
    const paths = [...this.pending].sort();
    this.pending.clear();
    for (const p of paths) this.inflight.add(p);
    try {
      if (this.policyDirty || !this.visibility || !this.selection || this.touchesDirectory(paths) || this.touchesUnicodeForms(paths)) {
        this.policyDirty = false;
        this.configLoader.current(); // an invalid rift.toml keeps the last index; reads are gated anyway
        await this.reconcile();
        return;
      }
      const { config } = this.configLoader.current();
      if (config !== this.selection.config) {
        await this.reconcile();
        return;
      }
      await initSyntax();
      this.applyPaths(paths);
    } finally {
      for (const p of paths) this.inflight.delete(p);
    }
  }

  /**
   * Re-reads the given files now and publishes the result before resolving, so the next
   * read sees them (a change calls this for the paths it wrote). Serialized with every
   * other batch.
   */
  refresh(paths: readonly string[]): Promise<void> {
    return this.serialize(async () => {
      if (!this.visibility || !this.selection) {
        await this.reconcile();
        return;
      }
      await initSyntax();
      this.applyPaths([...paths].sort());
    });
  }

  /** Reads, parses and publishes the given files as one batch (main thread; small batches). */
  private applyPaths(paths: readonly string[]): void {
    const visibility = this.visibility!;
    const selection = this.selection!;
    const maxFileBytes = selection.config.source.max_file_bytes;
    const work: ParseItem[] = [];
    const deletions: string[] = [];
    for (const p of paths) {
      if (visibility.isVisible(p) && isRegularFile(join(this.root, p))) work.push(selection.item(p));
      else if (this.store.file(p)) deletions.push(p);
    }
    const results = work.map((item) => runParseItem(this.root, maxFileBytes, item));
    const { updates, touches, drops } = this.classify(results, new Map());
    if (updates.length + touches.length + drops.length + deletions.length > 0) {
      const changed: FileChangeEvent[] = updates.map((u) => ({ path: u.path, kind: this.store.file(u.path) ? 'changed' : 'created' }));
      this.store.applyBatch(updates, touches, [...drops, ...deletions]);
      this.publish(this.store.commitRevision());
      this.emitFiles([...changed, ...[...drops, ...deletions].map((path): FileChangeEvent => ({ path, kind: 'deleted' }))]);
    }
  }

  /**
   * A path whose name is not NFC, or that shares its NFC form with another entry, changes which
   * files are addressable (F.2 rule 24): the walk decides, as it does for the whole tree.
   */
  private touchesUnicodeForms(paths: readonly string[]): boolean {
    return paths.some((p) => p !== p.normalize('NFC') || nfcConflict(this.root, p) !== null);
  }

  /**
   * A visible directory created, removed or renamed needs a walk; plain file events and
   * directories the policy hides (excluded, ignored) do not (F.2 rule 28).
   */
  private touchesDirectory(paths: readonly string[]): boolean {
    for (const p of paths) {
      try {
        if (lstatSync(join(this.root, p)).isDirectory() && this.visibility!.isVisible(p, true)) return true;
      } catch {
        // Gone: a removed directory shows as stored paths below it.
        if (!this.store.file(p) && this.store.hasPathsUnder(p)) return true;
      }
    }
    return false;
  }

  /**
   * The tree revision the watcher has observed, when it differs from the published one:
   * the store's files with every pending path replaced by its bytes on disk now.
   */
  observedRevision(): { captured: string; indexed: string } | null {
    if (this.pending.size === 0 && this.inflight.size === 0) return null;
    this.digests ??= this.store.digests();
    const rows = new Map(this.digests);
    const maxFileBytes = this.selection?.config.source.max_file_bytes ?? Number.MAX_SAFE_INTEGER;
    for (const p of new Set([...this.pending, ...this.inflight])) {
      const visible = this.visibility?.isVisible(p) ?? true;
      const r = visible ? readSourceFileSync(this.root, p, maxFileBytes) : null;
      if (r && r.ok) rows.set(p, r.sha256);
      else rows.delete(p);
    }
    const paths = [...rows.keys()].sort(compareProjectPaths);
    const captured = treeRevision(paths.map((path) => ({ path, sha256: rows.get(path)! })));
    const indexed = this.current.revision;
    return captured === indexed ? null : { captured, indexed };
  }

  /** Waits until every observed change is applied (used by the CLI and tests of the engine). */
  async settle(): Promise<void> {
    while (this.timer || this.pending.size > 0 || this.inflight.size > 0) {
      await new Promise((r) => setTimeout(r, 5));
      await this.lane;
    }
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    await this.watcher?.close();
    await this.lane;
    await this.pool?.close();
    this.store.close();
  }
}

function isRegularFile(abs: string): boolean {
  try {
    return lstatSync(abs).isFile();
  } catch {
    return false;
  }
}
