import Database from 'better-sqlite3';
import { writeFileSync } from 'node:fs';
import { storeBusyWaitMs, VERIFIED_FILES_MAX } from '../core/limits.ts';
import { readSourceFileSync, readSpanSync } from '../workspace/read.ts';
import type { SymbolInput, TextInput } from './parse-job.ts';
import { nameKey, phrase, queryWords } from './text.ts';
import { TreeRows } from './tree-rows.ts';

// The persistent index in `<workspace>/.rift/rift.db` (SQLite, WAL). better-sqlite3 is
// synchronous, so a read that runs its queries without awaiting sees one committed state:
// a batch commits in one transaction and no read can observe half of it.
//
// The store keeps what cannot be re-read cheaply: digests, spans, declarations and the
// full-text indexes. File bytes live in the workspace; a read takes them from disk and
// verifies them against the stored digest (`indexedBytes`), so a file changed behind the
// index is never served with bytes the index did not see. Parse results (symbols, chunks)
// hang off a `blobs` row — digest and language — rather than a path, so results can later be
// shared by every path and revision that holds the same bytes.

// Also bumped when a syntax provider extracts differently, so an older index is rebuilt rather
// than mixing declarations from two extractors (5: Python lambdas, TypeScript construct
// signatures; 6: text keys on symbols and chunks; 7: no stored contents, parse results by blob,
// declaration-aligned chunks, names-only symbol full text; 8: qualified names looked up by key;
// 9: why a claimed file is unparsed; 11: distinct names with their counts for get_symbol, the
// trigram index over names; 12: the suffix index an expression, not a stored column).
const SCHEMA_VERSION = '13';
/** Every table of the current schema (the graph's own are GraphStore's). */
const STORE_TABLES = ['files', 'blobs', 'symbols', 'names', 'name_grams', 'name_grams_log', 'names_trigram', 'chunks', 'chunks_fts', 'symbols_fts', 'docs_fts', 'skipped'];

/** The columns of a SymbolRow (from SYMBOL_FROM), for every query that returns one. */
export const SYMBOL_COLUMNS = `s.id, f.path, b.language, s.name, s.qname, s.kind, s.node_kind, s.facets, s.visibility, s.container,
  s.span_start, s.span_end, s.item_start, s.item_end, s.line`;

/** What joins a symbol row `s` to the file (`f`) and blob (`b`) that hold it. */
export const SYMBOL_JOINS = `JOIN files f ON f.blob_id = s.blob_id JOIN blobs b ON b.id = s.blob_id`;
/** Symbols with the path and language of the file that holds them. */
export const SYMBOL_FROM = `symbols s ${SYMBOL_JOINS}`;

/** What joins a chunk row `c` to the file (`f`) and blob (`b`) that hold it. */
export const CHUNK_JOINS = `JOIN files f ON f.blob_id = c.blob_id JOIN blobs b ON b.id = c.blob_id`;

/** The columns of a StoredFile (`files f JOIN blobs b`). */
const FILE_COLUMNS = `f.id, f.path, b.sha256, f.size, f.mtime_ms AS mtimeMs, b.language, b.parsed, b.lines, b.unparsed`;

const FTS_TABLES = ['chunks_fts', 'symbols_fts', 'docs_fts', 'names_trigram'] as const;

/** Ids of declarations whose name or qualified name equals `@lower` (`@key`: its nameKey). */
export const EXACT_NAME_IDS = `SELECT id FROM symbols WHERE name_lower = @lower
  UNION SELECT id FROM symbols WHERE qname_key = @key AND qname_lower = @lower`;

/**
 * Adds to \`page\` the names of \`rows\` (in page order) that hold declarations of the page, keeping
 * the running count of declarations in \`page.upto\`; false once the page is full.
 */
function fillPage(page: { names: PageName[]; upto: number }, rows: Iterable<Omit<PageName, 'upto'>>, q: { offset: number; limit: number }): boolean {
  for (const row of rows) {
    page.upto += row.n;
    if (page.upto > q.offset) page.names.push({ ...row, upto: page.upto });
    if (page.upto >= q.offset + q.limit) return false;
  }
  return true;
}

/** The last character of a \`names\` row's lowercased qualified name (names_suffix). */
const NAME_LAST = `substr(qname_lower, -1)`;
/** Longest query whose total \`name_grams\` holds. */
const NAME_GRAM_MAX = 2;
/** What answers get_symbol's one- and two-character queries (Store.pageShortNames), beside \`names\`. */
const SHORT_NAME_SCHEMA = `
  -- Their names: those ending in the query in page order (a range of the last character), and
  -- those equal to it (a handful).
  CREATE INDEX names_suffix ON names(${NAME_LAST}, qname, name);
  CREATE INDEX names_short ON names(qname_lower) WHERE length(qname_lower) <= ${NAME_GRAM_MAX};
  -- Their total (\`instr\` over every name otherwise), and the names counted in or out since it
  -- was (applied at the end of each batch).
  CREATE TABLE name_grams (gram TEXT PRIMARY KEY, total INTEGER NOT NULL) WITHOUT ROWID;
  CREATE TABLE name_grams_log (qname_lower TEXT NOT NULL, delta INTEGER NOT NULL);`;
/**
 * A symbol row (\`new.\`) counted into its name, and one (\`old.\`) counted out, the name going at
 * zero; each logged for the substring totals (Store.flushGrams).
 */
const NAME_COUNT_IN = `INSERT INTO names(qname, name, qname_lower, name_lower, n) VALUES (new.qname, new.name, new.qname_lower, new.name_lower, 1)
      ON CONFLICT (qname, name) DO UPDATE SET n = n + 1;
    INSERT INTO name_grams_log(qname_lower, delta) VALUES (new.qname_lower, 1);`;
const NAME_COUNT_OUT = `UPDATE names SET n = n - 1 WHERE qname = old.qname AND name = old.name;
    DELETE FROM names WHERE qname = old.qname AND name = old.name AND n = 0;
    INSERT INTO name_grams_log(qname_lower, delta) VALUES (old.qname_lower, -1);`;
/**
 * What keeps \`names\` counting the declarations: every insert, delete and rename of a symbol row
 * moves its name's count. A cold build drops them and counts every name once at its end
 * (Store.beginBulk, Store.countNames).
 */
const NAME_TRIGGERS = `
  CREATE TRIGGER IF NOT EXISTS names_symbol_insert AFTER INSERT ON symbols BEGIN
    ${NAME_COUNT_IN}
  END;
  CREATE TRIGGER IF NOT EXISTS names_symbol_delete AFTER DELETE ON symbols BEGIN
    ${NAME_COUNT_OUT}
  END;
  CREATE TRIGGER IF NOT EXISTS names_symbol_rename AFTER UPDATE OF qname, name ON symbols
    WHEN old.qname IS NOT new.qname OR old.name IS NOT new.name BEGIN
    ${NAME_COUNT_OUT}
    ${NAME_COUNT_IN}
  END;`;
const NAME_TRIGGER_NAMES = ['names_symbol_insert', 'names_symbol_delete', 'names_symbol_rename'];
/** The distinct substrings of one to NAME_GRAM_MAX characters of \`text\` (by code point, as SQLite's \`substr\`). */
function gramsOf(text: string): Set<string> {
  const chars = [...text];
  const grams = new Set<string>();
  for (let i = 0; i < chars.length; i++) for (let w = 1; w <= NAME_GRAM_MAX && i + w <= chars.length; w++) grams.add(chars.slice(i, i + w).join(''));
  return grams;
}
/** 1 when every trigger of NAME_TRIGGERS is in place. */
const NAMES_COUNTED = `SELECT count(*) = ${NAME_TRIGGER_NAMES.length} FROM sqlite_master WHERE type = 'trigger' AND name IN (${NAME_TRIGGER_NAMES.map((t) => `'${t}'`).join(', ')})`;
/** get_symbol's rank of a \`names\` row for the query (\`@query\`, \`@lower\`, \`@len\`). */
const NAME_RANK = `CASE WHEN qname = @query THEN 0 WHEN name = @query THEN 1
  WHEN qname_lower = @lower OR name_lower = @lower THEN 2 WHEN substr(qname_lower, -@len) = @lower THEN 3 ELSE 4 END`;
/** A name holding the query (\`@lower\`) as a substring. */
const NAME_MATCH = `instr(qname_lower, @lower) > 0`;
/** A name ranked above "other substring": ranks 0-2 are equalities that imply this, 3 is the suffix. */
const NAME_HEAD = `(name_lower = @lower OR substr(qname_lower, -@len) = @lower)`;
/** Matched names up to this many are ranked and sorted whole; more are scanned, split into head and tail. */
const NAMES_SORTED_MAX = 8192;
/** A page's names declared this many times together or fewer are read in one query. */
const BATCHED_DECLARATIONS_MAX = 1000;
/** A name a page draws from: its declarations' count and the count of every declaration up to its end. */
type PageName = { qname: string; name: string; qname_lower: string; n: number; upto: number };

