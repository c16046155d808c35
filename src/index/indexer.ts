import { createHash } from 'node:crypto';
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { GlobSet } from '../core/glob.ts';
import { Lane } from '../core/lane.ts';
import { sha256Hex, treeRevision } from '../core/digest.ts';
import { log } from '../core/log.ts';
import { withSmallYoungGeneration } from '../core/heap.ts';
import { RiftError } from '../core/errors.ts';
import { UPDATE_RETRY_MAX_MS, UPDATE_RETRY_MS, WARM_LANGUAGES_MAX, WATCH_DEBOUNCE_MS, msFromEnv } from '../core/limits.ts';
import type { ConfigLoader } from '../config/loader.ts';
import { languageFor } from '../config/loader.ts';
import type { WorkspaceConfig } from '../config/workspace-config.ts';
import { sourcePolicy, type Visibility } from '../workspace/visibility.ts';
import { walkVisible, compareProjectPaths, nfcConflict, pathPlace, type FileEntry, type WalkResult } from '../workspace/walk.ts';
import { readSourceFileSync } from '../workspace/read.ts';
import { isPolicyFile, type WatchEvent } from '../workspace/watcher.ts';
import { SYNTAX_LANGUAGES, type LanguageId } from '../syntax/types.ts';
import { initSyntax } from '../syntax/runtime.ts';
import { Store, type FileTouch, type FileUpdate, type SkippedFile, type StoredFile, type StoreCounts } from './store.ts';
import { replaceDamaged, storeDamage } from './store-open.ts';
import { WatchSupervisor } from './watch-supervisor.ts';
import { WorkerPool } from './pool.ts';
import { runParseItem, type ParseItem, type ParseOutcome } from './parse-job.ts';
import { RelationGraph, type ResolveJob } from './graph/graph.ts';
import { AsideFailed, closeBuild, runAside } from './aside.ts';

// Keeps `.rift/rift.db` equal to the visible tree: a full reconcile on start (parsing
// only what changed since the store last saw it), then incremental batches from the
// watcher. Every batch commits one transaction and publishes a new snapshot.

/**
 * Without concurrent reads to serve (one-shot commands), batches at most this large are parsed
 * on the main thread; larger ones, and every batch of a serving indexer, use workers.
 */
const INLINE_PARSE_MAX = 24;
/** Files a build writes in one transaction, at most. */
const WRITE_BATCH_FILES = 128;
/** A build commits what it has parsed at least this often (ms), so reads see it. */
const WRITE_INTERVAL_MS = 250;
/** A reconcile that parses more files than this writes in bulk mode (one full-text merge at the end). */
const BULK_AFTER_FILES = 256;
/**
 * A serving indexer resolves its graph on a worker thread once a pass reads at least this many
 * files and names (RelationGraph.pendingWork): a full pass over the stdlib's 1,786 parsed files takes
 * ~3 s, ~1.6 ms a file, against ~0.1-0.2 s to start the worker and open a connection.
 */
const RESOLVE_ASIDE_MIN = 200;

export interface Snapshot {
  /** 8-hex tree revision of what the store holds. */
  readonly revision: string;
  /** Increases with every published batch. */
  readonly generation: number;
}

/** The tree the index is behind (see Indexer.observedRevision). */
export interface ObservedRevision {
  captured: string;
  indexed: string;
  /** Why events may have been lost (a rescan that finds them is still to come), when they may. */
  lost?: string;
}

/** `captured` while events were lost and nothing observed differs yet: the tree on disk is not known until a rescan walks it. */
export const UNOBSERVED_REVISION = '00000000';

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
  /** Files read so far of the `total` this build reads. */
  done: number;
  total: number;
  /** Of those read: stored (parsed or text) and left out (skipped, with a reason). */
  stored?: number;
  skipped?: number;
}

/**
 * A build the indexer's close ended before it had read every file: what it stored stays, and the
 * next start's reconcile reads only the rest (and resolves the graph, its facts marked pending).
 */
export class BuildStopped extends Error {
  constructor(
    readonly stored: number,
    readonly total: number,
  ) {
    super(`the index build stopped because rift is closing (${stored} of ${total} files read); the next start continues it`);
    this.name = 'BuildStopped';
  }
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
    return { path, language, keepContent: textSelected || entry !== null, relations: language !== null && this.config.providers.binding.enabled };
  }
}

export interface IndexerOptions {
  /**
   * Parse every batch in worker threads, so reads on the main thread are never held behind a
   * parse (servers). One-shot commands parse small batches inline instead.
   */
  parseInWorkers: boolean;
}

