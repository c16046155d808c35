import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { DERIVATIONS, EDGE_KINDS } from '../../src/index/graph/graph-store.ts';
import { Engine } from '../../src/services/engine.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// A member call on a receiver whose type nothing states is a guess, and only when exactly one
// method of the language family carries the name: two make it ambiguous, and a method of another
// family does not count.

test('a member call on an unknown receiver guesses the one method of its name in the family, never one of two', async () => {
  const root = tempWorkspace({
    'a.py': 'class Alpha:\n    def only_here(self):\n        return 1\n\n    def twice(self):\n        return 2\n',
    'b.py': 'class Beta:\n    def twice(self):\n        return 3\n',
    // The same name as a TypeScript method: another family.
    'c.ts': 'export class Gamma {\n  only_here(): number {\n    return 4;\n  }\n}\n',
    'd.py': 'def use(thing):\n    thing.only_here()\n    return thing.twice()\n',
  });
  const engine = await Engine.open(root, { watch: false });
  try {
    await engine.build();
    const db = new Database(join(root, '.rift', 'rift.db'), { readonly: true });
    const rows = db
      .prepare(
        `SELECT d.path || '#' || d.qname AS dst, e.kind, e.derivation FROM graph_edges e
           JOIN graph_nodes s ON s.id = e.src JOIN graph_nodes d ON d.id = e.dst WHERE s.path = 'd.py' AND s.qname = 'use'`,
      )
      .all() as Array<{ dst: string; kind: number; derivation: number }>;
    db.close();
    assert.deepEqual(
      rows.map((r) => `${EDGE_KINDS[r.kind]} ${r.dst} (${DERIVATIONS[r.derivation]})`).sort(),
      ['calls a.py#Alpha.only_here (heuristic)'],
    );
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});
