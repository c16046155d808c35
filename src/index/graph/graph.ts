import type { Tables } from '../store.ts';
import type { FileRelations } from '../../syntax/relations/types.ts';
import type { SymbolInput } from '../parse-job.ts';
import type { Declaration } from '../../syntax/types.ts';
import { GraphStore, type DeclRow, type RefRow } from './graph-store.ts';
import { recordedById, Resolver } from './resolve.ts';

// The binding provider's graph over the index: each batch records the relation facts of the
// files it parsed, and the next `resolve` links what can have changed — every reference of a
// changed file, and the references elsewhere whose meaning a change can alter: those naming, or
// reaching through a receiver that names, what the file declares or declared, re-exports or
// re-exported, the members its types gained or lost through a changed base, and the fields whose
// stated type changed. A build that changed most of the tree re-resolves everything in one pass.

/** Past this share of changed files, one full pass is cheaper than following names. */
const FULL_PASS_SHARE = 0.5;

/** What the graph needs from a parse of one file: its declarations as the store's rows. */
export interface ParsedFacts {
  path: string;
  ok: boolean;
  sha256?: string;
  language?: string | null;
  symbols?: readonly SymbolInput[] | null;
  relations?: FileRelations | null;
}

type DeclFacts = Pick<Declaration, 'name' | 'qualifiedName' | 'kind' | 'container' | 'facets'>;

/** The declaration facts the graph keeps, read off the store's symbol rows. */
function declFacts(rows: readonly SymbolInput[]): DeclFacts[] {
  return rows.map((r) => ({ name: r[0], qualifiedName: r[1], kind: r[4] as Declaration['kind'], container: r[8], facets: (r[6] === '' ? [] : r[6].split(',')) as Declaration['facets'] }));
}

/** Node ids one resolve keeps at hand (a miss is one indexed lookup). */
const NODES_CACHED = 65536;

export class RelationGraph {
  readonly store: GraphStore;
  private readonly dirtyFiles = new Set<number>();
  private readonly dirtyNames = new Set<string>();
  private readonly dirtyFields = new Set<string>();
  private full = false;

  constructor(db: Tables) {
    this.store = new GraphStore(db);
    // A process that recorded facts and stopped before resolving them leaves this flag.
    this.full = this.store.wasPending();
  }

  /** Whether a parsed file's relation facts are missing or older than its bytes. */
  staleness(): (path: string, sha256: string) => boolean {
    const recorded = this.store.recorded();
    return (path, sha256) => recorded.get(path)?.sha256 !== sha256;
  }

  /** Records the facts of one batch of parse outcomes (the provider is enabled). */
  record(outcomes: readonly ParsedFacts[], removed: readonly string[]): void {
    for (const path of removed) this.forget(path);
    for (const o of outcomes) {
      if (!o.ok || !o.relations || !o.symbols || !o.language || !o.sha256) {
        this.forget(o.path);
        continue;
      }
      const known = this.store.recordedFile(o.path);
      if (known !== null && known.sha256 === o.sha256) continue;
      const id = known?.id ?? null;
      const before = id === null ? null : this.snapshot(id);
      const declarations = declFacts(o.symbols);
      const after = {
        decls: new Set(declarations.map((d) => `${d.name}\0${d.qualifiedName}\0${d.kind}`)),
        exports: new Set(o.relations.imports.filter((i) => i.reexport).map((i) => `${i.local}\0${i.module}\0${i.imported}`)),
        bases: new Set(o.relations.references.filter((r) => r.kind === 'extends' || r.kind === 'implements' || r.kind === 'embeds').map((r) => `${r.from}\0${r.name}\0${r.text}`)),
        members: new Set(o.relations.members.map((m) => `${m.owner}\0${m.member}\0${m.type}`)),
      };
      // Flagged before anything is marked dirty (which makes `pending` true): the flag commits
      // with these facts, so a process that stops before resolving leaves it for the next.
      if (!this.pending) this.store.markPending();
      if (before !== null) this.compare(before, after, declarations);
      else for (const d of declarations) this.dirtyNames.add(d.name);
      if (before === null) for (const e of after.exports) this.markExport(e);
      const fileId = this.store.put({ path: o.path, language: o.language, sha256: o.sha256, declarations, relations: o.relations }, known !== null);
      this.dirtyFiles.add(fileId);
    }
  }

  /** Drops the facts of files the graph holds but the tree no longer parses (deleted, or no longer claimed). */
  prune(keep: (path: string) => boolean): void {
    for (const path of this.store.recorded().keys()) if (!keep(path)) this.forget(path);
  }

