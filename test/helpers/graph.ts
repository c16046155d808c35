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

/**
 * Modules that import, call, construct and subclass one another (every edge kind Python has):
 * each imports and calls module `i - shift`, and calls module `7i + 3` through its name.
 */
export function pythonModules(count: number, shift = 1): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    const prev = (i + count - shift) % count;
    const other = (i * 7 + 3) % count;
    files[`pkg/m${i}.py`] = [
      `from pkg.m${prev} import Base${prev}, helper${prev}`,
      `from pkg import m${other}`,
      ``,
      `class Base${i}:`,
      `    def run(self):`,
      `        return self.step()`,
      ``,
      `    def step(self):`,
      `        return helper${prev}()`,
      ``,
      `class Child${i}(Base${prev}):`,
      `    def step(self):`,
      `        return m${other}.helper${other}() + super().step()`,
      ``,
      `def helper${i}():`,
      `    return Base${i}().run()`,
      ``,
      ...(i === 0 ? [`if __name__ == '__main__':`, `    helper0()`, ``] : []),
    ].join('\n');
  }
  return files;
}
