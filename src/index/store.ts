import Database from 'better-sqlite3';
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { treeRevision } from '../core/digest.ts';
import { RiftError } from '../core/errors.ts';
import { lineNumberFromStarts, lineStarts } from '../core/lines.ts';
import type { Declaration } from '../syntax/types.ts';
import type { TextInput } from './parse-job.ts';

// The persistent index in `<workspace>/.rift/rift.db` (SQLite, WAL). better-sqlite3 is
// synchronous, so a read that runs its queries without awaiting sees one committed state:
// a batch commits in one transaction and no read can observe half of it.

// Also bumped when a syntax provider extracts differently, so an older index is rebuilt rather
// than mixing declarations from two extractors (5: Python lambdas, TypeScript construct
// signatures; 6: text keys on symbols and chunks).
const SCHEMA_VERSION = '6';

/** The columns of a SymbolRow (`symbols s JOIN files f`), for every query that returns one. */
export const SYMBOL_COLUMNS = `s.id, f.path, f.language, s.name, s.qname, s.kind, s.node_kind, s.facets, s.visibility, s.container,
  s.span_start, s.span_end, s.item_start, s.item_end, s.line`;

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

export interface StoredFile {
  id: number;
  path: string;
  sha256: string;
  size: number;
  mtimeMs: number;
  language: string | null;
  /** True when a syntax provider parsed it (declarations are current). */
  parsed: boolean;
}

type RawFile = Omit<StoredFile, 'parsed'> & { parsed: number };

export interface FileUpdate {
  path: string;
  sha256: string;
  size: number;
  mtimeMs: number;
  language: string | null;
  bytes: Uint8Array | null;
  declarations: Declaration[] | null;
  /** Full-text input; null leaves the file out of the full-text tier. */
  text: TextInput | null;
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

export class Store {
  readonly db: Database.Database;
  private readonly stmts: ReturnType<Store['prepare']>;

  private constructor(db: Database.Database) {
    this.db = db;
    this.stmts = this.prepare();
  }

  /** Opens (creating when absent) the store under `<root>/.rift/`. */
  static open(root: string): Store {
    const dir = join(root, '.rift');
    try {
      if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
      const ignore = join(dir, '.gitignore');
      if (!existsSync(ignore)) writeFileSync(ignore, '*\n');
      const db = new Database(join(dir, 'rift.db'));
      return Store.init(db);
    } catch (e) {
      throw new RiftError('storage_failure', [
        ['file', '.rift/rift.db'],
        ['io', (e as NodeJS.ErrnoException).code ?? (e as Error).message],
      ]);
    }
  }

  /** A private in-memory store (on-demand `force_include` files are indexed into one). */
  static memory(): Store {
    return Store.init(new Database(':memory:'));
  }

  private static init(db: Database.Database): Store {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('temp_store = MEMORY');
    db.pragma('cache_size = -65536');
    Store.migrate(db);
    return new Store(db);
  }

  private static migrate(db: Database.Database): void {
    db.exec(`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
    const row = db.prepare(`SELECT value FROM meta WHERE key = 'schema_version'`).get() as { value: string } | undefined;
    const tables = ['files', 'contents', 'symbols', 'symbols_trigram', 'chunks', 'chunks_fts', 'symbols_fts', 'skipped'];
    const present = db
      .prepare(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN (${tables.map(() => '?').join(', ')})`)
      .get(...tables) as { n: number };
    // A current schema with every table is kept; anything else is rebuilt from the tree.
    if (row && row.value === SCHEMA_VERSION && present.n === tables.length) return;
    db.exec(`
      DROP TABLE IF EXISTS symbols_trigram;
      DROP TABLE IF EXISTS symbols_fts;
      DROP TABLE IF EXISTS chunks_fts;
      DROP TABLE IF EXISTS chunks;
      DROP TABLE IF EXISTS skipped;
      DROP TABLE IF EXISTS symbols;
      DROP TABLE IF EXISTS contents;
      DROP TABLE IF EXISTS files;
      CREATE TABLE files (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        sha256 TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ms REAL NOT NULL,
        language TEXT,
        parsed INTEGER NOT NULL
      );
      CREATE TABLE contents (file_id INTEGER PRIMARY KEY, bytes BLOB NOT NULL);
      -- Visible files left out (not UTF-8, NUL byte, unreadable), remembered by size and
      -- mtime so a warm start does not read them again.
      CREATE TABLE skipped (path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ms REAL NOT NULL, reason TEXT NOT NULL);
      CREATE TABLE symbols (
        id INTEGER PRIMARY KEY,
        file_id INTEGER NOT NULL,
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
        -- Digest of the full-text input (name, own text): an unchanged declaration keeps its row.
        text_key TEXT
      );
      CREATE INDEX symbols_file ON symbols(file_id);
      CREATE INDEX symbols_name_lower ON symbols(name_lower);
      CREATE INDEX symbols_qname_lower ON symbols(qname_lower);
      CREATE VIRTUAL TABLE symbols_trigram USING fts5(qname_lower, tokenize = 'trigram', detail = 'column');
      CREATE TABLE chunks (
        id INTEGER PRIMARY KEY,
        file_id INTEGER NOT NULL,
        start INTEGER NOT NULL,
        end INTEGER NOT NULL,
        line INTEGER NOT NULL,
        text_key TEXT
      );
      CREATE INDEX chunks_file ON chunks(file_id);
      CREATE VIRTUAL TABLE chunks_fts USING fts5(body, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2');
      CREATE VIRTUAL TABLE symbols_fts USING fts5(name, body, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2');
    `);
    db.prepare(`INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)`).run(SCHEMA_VERSION);
  }