  private forget(path: string): void {
    const id = this.store.fileId(path);
    if (id === null) return;
    if (!this.pending) this.store.markPending();
    const before = this.snapshot(id);
    for (const key of before.decls) this.dirtyNames.add(key.slice(0, key.indexOf('\0')));
    for (const e of before.exports) this.markExport(e);
    this.store.remove(id);
  }

  private snapshot(fileId: number) {
    const refs = this.store.refsOf(fileId);
    return {
      decls: new Set(this.store.declsOf(fileId).map((d) => `${d.name}\0${d.qname}\0${d.kind}`)),
      exports: new Set(this.store.importsOf(fileId).filter((i) => i.reexport === 1).map((i) => `${i.local}\0${i.module}\0${i.imported}`)),
      bases: new Set(refs.filter((r) => r.kind === 'extends' || r.kind === 'implements' || r.kind === 'embeds').map((r) => `${r.from_qname}\0${r.name}\0${r.text}`)),
      members: new Set(this.store.membersOf(fileId).map((m) => `${m.owner}\0${m.member}\0${m.type}`)),
    };
  }

  private compare(before: ReturnType<RelationGraph['snapshot']>, after: ReturnType<RelationGraph['snapshot']>, declarations: readonly DeclFacts[]): void {
    for (const key of symmetric(before.decls, after.decls)) this.dirtyNames.add(key.slice(0, key.indexOf('\0')));
    for (const e of symmetric(before.exports, after.exports)) this.markExport(e);
    for (const m of symmetric(before.members, after.members)) this.dirtyFields.add(m.split('\0')[1]);
    const changedBases = symmetric(before.bases, after.bases);
    if (changedBases.length > 0) {
      // A type that gains or loses a base changes what its members are: the members of the
      // type itself and of every base it had or has.
      const types = new Set(changedBases.map((b) => b.split('\0')[0]));
      for (const d of declarations) if (d.container !== null && types.has(d.container)) this.dirtyNames.add(d.name);
      for (const b of changedBases) this.markMembersOf(b.split('\0')[1], 0);
    }
  }

  private markMembersOf(typeName: string, depth: number): void {
    if (depth > 3) return;
    for (const t of this.store.declsNamed(typeName)) {
      for (const d of this.store.declsOf(t.fileId)) if (d.container === t.qname) this.dirtyNames.add(d.name);
      for (const base of this.store.basesNamed(t.qname)) this.markMembersOf(base.name, depth + 1);
    }
  }

  private markExport(key: string): void {
    const local = key.slice(0, key.indexOf('\0'));
    if (local === '*') this.full = true; // a wildcard re-export can change any name
    else this.dirtyNames.add(local);
  }

  /** Whether recorded facts wait for `resolve`. */
  get pending(): boolean {
    return this.full || this.dirtyFiles.size > 0 || this.dirtyNames.size > 0 || this.dirtyFields.size > 0;
  }

  /** Links what the recorded batches can have changed. Call before publishing the snapshot. */
  resolve(): void {
    const job = this.job();
    resolvePass(this.store, job);
    this.resolved();
  }

  /**
   * What the next `resolve` links, as plain data: a resolve pass run on another connection (see
   * aside-worker.ts) loads it with `load` and resolves there; this graph then calls `resolved`.
   */
  job(): ResolveJob {
    // A build that changed most of the tree re-resolves everything: what changed is not listed.
    if (this.passIsFull()) return { full: true, files: [], names: [], fields: [], orphans: null };
    return {
      full: false,
      files: [...this.dirtyFiles],
      names: [...this.dirtyNames],
      fields: [...this.dirtyFields],
      orphans: this.store.orphanIds(),
    };
  }

  /** How much the next `resolve` reads: every recorded file in a full pass, else the files and names it follows. */
  pendingWork(): number {
    return this.passIsFull() ? this.store.recorded().size : this.dirtyFiles.size + this.dirtyNames.size + this.dirtyFields.size;
  }

  private passIsFull(): boolean {
    return this.full || this.dirtyFiles.size > this.store.recorded().size * FULL_PASS_SHARE;
  }

  /** Takes over what another graph had recorded and not resolved (its `job`). */
  load(job: ResolveJob): void {
    this.full = job.full;
    for (const id of job.files) this.dirtyFiles.add(id);
    for (const n of job.names) this.dirtyNames.add(n);
    for (const f of job.fields) this.dirtyFields.add(f);
    this.store.adoptOrphans(job.orphans);
  }

