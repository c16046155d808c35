import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addLogSink, type LogEvent } from '../../src/core/log.ts';
import { Engine } from '../../src/services/engine.ts';
import { MapService } from '../../src/services/map-service.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// rift://map is computed ahead of reads after a publication only once a read measured it cheap
// (MAP_AHEAD_MS): on a large tree it took seconds after every edit, and the edit's own reads
// waited behind it. Otherwise the next read computes the map, once per publication.

const tick = () => new Promise((r) => setImmediate(r));

test('a map is computed ahead only once a read measured it within its budget; otherwise the next read computes it, once', async () => {
  const root = tempWorkspace({ 'pkg/a.py': 'def main():\n    pass\n\n\nif __name__ == "__main__":\n    main()\n' });
  const engine = await Engine.open(root, { watch: false });
  const computed: LogEvent[] = [];
  const stop = addLogSink((e) => {
    if (e.target === 'map.compute') computed.push(e);
  });
  // A budget every computation exceeds (once one was measured), and one none does.
  const slow = new MapService(root, engine.indexer, 0);
  const cheap = new MapService(root, engine.indexer, Number.POSITIVE_INFINITY);
  try {
    await engine.build();
    await tick();
    const generations = (ahead: boolean) => computed.filter((e) => e.fields.ahead === ahead).map((e) => e.fields.generation);
    const built = engine.indexer.snapshot.generation;
    // Nothing was measured yet: no map is computed ahead; the first reads compute them.
    assert.deepEqual(generations(true), []);
    assert.deepEqual(slow.current().entry_points, cheap.current().entry_points);
    assert.deepEqual(engine.map.current().entry_points, slow.current().entry_points);
    assert.deepEqual(generations(false), [built, built, built], 'one computation per map, the reads after it served from the cache');

    writeFileSync(join(root, 'pkg/b.py'), 'def helper():\n    pass\n');
    await engine.indexer.refresh(['pkg/b.py']);
    const edited = engine.indexer.snapshot.generation;
    assert.ok(edited > built);
    await tick();
    assert.deepEqual(generations(true), [edited, edited], 'the cheap maps are computed ahead, the slow one waits for a read');
    const map = slow.current();
    assert.equal(map.revision, engine.indexer.snapshot.revision);
    assert.deepEqual(generations(false), [built, built, built, edited], 'the read computed it');
    assert.equal(slow.current(), map, 'and later reads are served from the cache');
    assert.deepEqual(generations(false), [built, built, built, edited]);
  } finally {
    stop();
    slow.close();
    cheap.close();
    await engine.close();
    removeWorkspace(root);
  }
});
