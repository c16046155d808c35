import { sha256Hex, digest8 } from '../core/digest.ts';
import { RiftError, limitExceeded } from '../core/errors.ts';
import {
  REVISION_BLOBS_MAX, REVISION_BLOB_BYTES_MAX, REVISION_SNAPSHOTS_MAX, REVISION_SNAPSHOT_BYTES_MAX, REVISION_TREE_ENTRIES_MAX,
} from '../core/limits.ts';
import { log } from '../core/log.ts';
import { projectPathViolation, underFloor } from '../core/path.ts';
import type { WorkspaceConfig } from '../config/workspace-config.ts';
import { Visibility, sourcePolicy } from '../workspace/visibility.ts';
import { classifyBytes } from '../workspace/read.ts';
import { Repository, type TreeEntry } from '../history/git.ts';
import { Selection } from './indexer.ts';
import { outcomeFromRows, parseBytes, type ParseItem, type ParseOutcome } from './parse-job.ts';
import type { WorkerPool } from './pool.ts';
import { Store, type FileUpdate, type SkippedFile } from './store.ts';

// Revision reads: a commit's tree, indexed under the working tree's [source] policy, language
// selection, floor and bounds (committed means tracked: no .gitignore), into an in-memory
// store whose bytes are the commit's blobs.
//
// Parse results are addressed by content: a blob's rows are computed once per git blob id
// and language selection, and shared by every revision that holds the blob. A new revision
// starts from the most recently used snapshot and applies only the files whose blob differs
// (the two commits' trees compared object by object, Repository.treeChanges), so reading the
// next commit lists, parses and writes only what it changed. A snapshot read once moves forward
// to the new revision (its store is updated in place: copying a store costs more than the
// diff, and grows with the tree); one read again, or built again after it moved on, is copied,
// and kept. Snapshots and parsed blobs are bounded (count and bytes) and evicted least recently
// used; an evicted or moved revision read again is built from whichever snapshot is then most
// recent.

export interface RevisionSnapshot {
  commit: string;
  store: Store;
  selection: Selection;
  visibility: Visibility;
  /** Blob id by workspace path, for every file of the commit the snapshot admits (indexed or skipped). */
  oids: Map<string, string>;
  /** The bytes of each indexed file (the store's byte source). */
  content: Map<string, Uint8Array>;
  /** What the snapshot holds in memory: its store image and the bytes of its blobs. */
  bytes: number;
  /** Reads served from it: one read only, and the next revision moves it forward. */
  reads: number;
}

interface ParsedBlob {
  outcome: (ParseOutcome & { ok: true }) | null;
  skip: string | null;
  bytes: Uint8Array;
}

/**
 * How a snapshot's changed blobs were served: parsed, taken from the working-tree index, from
 * the revision cache, or indexed as text only (no language parses them).
 */
interface BuildCounts {
  parsed: number;
  shared: number;
  cached: number;
  text: number;
}

/** Blobs read from git at once while a snapshot is built (the batch process pipelines them). */
const BLOB_READ_BATCH = 64;

/** The bounds of what a RevisionIndex keeps (the named limits; tests pass smaller ones). */
export interface RevisionBounds {
  snapshots: number;
  snapshotBytes: number;
  blobs: number;
  blobBytes: number;
}

export interface RevisionOptions {
  bounds?: RevisionBounds;
  /** The parse workers (a server's), where a revision's blobs are parsed off the request thread. */
  workers?: () => WorkerPool | null;
}

const BOUNDS: RevisionBounds = {
  snapshots: REVISION_SNAPSHOTS_MAX,
  snapshotBytes: REVISION_SNAPSHOT_BYTES_MAX,
  blobs: REVISION_BLOBS_MAX,
  blobBytes: REVISION_BLOB_BYTES_MAX,
};

