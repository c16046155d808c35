import { schemaMeta, schemaObjects, type Tables } from '../store.ts';
import type { FileRelations, ReceiverKind, ReferenceKind } from '../../syntax/relations/types.ts';
import type { Declaration } from '../../syntax/types.ts';

// The relationship graph's tables in `.rift/rift.db`, beside (never inside) the store's own:
// per file, the facts its parse recorded (imports, member types, references, declared names);
// and the resolved edges between declarations, each tied to the reference that produced it.
// Declarations are graph nodes named by (path, qualified name), independent of the store's row
// ids, so a re-parse that keeps a declaration keeps every edge to it.

// Bumped when the recorded facts change shape or meaning: the graph is then rebuilt from the tree.
const GRAPH_SCHEMA = '5';

/**
 * The closed sets a reference's and an edge's kinds, receivers and derivations come from, stored
 * as their index here (a byte, where the names took 6-10 on each of hundreds of thousands of rows
 * and on the edge indexes). Each list is in alphabetical order, so ordering by the stored number
 * orders as the names do.
 */
export const EDGE_KINDS = ['calls', 'constructs', 'contains', 'embeds', 'extends', 'implements', 'imports', 'references'] as const;
export const DERIVATIONS = ['heuristic', 'resolution'] as const;
const REF_KINDS: readonly ReferenceKind[] = ['calls', 'constructs', 'embeds', 'extends', 'implements', 'references'];
const RECEIVERS: readonly ReceiverKind[] = ['field', 'local', 'name', 'none', 'path', 'self', 'super', 'typed'];

/** `name`'s number in `names`; a name outside the set is a programming error, never stored. */
function coder(names: readonly string[], what: string): (name: string) => number {
  const codes = new Map(names.map((n, i) => [n, i]));
  return (name) => {
    const code = codes.get(name);
    if (code === undefined) throw new Error(`graph store: unknown ${what} '${name}'`);
    return code;
  };
}
const edgeKind = coder(EDGE_KINDS, 'edge kind');
const derivationCode = coder(DERIVATIONS, 'derivation');
const refKind = coder(REF_KINDS, 'reference kind');
const receiver = coder(RECEIVERS, 'receiver');
/** The inheritance kinds, as stored (a type's bases are looked up by them). */
const BASE_KINDS = (['extends', 'implements', 'embeds'] as const).map(refKind).join(', ');

/**
 * Secondary indexes of the fact tables. A cold build records every file's facts without them
 * and builds them once at its end (beginBulk/endBulk): inserting hundreds of thousands of rows
 * into five indexes keyed by name took most of the graph's recording time.
 */
const FACT_INDEXES = [
  'graph_decls_file ON graph_decls(file_id)',
  'graph_decls_name ON graph_decls(name)',
  'graph_imports_file ON graph_imports(file_id, local)',
  'graph_members_file ON graph_members(file_id, owner, member)',
  'graph_refs_file ON graph_refs(file_id)',
  'graph_refs_name ON graph_refs(name)',
  // Only inheritance is looked up by its source (a type's bases): a partial index, a few
  // thousand rows where one over every reference took a tenth of the store.
  `graph_refs_bases ON graph_refs(from_qname) WHERE kind IN (${BASE_KINDS})`,
  'graph_ref_words_word ON graph_ref_words(word)',
  'graph_ref_words_file ON graph_ref_words(file_id)',
];
/** Indexes of the edges: a full resolve pass, which rewrites every edge, builds them after it. */
const EDGE_INDEXES = [
  'graph_edges_src ON graph_edges(src, kind)',
  'graph_edges_dst ON graph_edges(dst, kind)',
  'graph_edges_ref ON graph_edges(ref_id)',
  'graph_edges_file ON graph_edges(file_id)',
];
const indexName = (spec: string) => spec.slice(0, spec.indexOf(' '));
const GRAPH_TABLES = ['graph_files', 'graph_decls', 'graph_imports', 'graph_members', 'graph_refs', 'graph_ref_words', 'graph_nodes', 'graph_edges'];

/** A reference row as resolution reads it (RefRow), and the join every reference query starts from. */
const REF_COLUMNS = 'r.id, r.file_id, g.path, g.language, r.from_qname, r.kind, r.name, r.receiver, r.text';
const REFS = `SELECT ${REF_COLUMNS} FROM graph_refs r JOIN graph_files g ON g.id = r.file_id`;