export class Indexer {
  readonly root: string;
  /** Replaced when the store turns out damaged (see `storeFault`). */
  private storeRef: Store;
  /** The binding provider's relationship graph, kept in the store's database (replaced with it). */
  private graphRef: RelationGraph;
  private readonly configLoader: ConfigLoader;
  private current: Snapshot;
  private visibility: Visibility | null = null;
  private selection: Selection | null = null;
  private pool: WorkerPool | null = null;
  private readonly lane = new Lane();
  /** Aborted by close: a running build hands out no more files. */
  private readonly closing = new AbortController();
  private readonly pending = new Set<string>();
  private readonly inflight = new Set<string>();
  private policyDirty = false;
  private timer: NodeJS.Timeout | null = null;
  private watcher: WatchSupervisor | null = null;
  /**
   * Paths a reconcile found changed and has not published yet (reads warn about them), with the
   * digest their walk gives them, null for a deletion: reads never re-read them. A file not read
   * yet is held by its walk entry and given its digest only when a read asks (see walkedDigest):
   * a cold build queues every file, and hashing each up front cost time and a string per file.
   */
  private readonly reconciling = new Map<string, string | FileEntry | null>();
  /** Bumped whenever the observed paths change; `observedRevision` is recomputed only then. */
  private observedVersion = 0;
  private observed: { version: number; value: { captured: string; indexed: string } | null } | null = null;
  private readonly debounceMs: number;
  private readonly listeners = new Set<(s: Snapshot) => void>();
  private readonly fileListeners = new Set<(changes: FileChangeEvent[]) => void>();
  private built: { config: WorkspaceConfig; promise: Promise<BuildStats> } | null = null;
  /** The configuration the store was last fully reconciled under. */
  private reconciledConfig: WorkspaceConfig | null = null;
  /**
   * While a long build runs and has stored its first files: the revision of the walked tree it
   * is building, and the partial revision of what is stored so far (per generation).
   */
  private partial: { captured: string; indexed: { generation: number; revision: string } | null } | null = null;
  /** While a build's closing work runs on a worker thread (closeAside): settles when it ends. */
  private graphResolving: Promise<void> | null = null;
  /** Reads waiting for a long build's first stored batch (or its end). */
  private earlyReaders: Array<() => void> = [];
  /** Visible files the last reconcile left out, with the reason, in path order. */
  private leftOut: LeftOut = [];
  /**
   * Why the index may lag the tree in ways no pending path names — watcher events lost (a burst
   * past the kernel's queue, directories that arrived whole) or a watcher down — until a rescan
   * begun after it has walked the tree; `seq` orders it against rescans (see `rescanned`).
   */
  private suspicion: { reason: string; seq: number } | null = null;
  private suspicionSeq = 0;
  /** A rescan put off after an update failed (see updateFailed), and the wait before the next one. */
  private retry: NodeJS.Timeout | null = null;
  private retryMs = UPDATE_RETRY_MS;

  private readonly parseInWorkers: boolean;

  constructor(root: string, configLoader: ConfigLoader, store: Store, options: IndexerOptions = { parseInWorkers: false }) {
    this.root = root;
    this.parseInWorkers = options.parseInWorkers;
    // Started now, so the threads are ready by the time the first walk has found work; idle,
    // they warm their parsers on the languages the tree holds most (none before a first build).
    if (this.parseInWorkers) this.pool = new WorkerPool({ warm: warmLanguages(store) });
    this.configLoader = configLoader;
    this.storeRef = store;
    this.graphRef = this.attach(store);
    this.current = { revision: store.meta('tree_revision') ?? treeRevision([]), generation: 0 };
    this.debounceMs = msFromEnv('RIFT_WATCH_DEBOUNCE_MS', WATCH_DEBOUNCE_MS);
  }

  get snapshot(): Snapshot {
    return this.current;
  }

  /** The store of the published snapshot. */
  get store(): Store {
    return this.storeRef;
  }

  /** The binding provider's relationship graph, kept in the same database as the store. */
  get graph(): RelationGraph {
    return this.graphRef;
  }

  /** Listens to `store` and opens the graph in its database. */
  private attach(store: Store): RelationGraph {
    // A read that finds a file's bytes changed behind the index treats it as a watcher event:
    // reads warn `stale_index` until the file is re-indexed.
    store.onDrift((path) => this.noteDrift(path));
    return new RelationGraph(store.tables());
  }

  /**
   * The error a read should answer when `err` shows the store itself is damaged (a page
   * unreadable, the file replaced underneath): the store is set aside and rebuilt from the
   * tree, and reads wait for that build. Null for any other error.
   */
  storeFault(err: unknown): RiftError | null {
    const damage = storeDamage(err);
    if (damage === null) return null;
    const faulty = this.storeRef;
    const config = this.configLoader.current().config;
    const promise = this.serialize(async () => {
      if (this.storeRef === faulty) this.replaceStore(damage);
      return this.reconcile();
    });
    this.built = { config, promise };
    promise.catch(() => undefined);
    return new RiftError('storage_failure', [
      ['file', '.rift/rift.db'],
      ['damage', damage],
      ['state', 'set aside and being rebuilt from the tree'],
    ]);
  }

  private replaceStore(damage: string): void {
    const old = this.storeRef;
    const inMemory = old.inMemory;
    try {
      old.close();
    } catch {
      // a connection to a damaged file may fail to close cleanly; it is abandoned either way
    }
    this.storeRef = inMemory ? Store.memory(this.root) : replaceDamaged(this.root, damage);
    this.graphRef = this.attach(this.storeRef);
    this.reconciledConfig = null;
  }

