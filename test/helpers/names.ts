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
    // Each one- and two-character substring's total: the declarations whose lowercased
    // qualified name holds it (rows a name no longer holding it left at zero aside).
    const totals = new Map<string, number>();
    for (const r of grouped as Array<{ qname_lower: string; n: number }>) {
      const chars = [...r.qname_lower];
      const grams = new Set([...chars, ...chars.slice(1).map((c, i) => chars[i] + c)]);
      for (const g of grams) totals.set(g, (totals.get(g) ?? 0) + r.n);
    }
    const kept = db.prepare(`SELECT gram, total FROM name_grams WHERE total <> 0 ORDER BY gram`).all() as Array<{ gram: string; total: number }>;
    assert.deepEqual(new Map(kept.map((g) => [g.gram, g.total])), totals, 'substring totals counted from names');
    assert.equal(db.prepare(`SELECT count(*) FROM name_grams_log`).pluck().get(), 0, 'a batch left its logged names unapplied');
    db.exec(`INSERT INTO names_trigram(names_trigram, rank) VALUES ('integrity-check', 1)`);
  } finally {
    db.close();
  }
}