export interface RefRow {
  id: number;
  file_id: number;
  path: string;
  language: string;
  from_qname: string;
  kind: ReferenceKind;
  name: string;
  receiver: ReceiverKind;
  text: string | null;
}

/** Reference rows as read, their kind and receiver still numbers: named in place. */
function refRows(rows: unknown[]): RefRow[] {
  for (const r of rows as Array<{ kind: unknown; receiver: unknown }>) {
    r.kind = REF_KINDS[r.kind as number];
    r.receiver = RECEIVERS[r.receiver as number];
  }
  return rows as RefRow[];
}

export interface ImportRow {
  local: string;
  module: string;
  imported: string | null;
  reexport: number;
}

/** A declaration as resolution sees it. */
export interface DeclRow {
  fileId: number;
  path: string;
  language: string;
  name: string;
  qname: string;
  kind: string;
  container: string | null;
  facets: string;
}

export interface EdgeRow {
  src: number;
  dst: number;
  kind: string;
  derivation: string;
}

/** Edge rows as read, their kind and derivation still numbers: named in place. */
function edgeRows(rows: unknown[]): EdgeRow[] {
  for (const r of rows as Array<{ kind: unknown; derivation: unknown }>) {
    r.kind = EDGE_KINDS[r.kind as number];
    r.derivation = DERIVATIONS[r.derivation as number];
  }
  return rows as EdgeRow[];
}

export interface NodeRow {
  id: number;
  path: string;
  qname: string;
}

/** The facts of one parsed file, as the graph records them. */
export interface FileFacts {
  path: string;
  language: string;
  sha256: string;
  declarations: ReadonlyArray<Pick<Declaration, 'name' | 'qualifiedName' | 'kind' | 'container' | 'facets'>>;
  relations: FileRelations;
}

/** Nodes of dropped edges checked one by one at the end of a resolve pass; more, and every node is. */
const ORPHANS_CHECKED_MAX = 100_000;

/** A file whose facts the graph holds: its row id, language and the digest it was recorded from. */
export interface RecordedFile {
  readonly id: number;
  readonly language: string;
  readonly sha256: string;
}

export class GraphStore {
  private readonly stmts: ReturnType<GraphStore['prepare']>;

  constructor(private readonly db: Tables) {
    // Under the write lock, as the store's own schema: several processes opening a fresh store
    // at once would otherwise each find no graph and drop and create its tables under the others.
    // Opened without the lock when another process left it current (see Store.init).
    if (!GraphStore.isCurrent(db)) db.transaction(() => GraphStore.migrate(db));
    this.stmts = this.prepare();
    // A file list read inside a transaction that rolled back may hold rows that are gone.
    db.onRollback(() => {
      this.recordedFiles = null;
    });
  }

  /** Whether the graph's schema is current, with every table and index: nothing for `migrate` to do. */
  private static isCurrent(db: Tables): boolean {
    const indexes = [...FACT_INDEXES, ...EDGE_INDEXES].map(indexName);
    return GraphStore.tablesCurrent(db) && schemaObjects(db, 'index', indexes) === indexes.length;
  }

  /** The recorded schema is this one and every table is there (indexes aside: a bulk build drops some). */
  private static tablesCurrent(db: Tables): boolean {
    return schemaMeta(db, 'graph_schema') === GRAPH_SCHEMA && schemaObjects(db, 'table', GRAPH_TABLES) === GRAPH_TABLES.length;
  }

