import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Engine } from '../../src/services/engine.ts';
import { runCli } from '../helpers/cli.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// `rift projection list|remove`: the projections an isolated sub-agent or a swarm left behind
// (or an MCP client made) are seen and removed from the command line.

test('rift projection list shows the projections; remove deletes one with its copy; an unknown id is refused', async () => {
  const root = tempWorkspace({ 'a.py': 'def alpha():\n    return 1\n' });
  try {
    assert.equal(runCli(['projection', 'list'], root).stderr, 'no projections\n');
    const engine = await Engine.open(root, { watch: false });
    let kept: { id: string; path: string };
    let other: { id: string; path: string };
    try {
      kept = await engine.projections.create('kept by a sub-agent');
      other = await engine.projections.create(null);
    } finally {
      await engine.close();
    }
    const listed = runCli(['projection', 'list'], root);
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal(listed.stdout, `${kept.id}  clean       ${kept.path}  (kept by a sub-agent)\n${other.id}  clean       ${other.path}\n`);
    const json = JSON.parse(runCli(['projection', 'list', '--json'], root).stdout) as { projections: Array<{ id: string; reason: string | null }> };
    assert.deepEqual(json.projections.map((p) => [p.id, p.reason]), [[kept.id, 'kept by a sub-agent'], [other.id, null]]);

    const removed = runCli(['projection', 'remove', kept.id, '--workspace', root], '/');
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal(removed.stdout, `removed ${kept.id}\n`);
    assert.ok(!existsSync(kept.path), 'the copy is gone');
    assert.ok(existsSync(other.path), 'the other projection is left alone');
    assert.ok(existsSync(join(root, 'a.py')), 'the workspace is untouched');
    assert.equal(runCli(['projection', 'list'], root).stdout, `${other.id}  clean       ${other.path}\n`);

    const unknown = runCli(['projection', 'remove', kept.id], root);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, new RegExp(`^rift: resource_not_found: .*${kept.id}`));
    const none = runCli(['projection', 'remove'], root);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /expected one or more arguments/);
    // Its help is its own entry only (an entry above it whose description shares its line is not).
    assert.match(runCli(['projection', '--help'], root).stdout, /^Usage:\n {2}rift projection list .*\n {2}rift projection remove .*\n {20,}the workspace's projections/);
    const bad = runCli(['projection', 'prune'], root);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown action 'prune': expected list or remove/);
  } finally {
    removeWorkspace(root);
  }
});