  /** Runs `work`; when the store proves damaged, replaces it and rebuilds everything with `rebuild`. */
  private async recovering<T>(work: () => Promise<T>, rebuild: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (e) {
      const damage = storeDamage(e);
      if (damage === null) throw e;
      this.replaceStore(damage);
      return rebuild();
    }
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

  /**
   * Resolves once reads may be answered under `config`: when the store has been reconciled,
   * or — while a long build runs — as soon as its first batch is stored; until the build
   * completes, reads then warn `stale_index` (see observedRevision).
   */
  readable(config: WorkspaceConfig): Promise<void> {
    const built = this.ensureBuilt(config).then(() => undefined);
    // A reconcile under `config` that published and resolves its graph aside: reads answer.
    if (this.partial || (this.graphResolving !== null && this.reconciledConfig === config)) return Promise.race([built, Promise.resolve()]);
    return Promise.race([built, new Promise<void>((r) => this.earlyReaders.push(r))]);
  }

  /** True while a long build is storing files and reads are answered from what it stored so far. */
  get building(): boolean {
    return this.partial !== null;
  }

  /** Visible files the last reconcile left out of the index, with the reason each was. */
  skippedFiles(): Readonly<LeftOut> {
    return this.leftOut;
  }

  /** The selection of the last reconcile. */
  currentSelection(): Selection {
    if (!this.selection) throw new Error('index not built');
    return this.selection;
  }

  /** Visibility of a file (a directory when `isDir`) under the policy of the last reconcile. */
  isVisible(path: string, isDir = false): boolean {
    return this.visibility?.isVisible(path, isDir) ?? false;
  }

  /** Full reconcile of the visible tree against the store; serialized with every other batch. */
  build(onProgress?: (p: BuildProgress) => void): Promise<BuildStats> {
    const reconcile = () => this.reconcile(onProgress);
    return this.serialize(() => this.recovering(reconcile, reconcile));
  }

  private serialize<T>(work: () => Promise<T>): Promise<T> {
    return this.lane.run(work);
  }

  private async reconcile(onProgress?: (p: BuildProgress) => void): Promise<BuildStats> {
    const started = performance.now();
    const suspicionSeq = this.suspicionSeq;
    const { config } = this.configLoader.current();
    // What the walk and the parse held for every file (the walk, the stored rows, the work) is
    // garbage once `storeTree` returns: a resolve pass over a large tree runs without it.
    const tree = await this.storeTree(config, onProgress);
    const binding = config.providers.binding.enabled;
    // Nothing read, removed or left to resolve: the graph holds what the last reconcile left
    // (reading every file twice to find no file to prune was a fifth of a warm start at 32×).
    // A sealed store's graph may still be pending: a process stopped during a pass run aside.
    const resolve = binding && (tree.kind === 'sealed' ? this.graph.pending : !(tree.unchanged && !this.graph.pending && this.graph.store.hasData()));
    // What a bulk build owes the store (this one's, or one a stopped process left): ended here
    // before the pass, which needs the graph's fact indexes, or aside with it.
    const finish = this.store.bulkOwed() || (binding && !this.graph.store.factsIndexed());
    const aside = (finish && this.closesAside()) || (resolve && this.resolvesAside());
    if (!aside) closeBuild(this.store, this.graph, finish, resolve ? { prune: true } : null);
    let stats: BuildStats;
    if (tree.kind === 'sealed') {
      this.published(config, suspicionSeq, tree.revision, [], tree.leftOut);
      const { files, parsed, symbols } = tree.counts;
      stats = { files, parsed, symbols, reparsed: 0, removed: 0, skipped: tree.leftOut.length, elapsedMs: 0 };
    } else {
      const { stamp, seqAtStart, batches, changed, reparsed, removed, skipped, leftOut } = tree;
      const counts = this.store.counts();
      this.published(config, suspicionSeq, this.store.commitRevision({ stamp, seq: seqAtStart + batches, counts }), changed, leftOut);
      stats = { files: counts.files, parsed: counts.parsed, symbols: counts.symbols, reparsed, removed, skipped, elapsedMs: 0 };
    }
    // Published before its closing work: reads answer meanwhile (from unmerged full-text
    // segments, uncounted names), and those that follow relationships wait for the pass (see
    // graphResolved). The seal written with the revision does not stand for the graph, which
    // stays marked pending until the pass commits, nor for what the bulk owes.
    if (aside) await this.closeAside(finish, resolve ? { job: this.graph.job(), prune: true } : null);
    return { ...stats, elapsedMs: Math.round(performance.now() - started) };
  }

  /** Whether this indexer runs a build's closing work on a worker thread: when it serves reads, from a store on disk. */
  private closesAside(): boolean {
    return this.parseInWorkers && this.store.databaseFile !== null;
  }

  /** Whether a batch's resolve pass is large enough to run aside (see RESOLVE_ASIDE_MIN). */
  private resolvesAside(): boolean {
    return this.closesAside() && this.graph.pendingWork() >= RESOLVE_ASIDE_MIN;
  }

  /**
   * Runs a build's closing work on a worker thread — what a bulk build owes (`finish`), then the
   * resolve pass — and publishes the same revision again (what is computed per publication, the
   * map, is then computed over the resolved graph). Held in the lane: no batch writes meanwhile.
   * A worker that cannot complete for a reason of its own (it died) leaves the work to this
   * thread; SQLite's errors are the reconcile's, as inline.
   */
  private async closeAside(finish: boolean, resolve: { job: ResolveJob; prune: boolean } | null): Promise<void> {
    const started = performance.now();
    const work = resolve === null ? 0 : this.graph.pendingWork();
    const pass = runAside({ file: this.store.databaseFile!, root: this.root, finish, resolve }, this.closing.signal).catch((e: unknown) => {
      if (!(e instanceof AsideFailed) || e.code !== undefined) throw e;
      log('warn', 'index.build', 'closing work left to the serving thread', { reason: e.message });
      closeBuild(this.store, this.graph, finish, resolve);
      return true;
    });
    this.graphResolving = pass.then(
      () => undefined,
      () => undefined,
    );
    try {
      if (!(await pass)) return; // closing: the next start does what is still recorded as owed
      if (resolve !== null) this.graph.resolved();
      log('debug', 'index.build', 'closing work done on a worker thread', { finish, resolved: work, ms: Math.round(performance.now() - started) });
      this.publish(this.current.revision);
    } finally {
      this.graphResolving = null;
    }
  }

  /** Resolves once the relationship graph holds every published batch (reads that follow relationships wait for it). */
  graphResolved(): Promise<void> {
    return this.graphResolving ?? Promise.resolve();
  }

  /** A reconcile under `config` has published `revision`: what it found changed and left out is now what reads see. */
  private published(config: WorkspaceConfig, suspicionSeq: number, revision: string, changed: FileChangeEvent[], leftOut: LeftOut): void {
    this.publish(revision);
    this.retryMs = UPDATE_RETRY_MS;
    this.rescanned(suspicionSeq);
    this.emitFiles(changed);
    this.reconciledConfig = config;
    this.releaseEarlyReaders();
    this.leftOut = leftOut;
  }

  /**
   * A reconcile's walk and parse: walks the tree, and either finds the store sealed with this
   * very walk (its revision and counts, nothing read) or stores every changed file and removes
   * every deleted one, answering what the rest of the reconcile needs.
   */
  private async storeTree(config: WorkspaceConfig, onProgress?: (p: BuildProgress) => void): Promise<SealedTree | StoredTree> {
    const policy = sourcePolicy(config);
    onProgress?.({ phase: 'walk', done: 0, total: 0 });
    // Read before the walk: a batch written while it runs (another process's) unseals the store.
    const seqAtStart = this.store.batchSeq();
    const { visibility, walk } = await walkVisible(this.root, policy);
    this.visibility = visibility;
    const selection = new Selection(config);
    this.selection = selection;
    const binding = config.providers.binding.enabled;
    const stamp = walkStamp(walk, config);

    // The store is sealed with exactly this walk under this configuration, nothing written
    // since, and the graph holds every file's facts: nothing to read, compare or hash (the graph
    // may still wait for its resolve pass, which the reconcile runs).
    const sealed = this.store.sealedRevision(stamp);
    if (sealed !== null && this.store.batchSeq() === seqAtStart && (!binding || this.graph.store.hasData())) {
      return { kind: 'sealed', revision: sealed.revision, counts: sealed.counts, leftOut: leftOutOf(walk, this.store.skippedFiles()) };
    }

    const stored = new Map(this.store.files().map((f) => [f.path, f]));
    const skippedBefore = this.store.skippedFiles();
    // Files parsed while the provider was disabled (or before it existed) lack relation facts.
    const stale = binding ? this.graph.staleness() : null;
    const work: ParseItem[] = [];
    const walked = (path: string) => walkedFile(walk, path);
    // Until the next publication, reads warn about what this reconcile found changed (the
    // watcher may never have reported it); a reconcile that fails leaves them warned about.
    const queue = (item: ParseItem, entry: FileEntry, prev: StoredFile | undefined) => {
      work.push(item);
      this.reconciling.set(entry.path, storedDigest(entry, prev) ?? entry);
    };
    // Files skipped before and unchanged since stay skipped without being read again.
    let skipped = walk.skipped.length;
    for (const entry of walk.files) {
      const known = skippedBefore.get(entry.path);
      if (sameStat(known, entry)) {
        skipped++;
        continue;
      }
      const prev = stored.get(entry.path);
      // Same size and mtime under the same configuration: nothing to read. Under a new
      // configuration the file's language may have changed, which is a re-parse.
      if (prev && sameStat(prev, entry)) {
        const factsMissing = stale !== null && prev.parsed && stale(entry.path, prev.sha256);
        if (config === this.reconciledConfig && !factsMissing) continue;
        const item = selection.item(entry.path);
        if (prev.language === item.language && !factsMissing) continue;
        queue(item, entry, prev);
        continue;
      }
      queue(selection.item(entry.path), entry, prev);
    }
    const deletions = [...stored.keys(), ...skippedBefore.keys()].filter((p) => walked(p) === undefined);
    let reparsed = 0;
    for (const p of deletions) this.reconciling.set(p, null);
    this.observedVersion++;
    // This reconcile's own batches, each counted once (see Store.batchSeq).
    let batches = 0;
    if (deletions.length > 0) this.transaction(() => {
      batches++;
      this.store.applyBatch([], [], deletions);
      if (binding) this.graph.record([], deletions);
    });
    const changed: FileChangeEvent[] = deletions.map((path) => ({ path, kind: 'deleted' }));
    onProgress?.({ phase: 'parse', done: 0, total: work.length, stored: 0, skipped: 0 });
    let done = 0;
    const write = (results: ParseOutcome[]) => {
      const { updates, touches, drops } = this.classify(results, stored);
      for (const u of updates) changed.push({ path: u.path, kind: stored.has(u.path) ? 'changed' : 'created' });
      for (const path of drops) changed.push({ path, kind: 'deleted' });
      const skips = results.flatMap((r) => {
        const e = walked(r.path);
        return !r.ok && e ? [{ path: r.path, size: e.size, mtimeMs: e.mtimeMs, reason: r.reason }] : [];
      });
      skipped += skips.length;
      reparsed += updates.filter((u) => u.symbols !== null).length;
      this.transaction(() => {
        batches++;
        this.store.applyBatch(updates, touches, drops, skips);
        if (binding) this.graph.record(results, drops);
      });
      done += results.length;
      storedCount += results.length - skips.length;
      newlySkipped += skips.length;
      onProgress?.({ phase: 'parse', done, total: work.length, stored: storedCount, skipped: newlySkipped });
    };
    let storedCount = 0;
    let newlySkipped = 0;
    if (work.length === 0 || this.parsesInline(work)) {
      if (work.some((w) => w.language)) await initSyntax();
      if (work.length > 0) write(work.map((item) => runParseItem(this.root, policy.maxFileBytes, item)));
    } else {
      this.pool ??= new WorkerPool();
      const bulk = work.length > BULK_AFTER_FILES;
      if (bulk) this.store.beginBulk(stored.size === 0);
      if (bulk && binding) this.graph.store.beginBulk();
      // Worker batches are written in larger transactions (fewer commits and full-text
      // segments), but at least every WRITE_INTERVAL_MS so reads see the build progress.
      let buffer: ParseOutcome[] = [];
      let flushed = -Infinity; // the first results are written at once: reads wait for them
      // A long build lets reads in after its first stored batch, warning stale_index until done.
      const captured = bulk ? walkedRevision(walk.files, stored) : null;
      const flush = () => {
        if (buffer.length > 0) write(buffer);
        buffer = [];
        flushed = performance.now();
        if (captured !== null) this.publishPartial(captured);
      };
      const pool = this.pool;
      const run = () =>
        pool.run(
          this.root,
          policy.maxFileBytes,
          work,
          (results) => {
            buffer.push(...results);
            if (buffer.length >= WRITE_BATCH_FILES || performance.now() - flushed >= WRITE_INTERVAL_MS) flush();
          },
          this.closing.signal,
        );
      try {
        // The writer takes the workers' batches as fast as they come: its garbage is collected
        // young (src/core/heap.ts).
        await (bulk ? withSmallYoungGeneration(run) : run());
        flush();
      } finally {
        // A one-shot command's workers are done: what their large parses grew (WebAssembly
        // memory never shrinks) is returned before the closing merges and index builds below
        // and the resolve pass, so the build's peak is not their sum (terminating a worker does
        // not fail). A server keeps its workers.
        if (bulk && !this.parseInWorkers) {
          this.pool = null;
          await pool.close();
        }
        // A serving engine ends the bulk aside, with the resolve pass (see reconcile): this
        // connection only takes back its own settings.
        if (bulk && this.closesAside()) this.store.leaveBulk();
        else if (bulk) {
          if (binding) this.graph.store.endBulk();
          this.store.endBulk();
        }
        this.partial = null;
      }
      // Closing: what is stored stays (as after a kill between two batches) and the next start
      // continues from it; neither the resolve pass nor a publication starts now.
      if (this.closing.signal.aborted) {
        log('info', 'index.build', 'index build stopped: rift is closing', { stored: done, remaining: work.length - done });
        throw new BuildStopped(done, work.length);
      }
    }
    return {
      kind: 'stored',
      stamp,
      seqAtStart,
      batches,
      changed,
      reparsed,
      removed: deletions.length,
      skipped,
      unchanged: work.length === 0 && deletions.length === 0,
      leftOut: leftOutOf(walk, this.store.skippedFiles()),
    };
  }

  /** Splits parse outcomes into content updates, metadata-only touches and drops. */
  private classify(results: readonly ParseOutcome[], stored: ReadonlyMap<string, { sha256: string; language: string | null; parsed: boolean; unparsed: string | null }>) {
    const updates: FileUpdate[] = [];
    const touches: FileTouch[] = [];
    const drops: string[] = [];
    for (const r of results) {
      const prev = stored.get(r.path) ?? this.store.file(r.path);
      if (!r.ok) {
        if (prev) drops.push(r.path);
        continue;
      }
      if (prev && prev.sha256 === r.sha256 && prev.language === r.language && prev.parsed === (r.symbols !== null) && prev.unparsed === r.unparsed) {
        touches.push({ path: r.path, mtimeMs: r.mtimeMs, size: r.size, stamp: r.stamp });
      } else {
        updates.push({
          path: r.path,
          sha256: r.sha256,
          size: r.size,
          mtimeMs: r.mtimeMs,
          stamp: r.stamp,
          language: r.language,
          lines: r.lines,
          symbols: r.symbols,
          unparsed: r.unparsed,
          text: r.text,
        });
      }
    }
    return { updates, touches, drops };
  }

  /** Store and graph writes of one batch land in one transaction (IMMEDIATE: see Store.transaction). */
  private transaction(work: () => void): void {
    this.store.transaction(work);
  }

  /** Publishes what a long build has stored so far: readers waiting for it may answer now. */
  private publishPartial(captured: string): void {
    this.partial = { captured, indexed: null };
    this.current = { revision: this.current.revision, generation: this.current.generation + 1 };
    this.releaseEarlyReaders();
  }

  private releaseEarlyReaders(): void {
    const waiting = this.earlyReaders;
    this.earlyReaders = [];
    for (const r of waiting) r();
  }

  private publish(revision: string): void {
    this.reconciling.clear();
    this.observedVersion++;
    this.current = { revision, generation: this.current.generation + 1 };
    log('info', 'index.publish', 'index snapshot published', { generation: this.current.generation, revision });
    for (const l of this.listeners) l(this.current);
  }

  /**
   * Starts the watcher; external creates, edits, renames and deletes apply incrementally. A
   * watcher that cannot start does not stop the server: it is retried, the tree rescanned.
   */
  async watch(): Promise<void> {
    if (this.watcher) return;
    this.watcher = new WatchSupervisor(
      this.root,
      (events) => this.enqueue(events),
      (resync) => this.rescan(resync),
      (reason) => this.suspect(reason),
    );
    await this.watcher.start();
  }

  /** A full reconcile in the lane for what the watcher may have missed, after resubscribing when asked. */
  private rescan(resync: string | null): void {
    const reconcile = async () => void (await this.reconcile());
    void this.serialize(async () => {
      if (resync !== null) await this.watcher?.resync(resync);
      await this.recovering(reconcile, reconcile);
    }).catch((err: Error) => this.updateFailed('rescan', err));
  }

  /**
   * An update the watcher or a rescan asked for failed (the store held busy by another process
   * past its wait, parse workers that keep dying): what it was to apply is not dropped. Reads
   * warn `stale_index` until a rescan has walked the tree, and one runs after UPDATE_RETRY_MS,
   * the wait doubling to UPDATE_RETRY_MAX_MS while they fail too.
   */
  private updateFailed(what: string, err: Error): void {
    if (this.closing.signal.aborted) return;
    // Logs and warnings never carry the workspace root.
    const error = String(err?.message ?? err).split(this.root).join('.');
    log('warn', 'index.update', `${what} failed; the tree is rescanned`, { error, retry_ms: this.retryMs });
    this.suspect(`an index update failed (${error})`);
    if (this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      this.rescan(null);
    }, this.retryMs);
    this.retry.unref();
    this.retryMs = Math.min(this.retryMs * 2, UPDATE_RETRY_MAX_MS);
  }