  private static migrate(db: Tables): void {
    db.exec(`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
    if (GraphStore.tablesCurrent(db)) {
      // A process that ended inside a bulk build or a full pass left some of them dropped.
      GraphStore.createIndexes(db, [...FACT_INDEXES, ...EDGE_INDEXES]);
      return;
    }
    db.exec(`
      ${GRAPH_TABLES.map((t) => `DROP TABLE IF EXISTS ${t};`).join('\n')}
      CREATE TABLE graph_files (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, language TEXT NOT NULL, sha256 TEXT NOT NULL);
      -- What each file declares, as resolution reads it; a re-parse compares old and new to find
      -- the names whose meaning changed.
      CREATE TABLE graph_decls (
        file_id INTEGER NOT NULL, name TEXT NOT NULL, qname TEXT NOT NULL, kind TEXT NOT NULL, container TEXT, facets TEXT NOT NULL
      );
      CREATE TABLE graph_imports (file_id INTEGER NOT NULL, local TEXT NOT NULL, module TEXT NOT NULL, imported TEXT, reexport INTEGER NOT NULL);
      CREATE TABLE graph_members (file_id INTEGER NOT NULL, owner TEXT NOT NULL, member TEXT NOT NULL, type TEXT NOT NULL);
      -- kind and receiver: numbers of REF_KINDS and RECEIVERS.
      CREATE TABLE graph_refs (
        id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, from_qname TEXT NOT NULL, kind INTEGER NOT NULL,
        name TEXT NOT NULL, receiver INTEGER NOT NULL, text TEXT, start INTEGER NOT NULL, end INTEGER NOT NULL
      );
      -- The names a reference's receiver text is made of (\`Store\` and \`inner\` of \`st.Store#inner\`):
      -- a change to what one of them means re-resolves the reference.
      CREATE TABLE graph_ref_words (file_id INTEGER NOT NULL, ref_id INTEGER NOT NULL, word TEXT NOT NULL);
      CREATE TABLE graph_nodes (id INTEGER PRIMARY KEY, path TEXT NOT NULL, qname TEXT NOT NULL, UNIQUE(path, qname));
      -- kind and derivation: numbers of EDGE_KINDS and DERIVATIONS.
      CREATE TABLE graph_edges (
        src INTEGER NOT NULL, dst INTEGER NOT NULL, kind INTEGER NOT NULL, derivation INTEGER NOT NULL,
        file_id INTEGER NOT NULL, ref_id INTEGER
      );
    `);
    GraphStore.createIndexes(db, [...FACT_INDEXES, ...EDGE_INDEXES]);
    db.prepare(`INSERT OR REPLACE INTO meta(key, value) VALUES ('graph_schema', ?)`).run(GRAPH_SCHEMA);
    db.prepare(`DELETE FROM meta WHERE key = 'graph_built'`).run();
  }

  private static createIndexes(db: Tables, specs: readonly string[]): void {
    for (const spec of specs) db.exec(`CREATE INDEX IF NOT EXISTS ${spec}`);
  }

  private static dropIndexes(db: Tables, specs: readonly string[]): void {
    for (const spec of specs) db.exec(`DROP INDEX IF EXISTS ${indexName(spec)}`);
  }

  /**
   * A cold build's recording: into a graph that holds no file yet, facts are inserted without
   * the fact tables' secondary indexes, built once by `endBulk`. Lookups meanwhile still answer
   * (by scanning).
   */
  beginBulk(): void {
    if (this.stmts.anyFile.get() !== undefined) return;
    GraphStore.dropIndexes(this.db, FACT_INDEXES);
  }

  /** Whether the fact tables have their indexes (not so while a cold build records, in any process). */
  factsIndexed(): boolean {
    return this.stmts.indexPresent.get(indexName(FACT_INDEXES[FACT_INDEXES.length - 1])) !== undefined;
  }

  /** Builds the fact indexes beginBulk dropped (none when it dropped none). */
  endBulk(): void {
    GraphStore.createIndexes(this.db, FACT_INDEXES);
  }

  /** Runs `rewrite` (which replaces every edge) with the edge indexes built after it, not row by row. */
  rewritingEdges<T>(rewrite: () => T): T {
    GraphStore.dropIndexes(this.db, EDGE_INDEXES);
    try {
      return rewrite();
    } finally {
      GraphStore.createIndexes(this.db, EDGE_INDEXES);
    }
  }

  private prepare() {
    const db = this.db;
    return {
      files: db.prepare(`SELECT id, path, language, sha256 FROM graph_files`),
      fileByPath: db.prepare(`SELECT id, path, language, sha256 FROM graph_files WHERE path = ?`),
      upsertFile: db.prepare(
        `INSERT INTO graph_files(path, language, sha256) VALUES (?, ?, ?)
         ON CONFLICT(path) DO UPDATE SET language = excluded.language, sha256 = excluded.sha256 RETURNING id`,
      ),
      deleteFile: db.prepare(`DELETE FROM graph_files WHERE id = ?`),
      declsOfFile: db.prepare(
        `SELECT d.file_id AS fileId, g.path, g.language, d.name, d.qname, d.kind, d.container, d.facets
         FROM graph_decls d JOIN graph_files g ON g.id = d.file_id WHERE d.file_id = ?`,
      ),
      declsNamed: db.prepare(
        `SELECT d.file_id AS fileId, g.path, g.language, d.name, d.qname, d.kind, d.container, d.facets
         FROM graph_decls d JOIN graph_files g ON g.id = d.file_id WHERE d.name = ?`,
      ),
      // At most `limit` methods of the name in files of the given languages (a JSON array).
      methodsNamed: db.prepare(
        `SELECT d.file_id AS fileId, g.path, g.language, d.name, d.qname, d.kind, d.container, d.facets
         FROM graph_decls d JOIN graph_files g ON g.id = d.file_id
         WHERE d.name = ? AND d.kind = 'method' AND d.container IS NOT NULL AND g.language IN (SELECT value FROM json_each(?))
         LIMIT ?`,
      ),
      deleteDecls: db.prepare(`DELETE FROM graph_decls WHERE file_id = ?`),
      insertDecl: db.prepare(`INSERT INTO graph_decls(file_id, name, qname, kind, container, facets) VALUES (?, ?, ?, ?, ?, ?)`),
      importsOfFile: db.prepare(`SELECT local, module, imported, reexport FROM graph_imports WHERE file_id = ?`),
      deleteImports: db.prepare(`DELETE FROM graph_imports WHERE file_id = ?`),
      insertImport: db.prepare(`INSERT INTO graph_imports(file_id, local, module, imported, reexport) VALUES (?, ?, ?, ?, ?)`),
      member: db.prepare(`SELECT type FROM graph_members WHERE file_id = ? AND owner = ? AND member = ? LIMIT 1`),
      membersOfFile: db.prepare(`SELECT owner, member, type FROM graph_members WHERE file_id = ?`),
      deleteMembers: db.prepare(`DELETE FROM graph_members WHERE file_id = ?`),
      insertMember: db.prepare(`INSERT INTO graph_members(file_id, owner, member, type) VALUES (?, ?, ?, ?)`),
      refsOfFile: db.prepare(`${REFS} WHERE r.file_id = ?`),
      fileScopeCalls: db.prepare(`${REFS} WHERE r.file_id = ? AND r.from_qname = '' AND r.kind = ${refKind('calls')}`),
      refsNamed: db.prepare(`${REFS} WHERE r.name = ?`),
      // Every reference in pages: each file's path and language are filled in from the file
      // rows (one string per file, not one per reference), in the columns REFS has.
      refsAfter: db.prepare(
        `SELECT r.id, r.file_id, NULL AS path, NULL AS language, r.from_qname, r.kind, r.name, r.receiver, r.text
         FROM graph_refs r WHERE r.id > ? ORDER BY r.id LIMIT ?`,
      ),
      basesOf: db.prepare(`${REFS} WHERE r.from_qname = ? AND r.kind IN (${BASE_KINDS}) ORDER BY r.kind, r.id`),
      // The file is checked on the rows the bases index finds (`+`: not through the file index,
      // which would read every reference of the file).
      basesOfIn: db.prepare(`${REFS} WHERE r.from_qname = ? AND +r.file_id = ? AND r.kind IN (${BASE_KINDS}) ORDER BY r.kind, r.id`),
      refsThrough: db.prepare(
        `SELECT DISTINCT ${REF_COLUMNS}
         FROM graph_ref_words w JOIN graph_refs r ON r.id = w.ref_id JOIN graph_files g ON g.id = r.file_id
         WHERE w.word = ?`,
      ),
      deleteRefs: db.prepare(`DELETE FROM graph_refs WHERE file_id = ?`),
      deleteRefWords: db.prepare(`DELETE FROM graph_ref_words WHERE file_id = ?`),
      insertRef: db.prepare(
        `INSERT INTO graph_refs(file_id, from_qname, kind, name, receiver, text, start, end) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      insertRefWord: db.prepare(`INSERT INTO graph_ref_words(file_id, ref_id, word) VALUES (?, ?, ?)`),
      nodeId: db.prepare(`SELECT id FROM graph_nodes WHERE path = ? AND qname = ?`),
      insertNode: db.prepare(`INSERT INTO graph_nodes(path, qname) VALUES (?, ?) RETURNING id`),
      node: db.prepare(`SELECT id, path, qname FROM graph_nodes WHERE id = ?`),
      deleteEdgesOfFile: db.prepare(`DELETE FROM graph_edges WHERE file_id = ? RETURNING src, dst`),
      deleteAllEdges: db.prepare(`DELETE FROM graph_edges`),
      deleteEdgesOfRef: db.prepare(`DELETE FROM graph_edges WHERE ref_id = ? RETURNING src, dst`),
      insertEdge: db.prepare(`INSERT INTO graph_edges(src, dst, kind, derivation, file_id, ref_id) VALUES (?, ?, ?, ?, ?, ?)`),
      outgoing: db.prepare(`SELECT DISTINCT src, dst, kind, derivation FROM graph_edges WHERE src = ? ORDER BY kind, dst`),
      incoming: db.prepare(`SELECT DISTINCT src, dst, kind, derivation FROM graph_edges WHERE dst = ? ORDER BY kind, src`),
      collectNodes: db.prepare(
        `DELETE FROM graph_nodes WHERE NOT EXISTS (SELECT 1 FROM graph_edges WHERE src = graph_nodes.id)
           AND NOT EXISTS (SELECT 1 FROM graph_edges WHERE dst = graph_nodes.id)`,
      ),
      collectNode: db.prepare(
        `DELETE FROM graph_nodes WHERE id = ? AND NOT EXISTS (SELECT 1 FROM graph_edges WHERE src = ?)
           AND NOT EXISTS (SELECT 1 FROM graph_edges WHERE dst = ?)`,
      ),
      anyFile: db.prepare(`SELECT 1 AS x FROM graph_files LIMIT 1`),
      indexPresent: db.prepare(`SELECT 1 AS x FROM sqlite_master WHERE type = 'index' AND name = ?`),
      getMeta: db.prepare(`SELECT value FROM meta WHERE key = ?`),
      setMeta: db.prepare(`INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)`),
      referenceCounts: db.prepare(
        `SELECT n.path, n.qname, count(DISTINCT e.src) AS refs FROM graph_edges e JOIN graph_nodes n ON n.id = e.dst
         WHERE e.kind <> ${edgeKind('contains')} GROUP BY e.dst ORDER BY refs DESC, n.path, n.qname LIMIT ?`,
      ),
    };
  }