export class RevisionIndex {
  private repoPromise: Promise<Repository | null> | null = null;
  /** Kept snapshots, least recently used first. */
  private readonly snapshots = new Map<string, RevisionSnapshot>();
  private readonly building = new Map<string, Promise<RevisionSnapshot>>();
  /** Parsed blobs by `oid \0 language \0 keepContent`, least recently used first. */
  private readonly blobs = new Map<string, ParsedBlob>();
  private blobBytes = 0;
  /** Full ids of commits resolved before (a bounded set: cleared when full). */
  private readonly commits = new Set<string>();
  /** Snapshot keys built before (bounded like `commits`): one built again is being returned to. */
  private readonly builtBefore = new Set<string>();
  private readonly bounds: RevisionBounds;
  constructor(
    private readonly root: string,
    /**
     * The working-tree index as it is now (the indexer replaces a damaged one): bytes it parsed
     * already are not parsed again for a revision.
     */
    private readonly workingTree: () => Store,
    private readonly options: RevisionOptions = {},
  ) {
    this.bounds = options.bounds ?? BOUNDS;
  }

  /** The workspace's repository, or the remedy refusal when there is none. */
  async repository(): Promise<Repository> {
    this.repoPromise ??= Repository.open(this.root, true);
    const repo = await this.repoPromise;
    if (repo) return repo;
    this.repoPromise = null; // a later `git init` serves revision reads
    throw new RiftError('capability_unavailable', [
      ['workspace', this.root],
      ['requires', 'a git repository - run `git init`, or omit `rev` to read the current tree'],
    ]);
  }

  /** The commit `rev` names, or `resource_not_found` saying why it names none. */
  async resolve(rev: string): Promise<string> {
    const repo = await this.repository();
    // A full commit id names the same immutable commit forever; names (branches, tags) move.
    if (this.commits.has(rev)) return rev;
    const r = await repo.resolve(rev);
    if (r.ok) {
      if (this.commits.size >= this.bounds.snapshots * 64) this.commits.clear();
      this.commits.add(r.commit);
      return r.commit;
    }
    if (r.kind === null) {
      throw new RiftError('resource_not_found', [
        ['rev', rev],
        ['requires', 'a revision the repository resolves - a branch, tag, or commit id'],
      ]);
    }
    throw new RiftError('resource_not_found', [
      ['rev', rev],
      ['resolved_kind', r.kind],
      ['requires', 'a revision that names a commit'],
    ]);
  }

  /** The indexed tree of `commit` under `config`. */
  async snapshot(commit: string, config: WorkspaceConfig): Promise<RevisionSnapshot> {
    const key = `${commit}\0${configKey(config)}`;
    const kept = this.snapshots.get(key);
    if (kept) {
      this.snapshots.delete(key);
      this.snapshots.set(key, kept);
      kept.reads++;
      return kept;
    }
    let pending = this.building.get(key);
    if (!pending) {
      // A revision read again after it moved on or was evicted is one being returned to: it is
      // kept, not moved, after this read (two revisions read in turn end up both kept).
      const again = this.builtBefore.has(key);
      if (this.builtBefore.size >= this.bounds.snapshots * 64) this.builtBefore.clear();
      this.builtBefore.add(key);
      pending = this.build(commit, config)
        .then((s) => {
          if (again) s.reads++;
          return s;
        })
        .finally(() => this.building.delete(key));
      this.building.set(key, pending);
      pending.then((s) => this.keep(key, s)).catch(() => undefined);
    }
    const built = await pending;
    built.reads++;
    return built;
  }

  /**
   * Where a new snapshot under `ck` starts: the most recently used one, taken out of the kept
   * ones when it was read once (its store moves forward), else copied. Chosen and copied in one
   * synchronous step, so no read ever sees a store while it moves.
   */
  private startFrom(ck: string): { base: RevisionSnapshot; store: Store; content: Map<string, Uint8Array>; moved: boolean } | null {
    const entry = [...this.snapshots.entries()].reverse().find(([k]) => k.endsWith(`\0${ck}`));
    if (!entry) return null;
    const [key, base] = entry;
    if (base.reads <= 1) {
      this.snapshots.delete(key);
      return { base, store: base.store, content: base.content, moved: true };
    }
    const content = new Map(base.content);
    return { base, store: Store.deserialize(base.store.serialize(), this.root, (path) => content.get(path) ?? null), content, moved: false };
  }

