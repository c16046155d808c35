import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Engine } from '../../src/services/engine.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// A projection's index starts from the workspace's parse results for the same content (issue 16):
// its copies are not parsed again. Opened on its own, the projection's tree builds parsing nothing
// but what differs from the workspace's index; without the seeded store it parses every file.

const FILES: Record<string, string> = {};
for (let i = 0; i < 12; i++) FILES[`pkg/m${i}.py`] = `def f${i}(x):\n    return x + ${i}\n`;
FILES['web/app.ts'] = 'export function serve(port: number): number {\n  return port;\n}\n';

test('a projection reuses the workspace index for unchanged content and parses only what differs', async () => {
  const root = tempWorkspace(FILES);
  const engine = await Engine.open(root, { watch: false });
  let dir = '';
  try {
    assert.equal((await engine.build()).reparsed, 13);
    // A file changed after the workspace was indexed, before the projection is made: its copy
    // differs from what the index holds, so it is the one file the projection parses.
    writeFileSync(join(root, 'pkg/m3.py'), 'def f3(x):\n    return x * 3\n');
    const projection = await engine.projections.create('seed test');
    dir = projection.path;
  } finally {
    await engine.close();
  }
  const seeded = await Engine.open(dir, { watch: false });
  try {
    const stats = await seeded.build();
    assert.equal(stats.files, 13);
    assert.equal(stats.reparsed, 1, 'only the file that differs from the workspace index is parsed');
  } finally {
    await seeded.close();
  }
  // Without the seed, the same tree parses every file: what the seed saved is real work.
  rmSync(join(dir, '.rift'), { recursive: true, force: true });
  const fresh = await Engine.open(dir, { watch: false });
  try {
    assert.equal((await fresh.build()).reparsed, 13);
  } finally {
    await fresh.close();
    removeWorkspace(root);
  }
});