  /**
   * Files whose facts the graph holds, with the content digest they were recorded from. Kept
   * until the files change — by this store (`record`, `remove`) or by another connection
   * (SQLite's `data_version`) — since every resolve pass and every edit asks for it (72k rows:
   * ~80 ms a read at 32 stdlib copies). Callers must not change it.
   */
  recorded(): ReadonlyMap<string, RecordedFile> {
    const at = `${this.fileWrites}:${this.db.dataVersion()}`;
    if (this.recordedFiles?.at === at) return this.recordedFiles.files;
    const files = new Map<string, RecordedFile>();
    // One string per language, not one per file.
    const languages = new Map<string, string>();
    for (const r of this.stmts.files.all() as Array<{ id: number; path: string; language: string; sha256: string }>) {
      let language = languages.get(r.language);
      if (language === undefined) languages.set(r.language, (language = r.language));
      files.set(r.path, { id: r.id, language, sha256: r.sha256 });
    }
    this.recordedFiles = { at, files };
    return files;
  }

  /** `recorded()` as last read, and the state it was read in. */
  private recordedFiles: { at: string; files: ReadonlyMap<string, { id: number; language: string; sha256: string }> } | null = null;
  /** Writes this store made to `graph_files` (each makes `recorded()` read again). */
  private fileWrites = 0;