/** FTS5's default `automerge`, restored after a bulk build. */
const FTS_AUTOMERGE = 4;
/** WAL pages between automatic checkpoints during a bulk build (the default is 1000). */
const BULK_CHECKPOINT_PAGES = 16384;
/** Page cache per connection (KiB): enough for the hot b-tree levels, bounded whatever the tree's size. */
const STORE_CACHE_KIB = 8192;

interface KeyedRow {
  id: number;
  key: string | null;
}

/** Rows by text key, in id order. Rows without a key sit under one no new key equals, so they are never reused, only dropped. */
function keyedRows(rows: readonly KeyedRow[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const r of rows) {
    const key = r.key ?? '\0';
    const list = out.get(key);
    if (list) list.push(r.id);
    else out.set(key, [r.id]);
  }
  return out;
}

/** Files stored, files parsed, declarations stored. */
export interface StoreCounts {
  files: number;
  parsed: number;
  symbols: number;
}

export interface StoredFile {
  id: number;
  path: string;
  sha256: string;
  size: number;
  mtimeMs: number;
  language: string | null;
  /** True when a syntax provider parsed it (declarations are current). */
  parsed: boolean;
  /** Line count of the indexed bytes. */
  lines: number;
  /** Why its language's provider left it unparsed (see ParseOutcome), or null. */
  unparsed: string | null;
}

type RawFile = Omit<StoredFile, 'parsed'> & { parsed: number };

export interface FileUpdate {
  path: string;
  sha256: string;
  size: number;
  mtimeMs: number;
  /** The state the bytes were read in (see `readSourceFileSync`), or null. */
  stamp: string | null;
  language: string | null;
  lines: number;
  /** Declarations as rows; null when no provider parsed the file. */
  symbols: SymbolInput[] | null;
  unparsed: string | null;
  /** Full-text input; null leaves the file out of the full-text tier. */
  text: TextInput | null;
}

/** A file re-read at a new stat stamp with the bytes the store holds: only its metadata changes. */
export interface FileTouch {
  path: string;
  size: number;
  mtimeMs: number;
  stamp: string | null;
}

export interface SkippedFile {
  path: string;
  size: number;
  mtimeMs: number;
  reason: string;
}

export interface SymbolRow {
  id: number;
  path: string;
  language: string;
  name: string;
  qname: string;
  kind: string;
  node_kind: string;
  facets: string;
  visibility: string | null;
  container: string | null;
  span_start: number;
  span_end: number;
  item_start: number;
  item_end: number;
  line: number;
}

export interface SymbolQuery {
  query: string;
  offset: number;
  limit: number;
}

/** A per-row SQL filter on paths, for the query modules beside the store. */
export type PathFilter = (path: string) => boolean;

/** Files `parsedLanguages` looks at. */
const PARSED_LANGUAGES_SAMPLE = 2000;

export class Store {
  private readonly db: Database.Database;
  /** The workspace whose files the store indexes (bytes are read from there). */
  readonly root: string;
  private readonly stmts: ReturnType<Store['prepare']>;
  private readonly driftListeners = new Set<(path: string) => void>();
  /** Files whose bytes on disk were verified against the digest, by the stamp of that state. */
  private readonly verified = new Map<string, { sha256: string; stamp: string }>();
  /** The filter `rift_path_ok(path)` applies; installed per query by `withPathFilter` (null: every path). */
  private pathFilter: PathFilter | null = null;
  private pathFilterDefined = false;

  private constructor(
    db: Database.Database,
    root: string,
    /** Where a store over bytes other than the workspace's (a revision's blobs) reads them. */
    private readonly source: ByteSource | null = null,
  ) {
    this.db = db;
    this.root = root;
    this.stmts = this.prepare();
    // What a rolled-back transaction wrote is gone: the kept rows may hold it.
    this.rollbackListeners.add(() => (this.tree = null));
  }

  /** Opens (creating when absent) the store in `file`; errors are SQLite's own (see store-open.ts). */
  static openFile(file: string, root: string): Store {
    // Other rift processes on the tree (standalone servers, the CLI) write this store too.
    const db = new Database(file, { timeout: storeBusyWaitMs() });
    try {
      return Store.init(db, root);
    } catch (e) {
      db.close();
      throw e;
    }
  }

  /** A private in-memory store over files of `root` (on-demand `force_include` files are indexed into one). */
  static memory(root: string, source: ByteSource | null = null): Store {
    return Store.init(new Database(':memory:'), root, source);
  }

  /** An in-memory copy of a `serialize`d store, over its own byte source. */
  static deserialize(image: Buffer, root: string, source: ByteSource): Store {
    return Store.init(new Database(image), root, source);
  }

  /** The whole database as one image (an in-memory store is copied this way, not rebuilt). */
  serialize(): Buffer {
    return this.db.serialize();
  }

  private static init(db: Database.Database, root: string, source: ByteSource | null = null): Store {
    // Pages a bulk build frees (merged full-text segments) go back to the filesystem (endBulk).
    // Set before anything is created, the mode is written with the first table (setting it writes
    // to an existing file, so only when it differs).
    if (db.pragma('auto_vacuum', { simple: true }) !== 2) db.pragma('auto_vacuum = INCREMENTAL');
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    // Sorts that outgrow the page cache (a cold build's index creation over millions of rows)
    // spill to an unlinked temporary file, not to memory, where they raised the peak of a cold
    // build of four copies of the stdlib by ~30 MB.
    db.pragma('temp_store = FILE');
    db.pragma(`cache_size = -${STORE_CACHE_KIB}`);
    // Several processes may open a fresh store at once: one builds the schema while the others
    // wait on the write lock (the busy timeout), then find it current and keep it. The mode is
    // read there too, from the file as that transaction sees it: read before, a fresh empty file
    // says 0 to every process, and each would then vacuum the store the first one built.
    // A store another process made current is opened without the write lock, which a long
    // write elsewhere (a cold build's batch, a resolve pass) may hold for a while.
    const vacuum =
      Store.isCurrent(db) && db.pragma('auto_vacuum', { simple: true }) === 2
        ? false
        : db.transaction(() => {
            Store.migrate(db);
            return db.pragma('auto_vacuum', { simple: true }) !== 2;
          }).immediate();
    // On a file made without the mode (an older store), it takes effect only through a vacuum.
    if (vacuum) db.exec('VACUUM');
    return new Store(db, root, source);
  }

  /** Whether the file holds the current schema with every table and its names counted: nothing for `migrate` to do. */
  private static isCurrent(db: Database.Database): boolean {
    return schemaMeta(db, 'schema_version') === SCHEMA_VERSION && schemaObjects(db, 'table', STORE_TABLES) === STORE_TABLES.length && Store.namesCounted(db);
  }

