import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRift } from '../helpers/mcp.ts';
import { eventually, removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// Projections across processes (rule 165): every rift process on a workspace sees the same
// projections, publication is serialized workspace-wide, and a publish that cannot take the
// workspace inside its call budget fails temporarily_unavailable with both trees unchanged.

const patchOf = (path: string, from: string, to: string) => `--- a/${path}\n+++ b/${path}\n@@ -1 +1 @@\n-${from}\n+${to}\n`;

function tree(root: string, dir = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
    const p = dir ? `${dir}/${e.name}` : e.name;
    if (p === '.rift') continue;
    if (e.isDirectory()) Object.assign(out, tree(root, p));
    else out[p] = readFileSync(join(root, p), 'utf8');
  }
  return out;
}

test('two processes (the shared server and a standalone one) see one set of projections and publish at once: one wins whole, the other gets conflicts and writes nothing', async () => {
  const root = tempWorkspace({ 'shared.txt': 'shared\n', 'a.txt': 'a\n', 'b.txt': 'b\n' });
  const viaServer = await startRift(root);
  const standalone = await startRift(root, {}, { standalone: true });
  try {
    const pa = (await viaServer.call('projection_create', { reason: 'a' })) as { id: string; path: string };
    const pb = (await standalone.call('projection_create', { reason: 'b' })) as { id: string; path: string };
    for (const rift of [viaServer, standalone]) {
      const listed = (await rift.call('projection_list', {})) as { projections: Array<{ id: string }> };
      assert.deepEqual(listed.projections.map((p) => p.id).sort(), [pa.id, pb.id].sort());
    }
    await viaServer.call('patch', { projection: pa.id, patch: patchOf('shared.txt', 'shared', 'from a') + patchOf('a.txt', 'a', 'a2') });
    await standalone.call('patch', { projection: pb.id, patch: patchOf('shared.txt', 'shared', 'from b') + patchOf('b.txt', 'b', 'b2') });
    const [ra, rb] = (await Promise.all([viaServer.call('publish', { projection: pa.id }), standalone.call('publish', { projection: pb.id })])) as Array<{
      published: boolean;
      conflicts: string[];
    }>;
    assert.equal(Number(ra.published) + Number(rb.published), 1, `exactly one publishes: ${JSON.stringify([ra, rb])}`);
    const [winner, loser] = ra.published ? ['a', rb] : ['b', ra];
    assert.deepEqual(loser.conflicts, ['shared.txt']);
    const expected = { 'shared.txt': `from ${winner}\n`, 'a.txt': winner === 'a' ? 'a2\n' : 'a\n', 'b.txt': winner === 'b' ? 'b2\n' : 'b\n' };
    assert.deepEqual(tree(root), expected);
    // The winner's projection is the new workspace; the loser's still holds its own work.
    assert.deepEqual(tree(winner === 'a' ? pa.path : pb.path), expected);
    assert.equal(readFileSync(join(winner === 'a' ? pb.path : pa.path, 'shared.txt'), 'utf8'), `from ${winner === 'a' ? 'b' : 'a'}\n`);
    // Either process may remove either projection.
    await standalone.call('projection_remove', { projection: pa.id });
    await viaServer.call('projection_remove', { projection: pb.id });
    assert.deepEqual((await viaServer.call('projection_list', {})).projections, []);
  } finally {
    await viaServer.close();
    await standalone.close();
    removeWorkspace(root);
  }
});

test('rule 165: a publish that cannot take the workspace inside its budget fails temporarily_unavailable and leaves both trees unchanged', async () => {
  const marks = mkdtempSync(join(tmpdir(), 'rift-marks-'));
  const started = join(marks, 'started');
  // A transform hook that holds the workspace: it says it started, then sleeps.
  const hook = `[[hooks]]\nid = "hold"\nrole = "transform"\nkind = "format"\nprogram = "sh"\narguments = ["-c", "touch ${started}; sleep 4"]\ninclude = ["slow/*.txt"]\n`;
  const root = tempWorkspace({ 'rift.toml': hook, 'slow/x.txt': 'x\n', 'y.txt': 'y\n' });
  const holder = await startRift(root, {}, { standalone: true });
  const impatient = await startRift(root, { RIFT_CHANGE_LOCK_WAIT_MS: '200' }, { standalone: true });
  try {
    const p = (await impatient.call('projection_create', {})) as { id: string; path: string };
    await impatient.call('patch', { projection: p.id, patch: patchOf('y.txt', 'y', 'y2') });
    const held = holder.call('patch', { patch: patchOf('slow/x.txt', 'x', 'x2') });
    await eventually(() => (existsSync(started) ? true : undefined), 60_000);
    const before = tree(root);
    const failed = await impatient.fail('publish', { projection: p.id });
    assert.equal(failed.data.code, 'temporarily_unavailable');
    assert.equal(failed.data.retry, 'same_request');
    assert.deepEqual(tree(root), before);
    assert.equal(readFileSync(join(p.path, 'y.txt'), 'utf8'), 'y2\n');
    assert.equal(((await held) as { status: string }).status, 'applied');
    // Once the holder is done, the same request goes through.
    const ok = (await impatient.call('publish', { projection: p.id })) as { published: boolean };
    assert.equal(ok.published, true);
    assert.equal(readFileSync(join(root, 'y.txt'), 'utf8'), 'y2\n');
  } finally {
    await holder.close();
    await impatient.close();
    removeWorkspace(root);
    removeWorkspace(marks);
  }
});