  fileId(path: string): number | null {
    return this.recordedFile(path)?.id ?? null;
  }

  recordedFile(path: string): { id: number; language: string; sha256: string } | null {
    return (this.stmts.fileByPath.get(path) as { id: number; language: string; sha256: string } | undefined) ?? null;
  }

  /** Whether a build ever recorded relationship data (the graph survives disabling the provider). */
  hasData(): boolean {
    return this.stmts.getMeta.get('graph_built') !== undefined || this.stmts.anyFile.get() !== undefined;
  }

  markBuilt(): void {
    this.stmts.setMeta.run('graph_built', '1');
    this.db.prepare(`DELETE FROM meta WHERE key = 'graph_pending'`).run();
  }

  /**
   * Facts recorded but not yet resolved survive a crash this way: the flag commits with the
   * facts, and the next process resolves everything once.
   */
  markPending(): void {
    this.stmts.setMeta.run('graph_pending', '1');
  }

  wasPending(): boolean {
    return this.stmts.getMeta.get('graph_pending') !== undefined;
  }

  declsOf(fileId: number): DeclRow[] {
    return this.stmts.declsOfFile.all(fileId) as DeclRow[];
  }

  declsNamed(name: string): DeclRow[] {
    return this.stmts.declsNamed.all(name) as DeclRow[];
  }

