import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Engine } from '../../src/services/engine.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// Store.rowCount is kept between reads (search's word selectivity asks it per query): a batch of
// this connection and a commit of another must both show in the next count.

test('row counts follow this connection\'s batches and another connection\'s commits', async () => {
  const root = tempWorkspace({ 'a.py': 'def one():\n    pass\n' });
  const a = await Engine.open(root, { watch: false });
  const b = await Engine.open(root, { watch: false });
  try {
    await a.build();
    await b.build();
    const count = (e: Engine) => e.indexer.store.rowCount('symbols');
    assert.equal(count(a), 1);
    assert.equal(count(b), 1);
    writeFileSync(join(root, 'b.py'), 'def two():\n    pass\n\ndef three():\n    pass\n');
    await a.indexer.refresh(['b.py']);
    assert.equal(count(a), 3, "this connection's batch");
    assert.equal(count(b), 3, "another connection's commit");
    writeFileSync(join(root, 'a.py'), '');
    await b.indexer.refresh(['a.py']);
    assert.equal(count(b), 2);
    assert.equal(count(a), 2);
    assert.equal(a.indexer.store.rowCount('chunks') > 0, true);
  } finally {
    await a.close();
    await b.close();
    removeWorkspace(root);
  }
});
