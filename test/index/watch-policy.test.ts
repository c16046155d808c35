import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Engine } from '../../src/services/engine.ts';
import type { Snapshot } from '../../src/index/indexer.ts';
import { eventually, removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// Reference F.2 rule 28: watcher events outside [source], ignored by .gitignore or under the
// floor publish nothing; a rift.toml edit re-reconciles the index.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('watcher events for invisible paths publish nothing; a rift.toml edit does', async () => {
  const root = tempWorkspace({
    'rift.toml': '[source]\nexclude = ["gen/**"]\n',
    '.gitignore': '*.log\n',
    'a.py': 'def alpha(): pass\n',
  });
  mkdirSync(join(root, '.git'));
  const engine = await Engine.open(root, { watch: true });
  const published: Snapshot[] = [];
  const names = async (name: string) => (await engine.read.getSymbol({ name })).hits.map((h) => h.path).sort();
  try {
    await engine.build();
    engine.indexer.onPublish((s) => published.push(s));
    const before = engine.indexer.snapshot;

    // Excluded by [source], ignored by .gitignore, under the floor.
    mkdirSync(join(root, 'gen'));
    writeFileSync(join(root, 'gen/made.py'), 'def hidden_gen(): pass\n');
    writeFileSync(join(root, 'debug.log'), 'def hidden_log(): pass\n');
    writeFileSync(join(root, '.git/hook.py'), 'def hidden_git(): pass\n');
    writeFileSync(join(root, '.rift/extra.py'), 'def hidden_rift(): pass\n');
    // Far longer than the watcher's debounce: any batch those events caused has run by now.
    await sleep(400);
    await engine.indexer.settle();
    assert.deepEqual(published, [], 'no publication for invisible paths');
    assert.equal(engine.indexer.snapshot.revision, before.revision);

    // A visible write publishes once, and only it is indexed.
    writeFileSync(join(root, 'b.py'), 'def hidden_b(): pass\n');
    await eventually(async () => ((await names('hidden_')).length > 0 ? true : undefined));
    assert.deepEqual(await names('hidden_'), ['b.py']);
    assert.equal(published.length, 1);

    // Editing rift.toml re-reconciles: b.py leaves the index under the new exclude.
    writeFileSync(join(root, 'rift.toml'), '[source]\nexclude = ["gen/**", "b.py"]\n');
    await eventually(async () => ((await names('hidden_')).length === 0 ? true : undefined));
    assert.equal(published.length, 2);
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});
