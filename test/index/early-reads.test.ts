import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../../src/services/engine.ts';
import { initSyntax } from '../../src/syntax/runtime.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// A long cold build answers reads as soon as its first files are stored, each answer warning
// stale_index, instead of holding every read until the whole tree is parsed.

const FILES = 320; // above the indexer's bulk threshold (256 files parsed in one build)

test('reads answer during a long cold build with stale_index, and fully once it completes', async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < FILES; i++) files[`pkg/m${String(i).padStart(3, '0')}.py`] = `def early_${i}():\n    return ${i}\n`;
  const root = tempWorkspace(files);
  const engine = await Engine.open(root, { watch: false });
  // Loaded up front, so no read below waits on a grammar while the build runs ahead.
  await initSyntax();
  try {
    let finished = false;
    const build = engine.build().then((stats) => {
      finished = true;
      return stats;
    });
    const during = await engine.search.search({ query: 'early', limit: 1000, target: 'symbol' });
    assert.equal(finished, false, 'the read was answered before the build completed');
    const stale = during.warnings.find((w) => w.kind === 'stale_index') as { captured: string; indexed: string } | undefined;
    assert.ok(stale, JSON.stringify(during.warnings));
    assert.match(stale.captured, /^[0-9a-f]{8}$/);
    assert.notEqual(stale.captured, stale.indexed);
    assert.ok(during.results.length > 0 && during.results.length < FILES, `${during.results.length} of ${FILES} declarations stored so far`);
    // A file the build has not reached yet is a retry, not a missing file.
    const later = `pkg/m${FILES - 1}.py`;
    if (!engine.indexer.store.file(later)) {
      await assert.rejects(engine.read.nodes({ path: later, position: 0 }), (e: Error & { code?: string }) => e.code === 'temporarily_unavailable');
    }

    const stats = await build;
    assert.equal(stats.parsed, FILES);
    const after = await engine.read.getSymbol({ name: 'early_', limit: 1000 });
    assert.deepEqual(after.warnings, []);
    assert.equal(after.pagination.total_pages, 1);
    assert.equal(after.hits.length, FILES);
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});