  /** Up to `limit` methods (members of kind `method`) named `name`, in files of these languages. */
  methodsNamed(name: string, languages: readonly string[], limit: number): DeclRow[] {
    return this.stmts.methodsNamed.all(name, JSON.stringify(languages), limit) as DeclRow[];
  }

  importsOf(fileId: number): ImportRow[] {
    return this.stmts.importsOfFile.all(fileId) as ImportRow[];
  }

  membersOf(fileId: number): Array<{ owner: string; member: string; type: string }> {
    return this.stmts.membersOfFile.all(fileId) as Array<{ owner: string; member: string; type: string }>;
  }

  memberType(fileId: number, owner: string, member: string): string | null {
    const r = this.stmts.member.get(fileId, owner, member) as { type: string } | undefined;
    return r ? r.type : null;
  }

  refsOf(fileId: number): RefRow[] {
    return refRows(this.stmts.refsOfFile.all(fileId));
  }

  /** The calls a file makes at its top level (a script's body, a `__main__` guard), filtered by SQLite. */
  fileScopeCalls(fileId: number): RefRow[] {
    return refRows(this.stmts.fileScopeCalls.all(fileId));
  }

  refsNamed(name: string): RefRow[] {
    return refRows(this.stmts.refsNamed.all(name));
  }

  /** Every reference, read a page at a time so the caller may write between pages. */
  /**
   * Every reference, with its file's path and language taken from `files` (the resolver's list
   * by id: a second list of every file held through a full pass cost ~15 MB at 32 stdlib copies).
   */
  *allRefs(files: ReadonlyMap<number, { path: string; language: string }>): Generator<RefRow> {
    for (let after = 0; ; ) {
      const rows = this.stmts.refsAfter.all(after, 4096) as RefRow[];
      if (rows.length === 0) return;
      after = rows[rows.length - 1].id;
      const page: RefRow[] = [];
      for (const r of rows) {
        const file = files.get(r.file_id);
        if (file === undefined) continue; // as the join with the files would leave it out
        r.path = file.path;
        r.language = file.language;
        page.push(r);
      }
      yield* refRows(page);
    }
  }

  /**
   * References whose receiver text names `word` as one of its parts, in any file: a field read on
   * the way (`this.word.f()`, `s.a.word.f()`), the stated type of a local (`s: word`, `st.word`),
   * a receiver name or a path segment (`word.f()`, `a.word.f()`).
   */
  refsThrough(word: string): RefRow[] {
    return refRows(this.stmts.refsThrough.all(word));
  }

  /** `extends` / `implements` / `embeds` references made by declarations named `qname`, in any file. */
  basesNamed(qname: string): RefRow[] {
    return refRows(this.stmts.basesOf.all(qname));
  }

  /** `basesNamed` made in one file (where a declaration states its own bases, in every language but Rust). */
  basesNamedIn(qname: string, fileId: number): RefRow[] {
    return refRows(this.stmts.basesOfIn.all(qname, fileId));
  }

