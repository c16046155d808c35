import assert from 'node:assert/strict';
import Database from 'better-sqlite3';

/**
 * The store's name table is exactly the declarations grouped by (qualified name, short name),
 * and its trigram index is exactly that table (FTS5's own integrity check, on a connection
 * that may write, as the check is an insert).
 */
export function assertNamesCounted(dbPath: string): void {
  const db = new Database(dbPath);
  try {
    const grouped = db.prepare(`SELECT qname, name, qname_lower, name_lower, count(*) AS n FROM symbols GROUP BY qname, name ORDER BY qname, name`).all();
    assert.deepEqual(db.prepare(`SELECT qname, name, qname_lower, name_lower, n FROM names ORDER BY qname, name`).all(), grouped, 'names counted from symbols');
    db.exec(`INSERT INTO names_trigram(names_trigram, rank) VALUES ('integrity-check', 1)`);
  } finally {
    db.close();
  }
}