  /** Brings the schema to the current version (rebuilding it empty when it is not). */
  private static migrate(db: Database.Database): void {
    db.exec(`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
    const version = schemaMeta(db, 'schema_version');
    const present = schemaObjects(db, 'table', STORE_TABLES);
    // Version 12 lacks the files' read stamps (added empty: each file is hashed on its first read
    // until it is indexed again) and the names' substring totals (counted from the names). Runs
    // inside the opening transaction (see \`init\`).
    if (version === '12' && present === STORE_TABLES.length - 2) {
      for (const t of NAME_TRIGGER_NAMES) db.exec(`DROP TRIGGER IF EXISTS ${t}`);
      db.exec(`
        ALTER TABLE files ADD COLUMN stamp TEXT;
        DROP INDEX IF EXISTS names_rtail;
        ${SHORT_NAME_SCHEMA}
      `);
      Store.countGrams(db);
      db.exec(NAME_TRIGGERS);
      db.prepare(`UPDATE meta SET value = ? WHERE key = 'schema_version'`).run(SCHEMA_VERSION);
      return Store.migrate(db);
    }
    // A current schema with every table is kept; anything else is rebuilt from the tree.
    if (version === SCHEMA_VERSION && present === STORE_TABLES.length) {
      // A process that ended inside a cold build left the names uncounted.
      if (!Store.namesCounted(db)) Store.countNames(db);
      return;
    }
    db.exec(`
      -- Rebuilt empty: no earlier reconcile's seal describes what it holds.
      DELETE FROM meta WHERE key = 'reconciled';
      DROP TABLE IF EXISTS symbols_trigram;
      DROP TABLE IF EXISTS names_trigram;
      DROP TABLE IF EXISTS names;
      DROP TABLE IF EXISTS name_grams;
      DROP TABLE IF EXISTS name_grams_log;
      DROP TABLE IF EXISTS symbols_fts;
      DROP TABLE IF EXISTS docs_fts;
      DROP TABLE IF EXISTS chunks_fts;
      DROP TABLE IF EXISTS chunks;
      DROP TABLE IF EXISTS skipped;
      DROP TABLE IF EXISTS symbols;
      DROP TABLE IF EXISTS contents;
      DROP TABLE IF EXISTS blobs;
      DROP TABLE IF EXISTS files;
      CREATE TABLE files (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        blob_id INTEGER NOT NULL UNIQUE,
        size INTEGER NOT NULL,
        mtime_ms REAL NOT NULL,
        -- The state (inode, size, mtime, ctime) the file was in when its bytes were read and
        -- hashed; a read finding it unchanged takes a span without hashing the whole file again.
        stamp TEXT
      );
      -- What was indexed of some bytes: their digest, the language they were parsed as, whether a
      -- provider parsed them, their line count. Symbols and chunks belong to a blob, not a path.
      CREATE TABLE blobs (
        id INTEGER PRIMARY KEY,
        sha256 TEXT NOT NULL,
        language TEXT,
        parsed INTEGER NOT NULL,
        lines INTEGER NOT NULL,
        -- Why the language's provider left these bytes unparsed (parse_time, syntax_nodes, …), or null.
        unparsed TEXT
      );
      -- Visible files left out (not UTF-8, NUL byte, unreadable), remembered by size and
      -- mtime so a warm start does not read them again.
      CREATE TABLE skipped (path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ms REAL NOT NULL, reason TEXT NOT NULL);
      CREATE TABLE symbols (
        id INTEGER PRIMARY KEY,
        blob_id INTEGER NOT NULL,
        name TEXT NOT NULL,
        qname TEXT NOT NULL,
        qname_lower TEXT NOT NULL,
        name_lower TEXT NOT NULL,
        kind TEXT NOT NULL,
        node_kind TEXT NOT NULL,
        facets TEXT NOT NULL,
        visibility TEXT,
        container TEXT,
        span_start INTEGER NOT NULL,
        span_end INTEGER NOT NULL,
        item_start INTEGER NOT NULL,
        item_end INTEGER NOT NULL,
        line INTEGER NOT NULL,
        -- nameKey(qname_lower): exact qualified names are looked up by this integer.
        qname_key INTEGER NOT NULL
      );
      CREATE INDEX symbols_blob ON symbols(blob_id);
      CREATE INDEX symbols_name_lower ON symbols(name_lower);
      -- With each row's blob and start: a name's declarations are ordered by path from the index alone.
      CREATE INDEX symbols_qname_key ON symbols(qname_key, blob_id, span_start);
      -- Every distinct (qualified name, short name) pair with the number of declarations carrying it,
      -- kept by triggers (NAME_TRIGGERS) in the same statement as the symbols themselves.
      -- get_symbol matches and ranks names, not declarations: a name declared in many places
      -- (\`__init__\`, or every copy of a vendored tree) is one row, so a match's total and its
      -- page cost what the vocabulary costs.
      CREATE TABLE names (
        id INTEGER PRIMARY KEY,
        qname TEXT NOT NULL,
        name TEXT NOT NULL,
        qname_lower TEXT NOT NULL,
        name_lower TEXT NOT NULL,
        n INTEGER NOT NULL,
        UNIQUE (qname, name)
      );
      CREATE INDEX names_name_lower ON names(name_lower);
      ${SHORT_NAME_SCHEMA}
      -- Substring lookup of qualified names; the names themselves are read from \`names\`. Positions
      -- (detail full) let short patterns match without a recheck of every candidate.
      CREATE VIRTUAL TABLE names_trigram USING fts5(qname_lower, content = 'names', content_rowid = 'id',
        tokenize = 'trigram', detail = 'full', columnsize = 0);
      CREATE TRIGGER names_trigram_insert AFTER INSERT ON names BEGIN
        INSERT INTO names_trigram(rowid, qname_lower) VALUES (new.id, new.qname_lower);
      END;
      CREATE TRIGGER names_trigram_delete AFTER DELETE ON names BEGIN
        INSERT INTO names_trigram(names_trigram, rowid, qname_lower) VALUES ('delete', old.id, old.qname_lower);
      END;
      -- The file's text, once: a chunk owned by a declaration (symbol_id) is that declaration's own text.
      CREATE TABLE chunks (
        id INTEGER PRIMARY KEY,
        blob_id INTEGER NOT NULL,
        start INTEGER NOT NULL,
        end INTEGER NOT NULL,
        line INTEGER NOT NULL,
        symbol_id INTEGER,
        text_key TEXT
      );
      CREATE INDEX chunks_blob ON chunks(blob_id);
      CREATE INDEX chunks_symbol ON chunks(symbol_id) WHERE symbol_id IS NOT NULL;
      CREATE VIRTUAL TABLE chunks_fts USING fts5(body, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2');
      CREATE VIRTUAL TABLE symbols_fts USING fts5(name, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2');
      -- A declaration's documentation (comments before it, a docstring opening it), rowid = symbol id: a field
      -- of its own, so its length and word rarity are measured among docs alone. Undocumented declarations have no row.
      CREATE VIRTUAL TABLE docs_fts USING fts5(doc, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2');
    `);
    db.exec(NAME_TRIGGERS);
    db.prepare(`INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)`).run(SCHEMA_VERSION);
  }

  private prepare() {
    const db = this.db;
    return {
      allFiles: db.prepare(`SELECT ${FILE_COLUMNS} FROM files f JOIN blobs b ON b.id = f.blob_id ORDER BY f.path`),
      parsedPaths: db.prepare(`SELECT f.path FROM files f JOIN blobs b ON b.id = f.blob_id WHERE b.parsed = 1`).pluck(),
      anyUnder: db.prepare(`SELECT 1 AS x FROM files WHERE path >= ? AND path < ? LIMIT 1`),
      putSkipped: db.prepare(`INSERT OR REPLACE INTO skipped(path, size, mtime_ms, reason) VALUES (?, ?, ?, ?)`),
      deleteSkipped: db.prepare(`DELETE FROM skipped WHERE path = ?`),
      allSkipped: db.prepare(`SELECT path, size, mtime_ms AS mtimeMs, reason FROM skipped ORDER BY path`),
      skippedByPath: db.prepare(`SELECT path, size, mtime_ms AS mtimeMs, reason FROM skipped WHERE path = ?`),
      fileByPath: db.prepare(`SELECT ${FILE_COLUMNS}, f.blob_id AS blobId FROM files f JOIN blobs b ON b.id = f.blob_id WHERE f.path = ?`),
      revisionRowsRaw: db.prepare(`SELECT f.path, b.sha256 FROM files f JOIN blobs b ON b.id = f.blob_id ORDER BY f.path`).raw(),
      // Changes when another connection commits (this one's own writes leave it as it was).
      dataVersion: db.prepare(`PRAGMA data_version`).pluck(),
      insertBlob: db.prepare(`INSERT INTO blobs(sha256, language, parsed, lines, unparsed) VALUES (?, ?, ?, ?, ?)`),
      updateBlob: db.prepare(`UPDATE blobs SET sha256 = ?, language = ?, parsed = ?, lines = ?, unparsed = ? WHERE id = ?`),
      deleteBlob: db.prepare(`DELETE FROM blobs WHERE id = ?`),
      insertFile: db.prepare(`INSERT INTO files(path, blob_id, size, mtime_ms, stamp) VALUES (?, ?, ?, ?, ?)`),
      updateFile: db.prepare(`UPDATE files SET size = ?, mtime_ms = ?, stamp = ? WHERE id = ?`),
      touchFile: db.prepare(`UPDATE files SET mtime_ms = ?, size = ?, stamp = ? WHERE path = ?`),
      gramsLog: db.prepare(`SELECT qname_lower, sum(delta) FROM name_grams_log GROUP BY qname_lower`).raw(),
      clearGramsLog: db.prepare(`DELETE FROM name_grams_log`),
      fileStamp: db.prepare(`SELECT b.sha256, f.stamp FROM files f JOIN blobs b ON b.id = f.blob_id WHERE f.id = ?`),
      deleteFile: db.prepare(`DELETE FROM files WHERE id = ?`),
      // A declaration's full-text input is its qualified name, so that is its key.
      symbolsOfBlob: db.prepare(`SELECT id, qname AS key FROM symbols WHERE blob_id = ?`),
      deleteSymbols: db.prepare(`DELETE FROM symbols WHERE blob_id = ?`),
      deleteSymbol: db.prepare(`DELETE FROM symbols WHERE id = ?`),
      updateSymbol: db.prepare(
        `UPDATE symbols SET name = ?, qname = ?, qname_lower = ?, name_lower = ?, kind = ?, node_kind = ?, facets = ?,
           visibility = ?, container = ?, span_start = ?, span_end = ?, item_start = ?, item_end = ?, line = ?, qname_key = ?
         WHERE id = ?`,
      ),
      insertSymbol: db.prepare(
        `INSERT INTO symbols(name, qname, qname_lower, name_lower, kind, node_kind, facets, visibility, container,
           span_start, span_end, item_start, item_end, line, qname_key, blob_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      insertSymbolText: db.prepare(`INSERT INTO symbols_fts(rowid, name) VALUES (?, ?)`),
      deleteSymbolText: db.prepare(`DELETE FROM symbols_fts WHERE rowid = ?`),
      insertDocText: db.prepare(`INSERT INTO docs_fts(rowid, doc) VALUES (?, ?)`),
      deleteDocText: db.prepare(`DELETE FROM docs_fts WHERE rowid = ?`),
      chunkIdsOfBlob: db.prepare(`SELECT id FROM chunks WHERE blob_id = ?`),
      insertChunk: db.prepare(`INSERT INTO chunks(start, end, line, symbol_id, text_key, blob_id) VALUES (?, ?, ?, ?, ?, ?)`),
      chunkKeysOfBlob: db.prepare(`SELECT id, text_key AS key FROM chunks WHERE blob_id = ?`),
      updateChunk: db.prepare(`UPDATE chunks SET start = ?, end = ?, line = ?, symbol_id = ?, text_key = ? WHERE id = ?`),
      deleteChunk: db.prepare(`DELETE FROM chunks WHERE id = ?`),
      insertChunkText: db.prepare(`INSERT INTO chunks_fts(rowid, body) VALUES (?, ?)`),
      deleteChunkText: db.prepare(`DELETE FROM chunks_fts WHERE rowid = ?`),
      deleteChunks: db.prepare(`DELETE FROM chunks WHERE blob_id = ?`),
      setMeta: db.prepare(`INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)`),
      getMeta: db.prepare(`SELECT value FROM meta WHERE key = ?`),
      // Declarations are counted from the names' counts when the triggers keep them (70,000 rows
      // at 32 stdlib copies instead of 2.4 million), else from the rows: one statement, so both
      // read one state of the store.
      counts: db.prepare(
        `SELECT (SELECT count(*) FROM files) AS files,
                (SELECT count(*) FROM files f JOIN blobs b ON b.id = f.blob_id WHERE b.parsed = 1) AS parsed,
                CASE WHEN (${NAMES_COUNTED}) THEN (SELECT coalesce(sum(n), 0) FROM names) ELSE (SELECT count(*) FROM symbols) END AS symbols`,
      ),
      bumpBatchSeq: db.prepare(`INSERT INTO meta(key, value) VALUES ('batch_seq', '1') ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1`),
      seal: db.prepare(`SELECT (SELECT value FROM meta WHERE key = 'reconciled') AS sealed, (SELECT value FROM meta WHERE key = 'batch_seq') AS seq`),
      symbolsOfFile: db.prepare(`SELECT ${SYMBOL_COLUMNS} FROM ${SYMBOL_FROM} WHERE f.path = ? ORDER BY s.span_start, s.id`),
    };
  }

  files(): StoredFile[] {
    const rows = this.stmts.allFiles.all() as Array<RawFile | StoredFile>;
    for (const r of rows) r.parsed = r.parsed === 1;
    return rows as StoredFile[];
  }

  /** The paths of the files parsed for declarations (their rows are not read). */
  parsedPaths(): Set<string> {
    return new Set(this.stmts.parsedPaths.all() as string[]);
  }

  file(path: string): StoredFile | null {
    const r = this.stmts.fileByPath.get(path) as (RawFile & { blobId: number }) | undefined;
    if (!r) return null;
    const { blobId: _blob, ...file } = r;
    return { ...file, parsed: r.parsed === 1 };
  }

  /** Files left out by an earlier reconcile, by path (in path order). */
  skippedFiles(): Map<string, SkippedFile> {
    return new Map((this.stmts.allSkipped.all() as SkippedFile[]).map((k) => [k.path, k]));
  }

  /** Why a visible file was left out of the index, if it was. */
  skippedFile(path: string): SkippedFile | null {
    return (this.stmts.skippedByPath.get(path) as SkippedFile | undefined) ?? null;
  }

  /** Whether the store holds any file below the directory `dir`. */
  hasPathsUnder(dir: string): boolean {
    return this.stmts.anyUnder.get(dir + '/', dir + '0') !== undefined;
  }

  /** Whether the full-text tier holds anything (files with content have chunks). */
  hasFullText(): boolean {
    return this.cached('hasFullText', `SELECT 1 AS x FROM chunks LIMIT 1`).get() !== undefined;
  }

  /** Called with the path of each file found on disk with bytes other than the indexed ones. */
  onDrift(listener: (path: string) => void): () => void {
    this.driftListeners.add(listener);
    return () => this.driftListeners.delete(listener);
  }

  /**
   * The bytes the index holds for a file, read from the workspace and verified against the
   * stored digest. Null when the store holds no such file, or when the file on disk no longer
   * holds those bytes: then drift listeners hear of it (the read warns \`stale_index\`, the
   * indexer re-reads the file) and nothing of the new bytes is served as the indexed ones.
   */
  indexedBytes(path: string): Uint8Array | null {
    const file = this.file(path);
    return file ? this.indexedSpan(file, 0, file.size) : null;
  }

  /**
   * Bytes `[start, end)` of what the index holds for a file, under the same guarantee as
   * `indexedBytes`. Once a state of the file (its stamp: inode, size, mtime, ctime) has been
   * verified against the digest, later reads of that same state take only the span, without
   * reading or hashing the whole file again.
   */
  indexedRange(path: string, start: number, end: number): Uint8Array | null {
    const file = this.file(path);
    return file ? this.indexedSpan(file, start, end) : null;
  }

  /**
   * Paths of the full-text files that may hold `name`, in path order: those with a chunk carrying
   * all of its words (a rename's sweep). A superset — the words may stand apart there — so the
   * caller checks the bytes; a name with no words (`$`) matches every full-text file.
   */
  pathsWithWords(name: string): string[] {
    const words = queryWords(name);
    const rows = (
      words.length > 0
        ? this.cached('pathsWithWords', `SELECT DISTINCT f.path AS path FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid ${CHUNK_JOINS} WHERE chunks_fts MATCH ? ORDER BY f.path`).all(
            words.map((w) => phrase(w)).join(' AND '),
          )
        : this.cached('pathsWithText', `SELECT DISTINCT f.path AS path FROM chunks c ${CHUNK_JOINS} ORDER BY f.path`).all()
    ) as Array<{ path: string }>;
    return rows.map((r) => r.path);
  }

  private indexedSpan(file: StoredFile, start: number, end: number): Uint8Array | null {
    // A byte source holds exactly the indexed bytes (content-addressed): nothing to verify.
    if (this.source) return this.source(file.path)?.subarray(start, end) ?? null;
    const known = this.verified.get(file.path);
    if (known && known.sha256 === file.sha256) {
      const span = readSpanSync(this.root, file.path, start, end, known.stamp);
      if (span) return span;
    } else {
      // The state the indexer read and hashed these bytes in, when no read here has verified one
      // (read with the digest: another process may have re-indexed the file since \`file\`).
      const stored = this.stmts.fileStamp.get(file.id) as { sha256: string; stamp: string | null } | undefined;
      const span = stored?.sha256 === file.sha256 && stored.stamp ? readSpanSync(this.root, file.path, start, end, stored.stamp) : null;
      if (span) return span;
    }
    const read = readSourceFileSync(this.root, file.path, file.size);
    if (read.ok && read.sha256 === file.sha256) {
      this.verified.delete(file.path);
      if (read.stamp !== null) {
        // Bounded: the oldest verification is forgotten first (its file is then hashed again).
        if (this.verified.size >= VERIFIED_FILES_MAX) this.verified.delete(this.verified.keys().next().value!);
        this.verified.set(file.path, { sha256: file.sha256, stamp: read.stamp });
      }
      return read.bytes.subarray(start, end);
    }
    this.verified.delete(file.path);
    for (const l of this.driftListeners) l(file.path);
    return null;
  }

  meta(key: string): string | null {
    const r = this.stmts.getMeta.get(key) as { value: string } | undefined;
    return r ? r.value : null;
  }

  counts(): StoreCounts {
    return this.stmts.counts.get() as StoreCounts;
  }

  /**
   * The languages the working tree's files were parsed as, the most files first, told from a
   * sample (the first PARSED_LANGUAGES_SAMPLE files stored): which grammars a workspace uses
   * most, in a millisecond at any size.
   */
  parsedLanguages(): string[] {
    const rows = this.cached(
      'parsedLanguages',
      `SELECT b.language AS language FROM (SELECT blob_id FROM files ORDER BY id LIMIT ${PARSED_LANGUAGES_SAMPLE}) f JOIN blobs b ON b.id = f.blob_id
       WHERE b.parsed = 1 AND b.language IS NOT NULL GROUP BY b.language ORDER BY count(*) DESC, b.language`,
    ).all() as Array<{ language: string }>;
    return rows.map((r) => r.language);
  }

  /** Computes the tree revision of what the store holds. */
  computeTreeRevision(): string {
    return this.treeRows().revision(new Map());
  }

  /**
   * The tree revision of the stored files with `changes` applied: a path's digest (a file
   * changed or added), or null (a file gone).
   */
  treeRevisionWith(changes: ReadonlyMap<string, string | null>): string {
    return this.treeRows().revision(changes);
  }

  /**
   * Every stored file's digest in path order, kept between reads (see TreeRows): the tree
   * revision of every edit and the indexer's observed revision read them (72,000 rows: ~90 ms
   * a read at 32 stdlib copies). This connection's batches bring them up to date
   * (`applyBatch`); another connection's commit (`data_version`) or a rolled-back transaction
   * has them read again.
   */
  private treeRows(): TreeRows {
    const version = this.dataVersion();
    if (this.tree?.version === version) return this.tree.rows;
    const rows = this.stmts.revisionRowsRaw.all() as Array<[string, string]>;
    this.tree = { version, rows: new TreeRows(rows.map((r) => r[0]), new Map(rows)) };
    return this.tree.rows;
  }

  private tree: { version: number; rows: TreeRows } | null = null;

  /**
   * How many rows \`table\` holds, counted once per state of the store (2.4 million declarations
   * at 32 stdlib copies: 15 ms a count): another connection's commit (\`data_version\`) or this
   * one's batch counts again.
   */
  rowCount(table: 'symbols' | 'chunks'): number {
    const version = this.dataVersion();
    if (this.rowCounts?.version !== version) this.rowCounts = { version, counts: new Map() };
    let n = this.rowCounts.counts.get(table);
    if (n === undefined) {
      n = this.cached(`rowCount.${table}`, `SELECT count(*) FROM ${table}`).pluck().get() as number;
      this.rowCounts.counts.set(table, n);
    }
    return n;
  }

  private rowCounts: { version: number; counts: Map<string, number> } | null = null;

  /** SQLite's `data_version`: changes when another connection commits (this one's writes leave it as it was). */
  private dataVersion(): number {
    return this.stmts.dataVersion.get() as number;
  }

  /**
   * Bulk mode for a cold build: full-text segments are not merged while batches land (one
   * merge at the end instead of one per level per batch), the WAL checkpoints rarely, and
   * commits do not wait for the disk — a crash mid-build loses only the build, which the
   * next start redoes. \`endBulk\` merges once and restores the incremental settings. Only a
   * build into an empty store defers merging: a merge at the end rewrites the whole full-text
   * index, which a large incremental batch (a branch switch) must not pay for.
   */
  beginBulk(empty: boolean): void {
    // The merge owed is recorded in the store, so whichever connection ends the bulk (a worker's:
    // see aside.ts), or the next bulk after a process stopped inside this one, does it.
    if (empty) {
      for (const t of FTS_TABLES) this.db.exec(`INSERT INTO ${t}(${t}, rank) VALUES ('automerge', 0)`);
      this.stmts.setMeta.run('fts_merge_owed', '1');
    }
    // Names are counted once at the end, not per declaration (per row, 15 % of the stdlib's cold CPU).
    if (empty) for (const t of NAME_TRIGGER_NAMES) this.db.exec(`DROP TRIGGER IF EXISTS ${t}`);
    this.db.pragma('synchronous = OFF');
    this.db.pragma(`wal_autocheckpoint = ${BULK_CHECKPOINT_PAGES}`);
  }

  /** Ends a bulk build on this connection: its settings (`leaveBulk`), then what the bulk owes (`finishBulk`). */
  endBulk(): void {
    this.leaveBulk();
    this.finishBulk();
  }

  /** This connection's settings back from a bulk build's. */
  leaveBulk(): void {
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('wal_autocheckpoint = 1000');
  }

  /**
   * What a bulk build owes the store, on any connection: the names counted, the full-text
   * segments merged once (and automerge back), freed pages returned, the log folded in.
   */
  finishBulk(): void {
    if (!Store.namesCounted(this.db)) Store.countNames(this.db);
    if (this.meta('fts_merge_owed') !== null) {
      for (const t of FTS_TABLES) {
        this.db.exec(`INSERT INTO ${t}(${t}) VALUES ('optimize')`);
        // FTS5 takes configuration values as integer literals, not bound (real) numbers.
        this.db.exec(`INSERT INTO ${t}(${t}, rank) VALUES ('automerge', ${FTS_AUTOMERGE})`);
      }
      this.db.prepare(`DELETE FROM meta WHERE key = 'fts_merge_owed'`).run();
    }
    this.db.pragma('incremental_vacuum');
    this.db.pragma('wal_checkpoint(TRUNCATE)');
  }

  /** Whether a bulk build left work for `finishBulk` (this process's, or one that stopped inside it). */
  bulkOwed(): boolean {
    return !Store.namesCounted(this.db) || this.meta('fts_merge_owed') !== null;
  }

  /** Computes, records and returns the tree revision of what the store holds now. */
  /**
   * Computes and records the tree revision of what the store holds, in one write transaction (a
   * batch of another process cannot land between the computation and the record). With `seal`,
   * also seals the reconcile that produced this state (see \`sealedRevision\`), provided the
   * store holds exactly the batches \`seal.seq\` counts: none of another process's since the
   * reconcile began.
   */
  commitRevision(seal?: { stamp: string; seq: number; counts: StoreCounts }): string {
    let revision = '';
    this.transaction(() => {
      revision = this.computeTreeRevision();
      this.stmts.setMeta.run('tree_revision', revision);
      if (seal && this.batchSeq() === seal.seq) this.stmts.setMeta.run('reconciled', JSON.stringify({ ...seal, revision }));
    });
    return revision;
  }

  /**
   * How many batches every process has written to this store: each \`applyBatch\` counts one in
   * its own transaction. A reconcile reads it before its walk to know, at its end, whether
   * anyone else wrote meanwhile.
   */
  batchSeq(): number {
    return Number(this.meta('batch_seq') ?? '0');
  }

  /**
   * The tree revision a sealed reconcile recorded, when \`stamp\` (what a walk saw, under its
   * configuration) is the one it sealed and no batch has been written since; else null. Then
   * the stored files are exactly that walk's, under that configuration: a reconcile has nothing
   * to read, compare or hash (at 32 stdlib copies, half a second of a warm start).
   */
  sealedRevision(stamp: string): { revision: string; counts: StoreCounts } | null {
    const row = this.stmts.seal.get() as { sealed: string | null; seq: string | null };
    if (row.sealed === null) return null;
    try {
      const sealed = JSON.parse(row.sealed) as { stamp?: unknown; seq?: unknown; revision?: unknown; counts?: StoreCounts };
      const ok = sealed.stamp === stamp && sealed.seq === Number(row.seq ?? '0') && typeof sealed.revision === 'string' && typeof sealed.counts === 'object';
      return ok ? { revision: sealed.revision as string, counts: sealed.counts! } : null;
    } catch {
      return null;
    }
  }


  /**
   * Applies one batch in one transaction: upserts, metadata-only touches, deletions and
   * skipped files. The caller then commits the tree revision (once per reconcile, not per
   * batch: hashing every row is linear in the tree).
   */
  applyBatch(
    updates: readonly FileUpdate[],
    touches: readonly FileTouch[],
    deletions: readonly string[],
    skips: readonly SkippedFile[] = [],
  ): void {
    const s = this.stmts;
    const run = this.db.transaction(() => {
      s.bumpBatchSeq.run();
      for (const u of updates) s.deleteSkipped.run(u.path);
      for (const path of deletions) s.deleteSkipped.run(path);
      // A path both deleted and skipped (an indexed file whose new bytes are left out) stays skipped.
      for (const k of skips) s.putSkipped.run(k.path, k.size, k.mtimeMs, k.reason);
      for (const path of deletions) {
        const f = s.fileByPath.get(path) as { id: number; blobId: number } | undefined;
        if (!f) continue;
        this.dropSymbols(f.blobId);
        this.dropChunks(f.blobId);
        s.deleteFile.run(f.id);
        s.deleteBlob.run(f.blobId);
      }
      for (const t of touches) s.touchFile.run(t.mtimeMs, t.size, t.stamp, t.path);
      for (const u of updates) {
        const parsed = u.symbols !== null ? 1 : 0;
        const prev = s.fileByPath.get(u.path) as { id: number; blobId: number } | undefined;
        let blob: number;
        if (prev) {
          blob = prev.blobId;
          s.updateBlob.run(u.sha256, u.language, parsed, u.lines, u.unparsed, blob);
          s.updateFile.run(u.size, u.mtimeMs, u.stamp, prev.id);
        } else {
          blob = Number(s.insertBlob.run(u.sha256, u.language, parsed, u.lines, u.unparsed).lastInsertRowid);
          s.insertFile.run(u.path, blob, u.size, u.mtimeMs, u.stamp);
        }
        const ids = u.symbols && u.language ? this.replaceDeclarations(blob, u.symbols, u.text) : (this.dropSymbols(blob), []);
        if (u.text) this.replaceChunks(blob, u.text.chunks, ids);
        else this.dropChunks(blob);
      }
      this.flushGrams();
    });
    // IMMEDIATE (a savepoint inside the indexer's transaction): see Indexer.transaction.
    run.immediate();
    this.rowCounts = null;
    if (this.tree && !this.tree.rows.apply(updates, deletions)) this.tree = null;
  }

  private dropSymbols(blob: number): void {
    for (const r of this.stmts.symbolsOfBlob.all(blob) as KeyedRow[]) {
      this.stmts.deleteSymbolText.run(r.id);
      this.stmts.deleteDocText.run(r.id);
    }
    this.stmts.deleteSymbols.run(blob);
  }

  private dropChunks(blob: number): void {
    for (const r of this.stmts.chunkIdsOfBlob.all(blob) as { id: number }[]) this.stmts.deleteChunkText.run(r.id);
    this.stmts.deleteChunks.run(blob);
  }

  /**
   * Writes a blob's declarations and returns their row ids in order. A declaration whose
   * full-text input is unchanged (same key) keeps its row and full-text entries and only has
   * its columns updated; the others are inserted, and rows left over are dropped — so an edit
   * rewrites only what changed.
   */
  private replaceDeclarations(blob: number, symbols: readonly SymbolInput[], text: TextInput | null): number[] {
    const s = this.stmts;
    const reusable = keyedRows(s.symbolsOfBlob.all(blob) as KeyedRow[]);
    const ids: number[] = [];
    // Which declarations were already stored (their full-text rows are replaced, not added).
    const kept: boolean[] = [];
    // The rows first, their full-text entries after. A write to `symbols` (a statement with
    // triggers) makes FTS5 write out the terms it holds pending, so interleaved (a row, its
    // entries, the next row) every declaration left a full-text segment of its own to merge:
    // measured on an edit of TypeScript's lib.es5.d.ts (968 declarations), 30-47 ms here, and
    // 16-28 ms in this order.
    for (const row of symbols) {
      const id = reusable.get(row[1])?.shift();
      if (id !== undefined) {
        s.updateSymbol.run(...row, id);
        ids.push(id);
        kept.push(true);
      } else {
        ids.push(Number(s.insertSymbol.run(...row, blob).lastInsertRowid));
        kept.push(false);
      }
    }
    const dropped = [...reusable.values()].flat();
    for (const id of dropped) s.deleteSymbol.run(id);
    // Then each full-text table's deletions, and its insertions by ascending row id: FTS5 also
    // writes out its pending terms when a row id does not follow the last one written.
    for (const id of dropped) s.deleteSymbolText.run(id);
    if (text) for (const [i, id] of ids.entries()) if (!kept[i]) s.insertSymbolText.run(id, text.names[i]);
    // A kept row keeps its name (its key), but its documentation may have changed.
    const staleDocs = [...dropped, ...ids.filter((_, i) => kept[i])].sort((a, b) => a - b);
    for (const id of staleDocs) s.deleteDocText.run(id);
    if (text) {
      const docs = ids.map((id, i) => [id, text.docs[i]] as const).filter(([, doc]) => doc !== '');
      for (const [id, doc] of docs.sort((a, b) => a[0] - b[0])) s.insertDocText.run(id, doc);
    }
    return ids;
  }

  /** Writes a blob's chunks, keeping the rows and full-text entries of chunks whose text is unchanged. */
  private replaceChunks(blob: number, chunks: TextInput['chunks'], symbolIds: readonly number[]): void {
    const s = this.stmts;
    const reusable = keyedRows(s.chunkKeysOfBlob.all(blob) as KeyedRow[]);
    for (const c of chunks) {
      const owner = c.owner === null ? null : (symbolIds[c.owner] ?? null);
      const kept = reusable.get(c.key)?.shift();
      if (kept !== undefined) {
        s.updateChunk.run(c.start, c.end, c.line, owner, c.key, kept);
        continue;
      }
      const info = s.insertChunk.run(c.start, c.end, c.line, owner, c.key, blob);
      s.insertChunkText.run(info.lastInsertRowid, c.text);
    }
    for (const ids of reusable.values()) {
      for (const id of ids) {
        s.deleteChunkText.run(id);
        s.deleteChunk.run(id);
      }
    }
  }

  /** Parsed blobs by digest and language (`sha256 \0 language`), for reuse of their rows by a revision holding the same bytes. */
  parsedBlobs(): Map<string, number> {
    const rows = this.cached('parsedBlobs', `SELECT id, sha256, language FROM blobs WHERE parsed = 1 AND language IS NOT NULL`).all() as Array<{
      id: number;
      sha256: string;
      language: string;
    }>;
    return new Map(rows.map((r) => [`${r.sha256}\0${r.language}`, r.id]));
  }

  /**
   * A parsed blob's rows as a batch writes them, in source order: declarations, and chunks
   * (spans, keys and the index of their owning declaration; their text is the caller's to
   * recompute from the bytes, since the full-text tables keep none).
   */
  blobRows(
    blob: number,
    sha256: string,
  ): { lines: number; symbols: SymbolInput[]; chunks: Array<{ start: number; end: number; line: number; key: string; owner: number | null }> } | null {
    // A file's blob row is rewritten in place when the file changes: the digest must still match.
    const head = this.cached('blobHead', `SELECT lines, sha256, parsed FROM blobs WHERE id = ?`).get(blob) as
      | { lines: number; sha256: string; parsed: number }
      | undefined;
    if (!head || head.sha256 !== sha256 || head.parsed !== 1) return null;
    const symbols = this.cached(
      'blobSymbols',
      `SELECT id, name, qname, qname_lower, name_lower, kind, node_kind, facets, visibility, container,
              span_start, span_end, item_start, item_end, line, qname_key
       FROM symbols WHERE blob_id = ? ORDER BY item_start, id`,
    ).raw().all(blob) as Array<[number, ...SymbolInput]>;
    const owner = new Map(symbols.map((r, i) => [r[0], i]));
    const chunks = this.cached('blobChunks', `SELECT start, end, line, text_key AS key, symbol_id AS symbol FROM chunks WHERE blob_id = ? ORDER BY start`)
      .all(blob) as Array<{ start: number; end: number; line: number; key: string; symbol: number | null }>;
    return {
      lines: head.lines,
      symbols: symbols.map((r) => r.slice(1) as SymbolInput),
      chunks: chunks.map((c) => ({ start: c.start, end: c.end, line: c.line, key: c.key, owner: c.symbol === null ? null : (owner.get(c.symbol) ?? null) })),
    };
  }

  symbolsOfFile(path: string): SymbolRow[] {
    return this.stmts.symbolsOfFile.all(path) as SymbolRow[];
  }

  /**
   * Whether \`names\` holds every declaration's name with its count. Asked per query: another
   * process's cold build may have dropped the triggers since (reads then go to the declarations).
   */
  namesCounted(): boolean {
    return this.cached('names.counted', NAMES_COUNTED).pluck().get() === 1;
  }

  /**
   * Declarations whose qualified name contains the query (case-insensitive), ranked:
   * exact qualified name, exact short name, case-insensitive equality, qualified-name
   * suffix, other substring; ties by qualified name, short name, path, span start, id.
   */
  findSymbols(q: SymbolQuery): { total: number; rows: SymbolRow[] } {
    if (!this.namesCounted()) return this.scanSymbols(q);
    // Names are matched and ranked first (\`names\`: each distinct name once, with its count),
    // then the page's declarations are read name by name.
    const { total, names } = this.pageNames(q);
    return { total, rows: names.length === 0 ? [] : this.declarationsNamed(names, q) };
  }

  /**
   * The names a page of findSymbols draws from, in page order, each with the count of
   * declarations up to its end; and the query's total.
   */
  private pageNames(q: SymbolQuery): { total: number; names: PageName[] } {
    const lower = q.query.toLowerCase();
    const chars = [...lower];
    const params = {
      phrase: `"${lower.replaceAll('"', '""')}"`,
      glob: `*${lower.replace(/[*?[\]]/g, (c) => `[${c}]`)}*`,
      lower,
      query: q.query,
      len: lower.length,
      offset: q.offset,
      limit: q.limit,
    };
    // A query of three or more characters goes through the trigram index: a phrase of its
    // trigrams, each at the next position, is exactly a substring of the lowercased qualified
    // name, answered from the index alone (for printable ASCII the tokenizer's case folding is
    // the identity on names lowercased already); other queries go through GLOB (case-sensitive
    // over the lowercased names, its metacharacters escaped as one-character classes), which
    // SQLite checks again on every candidate. Up to NAMES_SORTED_MAX matches are counted, then
    // ranked and sorted down to the page (rankedNames).
    if (chars.length >= 3) {
      const mode = /^[\x20-\x7e]+$/.test(lower) ? 'phrase' : 'glob';
      const candidates = {
        phrase: `SELECT rowid FROM names_trigram WHERE names_trigram MATCH @phrase`,
        glob: `SELECT rowid FROM names_trigram WHERE qname_lower GLOB @glob`,
      }[mode];
      // The index is asked once: the ids are counted and ranked from a list.
      const ids = this.cached(`names.candidates:${mode}`, `${candidates} LIMIT ${NAMES_SORTED_MAX + 1}`).pluck().all(params) as number[];
      if (ids.length <= NAMES_SORTED_MAX) {
        const listed = { ...params, ids: JSON.stringify(ids) };
        const among = `WHERE id IN (SELECT value FROM json_each(@ids))`;
        const total = this.cached('names.listedTotal', `SELECT coalesce(sum(n), 0) FROM names ${among}`).pluck().get(listed) as number;
        return { total, names: total > q.offset ? this.rankedNames('names.listed', among, listed, q) : [] };
      }
    }
    if (chars.length > 0 && chars.length <= NAME_GRAM_MAX) return this.pageShortNames(q, { ...params, last: chars.at(-1) ?? '' });
    // More (a common word): the names are scanned, the ranked head (exact names and suffixes)
    // sorted, the rest read in name order through the table's unique index, stopping at the
    // page's end. Over the lowercased names, a substring is a substring whichever way it is found.
    const head = `WHERE ${NAME_MATCH} AND ${NAME_HEAD}`;
    const stats = this.cached(
      'names.stats',
      `SELECT coalesce(sum(n), 0) AS total, coalesce(sum(n) FILTER (WHERE ${NAME_HEAD}), 0) AS head FROM names WHERE ${NAME_MATCH}`,
    ).get(params) as { total: number; head: number };
    const names: PageName[] = [];
    if (q.offset < stats.head) names.push(...this.rankedNames('names.head', head, params, q));
    if (q.offset + q.limit > stats.head && q.offset < stats.total) {
      const tail = this.cached(
        'names.tail',
        `SELECT qname, name, qname_lower, n, upto + @head AS upto FROM (
           SELECT qname, name, qname_lower, n, sum(n) OVER (ORDER BY qname, name ROWS UNBOUNDED PRECEDING) AS upto
           FROM names WHERE ${NAME_MATCH} AND NOT ${NAME_HEAD} ORDER BY qname, name)
         WHERE upto + @head > @offset LIMIT @limit`,
      );
      names.push(...(tail.all({ ...params, head: stats.head }) as PageName[]));
    }
    return { total: stats.total, names };
  }

  /**
   * pageNames for a query of one or two characters, which may be in most names: the total is
   * kept (\`name_grams\`), and the page's names are read in page order from indexes, stopping at
   * its end — those equal to the query (ranks 0-2, a handful, sorted), those ending in it (rank
   * 3, a range of the last character's index in name order), then the others in name order.
   */
  private pageShortNames(q: SymbolQuery, params: Record<string, string | number>): { total: number; names: PageName[] } {
    // Every batch applies its log before it commits (flushGrams): the totals are current.
    const total = (this.cached('names.gramTotal', `SELECT total FROM name_grams WHERE gram = @lower`).pluck().get(params) as number | undefined) ?? 0;
    const names: PageName[] = [];
    if (q.offset >= total || q.limit === 0) return { total, names };
    const columns = 'qname, name, qname_lower, n';
    const notEqual = 'name_lower <> @lower AND qname_lower <> @lower';
    const segments = [
      this.cached(
        'names.shortEqual',
        `SELECT ${columns} FROM (
           SELECT ${columns}, ${NAME_RANK} AS rank FROM names WHERE name_lower = @lower
           UNION SELECT ${columns}, ${NAME_RANK} AS rank FROM names WHERE length(qname_lower) <= ${NAME_GRAM_MAX} AND qname_lower = @lower)
         ORDER BY rank, qname, name`,
      ),
      this.cached('names.shortSuffix', `SELECT ${columns} FROM names WHERE ${NAME_LAST} = @last AND substr(qname_lower, -@len) = @lower AND ${notEqual} ORDER BY qname, name`),
      this.cached('names.shortOther', `SELECT ${columns} FROM names WHERE ${NAME_MATCH} AND substr(qname_lower, -@len) <> @lower AND ${notEqual} ORDER BY qname, name`),
    ];
    const page = { names, upto: 0 };
    for (const segment of segments) if (!fillPage(page, segment.iterate(params) as IterableIterator<Omit<PageName, 'upto'>>, q)) break;
    return { total, names };
  }

  /**
   * The names \`where\` selects that hold the page's declarations, in page order (rank, qualified
   * name, short name), each with the count of declarations up to its end. Each name holds at
   * least one declaration, so the page lies within the first offset + limit names: a sort that
   * keeps only those, not the whole selection.
   */
  private rankedNames(key: string, where: string, params: Record<string, string | number>, q: SymbolQuery): PageName[] {
    const rows = this.cached(key, `SELECT qname, name, qname_lower, n FROM names ${where} ORDER BY ${NAME_RANK}, qname, name LIMIT @take`).all({
      ...params,
      take: q.offset + q.limit,
    }) as Array<Omit<PageName, 'upto'>>;
    const page = { names: [] as PageName[], upto: 0 };
    fillPage(page, rows, q);
    return page.names;
  }

  /** The page of declarations `names` (from pageNames) hold, in page order. */
  private declarationsNamed(names: readonly PageName[], q: SymbolQuery): SymbolRow[] {
    // The first name's declarations before the page's offset are skipped.
    let skip = q.offset - (names[0].upto - names[0].n);
    if (names.length > 1 && names.reduce((sum, n) => sum + n.n, 0) <= BATCHED_DECLARATIONS_MAX) {
      // Names declared a few times each (most names of most trees): one query for all of them,
      // in page order by the name's place on the page.
      const batch = this.cached(
        `names.declarationsBatched:${names.length}`,
        `SELECT ${SYMBOL_COLUMNS} FROM (VALUES ${names.map(() => '(?, ?, ?, ?)').join(', ')}) v
           JOIN symbols s ON s.qname_key = v.column1 AND s.qname = v.column2 AND s.name = v.column3 ${SYMBOL_JOINS}
         ORDER BY v.column4, f.path, s.span_start, s.id LIMIT ? OFFSET ?`,
      );
      return batch.all(...names.flatMap((n, i) => [nameKey(n.qname_lower), n.qname, n.name, i]), q.limit, skip) as SymbolRow[];
    }
    // Otherwise name by name, by path: the page's ids first, then their rows. The ids come from
    // the qualified-name key's index alone (it holds each row's file and start) when every row
    // under the key carries this name; otherwise, as when \`Parse\` and \`parse\` share a key,
    // each row's names are read to tell them apart.
    const declarations = (by: string) =>
      `SELECT ${SYMBOL_COLUMNS} FROM ${SYMBOL_FROM} WHERE s.id IN (
         SELECT d.id FROM symbols d JOIN files df ON df.blob_id = d.blob_id
         WHERE ${by} ORDER BY df.path, d.span_start, d.id LIMIT @limit OFFSET @skip)
       ORDER BY f.path, s.span_start, s.id`;
    const underKey = this.cached('names.underKey', `SELECT count(*) FROM symbols WHERE qname_key = ?`).pluck();
    const rows: SymbolRow[] = [];
    for (const n of names) {
      if (rows.length >= q.limit) break;
      const key = nameKey(n.qname_lower);
      const page =
        underKey.get(key) === n.n
          ? this.cached('names.declarationsByKey', declarations('d.qname_key = @key'))
          : this.cached('names.declarationsByName', declarations('d.qname_key = @key AND d.qname = @qname AND d.name = @name'));
      rows.push(...(page.all({ key, qname: n.qname, name: n.name, limit: q.limit - rows.length, skip }) as SymbolRow[]));
      skip = 0;
    }
    return rows;
  }

  /**
   * findSymbols while the names are not counted (a cold build storing its batches, one killed
   * before its end): the same order over the declarations themselves, every one of them read.
   */
  private scanSymbols(q: SymbolQuery): { total: number; rows: SymbolRow[] } {
    const lower = q.query.toLowerCase();
    const params = { lower, query: q.query, len: lower.length, offset: q.offset, limit: q.limit };
    const rows = this.cached(
      'symbols.scan',
      `SELECT ${SYMBOL_COLUMNS}, count(*) OVER () AS total FROM ${SYMBOL_FROM}
       WHERE instr(s.qname_lower, @lower) > 0
       ORDER BY ${NAME_RANK}, s.qname, s.name, f.path, s.span_start, s.id LIMIT @limit OFFSET @offset`,
    ).all(params) as Array<SymbolRow & { total: number }>;
    const total =
      rows[0]?.total ?? (this.cached('symbols.scanCount', `SELECT count(*) FROM symbols WHERE instr(qname_lower, @lower) > 0`).pluck().get(params) as number);
    return { total, rows };
  }

  /** Whether \`names\` counts the declarations (not while a cold build, in any process, defers it). */
  private static namesCounted(db: Database.Database): boolean {
    return db.prepare(NAMES_COUNTED).pluck().get() === 1;
  }

  /**
   * Counts every name from the declarations and restores the triggers that keep the count: at
   * the end of a cold build, and at the next open after one was killed. Idempotent, and whole
   * in one transaction, so another process's build meanwhile only goes on counting per row.
   */
  private static countNames(db: Database.Database): void {
    db.transaction(() => {
      for (const t of NAME_TRIGGER_NAMES) db.exec(`DROP TRIGGER IF EXISTS ${t}`);
      db.exec(`DELETE FROM names`);
      db.exec(`INSERT INTO names(qname, name, qname_lower, name_lower, n)
        SELECT qname, name, qname_lower, name_lower, count(*) FROM symbols GROUP BY qname, name ORDER BY qname, name`);
      Store.countGrams(db);
      db.exec(NAME_TRIGGERS);
    }).immediate();
  }

  /** Counts \`name_grams\` from the names whole (the caller holds the name triggers off). */
  private static countGrams(db: Database.Database): void {
    db.exec(`DELETE FROM name_grams; DELETE FROM name_grams_log`);
    Store.addGrams(db, db.prepare(`SELECT qname_lower, n FROM names`).raw().iterate() as IterableIterator<[string, number]>);
  }

  /** Adds each name's count (\`[qname_lower, n]\`, n may be negative) to the totals of its substrings. */
  private static addGrams(db: Database.Database, counts: Iterable<[string, number]>): void {
    const totals = new Map<string, number>();
    for (const [lower, n] of counts) {
      if (n === 0) continue;
      for (const g of gramsOf(lower)) totals.set(g, (totals.get(g) ?? 0) + n);
    }
    const put = db.prepare(`INSERT INTO name_grams(gram, total) VALUES (?, ?) ON CONFLICT (gram) DO UPDATE SET total = total + excluded.total`);
    for (const [g, total] of totals) if (total !== 0) put.run(g, total);
  }

  /**
   * Applies the names the triggers counted in and out since the last flush to the substring
   * totals, once per name and substring (per declaration in SQL, a new file's names cost 70 % of
   * its batch). Runs in the batch's transaction, so the totals commit with the names.
   */
  private flushGrams(): void {
    // Net per name: a rename in and out again cancels.
    const logged = this.stmts.gramsLog.all() as Array<[string, number]>;
    if (logged.length === 0) return;
    Store.addGrams(this.db, logged);
    this.stmts.clearGramsLog.run();
  }

  private readonly statementCache = new Map<string, Database.Statement>();

  /**
   * A statement prepared once per store, keyed by name (for query modules beside the store).
   * While `withPathFilter` runs with every path in, a statement that filters by
   * `rift_path_ok(f.path)` is prepared without it: a call into JavaScript per matching row is a
   * fifth of a common word's search on a large tree.
   */
  prepared(key: string, sql: string): Database.Statement {
    if (this.pathFilter === null && sql.includes(PATH_FILTER_CALL)) return this.cached(`${key}\0every path`, sql.replaceAll(PATH_FILTER_CALL, '1'));
    return this.cached(key, sql);
  }

  /**
   * Runs `run` with `rift_path_ok(path)` answering `filter` in this store's SQL (null: every
   * path, and `prepared` leaves the call out). Queries run synchronously, so the filter
   * installed for this call is the one every row sees.
   */
  withPathFilter<T>(filter: PathFilter | null, run: () => T): T {
    if (!this.pathFilterDefined) {
      this.db.function('rift_path_ok', { deterministic: false, varargs: false }, (p: unknown) => (this.pathFilter === null || this.pathFilter(String(p)) ? 1 : 0));
      this.pathFilterDefined = true;
    }
    const previous = this.pathFilter;
    this.pathFilter = filter;
    try {
      return run();
    } finally {
      this.pathFilter = previous;
    }
  }

  /** The name of a temporary fts5vocab table over a full-text table (its per-term row counts), created once. */
  vocabulary(table: 'symbols_fts' | 'chunks_fts' | 'docs_fts'): string {
    const vocab = `temp.rift_${table}_vocab`;
    this.db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ${vocab} USING fts5vocab(main, '${table}', 'row')`);
    return vocab;
  }

  private cached(key: string, sql: string): Database.Statement {
    let s = this.statementCache.get(key);
    if (!s) {
      s = this.db.prepare(sql);
      this.statementCache.set(key, s);
    }
    return s;
  }

  /**
   * A read transaction on a second connection: WAL keeps what it sees fixed while this
   * store keeps committing (a change learns what the index held of files its hooks rewrote).
   */
  readSnapshot(): StoreSnapshot {
    const db = new Database(this.db.name, { readonly: true, fileMustExist: true });
    db.exec('BEGIN');
    db.prepare('SELECT count(*) AS n FROM files').get(); // the snapshot starts at the first read
    const file = db.prepare('SELECT b.sha256, b.lines FROM files f JOIN blobs b ON b.id = f.blob_id WHERE f.path = ?');
    return {
      file(path: string): { sha256: string; lines: number } | null {
        return (file.get(path) as { sha256: string; lines: number } | undefined) ?? null;
      },
      close(): void {
        try {
          db.exec('COMMIT');
        } finally {
          db.close();
        }
      },
    };
  }

  /**
   * This connection for a module that keeps its own tables in rift.db (the relationship graph):
   * statements and schema only, so its writes join the store's transactions and nothing else of
   * the connection leaks out.
   */
  tables(): Tables {
    return {
      prepare: (sql) => this.db.prepare(sql),
      exec: (sql) => void this.db.exec(sql),
      transaction: (work) => this.transaction(work),
      onRollback: (listener) => void this.rollbackListeners.add(listener),
      dataVersion: () => this.dataVersion(),
    };
  }

  /** Called when a transaction of `transaction()` rolls back (what was read inside it may be gone). */
  private readonly rollbackListeners = new Set<() => void>();

  /**
   * Runs `work` in one write transaction (the store's and the graph's writes of one batch).
   * IMMEDIATE takes the write lock up front, waiting out other rift processes writing the same
   * store: a deferred transaction that read first fails at once (SQLITE_BUSY, no wait) when
   * another process wrote meanwhile.
   */
  transaction(work: () => void): void {
    try {
      this.db.transaction(work).immediate();
    } catch (e) {
      for (const listener of this.rollbackListeners) listener();
      throw e;
    }
  }

  /**
   * Writes a copy of this store to `file` (a new database) for a tree holding the same files at
   * other stat stamps (a projection): each path in `stamps` takes its new size and mtime, so the
   * copy's first build finds them current and parses nothing; `drop` names tables the copy
   * leaves out. Parse results are by blob, so the copy's rows serve the same bytes.
   */
  copyFor(file: string, stamps: ReadonlyMap<string, { size: number; mtimeMs: number }>, drop: readonly string[]): void {
    const image = this.db.serialize();
    // Header bytes 18–19 say WAL (2); an in-memory database opens only a rollback-journal image (1).
    image[18] = 1;
    image[19] = 1;
    const copy = new Database(image);
    try {
      copy.transaction(() => {
        // The copy's files are other inodes: their bytes are verified on first read.
        const put = copy.prepare('UPDATE files SET size = ?, mtime_ms = ?, stamp = NULL WHERE path = ?');
        for (const [path, st] of stamps) put.run(st.size, st.mtimeMs, path);
        // The copy's files are not what the seal's walk saw.
        copy.exec(`DELETE FROM meta WHERE key = 'reconciled'`);
        for (const table of drop) copy.exec(`DROP TABLE IF EXISTS ${table}`);
      })();
      // The store that opens the copy turns WAL on again.
      writeFileSync(file, copy.serialize());
    } finally {
      copy.close();
    }
  }

  /** Folds the write-ahead log into the database file (so its size can be measured). */
  checkpoint(): void {
    this.db.pragma('wal_checkpoint(TRUNCATE)');
  }

  /** The database file (null for a store held in memory). */
  get databaseFile(): string | null {
    return this.db.memory ? null : this.db.name;
  }

  /** True for a store held in memory (no `.rift/rift.db` could be used). */
  get inMemory(): boolean {
    return this.db.memory;
  }

  /** The database's size in bytes (pages × page size): what an in-memory store costs. */
  databaseBytes(): number {
    return Number(this.db.pragma('page_count', { simple: true })) * Number(this.db.pragma('page_size', { simple: true }));
  }

  close(): void {
    this.db.close();
  }
}

/** The per-row path filter the search lanes' SQL calls (see `Store.withPathFilter`). */
const PATH_FILTER_CALL = 'rift_path_ok(f.path)';

/** What a module keeping its own tables in rift.db may do with the store's connection. */
/**
 * A value of the `meta` table both schemas record their versions in (the store's and the
 * graph's); undefined when it has none, or when the table does not exist yet.
 */
export function schemaMeta(db: Pick<Tables, 'prepare'>, key: string): string | undefined {
  if (db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'`).get() === undefined) return undefined;
  return (db.prepare(`SELECT value FROM meta WHERE key = ?`).get(key) as { value: string } | undefined)?.value;
}

/** How many of `names` exist in the database as a `type` (table or index). */
export function schemaObjects(db: Pick<Tables, 'prepare'>, type: 'table' | 'index', names: readonly string[]): number {
  return db.prepare(`SELECT count(*) FROM sqlite_master WHERE type = ? AND name IN (${names.map(() => '?').join(', ')})`).pluck().get(type, ...names) as number;
}

export interface Tables {
  prepare(sql: string): Database.Statement;
  exec(sql: string): void;
  /** Runs `work` holding the write lock (Store.transaction). */
  transaction(work: () => void): void;
  /** Calls `listener` whenever such a transaction rolls back. */
  onRollback(listener: () => void): void;
  /** SQLite's `data_version`: changes when another connection commits (this one's writes leave it as it was). */
  dataVersion(): number;
}

/** The indexed bytes of a path, for a store whose files are not the workspace's. */
export type ByteSource = (path: string) => Uint8Array | null;

export interface StoreSnapshot {
  /** The digest and line count the index held for a file as of the snapshot, or null when it held none. */
  file(path: string): { sha256: string; lines: number } | null;
  close(): void;
}