  /**
   * Replaces a file's facts; returns its graph file id. Its edges are dropped (the caller
   * re-resolves). `known`: whether the graph held the file (a file it did not hold has nothing
   * to clear, which a bulk build, its indexes dropped, could only find by scanning).
   */
  put(facts: FileFacts, known = true): number {
    const s = this.stmts;
    const { id } = s.upsertFile.get(facts.path, facts.language, facts.sha256) as { id: number };
    // A file recorded again keeps its row: the kept list takes its new digest in place (what a
    // resolver derives from the list stays as it was); a new file makes the list read again.
    const kept = this.recordedFiles?.files.get(facts.path);
    if (kept !== undefined && kept.id === id && kept.language === facts.language) kept.sha256 = facts.sha256;
    else this.fileWrites++;
    if (known) this.clear(id);
    for (const d of facts.declarations) s.insertDecl.run(id, d.name, d.qualifiedName, d.kind, d.container, d.facets.join(','));
    for (const i of facts.relations.imports) s.insertImport.run(id, i.local, i.module, i.imported, i.reexport ? 1 : 0);
    for (const m of facts.relations.members) s.insertMember.run(id, m.owner, m.member, m.type);
    for (const r of facts.relations.references) {
      const ref = s.insertRef.run(id, r.from, refKind(r.kind), r.name, receiver(r.receiver), r.text, r.start, r.end).lastInsertRowid;
      if (r.text === null) continue;
      for (const word of new Set(r.text.split(/[.#:]+/))) if (word !== '') s.insertRefWord.run(id, ref, word);
    }
    return id;
  }

  /** Drops a file's facts and the edges its references produced. */
  remove(fileId: number): void {
    this.clear(fileId);
    this.stmts.deleteFile.run(fileId);
    this.fileWrites++;
  }

  private clear(fileId: number): void {
    const s = this.stmts;
    s.deleteDecls.run(fileId);
    s.deleteImports.run(fileId);
    s.deleteMembers.run(fileId);
    s.deleteRefs.run(fileId);
    s.deleteRefWords.run(fileId);
    this.dropped(s.deleteEdgesOfFile.all(fileId));
  }

  /**
   * The nodes of edges dropped since the last `collectNodes`, which may name no edge any more
   * (null: every edge was dropped). Held by this process: nodes left behind by one that dies
   * before collecting are collected by the next full pass.
   */
  private orphans: Set<number> | null = new Set();

  private dropped(edges: unknown[]): void {
    if (this.orphans === null) return;
    for (const e of edges as Array<{ src: number; dst: number }>) this.orphans.add(e.src).add(e.dst);
  }

  /** The candidates `collectNodes` will check (null: every node), for a pass run on another connection. */
  orphanIds(): number[] | null {
    return this.orphans === null ? null : [...this.orphans];
  }

  /** Replaces the candidates `collectNodes` checks (another connection's, or none once it collected them). */
  adoptOrphans(ids: readonly number[] | null): void {
    this.orphans = ids === null ? null : new Set(ids);
  }

  dropAllEdges(): void {
    this.stmts.deleteAllEdges.run();
    this.orphans = null;
  }

  dropEdgesOfRef(refId: number): void {
    this.dropped(this.stmts.deleteEdgesOfRef.all(refId));
  }

  node(path: string, qname: string): number {
    const r = this.stmts.nodeId.get(path, qname) as { id: number } | undefined;
    if (r) return r.id;
    return (this.stmts.insertNode.get(path, qname) as { id: number }).id;
  }

  /** The node of a declaration, when any edge names it. */
  findNode(path: string, qname: string): number | null {
    const r = this.stmts.nodeId.get(path, qname) as { id: number } | undefined;
    return r ? r.id : null;
  }

  nodeById(id: number): NodeRow | null {
    return (this.stmts.node.get(id) as NodeRow | undefined) ?? null;
  }

  addEdge(src: number, dst: number, kind: string, derivation: string, fileId: number, refId: number | null): void {
    this.stmts.insertEdge.run(src, dst, edgeKind(kind), derivationCode(derivation), fileId, refId);
  }

  outgoing(node: number): EdgeRow[] {
    return edgeRows(this.stmts.outgoing.all(node));
  }

  incoming(node: number): EdgeRow[] {
    return edgeRows(this.stmts.incoming.all(node));
  }

  /**
   * Drops nodes no edge names any more: those of the edges dropped since the last call (a node
   * only loses its last edge when an edge is dropped), every node after all edges were.
   */
  collectNodes(): void {
    // Past ORPHANS_CHECKED_MAX candidates (a branch switch), one pass over every node is cheaper.
    if (this.orphans === null || this.orphans.size > ORPHANS_CHECKED_MAX) this.stmts.collectNodes.run();
    else for (const id of this.orphans) this.stmts.collectNode.run(id, id, id);
    this.orphans = new Set();
  }

  /** The most referenced declarations: distinct referrers over every edge but `contains`. */
  mostReferenced(limit: number): Array<{ path: string; qname: string; refs: number }> {
    return this.stmts.referenceCounts.all(limit) as Array<{ path: string; qname: string; refs: number }>;
  }
}