  /** Events may have been lost: until a rescan has walked the tree, reads warn `stale_index`. */
  private suspect(reason: string): void {
    this.suspicion = { reason, seq: ++this.suspicionSeq };
    this.observedVersion++;
  }

  /**
   * A reconcile that began when the suspicion count was `seq` has published: it walked the tree
   * after every loss up to `seq`, so what they lost is indexed now — unless the watcher is down or
   * still owes the resubscription a loss asked for (it would go on losing events).
   */
  private rescanned(seq: number): void {
    if (this.suspicion === null || this.suspicion.seq > seq || this.watcher?.down || this.watcher?.resyncOwed) return;
    this.suspicion = null;
    this.observedVersion++;
  }

  /** A file a read found changed: queued like a watcher event, without postponing a batch already due. */
  private noteDrift(path: string): void {
    if (this.pending.has(path) || this.inflight.has(path)) return;
    this.pending.add(path);
    this.observedVersion++;
    if (!this.timer) this.schedule();
  }

  private enqueue(events: readonly WatchEvent[]): void {
    this.observedVersion++;
    for (const e of events) {
      if (isPolicyFile(e.path)) this.policyDirty = true;
      this.pending.add(e.path);
    }
    if (this.timer) clearTimeout(this.timer);
    this.schedule();
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.serialize(() => this.recovering(() => this.flush(), async () => void (await this.reconcile()))).catch((err: Error) =>
        this.updateFailed('incremental update', err),
      );
    }, this.debounceMs);
  }

  /** Applies the pending watcher paths as one batch (or a full reconcile when policy changed). */
  private async flush(): Promise<void> {
    if (this.pending.size === 0 && !this.policyDirty) return;
    const paths = [...this.pending].sort();
    this.pending.clear();
    let changedWhileRead: string[] = [];
    for (const p of paths) this.inflight.add(p);
    try {
      // Events may have been lost (a burst past the kernel's queue, directories made faster than
      // they were watched): watch the tree afresh, then walk it.
      const resync = this.watcher?.needsResync((p) => this.isVisibleDirectory(p)) ?? null;
      if (resync !== null) {
        this.suspect(resync);
        await this.watcher!.resync(resync);
        await this.reconcile();
        return;
      }
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
      changedWhileRead = await this.applyPaths(paths);
    } finally {
      for (const p of paths) this.inflight.delete(p);
      this.observedVersion++;
    }
    for (const p of changedWhileRead) this.noteDrift(p);
  }

  /**
   * Re-reads the given files now and publishes the result before resolving, so the next
   * read sees them (a change calls this for the paths it wrote). Serialized with every
   * other batch.
   */
  refresh(paths: readonly string[]): Promise<void> {
    const rebuild = async () => void (await this.reconcile());
    return this.serialize(() =>
      this.recovering(async () => {
        if (!this.visibility || !this.selection) return rebuild();
        // Grammars load only when a path needs parsing (a change to a text file loads none).
        if (paths.some((p) => this.selection!.syntaxLanguage(p))) await initSyntax();
        for (const p of await this.applyPaths([...paths].sort())) this.noteDrift(p);
      }, rebuild),
    );
  }

  /** The parse workers, when this indexer parses in workers (servers), else null (one-shot commands). */
  workers(): WorkerPool | null {
    if (!this.parseInWorkers) return null;
    this.pool ??= new WorkerPool();
    return this.pool;
  }

  /** Parses `work`, inline or in the worker pool (see IndexerOptions); `onBatch` sees each finished batch. */
  private async parse(work: readonly ParseItem[], maxFileBytes: number, onBatch: (results: ParseOutcome[]) => void): Promise<void> {
    if (work.length === 0) return;
    if (this.parsesInline(work)) {
      if (work.some((w) => w.language)) await initSyntax();
      onBatch(work.map((item) => runParseItem(this.root, maxFileBytes, item)));
      return;
    }
    this.pool ??= new WorkerPool();
    await this.pool.run(this.root, maxFileBytes, work, onBatch);
  }

  private parsesInline(work: readonly ParseItem[]): boolean {
    return !this.parseInWorkers && work.length <= INLINE_PARSE_MAX;
  }

  /** Reads and parses files outside the index (on-demand search), off the main thread when serving. */
  async parseDetached(items: readonly ParseItem[], maxFileBytes: number): Promise<ParseOutcome[]> {
    const results: ParseOutcome[] = [];
    await this.parse(items, maxFileBytes, (batch) => results.push(...batch));
    return results;
  }

  /**
   * Reads, parses and publishes the given files as one batch; answers those whose size or mtime
   * changed since they were read, which the caller queues to be read again. A file rewritten in
   * place is truncated, then written: read in between, it is stored half-written, and the event
   * of the write may arrive merged with the one that led to the read (the backend batches them).
   */
  private async applyPaths(paths: readonly string[]): Promise<string[]> {
    const visibility = this.visibility!;
    const selection = this.selection!;
    const maxFileBytes = selection.config.source.max_file_bytes;
    const work: ParseItem[] = [];
    const deletions: string[] = [];
    for (const p of paths) {
      if (visibility.isVisible(p) && isRegularFile(join(this.root, p))) work.push(selection.item(p));
      else if (this.store.file(p)) deletions.push(p);
    }
    const results: ParseOutcome[] = [];
    await this.parse(work, maxFileBytes, (batch) => results.push(...batch));
    const { updates, touches, drops } = this.classify(results, new Map());
    // A file left out is recorded with its reason, as a walk records it: reads then say why it
    // cannot be served (content_unavailable), not that it does not exist.
    const skips: SkippedFile[] = [];
    for (const r of results) {
      if (r.ok) continue;
      try {
        const st = lstatSync(join(this.root, r.path));
        skips.push({ path: r.path, size: st.size, mtimeMs: st.mtimeMs, reason: r.reason });
      } catch {
        // gone since it was read: its deletion event follows
      }
    }
    if (updates.length + touches.length + drops.length + deletions.length + skips.length > 0) {
      const changed: FileChangeEvent[] = updates.map((u) => ({ path: u.path, kind: this.store.file(u.path) ? 'changed' : 'created' }));
      // A batch whose pass is small resolves in its own transaction; a large one (a branch
      // switch) is published first and resolved aside, as a reconcile's.
      let aside = false;
      this.transaction(() => {
        this.store.applyBatch(updates, touches, [...drops, ...deletions], skips);
        if (selection.config.providers.binding.enabled) {
          this.graph.record(results, [...drops, ...deletions]);
          aside = this.resolvesAside();
          if (!aside) this.graph.resolve();
        }
      });
      this.publish(this.store.commitRevision());
      this.emitFiles([...changed, ...[...drops, ...deletions].map((path): FileChangeEvent => ({ path, kind: 'deleted' }))]);
      if (aside) await this.closeAside(false, { job: this.graph.job(), prune: false });
    }
    return results.flatMap((r) => (r.ok && changedSince(join(this.root, r.path), r) ? [r.path] : []));
  }

  private isVisibleDirectory(path: string): boolean {
    try {
      return lstatSync(join(this.root, path)).isDirectory() && (this.visibility?.isVisible(path, true) ?? true);
    } catch {
      return false;
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
   * the store's files with every pending path replaced by its bytes on disk now. While events
   * may have been lost and no rescan has walked the tree since (see `suspicion`), the index is
   * behind a tree not yet seen: then `captured` is UNOBSERVED_REVISION when nothing observed
   * differs, and `lost` says why.
   */
  observedRevision(): ObservedRevision | null {
    if (this.partial) {
      // Hashing every stored row is linear in the tree: once per published batch, on demand.
      const generation = this.current.generation;
      if (this.partial.indexed?.generation !== generation) this.partial.indexed = { generation, revision: this.store.computeTreeRevision() };
      return { captured: this.partial.captured, indexed: this.partial.indexed.revision };
    }
    const seen = this.seenRevision();
    if (this.suspicion === null) return seen;
    return { ...(seen ?? { captured: UNOBSERVED_REVISION, indexed: this.current.revision }), lost: this.suspicion.reason };
  }

  /** The revision of the tree as the watcher and rescans have seen it, when it differs from the index. */
  private seenRevision(): { captured: string; indexed: string } | null {
    if (this.pending.size === 0 && this.inflight.size === 0 && this.reconciling.size === 0) return null;
    // Every change to what was observed comes with an event (or a publication), which bumps the
    // version: between them, reads share one computation instead of re-reading every path.
    if (this.observed?.version === this.observedVersion) return this.observed.value;
    const version = this.observedVersion;
    const value = this.computeObservedRevision();
    this.observed = { version, value };
    return value;
  }

  private computeObservedRevision(): { captured: string; indexed: string } | null {
    const changes = new Map<string, string | null>();
    const maxFileBytes = this.selection?.config.source.max_file_bytes ?? Number.MAX_SAFE_INTEGER;
    for (const [p, digest] of this.reconciling) changes.set(p, digest !== null && typeof digest === 'object' ? unreadDigest(digest) : digest);
    for (const p of new Set([...this.pending, ...this.inflight])) {
      const visible = this.visibility?.isVisible(p) ?? true;
      const r = visible ? readSourceFileSync(this.root, p, maxFileBytes) : null;
      changes.set(p, r && r.ok ? r.sha256 : null);
    }
    const captured = this.store.treeRevisionWith(changes);
    const indexed = this.current.revision;
    return captured === indexed ? null : { captured, indexed };
  }

  /** Waits until every observed change is applied (used by the CLI and tests of the engine). */
  async settle(): Promise<void> {
    while (this.timer || this.pending.size > 0 || this.inflight.size > 0) {
      await new Promise((r) => setTimeout(r, 5));
      await this.lane.idle();
    }
  }

  /** Stops: a build in progress stores the batches its workers hold and ends (see BuildStopped). */
  async close(): Promise<void> {
    this.closing.abort();
    if (this.timer) clearTimeout(this.timer);
    if (this.retry) clearTimeout(this.retry);
    await this.watcher?.close();
    await this.lane.idle();
    await this.pool?.close();
    this.store.close();
  }
}

/** Visible files the index does not hold, each with why (the walk's or the parse's reason). */
type LeftOut = Array<{ path: string; reason: string }>;

/** A walk that found the store sealed with it (see Indexer.storeTree). */
interface SealedTree {
  kind: 'sealed';
  revision: string;
  counts: StoreCounts;
  leftOut: LeftOut;
}

/** What a reconcile's walk and parse leave for the rest of it (see Indexer.storeTree). */
interface StoredTree {
  kind: 'stored';
  stamp: string;
  seqAtStart: number;
  /** The batches it committed. */
  batches: number;
  changed: FileChangeEvent[];
  reparsed: number;
  removed: number;
  skipped: number;
  /** Nothing was read or removed. */
  unchanged: boolean;
  leftOut: LeftOut;
}

/**
 * The revision of the tree a build walked, before it has read it all: each file contributes
 * its stored digest when the store already holds it unchanged (same size and mtime), else a
 * digest of its size and mtime. It names the tree the build is converging to.
 */
function walkedRevision(files: ReadonlyArray<{ path: string; size: number; mtimeMs: number }>, stored: ReadonlyMap<string, StoredFile>): string {
  const rows = files.map((f) => ({ path: f.path, sha256: walkedDigest(f, stored.get(f.path)) }));
  rows.sort((a, b) => compareProjectPaths(a.path, b.path));
  return treeRevision(rows);
}

type Stat = { size: number; mtimeMs: number };

/** Same size and mtime: the store's (and a warm start's) test for "unchanged". */
function sameStat(a: Stat | undefined, b: Stat): boolean {
  return a !== undefined && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

/** Whether the file at `abs` no longer has the size and mtime a read of it found (gone: its deletion event follows). */
function changedSince(abs: string, read: Stat): boolean {
  try {
    return !sameStat(read, lstatSync(abs));
  } catch {
    return false;
  }
}

/** A walked file's stored digest when its size and mtime are as stored, else null. */
function storedDigest(f: Stat, prev: StoredFile | undefined): string | null {
  return prev && sameStat(prev, f) ? prev.sha256 : null;
}

/** The digest a file not read yet stands under: one of its size and mtime. */
function unreadDigest(f: Stat): string {
  return sha256Hex(`unread ${f.size} ${f.mtimeMs}`);
}

/** A walked file's digest before it is read: the stored one when size and mtime match, else its unread one. */
function walkedDigest(f: Stat, prev: StoredFile | undefined): string {
  return storedDigest(f, prev) ?? unreadDigest(f);
}

/**
 * What a walk saw, under the configuration that decides what is indexed and how: every visible
 * file's path, size and mtime, and every entry it left out with the reason. Equal stamps mean
 * the same files at the same stat stamps (the store's own test for "unchanged").
 */
function walkStamp(walk: WalkResult, config: WorkspaceConfig): string {
  const h = createHash('sha256');
  h.update(JSON.stringify([config.source, config.languages, config.providers.binding, config.search.text]));
  let block = '';
  for (const f of walk.files) {
    block += `\n${f.path}\0${f.size}\0${f.mtimeMs}`;
    if (block.length >= STAMP_BLOCK) (h.update(block), (block = ''));
  }
  block += '\n\n';
  for (const k of walk.skipped) block += `${k.path}\0${k.reason}\n`;
  h.update(block);
  return h.digest('hex');
}

/** Characters of a walk stamp hashed at a time. */
const STAMP_BLOCK = 1 << 16;

/** The walk's entry for `path`: its files are in path order, so a binary search, not a map of every path. */
function walkedFile(walk: WalkResult, path: string): FileEntry | undefined {
  const e = walk.files[pathPlace(walk.files, path, (f) => f.path)];
  return e?.path === path ? e : undefined;
}

/** Visible files left out: by the walk, and (stored as skipped) by the parse, in path order. */
function leftOutOf(walk: WalkResult, skipped: ReadonlyMap<string, SkippedFile>): LeftOut {
  return [...walk.skipped, ...[...skipped.values()].filter((k) => walkedFile(walk, k.path)).map((k) => ({ path: k.path, reason: k.reason }))].sort((a, b) =>
    compareProjectPaths(a.path, b.path),
  );
}

function isRegularFile(abs: string): boolean {
  try {
    return lstatSync(abs).isFile();
  } catch {
    return false;
  }
}

/**
 * The languages a serving engine's parse workers warm on: the tree's most common. Nothing on a
 * store that cannot say (a damaged one is met, set aside and rebuilt by the first read, as ever).
 */
function warmLanguages(store: Store): string[] {
  try {
    return store.parsedLanguages().slice(0, WARM_LANGUAGES_MAX);
  } catch {
    return [];
  }
}
