import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../../src/services/engine.ts';
import { graphEdges } from '../helpers/graph.ts';
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
    assert.deepEqual(
      graphEdges(root).filter((e) => e.startsWith('d.py#use -')),
      ['d.py#use -calls/heuristic-> a.py#Alpha.only_here'],
    );
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});
