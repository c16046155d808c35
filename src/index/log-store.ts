import Database from 'better-sqlite3';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

// The `logs` table of `.rift/rift.db`, on its own connection: the log writer must never wait
// behind (or hold up) the index, so it neither shares the store's connection nor waits on a
// lock — a busy database leaves events queued for the next attempt.

export interface LogRecordRow {
  id: number;
  recorded_at_ms: number;
  level: string;
  target: string;
  component: string;
  operation: string;
  message: string;
  fields: string;
  elapsed_ms: number | null;
}

/** A record to write: the row without its id, its fields as an object. */
export type NewLogRecord = Omit<LogRecordRow, 'id' | 'fields'> & { fields: Record<string, unknown> };

export class LogStore {
  private readonly insert: Database.Statement;
  private readonly page: Database.Statement;
  private readonly count: Database.Statement;
  private readonly prune: Database.Statement;

  private constructor(private readonly db: Database.Database) {
    // AUTOINCREMENT: an id is never reused after retention drops older records.
    db.exec(`CREATE TABLE IF NOT EXISTS logs (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      recorded_at_ms INTEGER NOT NULL,
      level TEXT NOT NULL,
      target TEXT NOT NULL,
      component TEXT NOT NULL,
      operation TEXT NOT NULL,
      message TEXT NOT NULL,
      fields TEXT NOT NULL,
      elapsed_ms REAL
    )`);
    this.insert = db.prepare(
      `INSERT INTO logs(recorded_at_ms, level, target, component, operation, message, fields, elapsed_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.page = db.prepare(`SELECT * FROM logs ORDER BY id DESC LIMIT ? OFFSET ?`);
    this.count = db.prepare(`SELECT count(*) AS n FROM logs`);
    this.prune = db.prepare(`DELETE FROM logs WHERE id <= (SELECT id FROM logs ORDER BY id DESC LIMIT 1 OFFSET ?)`);
  }

  /** Opens the log table in `<root>/.rift/rift.db`; throws when the database cannot serve it. */
  static open(root: string): LogStore {
    const dir = join(root, '.rift');
    if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
    const db = new Database(join(dir, 'rift.db'), { timeout: 0 });
    try {
      db.pragma('journal_mode = WAL');
      return new LogStore(db);
    } catch (e) {
      db.close();
      throw e;
    }
  }

  /** Appends records and drops the oldest past `retention`, in one transaction. Throws SQLITE_BUSY when locked. */
  append(records: readonly NewLogRecord[], retention: number): void {
    this.db.transaction(() => {
      for (const r of records) {
        this.insert.run(r.recorded_at_ms, r.level, r.target, r.component, r.operation, r.message, JSON.stringify(r.fields), r.elapsed_ms);
      }
      this.prune.run(retention);
    })();
  }

  /** Records newest first. */
  read(offset: number, limit: number): { rows: LogRecordRow[]; total: number } {
    const rows = this.page.all(limit, offset) as LogRecordRow[];
    return { rows, total: (this.count.get() as { n: number }).n };
  }

  close(): void {
    this.db.close();
  }
}