  private async build(commit: string, config: WorkspaceConfig): Promise<RevisionSnapshot> {
    const started = performance.now();
    const repo = await this.repository();
    const policy = { ...sourcePolicy(config), respectGitignore: false };
    const visibility = Visibility.fromGitignores(policy, new Map());
    const selection = new Selection(config);
    const admitted = (path: string) => projectPathViolation(path) === null && !underFloor(path) && visibility.isVisible(path);
    const ck = configKey(config);
    const start = this.startFrom(ck);
    try {
      // What differs from the starting snapshot (everything, without one): entries with a blob
      // to index, and paths to drop.
      const oids = new Map(start?.base.oids ?? []);
      const changed: TreeEntry[] = [];
      const removed: string[] = [];
      if (start) {
        for (const c of await repo.treeChanges(start.base.commit, commit)) {
          if (!admitted(c.path)) continue;
          if (c.oid === null) {
            if (oids.delete(c.path)) removed.push(c.path);
          } else {
            oids.set(c.path, c.oid);
            changed.push({ path: c.path, oid: c.oid, size: -1 });
          }
        }
      } else {
        for (const e of await repo.tree(commit)) {
          if (!admitted(e.path)) continue;
          if (e.size > policy.maxFileBytes) {
            throw limitExceeded('source.max_file_bytes', policy.maxFileBytes, e.size, [['commit', commit], ['path', e.path]]);
          }
          oids.set(e.path, e.oid);
          changed.push(e);
        }
      }
      if (oids.size > REVISION_TREE_ENTRIES_MAX) throw limitExceeded('revision_tree_entries', REVISION_TREE_ENTRIES_MAX, oids.size, [['commit', commit]]);
      if (oids.size > policy.maxFiles) throw limitExceeded('source.max_files', policy.maxFiles, oids.size, [['commit', commit]]);

      const updates: FileUpdate[] = [];
      const skips: SkippedFile[] = [];
      const fresh = new Map<string, Uint8Array>();
      const counts: BuildCounts = { parsed: 0, shared: 0, cached: 0, text: 0 };
      const shared = changed.length > 0 ? this.workingTree().parsedBlobs() : new Map<string, number>();
      for (let i = 0; i < changed.length; i += BLOB_READ_BATCH) {
        const batch = changed.slice(i, i + BLOB_READ_BATCH);
        const parsed = await Promise.all(batch.map((f) => this.parsed(repo, f, selection, shared, counts)));
        for (const [k, f] of batch.entries()) {
          const p = parsed[k];
          // A listed tree says each size before anything is read; a diff, once the blob is.
          if (p.bytes.byteLength > policy.maxFileBytes) {
            throw limitExceeded('source.max_file_bytes', policy.maxFileBytes, p.bytes.byteLength, [['commit', commit], ['path', f.path]]);
          }
          if (p.outcome) {
            fresh.set(f.path, p.bytes);
            updates.push({ ...p.outcome, path: f.path });
          } else {
            removed.push(f.path);
            skips.push({ path: f.path, size: p.bytes.byteLength, mtimeMs: 0, reason: p.skip! });
          }
        }
      }
      // Synchronous from here: the store and its byte source change together.
      const content = start?.content ?? new Map<string, Uint8Array>();
      const store = start?.store ?? Store.memory(this.root, (path) => content.get(path) ?? null);
      store.applyBatch(updates, [], removed, skips);
      for (const path of removed) content.delete(path);
      for (const [path, bytes] of fresh) content.set(path, bytes);
      let bytes = store.databaseBytes();
      for (const b of content.values()) bytes += b.byteLength;
      log('info', 'revision.snapshot', 'revision indexed', {
        commit: commit.slice(0, 12), files: oids.size, changed: changed.length, parsed: counts.parsed, shared: counts.shared,
        cached: counts.cached, from_snapshot: start !== null, moved: start?.moved ?? false, text: counts.text,
        elapsed_ms: Math.round(performance.now() - started),
      });
      return { commit, store, selection, visibility, oids, content, bytes, reads: 0 };
    } catch (e) {
      // A snapshot taken to move forward is intact until the store changes: it is kept again.
      if (start?.moved) this.keep(`${start.base.commit}\0${ck}`, start.base);
      else start?.store.close();
      throw e;
    }
  }

