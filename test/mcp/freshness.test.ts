import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startRift } from '../helpers/mcp.ts';
import { eventually, removeWorkspace, tempWorkspace, writeFiles } from '../helpers/workspace.ts';

// External writes reach reads (reference F.2 rule 25), the index persists across
// restarts, and a read answered from a lagging index says so (stale_index).

type Result = { hits: Array<{ path: string; symbol: { name: string }; source?: { text: string } }>; warnings: Array<Record<string, unknown>> };

test('external create, modify, rename and delete show up in later reads', async () => {
  const root = tempWorkspace({ 'a.py': 'def alpha(): pass\n' });
  const rift = await startRift(root);
  const find = async (name: string) => ((await rift.call('get_symbol', { name, include: ['source'] })) as Result).hits;
  try {
    assert.equal((await find('alpha')).length, 1);
    writeFileSync(join(root, 'b.py'), 'def beta(): pass\n');
    await eventually(async () => ((await find('beta')).length === 1 ? true : undefined));
    writeFileSync(join(root, 'a.py'), 'def alpha():\n    return 2\n');
    await eventually(async () => ((await find('alpha'))[0]?.source?.text === 'def alpha():\n    return 2' ? true : undefined));
    renameSync(join(root, 'b.py'), join(root, 'c.py'));
    await eventually(async () => {
      const hits = await find('beta');
      return hits.length === 1 && hits[0].path === 'c.py' ? true : undefined;
    });
    rmSync(join(root, 'a.py'));
    await eventually(async () => ((await find('alpha')).length === 0 ? true : undefined));
    // A burst of writes to one file ends on its final bytes.
    for (let i = 0; i < 20; i++) writeFileSync(join(root, 'burst.py'), `def burst_${i}(): pass\n`);
    await eventually(async () => {
      const hits = await find('burst_');
      return hits.length === 1 && hits[0].symbol.name === 'burst_19' ? true : undefined;
    });
    // A new directory with files appears whole.
    writeFiles(root, { 'pkg/deep/d.py': 'def delta(): pass\n' });
    await eventually(async () => ((await find('delta')).length === 1 ? true : undefined));
  } finally {
    await rift.close();
    removeWorkspace(root);
  }
});

test('a read from an index lagging the observed tree carries stale_index naming both revisions', async () => {
  const root = tempWorkspace({ 'a.py': 'def alpha(): pass\n' });
  // A long debounce holds observed changes back from the index long enough to read in between.
  const rift = await startRift(root, { RIFT_WATCH_DEBOUNCE_MS: '1500' });
  try {
    const fresh = (await rift.call('get_symbol', { name: 'alpha' })) as Result;
    assert.deepEqual(fresh.warnings, []);
    writeFileSync(join(root, 'a.py'), 'def alpha(): return 1\n');
    const stale = await eventually(async () => {
      const r = (await rift.call('get_symbol', { name: 'alpha' })) as Result;
      return r.warnings.length > 0 ? r : undefined;
    }, 1400);
    const w = stale.warnings[0];
    assert.equal(w.kind, 'stale_index');
    assert.match(String(w.captured), /^[0-9a-f]{8}$/);
    assert.match(String(w.indexed), /^[0-9a-f]{8}$/);
    assert.notEqual(w.captured, w.indexed);
    assert.equal(stale.hits[0].source?.text, 'def alpha(): pass', 'answered from the index it names');
    const caught = await eventually(async () => {
      const r = (await rift.call('get_symbol', { name: 'alpha' })) as Result;
      return r.warnings.length === 0 ? r : undefined;
    });
    assert.equal(caught.hits[0].source?.text, 'def alpha(): return 1');
  } finally {
    await rift.close();
    removeWorkspace(root);
  }
});

test('the index persists in .rift/rift.db: a restart serves at once and sees edits made while stopped', async () => {
  const root = tempWorkspace({ 'a.py': 'def alpha(): pass\n', 'b.py': 'def beta(): pass\n' });
  let rift = await startRift(root, {}, { standalone: true });
  assert.equal(((await rift.call('get_symbol', { name: 'alpha' })) as Result).hits.length, 1);
  await rift.close();
  writeFileSync(join(root, 'b.py'), 'def gamma(): pass\n');
  rift = await startRift(root, {}, { standalone: true });
  try {
    assert.equal(((await rift.call('get_symbol', { name: 'gamma' })) as Result).hits.length, 1);
    assert.equal(((await rift.call('get_symbol', { name: 'beta' })) as Result).hits.length, 0);
    assert.match(rift.stderr(), /reparsed=1\b/, 'the warm start re-parsed only the changed file');
  } finally {
    await rift.close();
    removeWorkspace(root);
  }
});