  private prepare() {
    const db = this.db;
    return {
      allFiles: db.prepare(`SELECT id, path, sha256, size, mtime_ms AS mtimeMs, language, parsed FROM files ORDER BY path`),
      anyUnder: db.prepare(`SELECT 1 AS x FROM files WHERE path >= ? AND path < ? LIMIT 1`),
      putSkipped: db.prepare(`INSERT OR REPLACE INTO skipped(path, size, mtime_ms, reason) VALUES (?, ?, ?, ?)`),
      deleteSkipped: db.prepare(`DELETE FROM skipped WHERE path = ?`),
      allSkipped: db.prepare(`SELECT path, size, mtime_ms AS mtimeMs, reason FROM skipped`),
      skippedByPath: db.prepare(`SELECT path, size, mtime_ms AS mtimeMs, reason FROM skipped WHERE path = ?`),
      fileByPath: db.prepare(`SELECT id, path, sha256, size, mtime_ms AS mtimeMs, language, parsed FROM files WHERE path = ?`),
      revisionRows: db.prepare(`SELECT path, sha256 FROM files ORDER BY path`),
      insertFile: db.prepare(
        `INSERT INTO files(path, sha256, size, mtime_ms, language, parsed) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT(path) DO UPDATE SET sha256 = excluded.sha256, size = excluded.size,
           mtime_ms = excluded.mtime_ms, language = excluded.language, parsed = excluded.parsed
         RETURNING id`,
      ),
      touchFile: db.prepare(`UPDATE files SET mtime_ms = ?, size = ? WHERE path = ?`),
      deleteFile: db.prepare(`DELETE FROM files WHERE id = ?`),
      putContent: db.prepare(`INSERT OR REPLACE INTO contents(file_id, bytes) VALUES (?, ?)`),
      deleteContent: db.prepare(`DELETE FROM contents WHERE file_id = ?`),
      content: db.prepare(`SELECT bytes FROM contents WHERE file_id = ?`),
      symbolIdsOfFile: db.prepare(`SELECT id FROM symbols WHERE file_id = ?`),
      deleteSymbols: db.prepare(`DELETE FROM symbols WHERE file_id = ?`),
      deleteTrigram: db.prepare(`DELETE FROM symbols_trigram WHERE rowid = ?`),
      symbolKeysOfFile: db.prepare(`SELECT id, text_key AS key FROM symbols WHERE file_id = ?`),
      deleteSymbol: db.prepare(`DELETE FROM symbols WHERE id = ?`),
      updateSymbol: db.prepare(
        `UPDATE symbols SET name = ?, qname = ?, qname_lower = ?, name_lower = ?, kind = ?, node_kind = ?, facets = ?,
           visibility = ?, container = ?, span_start = ?, span_end = ?, item_start = ?, item_end = ?, line = ?, text_key = ?
         WHERE id = ?`,
      ),
      insertSymbol: db.prepare(
        `INSERT INTO symbols(name, qname, qname_lower, name_lower, kind, node_kind, facets, visibility, container,
           span_start, span_end, item_start, item_end, line, text_key, file_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      insertTrigram: db.prepare(`INSERT INTO symbols_trigram(rowid, qname_lower) VALUES (?, ?)`),
      insertSymbolText: db.prepare(`INSERT INTO symbols_fts(rowid, name, body) VALUES (?, ?, ?)`),
      deleteSymbolText: db.prepare(`DELETE FROM symbols_fts WHERE rowid = ?`),
      chunkIdsOfFile: db.prepare(`SELECT id FROM chunks WHERE file_id = ?`),
      insertChunk: db.prepare(`INSERT INTO chunks(start, end, line, text_key, file_id) VALUES (?, ?, ?, ?, ?)`),
      chunkKeysOfFile: db.prepare(`SELECT id, text_key AS key FROM chunks WHERE file_id = ?`),
      updateChunk: db.prepare(`UPDATE chunks SET start = ?, end = ?, line = ?, text_key = ? WHERE id = ?`),
      deleteChunk: db.prepare(`DELETE FROM chunks WHERE id = ?`),
      insertChunkText: db.prepare(`INSERT INTO chunks_fts(rowid, body) VALUES (?, ?)`),
      deleteChunkText: db.prepare(`DELETE FROM chunks_fts WHERE rowid = ?`),
      deleteChunks: db.prepare(`DELETE FROM chunks WHERE file_id = ?`),
      setMeta: db.prepare(`INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)`),
      getMeta: db.prepare(`SELECT value FROM meta WHERE key = ?`),
      counts: db.prepare(
        `SELECT (SELECT count(*) FROM files) AS files, (SELECT count(*) FROM files WHERE parsed = 1) AS parsed,
                (SELECT count(*) FROM symbols) AS symbols`,
      ),
      symbolsOfFile: db.prepare(
        `SELECT ${SYMBOL_COLUMNS}
         FROM symbols s JOIN files f ON f.id = s.file_id WHERE f.path = ? ORDER BY s.span_start, s.id`,
      ),
    };
  }

  files(): StoredFile[] {
    return (this.stmts.allFiles.all() as RawFile[]).map((r) => ({ ...r, parsed: r.parsed === 1 }));
  }

  file(path: string): StoredFile | null {
    const r = this.stmts.fileByPath.get(path) as RawFile | undefined;
    return r ? { ...r, parsed: r.parsed === 1 } : null;
  }

  /** Files left out by an earlier reconcile, by path. */
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

  /** The stored bytes of `[start, end)` of a file, without reading the rest of it. */
  contentRange(fileId: number, start: number, end: number): Uint8Array | null {
    const r = this.cached('contentRange', `SELECT substr(bytes, ?, ?) AS bytes FROM contents WHERE file_id = ?`).get(
      start + 1,
      end - start,
      fileId,
    ) as { bytes: Buffer } | undefined;
    return r ? r.bytes : null;
  }

  /** Paths whose stored bytes contain `needle` anywhere, in path order (a rename's sweep). */
  pathsContaining(needle: Uint8Array): string[] {
    const rows = this.cached('pathsContaining', `SELECT f.path AS path FROM contents c JOIN files f ON f.id = c.file_id WHERE instr(c.bytes, ?) > 0 ORDER BY f.path`).all(
      Buffer.from(needle),
    ) as Array<{ path: string }>;
    return rows.map((r) => r.path);
  }

  content(fileId: number): Uint8Array | null {
    const r = this.stmts.content.get(fileId) as { bytes: Buffer } | undefined;
    return r ? r.bytes : null;
  }

  meta(key: string): string | null {
    const r = this.stmts.getMeta.get(key) as { value: string } | undefined;
    return r ? r.value : null;
  }

  counts(): { files: number; parsed: number; symbols: number } {
    return this.stmts.counts.get() as { files: number; parsed: number; symbols: number };
  }

  /** Computes the tree revision of what the store holds. */
  computeTreeRevision(): string {
    return treeRevision(this.stmts.revisionRows.iterate() as Iterable<{ path: string; sha256: string }>);
  }

  /** Merges the full-text segments a bulk build left behind (queries then read one segment). */
  optimizeFullText(): void {
    for (const t of ['chunks_fts', 'symbols_fts', 'symbols_trigram']) this.db.exec(`INSERT INTO ${t}(${t}) VALUES ('optimize')`);
  }

  /** Computes, records and returns the tree revision of what the store holds now. */
  commitRevision(): string {
    const revision = this.computeTreeRevision();
    this.stmts.setMeta.run('tree_revision', revision);
    return revision;
  }

  /** Every stored file's content digest by path (the input of the tree revision). */
  digests(): Map<string, string> {
    return new Map((this.stmts.revisionRows.all() as Array<{ path: string; sha256: string }>).map((r) => [r.path, r.sha256]));
  }

  /**
   * Applies one batch in one transaction: upserts, metadata-only touches, deletions and
   * skipped files. The caller then commits the tree revision (once per reconcile, not per
   * batch: hashing every row is linear in the tree).
   */
  applyBatch(
    updates: readonly FileUpdate[],
    touches: readonly { path: string; mtimeMs: number; size: number }[],
    deletions: readonly string[],
    skips: readonly SkippedFile[] = [],
  ): void {
    const s = this.stmts;
    const run = this.db.transaction(() => {
      for (const k of skips) s.putSkipped.run(k.path, k.size, k.mtimeMs, k.reason);
      for (const u of updates) s.deleteSkipped.run(u.path);
      for (const path of deletions) s.deleteSkipped.run(path);
      for (const path of deletions) {
        const f = this.file(path);
        if (!f) continue;
        this.dropSymbols(f.id);
        this.dropChunks(f.id);
        s.deleteContent.run(f.id);
        s.deleteFile.run(f.id);
      }
      for (const t of touches) s.touchFile.run(t.mtimeMs, t.size, t.path);
      for (const u of updates) {
        const parsed = u.declarations !== null;
        const { id } = s.insertFile.get(u.path, u.sha256, u.size, u.mtimeMs, u.language, parsed ? 1 : 0) as { id: number };
        if (u.bytes) s.putContent.run(id, Buffer.from(u.bytes.buffer, u.bytes.byteOffset, u.bytes.byteLength));
        else s.deleteContent.run(id);
        if (u.declarations && u.language && u.bytes) this.replaceDeclarations(id, u.bytes, u.declarations, u.text);
        else this.dropSymbols(id);
        if (u.text) this.replaceChunks(id, u.text.chunks);
        else this.dropChunks(id);
      }
    });
    run();
  }

  private dropSymbols(fileId: number): void {
    for (const r of this.stmts.symbolIdsOfFile.all(fileId) as { id: number }[]) {
      this.stmts.deleteTrigram.run(r.id);
      this.stmts.deleteSymbolText.run(r.id);
    }
    this.stmts.deleteSymbols.run(fileId);
  }

  private dropChunks(fileId: number): void {
    for (const r of this.stmts.chunkIdsOfFile.all(fileId) as { id: number }[]) this.stmts.deleteChunkText.run(r.id);
    this.stmts.deleteChunks.run(fileId);
  }

  /**
   * Writes a file's declarations. A declaration whose full-text input is unchanged (same key)
   * keeps its row and full-text entries and only has its columns updated; the others are
   * inserted, and rows left over are dropped — so an edit rewrites only what changed.
   */
  private replaceDeclarations(fileId: number, bytes: Uint8Array, declarations: readonly Declaration[], text: TextInput | null): void {
    const s = this.stmts;
    const reusable = keyedRows(s.symbolKeysOfFile.all(fileId) as KeyedRow[]);
    // Line numbers from one pass over the bytes.
    const starts = lineStarts(bytes);
    for (const [i, d] of declarations.entries()) {
      const t = text?.declarations[i];
      const key = t ? t[2] : null;
      const qlower = d.qualifiedName.toLowerCase();
      const columns = [
        d.name, d.qualifiedName, qlower, d.name.toLowerCase(), d.kind, d.nodeKind ?? d.kind, d.facets.join(','), d.visibility,
        d.container, d.span.start, d.span.end, d.itemSpan.start, d.itemSpan.end, lineNumberFromStarts(starts, d.span.start), key,
      ];
      const kept = key === null ? undefined : reusable.get(key)?.shift();
      if (kept !== undefined) {
        s.updateSymbol.run(...columns, kept);
        continue;
      }
      const info = s.insertSymbol.run(...columns, fileId);
      s.insertTrigram.run(info.lastInsertRowid, qlower);
      if (t) s.insertSymbolText.run(info.lastInsertRowid, t[0], t[1]);
    }
    for (const ids of reusable.values()) {
      for (const id of ids) {
        s.deleteTrigram.run(id);
        s.deleteSymbolText.run(id);
        s.deleteSymbol.run(id);
      }
    }
  }

  /** Writes a file's chunks, keeping the rows and full-text entries of chunks whose text is unchanged. */
  private replaceChunks(fileId: number, chunks: TextInput['chunks']): void {
    const s = this.stmts;
    const reusable = keyedRows(s.chunkKeysOfFile.all(fileId) as KeyedRow[]);
    for (const c of chunks) {
      const kept = reusable.get(c.key)?.shift();
      if (kept !== undefined) {
        s.updateChunk.run(c.start, c.end, c.line, c.key, kept);
        continue;
      }
      const info = s.insertChunk.run(c.start, c.end, c.line, c.key, fileId);
      s.insertChunkText.run(info.lastInsertRowid, c.text);
    }
    for (const ids of reusable.values()) {
      for (const id of ids) {
        s.deleteChunkText.run(id);
        s.deleteChunk.run(id);
      }
    }
  }

  symbolsOfFile(path: string): SymbolRow[] {
    return this.stmts.symbolsOfFile.all(path) as SymbolRow[];
  }

  /**
   * Declarations whose qualified name contains the query (case-insensitive), ranked:
   * exact qualified name, exact short name, case-insensitive equality, qualified-name
   * suffix, other substring; ties by qualified name, path, span start, id.
   */
  findSymbols(q: SymbolQuery): { total: number; rows: SymbolRow[] } {
    const lower = q.query.toLowerCase();
    // The trigram index answers substring matches of three or more characters; shorter
    // queries scan, which is still bounded by the symbol count.
    const useTrigram = [...lower].length >= 3;
    // GLOB (case-sensitive over the lowercased names, `_` and `%` literal) goes through the
    // trigram index; its own metacharacters are escaped as one-character classes.
    const candidates = useTrigram
      ? `SELECT rowid AS id FROM symbols_trigram WHERE qname_lower GLOB @glob`
      : `SELECT id FROM symbols WHERE instr(qname_lower, @lower) > 0`;
    const glob = `*${lower.replace(/[*?[\]]/g, (c) => `[${c}]`)}*`;
    const params = { glob, lower, query: q.query, len: lower.length };
    // Most names are looked up exactly: when the page lies inside the exact matches
    // (ranks 0–2), it is read through the name indexes and only the total needs the scan.
    const exact = this.cached(
      'exactCount',
      `SELECT count(*) AS n FROM symbols WHERE name_lower = @lower OR qname_lower = @lower`,
    ).get({ lower }) as { n: number };
    if (q.offset + q.limit <= exact.n) {
      const rows = this.cached(
        'exactPage',
        `SELECT ${SYMBOL_COLUMNS},
                CASE WHEN s.qname = @query THEN 0 WHEN s.name = @query THEN 1 ELSE 2 END AS rank
         FROM symbols s JOIN files f ON f.id = s.file_id
         WHERE s.name_lower = @lower OR s.qname_lower = @lower
         ORDER BY rank, s.qname, f.path, s.span_start, s.id
         LIMIT @limit OFFSET @offset`,
      ).all({ lower, query: q.query, limit: q.limit, offset: q.offset }) as SymbolRow[];
      const total = this.cached(`count:${useTrigram}`, `SELECT count(*) AS n FROM (${candidates})`).get(params) as { n: number };
      return { total: total.n, rows };
    }
    const key = `${useTrigram}`;
    // One pass: candidates, rank, order and the total (a window count) together.
    const rows = this.cached(
      `page:${key}`,
      `SELECT ${SYMBOL_COLUMNS},
              CASE WHEN s.qname = @query THEN 0
                   WHEN s.name = @query THEN 1
                   WHEN s.qname_lower = @lower OR s.name_lower = @lower THEN 2
                   WHEN substr(s.qname_lower, -@len) = @lower THEN 3
                   ELSE 4 END AS rank,
              count(*) OVER () AS total
       FROM (${candidates}) c JOIN symbols s ON s.id = c.id JOIN files f ON f.id = s.file_id
       ORDER BY rank, s.qname, f.path, s.span_start, s.id
       LIMIT @limit OFFSET @offset`,
    ).all({ ...params, limit: q.limit, offset: q.offset }) as Array<SymbolRow & { total: number }>;
    if (rows.length > 0) return { total: rows[0].total, rows };
    // A page past the end still reports the true total.
    const count = this.cached(`count:${key}`, `SELECT count(*) AS n FROM (${candidates})`).get(params) as { n: number };
    return { total: count.n, rows: [] };
  }

  private readonly statementCache = new Map<string, Database.Statement>();

  /** A statement prepared once per store, keyed by name (for query modules beside the store). */
  prepared(key: string, sql: string): Database.Statement {
    return this.cached(key, sql);
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
   * store keeps committing (a change reads the indexed bytes of files its hooks rewrote).
   */
  readSnapshot(): StoreSnapshot {
    const db = new Database(this.db.name, { readonly: true, fileMustExist: true });
    db.exec('BEGIN');
    db.prepare('SELECT count(*) AS n FROM files').get(); // the snapshot starts at the first read
    const bytes = db.prepare('SELECT c.bytes AS bytes FROM files f JOIN contents c ON c.file_id = f.id WHERE f.path = ?');
    return {
      bytes(path: string): Buffer | null {
        const row = bytes.get(path) as { bytes: Buffer } | undefined;
        return row ? Buffer.from(row.bytes) : null;
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

  close(): void {
    this.db.close();
  }
}

export interface StoreSnapshot {
  /** The stored bytes of a file as of the snapshot, or null when it held none. */
  bytes(path: string): Buffer | null;
  close(): void;
}