  /** A blob's rows under a selection: from the content-addressed cache, else read and parsed once. */
  private async parsed(repo: Repository, f: TreeEntry, selection: Selection, shared: Map<string, number>, counts: BuildCounts): Promise<ParsedBlob> {
    const item = selection.item(f.path);
    const key = `${f.oid}\0${item.language ?? ''}\0${item.keepContent}`;
    const hit = this.blobs.get(key);
    if (hit) {
      this.blobs.delete(key);
      this.blobs.set(key, hit);
      counts.cached++;
      return hit;
    }
    const bytes = await repo.blob(f.oid);
    if (bytes === null) throw new RiftError('storage_failure', [['object', f.oid], ['io', 'the blob is missing from the repository']]);
    const admitted = classifyBytes(bytes);
    let entry: ParsedBlob;
    if (admitted !== 'ok') entry = { outcome: null, skip: admitted, bytes };
    else {
      const sha256 = sha256Hex(bytes);
      const blob = item.language ? shared.get(`${sha256}\0${item.language}`) : undefined;
      const rows = blob === undefined ? null : this.workingTree().blobRows(blob, sha256);
      if (rows) counts.shared++;
      else if (item.language) counts.parsed++;
      else counts.text++;
      const outcome = rows ? outcomeFromRows(item, bytes, sha256, rows) : await this.parse({ ...item, relations: false }, bytes, sha256);
      entry = { outcome, skip: null, bytes };
    }
    this.blobs.set(key, entry);
    this.blobBytes += bytes.byteLength;
    while (this.blobs.size > this.bounds.blobs || this.blobBytes > this.bounds.blobBytes) {
      const [oldest, b] = this.blobs.entries().next().value!;
      this.blobs.delete(oldest);
      this.blobBytes -= b.bytes.byteLength;
    }
    return entry;
  }

  /** Parses a blob in the workers when there are any (a worker that fails leaves it to this thread). */
  private async parse(item: ParseItem, bytes: Uint8Array, sha256: string): Promise<ParseOutcome & { ok: true }> {
    const pool = item.language ? (this.options.workers?.() ?? null) : null;
    if (pool) {
      try {
        return await pool.parseBytes(item, bytes, sha256);
      } catch {
        // parsed here below
      }
    }
    return parseBytes(item, bytes, sha256, 0);
  }

  private keep(key: string, snapshot: RevisionSnapshot): void {
    this.snapshots.set(key, snapshot);
    let total = 0;
    for (const s of this.snapshots.values()) total += s.bytes;
    while (this.snapshots.size > this.bounds.snapshots || (total > this.bounds.snapshotBytes && this.snapshots.size > 1)) {
      const [oldest, s] = this.snapshots.entries().next().value!;
      this.snapshots.delete(oldest);
      total -= s.bytes;
      // A read holding it answers synchronously from its store, so closing here cannot cut one short.
      s.store.close();
    }
  }

  /** Snapshots kept now (for tests of the bound). */
  get kept(): number {
    return this.snapshots.size;
  }

  /** Parsed blobs kept now, and their bytes (for tests of the bound). */
  get cachedBlobs(): { count: number; bytes: number } {
    return { count: this.blobs.size, bytes: this.blobBytes };
  }

  close(): void {
    for (const s of this.snapshots.values()) s.store.close();
    this.snapshots.clear();
    void this.repoPromise?.then((r) => r?.close());
  }
}

const configKeys = new WeakMap<WorkspaceConfig, string>();

/**
 * What of the configuration a revision's index depends on. An accepted configuration is one
 * object until the next reload, so its key is computed once, not on every read.
 */
function configKey(config: WorkspaceConfig): string {
  let key = configKeys.get(config);
  if (key === undefined) {
    key = digest8(JSON.stringify([config.source, config.languages, config.search.text]));
    configKeys.set(config, key);
  }
  return key;
}
