import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Engine } from '../../src/services/engine.ts';
import { eventually, removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// A file the watcher brings in that cannot be indexed (here a NUL byte) is recorded as skipped
// with its reason, as the walk of a build records it: `nodes` says why it cannot be served
// (content_unavailable) instead of resource_not_found, and once the file is fixed it is indexed
// and no longer listed as skipped.

test('a file the watcher brings in that is left out is recorded with its reason; fixed, it is indexed', async () => {
  const root = tempWorkspace({ 'a.py': 'def alpha(): pass\n' });
  const engine = await Engine.open(root, { watch: true });
  try {
    await engine.build();
    writeFileSync(join(root, 'nul.py'), Buffer.from('def probe(): pass\n\u0000\n'));
    await eventually(async () => (engine.indexer.store.skippedFile('nul.py')?.reason === 'nul_byte' ? true : undefined), 30_000);
    await assert.rejects(
      engine.read.nodes({ path: 'nul.py', position: 0 }),
      (e: Error & { code?: string }) => e.code === 'content_unavailable' && e.message.includes('the file contains a NUL byte'),
    );
    assert.equal(engine.indexer.store.file('nul.py'), null);

    writeFileSync(join(root, 'nul.py'), 'def probe(): pass\n');
    await eventually(async () => (engine.indexer.store.file('nul.py') && !engine.indexer.store.skippedFile('nul.py') ? true : undefined), 30_000);
    const hits = await engine.read.getSymbol({ name: 'probe' });
    assert.deepEqual(hits.hits.map((h) => h.symbol.id), ['rift://symbol/python/nul.py/probe']);
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});
