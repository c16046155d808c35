import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../../src/services/engine.ts';
import { Matches } from '../../src/index/search.ts';
import { queryWords } from '../../src/index/text.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// How a ranked query tells which of its candidates carry a word (src/index/search.ts, Matches):
// a word in few rows per candidate is read whole and intersected; a commoner one is asked row by
// row among the candidates; a list found too long is read whole again once there are enough
// candidates to justify it. Every path gives the same answer.

test('which candidates carry a word is answered the same from a whole list and row by row', async () => {
  // 1,100 notes carry `alpha` (past 1,000 rows: asked row by row for a few candidates), 5 `omega`.
  const files: Record<string, string> = {};
  for (let i = 0; i < 1100; i++) files[`notes/a${String(i).padStart(4, '0')}.md`] = `alpha note ${i}\n`;
  for (let i = 0; i < 5; i++) files[`notes/o${i}.md`] = `omega note ${i}\n`;
  const root = tempWorkspace(files);
  const engine = await Engine.open(root, { watch: false });
  try {
    await engine.build();
    const store = engine.indexer.store;
    const chunkOf = (path: string) =>
      (store.prepared('test.chunkOf', `SELECT c.id FROM chunks c JOIN files f ON f.blob_id = c.blob_id WHERE f.path = ?`).get(path) as { id: number }).id;
    const alpha = queryWords('alpha')[0];
    const omega = queryWords('omega')[0];
    const a7 = chunkOf('notes/a0007.md');
    const a900 = chunkOf('notes/a0900.md');
    const o2 = chunkOf('notes/o2.md');
    const matches = new Matches(store);

    // Few candidates: `alpha`'s 1,100 rows are more than 1,000 (the least read whole), so row by row.
    assert.deepEqual(matches.among('chunks_fts', alpha, [o2, a7, a900]).sort((x, y) => x - y), [a7, a900].sort((x, y) => x - y));
    // `omega` is read whole and intersected.
    assert.deepEqual(matches.among('chunks_fts', omega, [a7, o2]), [o2]);
    // Asked again with 40 candidates (room for 32 rows each: 1,280 > 1,100), the list is read whole.
    const many = [o2, ...Array.from({ length: 39 }, (_, i) => chunkOf(`notes/a${String(i * 20).padStart(4, '0')}.md`))];
    assert.deepEqual(matches.among('chunks_fts', alpha, many).sort((x, y) => x - y), many.slice(1).sort((x, y) => x - y));
    // And the smaller question is answered from that whole list, the same as before.
    assert.deepEqual(matches.among('chunks_fts', alpha, [o2, a7, a900]).sort((x, y) => x - y), [a7, a900].sort((x, y) => x - y));
    assert.deepEqual(matches.among('chunks_fts', omega, []), []);
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});
