import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startRift } from '../helpers/mcp.ts';
import { gitFixture } from '../helpers/git.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// An invalid rift.toml gates every tool with configuration_invalid; fixing it recovers
// without a restart; breaking it after boot gates the next request (reference F.17 176).

test('configuration gating: invalid at boot, fixed, broken again, removed', async () => {
  const root = tempWorkspace({ 'a.py': 'def alpha(): pass\n', 'rift.toml': '[source]\nbogus = 1\n' });
  const rift = await startRift(root);
  try {
    for (const [tool, args] of [
      ['get_symbol', { name: 'alpha' }],
      ['nodes', { path: 'a.py', position: 0 }],
    ] as const) {
      const e = await rift.fail(tool, args);
      assert.equal(e.data.code, 'configuration_invalid');
      assert.equal(e.data.retry, 'operator_action');
      assert.equal(e.data.phase, 'read');
      assert.match(e.data.message as string, /field source\.bogus, violation unknown_key/);
    }
    writeFileSync(join(root, 'rift.toml'), '[source]\nrespect_gitignore = true\n');
    const ok = (await rift.call('get_symbol', { name: 'alpha' })) as { hits: unknown[] };
    assert.equal(ok.hits.length, 1, 'fixing the file recovers without a restart');
    writeFileSync(join(root, 'rift.toml'), '[providers.history]\nmax_revisions = 0\n');
    const again = await rift.fail('get_symbol', { name: 'alpha' });
    assert.equal(again.data.code, 'configuration_invalid');
    assert.match(again.data.message as string, /field providers\.history\.max_revisions, violation limit_out_of_range/);
    rmSync(join(root, 'rift.toml'));
    const missing = (await rift.call('get_symbol', { name: 'alpha' })) as { hits: unknown[] };
    assert.equal(missing.hits.length, 1, 'a missing file serves defaults');
  } finally {
    await rift.close();
    removeWorkspace(root);
  }
});

test('a configuration change re-selects files: disabling a language drops its declarations', async () => {
  const root = tempWorkspace({ 'a.py': 'def alpha(): pass\n', 'b.rs': 'fn alpha_rs() {}\n' });
  const rift = await startRift(root);
  try {
    const before = (await rift.call('get_symbol', { name: 'alpha', include: [] })) as { hits: Array<{ path: string }> };
    assert.deepEqual(before.hits.map((h) => h.path), ['a.py', 'b.rs']);
    writeFileSync(join(root, 'rift.toml'), '[languages.python]\nenabled = false\n');
    const after = (await rift.call('get_symbol', { name: 'alpha', include: [] })) as { hits: Array<{ path: string }> };
    assert.deepEqual(after.hits.map((h) => h.path), ['b.rs']);
    const e = await rift.fail('nodes', { path: 'a.py', position: 0 });
    assert.equal(e.data.code, 'capability_unavailable');
  } finally {
    await rift.close();
    removeWorkspace(root);
  }
});

test('rule 47: [providers.history] enabled = false refuses every revision read and history; re-enabling serves them', async () => {
  const root = tempWorkspace({ 'a.py': 'def alpha(): pass\n', 'rift.toml': '[providers.history]\nenabled = false\n' });
  gitFixture(root).commit('add alpha', {});
  const rift = await startRift(root);
  try {
    const off = await rift.fail('get_symbol', { name: 'alpha', rev: 'main' });
    assert.equal(off.data.code, 'capability_unavailable');
    assert.equal(
      off.data.message,
      'no configured provider serves this request: capability revision reads (providers.history disabled); adjust the request to a served capability, or configure a provider that serves it',
    );
    for (const [tool, args] of [
      ['search', { query: 'alpha', rev: 'main' }],
      ['nodes', { path: 'a.py', position: 0, rev: 'main' }],
    ] as const) {
      const e = await rift.fail(tool, args);
      assert.equal(e.data.message, off.data.message);
      assert.equal(e.data.retry, 'operator_action');
    }
    const history = await rift.fail('get_symbol', { name: 'alpha', include: ['history'] });
    assert.equal(history.data.code, 'capability_unavailable');
    assert.match(history.data.message as string, /capability symbol history \(providers\.history disabled\);/);
    writeFileSync(join(root, 'rift.toml'), '');
    const on = (await rift.call('nodes', { path: 'a.py', position: 0, rev: 'main' })) as { nodes: unknown[] };
    assert.ok(on.nodes.length > 0);
  } finally {
    await rift.close();
    removeWorkspace(root);
  }
});