  /** The pass of this graph's `job` has committed (here, or on another connection). */
  resolved(): void {
    this.dirtyFiles.clear();
    this.dirtyNames.clear();
    this.dirtyFields.clear();
    this.store.adoptOrphans([]);
    this.full = false;
  }
}

/** What one resolve pass links (RelationGraph.job): plain data, so another thread can run it. */
export interface ResolveJob {
  /** Re-resolve every reference (a cold build, a wildcard re-export, an interrupted pass). */
  full: boolean;
  /** Graph file ids whose references are re-resolved. */
  files: number[];
  /** Names whose meaning may have changed: references naming them, or reaching through them. */
  names: string[];
  /** Member names whose stated type changed: references reaching through them. */
  fields: string[];
  /** Nodes that may name no edge any more (null: check every node). */
  orphans: number[] | null;
}

/** Links what `job` names (see RelationGraph), and marks the graph built. */
function resolvePass(store: GraphStore, job: ResolveJob): void {
  if (!job.full && job.files.length === 0 && job.names.length === 0 && job.fields.length === 0) {
    store.markBuilt();
    return;
  }
  const resolver = new Resolver(store);
  // Node ids by path, then qualified name (no key string built per lookup: this runs twice
  // per edge), bounded: a full pass links every declaration of the tree, and the cache starts
  // over when it holds NODES_CACHED ids.
  let nodes = new Map<string, Map<string, number>>();
  let held = 0;
  const node = (path: string, qname: string) => {
    let inFile = nodes.get(path);
    if (inFile === undefined) {
      if (held >= NODES_CACHED) {
        nodes = new Map();
        held = 0;
      }
      inFile = new Map();
      nodes.set(path, inFile);
    }
    let id = inFile.get(qname);
    if (id === undefined) {
      id = store.node(path, qname);
      inFile.set(qname, id);
      held++;
    }
    return id;
  };
  const link = (ref: RefRow) => {
    for (const r of resolver.resolve(ref)) {
      store.addEdge(node(r.from.path, r.from.qname), node(r.to.path, r.to.qname), r.kind, r.derivation, ref.file_id, ref.id);
    }
  };
  const recorded = store.recorded();
  const full = job.full;
  const files = full ? [...recorded.values()].map((f) => f.id) : job.files;
  const contains = () => {
    for (const id of files) {
      for (const d of store.declsOf(id)) {
        if (d.container === null) continue;
        store.addEdge(node(d.path, d.container), node(d.path, d.qname), 'contains', 'resolution', id, null);
      }
    }
  };
  if (full) {
    store.rewritingEdges(() => {
      store.dropAllEdges();
      for (const ref of store.allRefs(recordedById(recorded))) link(ref);
      contains();
    });
  } else {
    const again = new Map<number, RefRow>();
    // A name that changed meaning re-resolves the references naming it and those reaching
    // through it: `store.find()` where `store: Store` follows a change to what `Store` is.
    for (const name of job.names) for (const ref of [...store.refsNamed(name), ...store.refsThrough(name)]) again.set(ref.id, ref);
    for (const field of job.fields) for (const ref of store.refsThrough(field)) again.set(ref.id, ref);
    for (const id of files) for (const ref of store.refsOf(id)) again.set(ref.id, ref);
    const dirty = new Set(files);
    for (const ref of again.values()) {
      if (!dirty.has(ref.file_id)) store.dropEdgesOfRef(ref.id);
      link(ref);
    }
    contains();
  }
  store.collectNodes();
  store.markBuilt();
}

/** What the file-scope calls of these files (a script's top level, a `__main__` guard) resolve to. */
export function fileScopeTargets(graph: GraphStore, paths: readonly string[]): DeclRow[] {
  // A cold build records facts without their indexes (GraphStore.beginBulk), and its facts are
  // not resolved before it ends: a map read meanwhile names no entry point rather than scan
  // every reference once per file.
  if (!graph.factsIndexed()) return [];
  const resolver = new Resolver(graph);
  const out: DeclRow[] = [];
  for (const path of paths) {
    const id = graph.fileId(path);
    if (id === null) continue;
    for (const ref of graph.fileScopeCalls(id)) {
      const d = resolver.target(ref);
      if (d !== null && d.kind !== 'class') out.push(d);
    }
  }
  return out;
}

function symmetric(a: ReadonlySet<string>, b: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const x of a) if (!b.has(x)) out.push(x);
  for (const x of b) if (!a.has(x)) out.push(x);
  return out;
}
