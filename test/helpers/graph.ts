import { join } from 'node:path';
import Database from 'better-sqlite3';
import { DERIVATIONS, EDGE_KINDS } from '../../src/index/graph/graph-store.ts';

/** Every edge of a workspace's stored graph as `path#qname -kind/derivation-> path#qname`, sorted. */
export function graphEdges(root: string): string[] {
  const db = new Database(join(root, '.rift', 'rift.db'), { readonly: true });
  try {
    const rows = db
      .prepare(
        `SELECT s.path AS sp, s.qname AS sq, d.path AS dp, d.qname AS dq, e.kind, e.derivation
         FROM graph_edges e JOIN graph_nodes s ON s.id = e.src JOIN graph_nodes d ON d.id = e.dst`,
      )
      .all() as Array<Record<string, string | number>>;
    return rows.map((r) => `${r.sp}#${r.sq} -${EDGE_KINDS[Number(r.kind)]}/${DERIVATIONS[Number(r.derivation)]}-> ${r.dp}#${r.dq}`).sort();
  } finally {
    db.close();
  }
}
