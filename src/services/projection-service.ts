import { constants, copyFileSync, lstatSync, mkdirSync, readFileSync, rmSync, rmdirSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { sha256Hex, treeRevision } from '../core/digest.ts';
import { RiftError, invalidField, limitExceeded } from '../core/errors.ts';
import { changeId, parseSymbolId, projectionId } from '../core/ids.ts';
import { PROJECTION_LIST_DEFAULT } from '../core/limits.ts';
import { log } from '../core/log.ts';
import type { WorkspaceConfig } from '../config/workspace-config.ts';
import type { Tables } from '../index/store.ts';
import type { Indexer } from '../index/indexer.ts';
import type { ChangeResult, ConfirmationRequirement } from '../protocol/change.ts';
import type {
  ChangeRecord,
  DependencyConflict,
  Projection,
  ProjectionListInput,
  ProjectionRestoreInput,
  ProjectionState,
  PublishInput,
  PublishResult,
} from '../protocol/projection.ts';
import { applyPlan } from '../change/apply.ts';
import { hookFailure, hookPassed, hookPaths, runHook } from '../change/hooks.ts';
import { isRefusal } from '../change/refusal.ts';
import type { FileWrite } from '../change/publish.ts';
import { ensureStateDir } from '../workspace/state-dir.ts';
import { sourcePolicy } from '../workspace/visibility.ts';
import { compareProjectPaths, walkVisible } from '../workspace/walk.ts';
import type { ScopedApis } from './api.ts';
import { hooksKey, type ChangeOptions, type ChangeService } from './change-service.ts';
import { FsService } from './fs-service.ts';
import { pageLimit, pagination } from './read-gate.ts';
import type { ReadService } from './read-service.ts';
import type { SearchService } from './search-service.ts';

// Projections (spec "Projections"; reference A.7, F.15 rules 157–167): isolated copies of the
// workspace under `.rift/projections/prj_<id>/`, each served by its own engine (index, reads,
// changes) opened on that directory. What every rift process must agree on lives in the
// workspace's store (rift.db), so several `rift mcp --standalone`, the shared `rift server` and
// the agent see the same projections:
//
//   projections       — id, reason, base revision;
//   projection_files  — the manifest: per path the workspace's digest at the baseline (`base`),
//                       the digest rift last knew the projection to hold (`current`), and the
//                       stat stamp `current` was taken at (null digests: absent);
//   projection_changes — the changeset: each change's paths and confirmations;
//   projection_deps   — the read set: each file a projection read returned, with its digest.
//
// A path is changed when `current` differs from `base`. Writes nobody recorded (a shell in the
// projection directory) are found by comparing the directory with `current` (reconciliation,
// rule 162) and become one `filesystem` change. Every step that reads or writes a projection
// holds that projection's tree lock; publish and restore then take the workspace's too
// (projection first, always, so the two never wait on each other in a cycle).
//
// Trees are copied file by file with copy-on-write clones where the filesystem has them
// (COPYFILE_FICLONE falls back to a copy), never hard links: a shell write inside the
// projection (`echo >> f`) would go through a link into the workspace file.

export const PROJECTIONS_DIR = join('.rift', 'projections');
/** The projection's own store, inside its directory's `.rift/`. */
const STORE_FILE = join('.rift', 'rift.db');
/** This module's tables, which a projection's store copy leaves out. */
const PROJECTION_TABLES = ['projections', 'projection_files', 'projection_changes', 'projection_deps'];

/** The part of an engine a projection is served by (services/engine.ts `Engine`). */
export interface ProjectionEngine {
  readonly root: string;
  readonly config: { current(): { config: WorkspaceConfig } };
  readonly indexer: Indexer;
  readonly change: ChangeService;
  readonly read: ReadService;
  readonly search: SearchService;
  close(): Promise<void>;
}

interface FileRow {
  path: string;
  base: string | null;
  current: string | null;
  stamp: string | null;
}

interface ChangeRow {
  id: string;
  origin: 'rift' | 'filesystem';
  paths: string;
  confirmations: string;
}

interface ProjectionRow {
  id: string;
  reason: string | null;
  base_revision: string;
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS projections (id TEXT PRIMARY KEY, reason TEXT, base_revision TEXT NOT NULL, created_ms INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS projection_files (projection TEXT NOT NULL, path TEXT NOT NULL, base TEXT, current TEXT, stamp TEXT,
    PRIMARY KEY (projection, path));
  CREATE TABLE IF NOT EXISTS projection_changes (projection TEXT NOT NULL, id TEXT NOT NULL, seq INTEGER NOT NULL, origin TEXT NOT NULL,
    paths TEXT NOT NULL, confirmations TEXT NOT NULL, PRIMARY KEY (projection, id));
  CREATE TABLE IF NOT EXISTS projection_deps (projection TEXT NOT NULL, path TEXT NOT NULL, digest TEXT, entry_bytes INTEGER NOT NULL,
    PRIMARY KEY (projection, path));
`;

/** The digest a read-set entry keeps on the wire (8 hex characters). */
const DEPENDENCY_DIGEST_BYTES = 8;

const stampOf = (size: number, mtimeMs: number) => `${size}:${mtimeMs}`;
const short = (sha: string | null) => (sha === null ? null : sha.slice(0, 8));
const parentOf = (path: string) => (path.includes('/') ? dirname(path) : '');

/** A regular file's bytes, or null when nothing regular is there. */
function bytesAt(root: string, path: string): Buffer | null {
  try {
    const abs = join(root, path);
    if (!lstatSync(abs).isFile()) return null;
    return readFileSync(abs);
  } catch {
    return null;
  }
}

/**
 * Copies `path` from one tree to another: a copy-on-write clone where the filesystem has them.
 * What was there goes first, so a symlink someone left at the path is replaced, never written
 * through; `fresh` (a new, empty tree) skips that, and `made` remembers the directories created.
 */
function copyInto(from: string, to: string, path: string, fresh = false, made?: Set<string>): void {
  const dest = join(to, path);
  const parent = dirname(dest);
  if (!made?.has(parent)) {
    mkdirSync(parent, { recursive: true });
    made?.add(parent);
  }
  if (!fresh) {
    try {
      unlinkSync(dest);
    } catch {
      // nothing there yet
    }
  }
  copyFileSync(join(from, path), dest, constants.COPYFILE_FICLONE | (fresh ? constants.COPYFILE_EXCL : 0));
}

/** Removes `path` from a tree, and the directories that leaves empty (never the root). */
function removeFrom(root: string, path: string): void {
  try {
    unlinkSync(join(root, path));
  } catch {
    return;
  }
  for (let dir = parentOf(path); dir !== ''; dir = parentOf(dir)) {
    try {
      rmdirSync(join(root, dir));
    } catch {
      return;
    }
  }
}

/** Digest and stamp of a file as a tree holds it now. */
function observe(root: string, path: string): { sha: string | null; stamp: string | null } {
  const bytes = bytesAt(root, path);
  if (bytes === null) return { sha: null, stamp: null };
  const st = lstatSync(join(root, path));
  return { sha: sha256Hex(bytes), stamp: stampOf(st.size, st.mtimeMs) };
}

/** The confirmations a change's effects mint (reference A.7). */
function confirmationsFor(effects: {
  deleted: readonly string[];
  paths: readonly string[];
  hookFailures: readonly string[];
  warnings: readonly string[];
  external: boolean;
}): ConfirmationRequirement[] {
  const out: ConfirmationRequirement[] = [];
  const list = (paths: readonly string[]) => paths.slice(0, 64).join(', ') + (paths.length > 64 ? `, and ${paths.length - 64} more` : '');
  if (effects.external) {
    out.push({
      kind: 'external',
      title: 'Files written outside rift',
      detail: `another process wrote ${effects.paths.length} file(s) in the projection directory: ${list(effects.paths)}`,
      spans: [],
    });
  }
  if (effects.deleted.length > 0) out.push({ kind: 'destructive', title: 'Deletes files', detail: `deletes ${list(effects.deleted)}`, spans: [] });
  if (effects.paths.includes('rift.toml')) {
    out.push({ kind: 'configuration', title: 'Changes the workspace configuration', detail: 'rift.toml changes what rift indexes, runs and allows', spans: [] });
  }
  if (effects.hookFailures.length > 0) out.push({ kind: 'hook', title: 'A hook did not pass', detail: effects.hookFailures.join('\n').slice(0, 4096), spans: [] });
  if (effects.warnings.length > 0) out.push({ kind: 'advisory', title: 'The change carries warnings', detail: effects.warnings.join('\n').slice(0, 4096), spans: [] });
  return out;
}

/** The files a read result returned: hits' declarations, search results, a node listing's file. */
function returnedFiles(result: unknown, nodesPath: string | null): string[] {
  const out = new Set<string>();
  const r = result as { hits?: Array<{ symbol: { id: string } }>; results?: Array<{ path?: string }>; nodes?: unknown[] };
  for (const h of r.hits ?? []) {
    const address = parseSymbolId(h.symbol.id);
    if (address) out.add(address.path);
  }
  for (const hit of r.results ?? []) if (typeof hit.path === 'string') out.add(hit.path);
  if (nodesPath !== null && (r.nodes?.length ?? 0) > 0) out.add(nodesPath);
  return [...out].sort(compareProjectPaths);
}

export class ProjectionService {
  private readonly engines = new Map<string, Promise<ProjectionEngine>>();
  private prepared: Tables | null = null;

  constructor(
    /** Canonical workspace root. */
    private readonly root: string,
    private readonly workspace: { readonly indexer: Indexer; readonly change: ChangeService; readonly config: { current(): { config: WorkspaceConfig } } },
    private readonly open: (dir: string) => Promise<ProjectionEngine>,
  ) {}

  /** The workspace root, as `rift://projection/{id}` reports it. */
  get workspaceRoot(): string {
    return this.root;
  }

  /** The workspace store's tables, the projection tables created on first use. */
  private tables(): Tables {
    const t = this.workspace.indexer.store.tables();
    if (this.prepared !== t) {
      t.exec(SCHEMA);
      this.prepared = t;
    }
    return t;
  }

  private transaction(work: (t: Tables) => void): void {
    const t = this.tables();
    this.workspace.indexer.store.transaction(() => work(t));
  }

  private readonly removed: Array<(id: string) => Promise<void>> = [];

  /** Calls `listener` after a projection is removed (its execution copy goes with it). */
  onRemoved(listener: (id: string) => Promise<void>): void {
    this.removed.push(listener);
  }

  /** The directory of projection `id` (which need not exist). */
  dirOf(id: string): string {
    return join(this.root, PROJECTIONS_DIR, id);
  }

  private row(id: string): ProjectionRow {
    const row = this.tables().prepare('SELECT id, reason, base_revision FROM projections WHERE id = ?').get(id) as ProjectionRow | undefined;
    if (!row) throw new RiftError('resource_not_found', [['projection', id]], { retry: 'never' });
    return row;
  }

  /**
   * The tree projection `id` works in (for `execute { projection }`), or `resource_not_found`
   * when no such projection exists.
   */
  treeRoot(id: string): string {
    this.row(id);
    return this.dirOf(id);
  }

  private files(id: string): Map<string, FileRow> {
    const rows = this.tables().prepare('SELECT path, base, current, stamp FROM projection_files WHERE projection = ?').all(id) as FileRow[];
    return new Map(rows.map((r) => [r.path, r]));
  }

  private changes(id: string): ChangeRecord[] {
    const rows = this.tables().prepare('SELECT id, origin, paths, confirmations FROM projection_changes WHERE projection = ? ORDER BY seq').all(id) as ChangeRow[];
    return rows.map((r) => ({ id: r.id, origin: r.origin, paths: JSON.parse(r.paths) as string[], confirmations: JSON.parse(r.confirmations) as ConfirmationRequirement[] }));
  }

  private state(id: string): ProjectionState {
    const changes = this.changes(id);
    const changed = [...this.files(id).values()].some((f) => f.base !== f.current);
    return { dirty: changed || changes.length > 0, unaccepted: changes.some((c) => c.confirmations.length > 0) };
  }

  private describe(row: ProjectionRow): Projection {
    return { id: row.id, path: this.dirOf(row.id), state: this.state(row.id), base_revision: row.base_revision, reason: row.reason };
  }

  /** Projection `id` as `rift://projection/{id}` and the tools report it (after reconciling its directory). */
  async get(id: string): Promise<Projection> {
    this.row(id);
    await this.holding(id, async () => {});
    return this.describe(this.row(id));
  }

  /** Rule 157: a byte-identical copy of every visible file, with its manifest and base revision. */
  async create(reason: string | null): Promise<Projection> {
    ensureStateDir(this.root);
    const id = projectionId();
    const dir = this.dirOf(id);
    mkdirSync(dir, { recursive: true });
    const started = performance.now();
    try {
      const copied = await this.workspace.change.hold(async () => this.materialize(dir));
      this.seedIndex(dir, copied);
      const revision = treeRevision(copied.map((f) => ({ path: f.path, sha256: f.sha })));
      this.transaction((t) => {
        t.prepare('INSERT INTO projections (id, reason, base_revision, created_ms) VALUES (?, ?, ?, ?)').run(id, reason, revision, Date.now());
        const put = t.prepare('INSERT INTO projection_files (projection, path, base, current, stamp) VALUES (?, ?, ?, ?, ?)');
        for (const f of copied) put.run(id, f.path, f.sha, f.sha, f.stamp);
      });
      log('info', 'projection', 'projection created', { projection: id, files: copied.length, elapsed_ms: Math.round(performance.now() - started) });
    } catch (e) {
      rmSync(dir, { recursive: true, force: true });
      throw e;
    }
    return this.describe(this.row(id));
  }

  /**
   * Starts the projection's index from a copy of the workspace's, restamped for the copies: its
   * first build then parses only files whose digest differs from the index's (none, unless the
   * workspace changed while it was copied). Without it the projection still indexes itself.
   */
  private seedIndex(dir: string, copied: ReadonlyArray<{ path: string; sha: string; size: number; mtimeMs: number }>): void {
    const store = this.workspace.indexer.store;
    const stamps = new Map<string, { size: number; mtimeMs: number }>();
    for (const f of copied) if (store.file(f.path)?.sha256 === f.sha) stamps.set(f.path, { size: f.size, mtimeMs: f.mtimeMs });
    try {
      ensureStateDir(dir);
      store.copyFor(join(dir, STORE_FILE), stamps, PROJECTION_TABLES);
    } catch (e) {
      log('warn', 'projection', 'projection index not seeded; it builds from scratch', { error: (e as Error).message });
    }
  }

  /** Copies the workspace's visible files into `dir`; each with the digest and stamp of the copy. */
  private async materialize(dir: string): Promise<Array<{ path: string; sha: string; stamp: string; size: number; mtimeMs: number }>> {
    const config = this.workspace.config.current().config;
    const policy = sourcePolicy(config);
    const { walk } = await walkVisible(this.root, policy);
    const out: Array<{ path: string; sha: string; stamp: string; size: number; mtimeMs: number }> = [];
    const made = new Set<string>();
    const store = this.workspace.indexer.store;
    for (const f of walk.files) {
      copyInto(this.root, dir, f.path, true, made);
      const st = lstatSync(join(dir, f.path));
      // The copy is what the projection holds: its digest is the baseline (a workspace file
      // written meanwhile then shows up as a workspace change, as it should). The index's digest
      // stands in when the source is unchanged since it was indexed and the copy has its size.
      const indexed = store.file(f.path);
      if (indexed && indexed.size === f.size && indexed.mtimeMs === f.mtimeMs && st.size === f.size) {
        const after = lstatSync(join(this.root, f.path));
        if (after.mtimeMs === f.mtimeMs && after.size === f.size) {
          out.push({ path: f.path, sha: indexed.sha256, stamp: stampOf(st.size, st.mtimeMs), size: st.size, mtimeMs: st.mtimeMs });
          continue;
        }
      }
      const bytes = readFileSync(join(dir, f.path));
      out.push({ path: f.path, sha: sha256Hex(bytes), stamp: stampOf(st.size, st.mtimeMs), size: st.size, mtimeMs: st.mtimeMs });
    }
    return out;
  }

  list(input: ProjectionListInput): { projections: Projection[]; pagination: { page_index: number; total_pages: number } } {
    const limit = pageLimit(input.limit, PROJECTION_LIST_DEFAULT);
    const page = input.page_index ?? 0;
    const rows = this.tables().prepare('SELECT id, reason, base_revision FROM projections ORDER BY created_ms, id').all() as ProjectionRow[];
    return { projections: rows.slice(page * limit, (page + 1) * limit).map((r) => this.describe(r)), pagination: pagination(page, rows.length, limit) };
  }

  async remove(id: string): Promise<{ projection: string; state: ProjectionState }> {
    this.row(id);
    const state = this.state(id);
    const engine = this.engines.get(id);
    this.engines.delete(id);
    await (await engine?.catch(() => null))?.close();
    this.transaction((t) => {
      for (const table of ['projection_files', 'projection_changes', 'projection_deps']) t.prepare(`DELETE FROM ${table} WHERE projection = ?`).run(id);
      t.prepare('DELETE FROM projections WHERE id = ?').run(id);
    });
    rmSync(this.dirOf(id), { recursive: true, force: true });
    for (const listener of this.removed) await listener(id);
    log('info', 'projection', 'projection removed', { projection: id });
    return { projection: id, state };
  }

  async close(): Promise<void> {
    const engines = [...this.engines.values()];
    this.engines.clear();
    for (const e of engines) await (await e.catch(() => null))?.close();
  }

  private engineFor(id: string): Promise<ProjectionEngine> {
    this.row(id);
    let engine = this.engines.get(id);
    if (!engine) {
      engine = this.open(this.dirOf(id));
      engine.catch(() => this.engines.delete(id));
      this.engines.set(id, engine);
    }
    return engine;
  }

  /** Runs `work` holding projection `id`'s tree, its directory reconciled and its index current. */
  private async holding<T>(id: string, work: (engine: ProjectionEngine) => Promise<T>): Promise<T> {
    const engine = await this.engineFor(id);
    return engine.change.hold(async () => {
      await this.sync(id, engine);
      return work(engine);
    });
  }

  /** Reconciles and refreshes the projection's index for what that found (`trustedHooks`: as ChangeOptions). */
  private async sync(id: string, engine: ProjectionEngine, trustedHooks?: string): Promise<string[]> {
    const { paths, ids } = await this.reconcile(id, engine, trustedHooks);
    if (paths.length > 0) await engine.indexer.refresh(paths);
    return ids;
  }

  /**
   * Rule 162: compares the directory with the manifest; what changed behind rift becomes one
   * `filesystem` change with an `external` confirmation, and with a `hook` one when the
   * projection's validation hooks, run over exactly its paths, do not pass. Returns the paths
   * and the new change's id.
   */
  private async reconcile(id: string, engine: ProjectionEngine, trustedHooks?: string): Promise<{ paths: string[]; ids: string[] }> {
    const dir = engine.root;
    const policy = sourcePolicy(engine.config.current().config);
    const { walk } = await walkVisible(dir, policy);
    const rows = this.files(id);
    const found = new Set<string>();
    const delta: Array<{ path: string; sha: string | null; stamp: string | null; bytes: Buffer | null }> = [];
    const restamp: Array<{ path: string; stamp: string }> = [];
    for (const f of walk.files) {
      found.add(f.path);
      const row = rows.get(f.path);
      const stamp = stampOf(f.size, f.mtimeMs);
      if (row && row.current !== null && row.stamp === stamp) continue;
      const bytes = bytesAt(dir, f.path);
      const sha = bytes === null ? null : sha256Hex(bytes);
      if (row && row.current === sha) restamp.push({ path: f.path, stamp });
      else delta.push({ path: f.path, sha, stamp, bytes });
    }
    for (const row of rows.values()) if (row.current !== null && !found.has(row.path)) delta.push({ path: row.path, sha: null, stamp: null, bytes: null });
    if (delta.length === 0 && restamp.length === 0) return { paths: [], ids: [] };
    delta.sort((a, b) => compareProjectPaths(a.path, b.path));
    const paths = delta.map((d) => d.path);
    const hookFailures = delta.length === 0 ? [] : await this.validate(engine, paths, trustedHooks);
    const ids: string[] = [];
    this.transaction((t) => {
      const stampOnly = t.prepare('UPDATE projection_files SET stamp = ? WHERE projection = ? AND path = ?');
      for (const r of restamp) stampOnly.run(r.stamp, id, r.path);
      if (delta.length === 0) return;
      for (const d of delta) this.putCurrent(t, id, d.path, d.sha, d.stamp);
      const change = changeId(delta.map((d) => ({ path: d.path, text: d.bytes ?? '' })));
      const confirmations = confirmationsFor({ deleted: delta.filter((d) => d.sha === null).map((d) => d.path), paths, hookFailures, warnings: [], external: true });
      this.putChange(t, id, change, 'filesystem', paths, confirmations);
      ids.push(change);
    });
    if (ids.length > 0) log('info', 'projection', 'filesystem writes reconciled', { projection: id, change: ids[0], files: paths.length });
    return { paths, ids };
  }

  /**
   * The current hook evidence of a reconciled delta (rule 162): the projection's validation
   * hooks run over the delta's paths in its tree, as they run after a change (F.14); returns
   * the `rift.hook.failed` messages of those that did not pass. Transform hooks do not run: they
   * would rewrite what another program wrote, behind its back.
   */
  private async validate(engine: ProjectionEngine, paths: readonly string[], trustedHooks: string | undefined): Promise<string[]> {
    const hooks = engine.config.current().config.hooks;
    if (trustedHooks !== undefined && hooks.length > 0 && hooksKey(hooks) !== trustedHooks) {
      log('info', 'projection', 'projection hooks skipped: not trusted by the caller', { hooks: hooks.length });
      return [];
    }
    const failures: string[] = [];
    for (const hook of hooks) {
      if (hook.role !== 'validation') continue;
      const selected = hookPaths(hook, paths);
      if (selected.length === 0) continue;
      const outcome = await runHook(engine.root, hook, selected);
      log('info', 'projection', 'hook finished over filesystem writes', { hook: hook.id, passed: hookPassed(outcome) });
      if (!hookPassed(outcome)) failures.push(hookFailure(hook, outcome).message);
    }
    return failures;
  }

  private putCurrent(t: Tables, id: string, path: string, sha: string | null, stamp: string | null): void {
    t.prepare(
      `INSERT INTO projection_files (projection, path, base, current, stamp) VALUES (?, ?, NULL, ?, ?)
       ON CONFLICT (projection, path) DO UPDATE SET current = excluded.current, stamp = excluded.stamp`,
    ).run(id, path, sha, stamp);
  }

  private putChange(t: Tables, id: string, change: string, origin: 'rift' | 'filesystem', paths: readonly string[], confirmations: ConfirmationRequirement[]): void {
    const seq = (t.prepare('SELECT coalesce(max(seq), 0) + 1 AS n FROM projection_changes WHERE projection = ?').get(id) as { n: number }).n;
    t.prepare('INSERT OR REPLACE INTO projection_changes (projection, id, seq, origin, paths, confirmations) VALUES (?, ?, ?, ?, ?, ?)').run(
      id,
      change,
      seq,
      origin,
      JSON.stringify(paths),
      JSON.stringify(confirmations),
    );
  }

  /**
   * A change tool in projection `id`: the directory reconciled first, then the change runs in
   * the projection's tree, and an applied change is recorded with its confirmations.
   */
  async change(id: string, options: ChangeOptions, run: (service: ChangeService, options: ChangeOptions) => Promise<ChangeResult>): Promise<ChangeResult> {
    const engine = await this.engineFor(id);
    return run(engine.change, {
      ...options,
      around: {
        before: async () => {
          await this.sync(id, engine, options.trustedHooks);
        },
        after: (result) => {
          if (result.status !== 'applied') return result;
          const files = result.summary.files;
          const paths = files.map((f) => f.path);
          const confirmations = confirmationsFor({
            deleted: files.filter((f) => f.change === 'deleted').map((f) => f.path),
            paths,
            hookFailures: result.summary.diagnostics.filter((d) => d.code === 'rift.hook.failed').map((d) => d.message),
            warnings: result.summary.warnings.map((w) => w.message),
            external: false,
          });
          this.transaction((t) => {
            for (const p of paths) {
              const seen = observe(engine.root, p);
              this.putCurrent(t, id, p, seen.sha, seen.stamp);
            }
            this.putChange(t, id, result.summary.id, 'rift', paths, confirmations);
          });
          return { ...result, summary: { ...result.summary, confirmations } };
        },
      },
    });
  }

  /**
   * A read tool in projection `id` (rule 163): it runs on the projection's index, and each file
   * it returned joins the read set with its digest, within the `[projections]` bounds — a read
   * that would cross one fails before its data is returned.
   */
  async read<T>(id: string, nodesPath: string | null, run: (engine: ProjectionEngine) => Promise<T>): Promise<T> {
    return this.holding(id, async (engine) => {
      const result = await run(engine);
      const returned = returnedFiles(result, nodesPath);
      if (returned.length === 0) return result;
      const bounds = this.workspace.config.current().config.projections;
      const deps = new Map(
        (this.tables().prepare('SELECT path, digest, entry_bytes AS size FROM projection_deps WHERE projection = ?').all(id) as Array<{ path: string; digest: string | null; size: number }>).map(
          (d) => [d.path, d],
        ),
      );
      for (const path of returned) {
        const bytes = bytesAt(engine.root, path);
        // What the read set holds of an entry: its path and its digest (docs/configuration.md).
        deps.set(path, { path, digest: bytes === null ? null : sha256Hex(bytes), size: Buffer.byteLength(path) + DEPENDENCY_DIGEST_BYTES });
      }
      if (deps.size > bounds.max_dependencies) throw limitExceeded('max_projection_dependencies', bounds.max_dependencies, deps.size, [['projection', id]], true);
      const bytes = [...deps.values()].reduce((n, d) => n + d.size, 0);
      if (bytes > bounds.max_dependency_bytes) throw limitExceeded('max_projection_dependency_bytes', bounds.max_dependency_bytes, bytes, [['projection', id]], true);
      this.transaction((t) => {
        const put = t.prepare('INSERT OR REPLACE INTO projection_deps (projection, path, digest, entry_bytes) VALUES (?, ?, ?, ?)');
        for (const path of returned) {
          const d = deps.get(path)!;
          put.run(id, path, d.digest, d.size);
        }
      });
      return result;
    });
  }

  /**
   * The read, search and change services working in projection `id`, as the MCP tools called
   * with `projection: id` are: each read records what it returned, each change its confirmations.
   */
  scoped(id: string): ScopedApis {
    const change = (options: ChangeOptions, run: (service: ChangeService, options: ChangeOptions) => Promise<ChangeResult>) => this.change(id, options, run);
    return {
      read: {
        getSymbol: (input) => this.read(id, null, (e) => e.read.getSymbol(input)),
        nodes: (input) => this.read(id, input.path, (e) => e.read.nodes(input)),
      },
      search: { search: (input) => this.read(id, null, (e) => e.search.search(input)) },
      change: {
        replaceSymbol: (input, options = {}) => change(options, (c, o) => c.replaceSymbol(input, o)),
        insertSymbol: (input, options = {}) => change(options, (c, o) => c.insertSymbol(input, o)),
        removeSymbol: (input, options = {}) => change(options, (c, o) => c.removeSymbol(input, o)),
        replaceNode: (input, options = {}) => change(options, (c, o) => c.replaceNode(input, o)),
        insertNode: (input, options = {}) => change(options, (c, o) => c.insertNode(input, o)),
        removeNode: (input, options = {}) => change(options, (c, o) => c.removeNode(input, o)),
        patch: (input, options = {}) => change(options, (c, o) => c.patch(input, o)),
        moveFile: (input, options = {}) => change(options, (c, o) => c.moveFile(input, o)),
        renameSymbol: (input, options = {}, review) => change(options, (c, o) => c.renameSymbol(input, o, review)),
      },
    };
  }

  /** Rules 158–166. */
  async publish(input: PublishInput): Promise<PublishResult> {
    const id = input.projection;
    const accepted = new Set(input.accept ?? []);
    const acceptedDeps = new Set((input.accept_dependencies ?? []).map((d) => JSON.stringify([d.path, d.observed, d.current])));
    return this.holding(id, async (engine) =>
      this.workspace.change.hold(async (ctx, record) => {
        const changes = this.changes(id);
        const rows = this.files(id);
        const changed = [...rows.values()].filter((r) => r.base !== r.current).sort((a, b) => compareProjectPaths(a.path, b.path));
        const unaccepted = changes.filter((c) => c.confirmations.length > 0 && !accepted.has(c.id)).map((c) => c.id);
        const conflicts: string[] = [];
        const writes: FileWrite[] = [];
        for (const r of changed) {
          const now = bytesAt(this.root, r.path);
          const nowSha = now === null ? null : sha256Hex(now);
          // The workspace already holds the projection's bytes (an earlier publish that a kill
          // stopped before its bookkeeping, or the same edit made twice): nothing to write.
          if (nowSha === r.current) continue;
          if (nowSha !== r.base) {
            conflicts.push(r.path);
            continue;
          }
          const mode = r.current === null ? null : lstatSync(join(engine.root, r.path)).mode & 0o7777;
          writes.push({ target: r.path, before: now, after: r.current === null ? null : bytesAt(engine.root, r.path), mode, link: false });
        }
        const changedPaths = new Set(changed.map((r) => r.path));
        const dependencyConflicts: DependencyConflict[] = [];
        const deps = this.tables().prepare('SELECT path, digest FROM projection_deps WHERE projection = ? ORDER BY path').all(id) as Array<{ path: string; digest: string | null }>;
        for (const d of deps) {
          if (changedPaths.has(d.path)) continue; // the conflict check covers a path the projection changed
          const now = bytesAt(this.root, d.path);
          const nowSha = now === null ? null : sha256Hex(now);
          if (nowSha === d.digest) continue;
          const conflict = { path: d.path, observed: short(d.digest) ?? '00000000', current: short(nowSha) };
          if (!acceptedDeps.has(JSON.stringify([conflict.path, conflict.observed, conflict.current]))) dependencyConflicts.push(conflict);
        }
        dependencyConflicts.sort((a, b) => compareProjectPaths(a.path, b.path));
        if (unaccepted.length > 0 || conflicts.length > 0 || dependencyConflicts.length > 0) {
          return { state: this.state(id), published: false, conflicts, dependency_conflicts: dependencyConflicts, unaccepted };
        }
        if (writes.length > 0) {
          try {
            const result = await applyPlan(ctx, { writes, addresses: [], warnings: [] });
            if (result.status === 'applied') record(result.summary.files.map((f) => f.path));
          } catch (e) {
            // A process that bypasses rift wrote the workspace between the check and the write.
            if (!isRefusal(e)) throw e;
            const paths = e.result.preconditions.flatMap((p) => p.paths);
            return { state: this.state(id), published: false, conflicts: [...new Set(paths)].sort(compareProjectPaths), dependency_conflicts: [], unaccepted: [] };
          }
        }
        await this.rebuild(id, engine);
        log('info', 'projection', 'projection published', { projection: id, files: writes.length });
        return { state: this.state(id), published: true, conflicts: [], dependency_conflicts: [], unaccepted: [] };
      }),
    );
  }

  /**
   * Rule 166's last steps: the projection becomes the workspace as it is now (holding the
   * workspace), its base advances, its changeset and read set are cleared.
   */
  private async rebuild(id: string, engine: ProjectionEngine): Promise<void> {
    const config = this.workspace.config.current().config;
    const policy = sourcePolicy(config);
    const { walk } = await walkVisible(this.root, policy);
    const rows = this.files(id);
    const files: Array<{ path: string; sha: string; stamp: string }> = [];
    const touched: string[] = [];
    const present = new Set<string>();
    for (const f of walk.files) {
      const bytes = bytesAt(this.root, f.path);
      if (bytes === null) continue;
      present.add(f.path);
      const sha = sha256Hex(bytes);
      if (rows.get(f.path)?.current !== sha || bytesAt(engine.root, f.path) === null) {
        copyInto(this.root, engine.root, f.path);
        touched.push(f.path);
      }
      const seen = observe(engine.root, f.path);
      files.push({ path: f.path, sha: seen.sha ?? sha, stamp: seen.stamp ?? '' });
    }
    for (const row of rows.values()) {
      if (row.current !== null && !present.has(row.path)) {
        removeFrom(engine.root, row.path);
        touched.push(row.path);
      }
    }
    const revision = treeRevision(files.map((f) => ({ path: f.path, sha256: f.sha })));
    this.transaction((t) => {
      for (const table of ['projection_files', 'projection_changes', 'projection_deps']) t.prepare(`DELETE FROM ${table} WHERE projection = ?`).run(id);
      const put = t.prepare('INSERT INTO projection_files (projection, path, base, current, stamp) VALUES (?, ?, ?, ?, ?)');
      for (const f of files) put.run(id, f.path, f.sha, f.sha, f.stamp);
      t.prepare('UPDATE projections SET base_revision = ? WHERE id = ?').run(revision, id);
    });
    if (touched.length > 0) await engine.indexer.refresh(touched);
  }

  /** Rule 167: whole changes only; restored paths take the workspace's bytes as their new baseline. */
  async restore(input: ProjectionRestoreInput): Promise<ProjectionState> {
    const id = input.projection;
    for (const [i, p] of (input.paths ?? []).entries()) if (p.startsWith('/') || p.split('/').some((s) => s === '..' || s === '.' || s === '')) throw invalidField(`paths[${i}]`, 'not a project path');
    return this.holding(id, async (engine) =>
      this.workspace.change.hold(async () => {
        const changes = this.changes(id);
        const rows = this.files(id);
        const targets = new Set(input.paths ?? [...[...rows.values()].filter((r) => r.base !== r.current).map((r) => r.path), ...changes.flatMap((c) => c.paths)]);
        // Naming one path of a change restores all of that change's paths, and so on.
        const dropped = new Set<string>();
        for (let grew = true; grew; ) {
          grew = false;
          for (const c of changes) {
            if (dropped.has(c.id) || !c.paths.some((p) => targets.has(p))) continue;
            dropped.add(c.id);
            for (const p of c.paths) if (!targets.has(p)) (targets.add(p), (grew = true));
          }
        }
        const restored = [...targets].filter((p) => rows.has(p) || changes.some((c) => dropped.has(c.id) && c.paths.includes(p))).sort(compareProjectPaths);
        const after: Array<{ path: string; sha: string | null; stamp: string | null }> = [];
        for (const p of restored) {
          if (bytesAt(this.root, p) === null) removeFrom(engine.root, p);
          else copyInto(this.root, engine.root, p);
          const seen = observe(engine.root, p);
          after.push({ path: p, ...seen });
        }
        this.transaction((t) => {
          const put = t.prepare('INSERT OR REPLACE INTO projection_files (projection, path, base, current, stamp) VALUES (?, ?, ?, ?, ?)');
          for (const a of after) put.run(id, a.path, a.sha, a.sha, a.stamp);
          const drop = t.prepare('DELETE FROM projection_changes WHERE projection = ? AND id = ?');
          for (const c of dropped) drop.run(id, c);
        });
        if (restored.length > 0) await engine.indexer.refresh(restored);
        log('info', 'projection', 'projection restored', { projection: id, files: restored.length, changes: dropped.size });
        return this.state(id);
      }),
    );
  }

  /**
   * `rift://fs?projection=<id>`: the projection's tree as its own policy shows it, from its index
   * as it stands (a read of bytes, like one made in the directory: it reconciles nothing and
   * joins no read set).
   */
  async fs(id: string): Promise<FsService> {
    const engine = await this.engineFor(id);
    await engine.indexer.ensureBuilt(engine.config.current().config);
    return new FsService(engine);
  }

  /**
   * `rift://changes`: a projection's changeset (reconciled first) under the revision of its index,
   * or for the workspace (which keeps no changeset) null state and no changes under the workspace's.
   */
  async changeList(id: string | null): Promise<{ state: ProjectionState | null; changes: ChangeRecord[]; snapshot: { tree_revision: string } }> {
    if (id === null) {
      await this.workspace.indexer.ensureBuilt(this.workspace.config.current().config);
      return { state: null, changes: [], snapshot: { tree_revision: this.workspace.indexer.snapshot.revision } };
    }
    return this.holding(id, async (engine) => {
      // A shell's writes are reconciled and refreshed by now; a projection with none may not be built yet.
      await engine.indexer.ensureBuilt(engine.config.current().config);
      return { state: this.state(id), changes: this.changes(id), snapshot: { tree_revision: engine.indexer.snapshot.revision } };
    });
  }

  /**
   * What a publish of `id` would carry now, its directory reconciled first: the paths it changed
   * against its baseline, and its changes (whose ids `publish`'s `accept` takes).
   */
  async pending(id: string): Promise<{ paths: string[]; changes: ChangeRecord[] }> {
    return this.holding(id, async () => ({
      paths: [...this.files(id).values()].filter((r) => r.base !== r.current).map((r) => r.path).sort(compareProjectPaths),
      changes: this.changes(id),
    }));
  }
}
