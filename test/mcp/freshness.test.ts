import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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
    // Answered from the index it names — the declaration it holds — but never with bytes the
    // file no longer holds: the store verifies what it reads against the indexed digest.
    assert.equal(stale.hits[0].symbol.name, 'alpha');
    assert.equal(stale.hits[0].source, undefined, 'old bytes are not served');
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

test('a file changed behind the index is never served with its old bytes; witnesses refuse; reads say stale_index', async () => {
  const before = 'def alpha():\n    return "old"\n';
  const root = tempWorkspace({ 'a.py': before, 'b.py': 'def beta(): pass\n' });
  // The watcher is held back, so only the store's digest check stands between a read and the
  // bytes the index no longer matches.
  const rift = await startRift(root, { RIFT_WATCH_DEBOUNCE_MS: '60000' });
  type Hit = { path: string; symbol: { id: string }; node?: { id: string }; source?: { text: string } };
  type Warned = { warnings: Array<{ kind: string; captured?: string; indexed?: string }> };
  try {
    const fresh = (await rift.call('get_symbol', { name: 'alpha' })) as { hits: Hit[] } & Warned;
    assert.equal(fresh.hits[0].source?.text, before.trimEnd());
    const witness = fresh.hits[0].node!.id;
    // Same length, other bytes: every indexed span still fits the file.
    const after = before.replace('"old"', '"new"');
    writeFileSync(join(root, 'a.py'), after);

    const read = (await rift.call('get_symbol', { name: 'alpha' })) as { hits: Hit[] } & Warned;
    assert.equal(read.hits.length, 1, 'the indexed declaration is still named');
    assert.equal(read.hits[0].source, undefined);
    assert.equal(read.hits[0].node, undefined, 'no witness is minted from bytes the file no longer holds');
    const stale = read.warnings.find((w) => w.kind === 'stale_index');
    assert.ok(stale && stale.captured !== stale.indexed, JSON.stringify(read.warnings));

    const found = (await rift.call('search', { query: 'alpha', include: ['source'] })) as { results: Array<{ path: string; source?: string }> } & Warned;
    for (const r of found.results.filter((x) => x.path === 'a.py')) assert.ok(!String(r.source).includes('old'), `old bytes served: ${r.source}`);
    assert.ok(found.warnings.some((w) => w.kind === 'stale_index'));
    // The literal line matcher reads the file too: it never matches the bytes that left.
    const literal = (await rift.call('search', { query: 'return "old"' })) as { results: Array<{ path: string; matched_by: string[] }> };
    assert.deepEqual(literal.results.filter((x) => x.path === 'a.py' && x.matched_by.includes('content')), []);

    const nodes = await rift.fail('nodes', { path: 'a.py', position: 4 });
    assert.equal(nodes.data.code, 'temporarily_unavailable');
    assert.match(String(nodes.data.message), /stale_index/);

    const refused = (await rift.call('replace_node', { node: witness, body: 'def alpha(): pass' })) as { status: string; preconditions?: Array<{ kind: string }> };
    assert.equal(refused.status, 'refused');
    assert.equal(refused.preconditions?.[0].kind, 'source_unchanged');
    assert.equal(readFileSync(join(root, 'a.py'), 'utf8'), after, 'a refused change writes nothing');

    // Files that did not change are served as before.
    const other = (await rift.call('get_symbol', { name: 'beta' })) as { hits: Hit[] };
    assert.equal(other.hits[0].source?.text, 'def beta(): pass');
  } finally {
    await rift.close();
    removeWorkspace(root);
  }
});
