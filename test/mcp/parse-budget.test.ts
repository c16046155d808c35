import { test } from 'node:test';
import assert from 'node:assert/strict';
import { linkSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PARSE_TIME_MAX_MS } from '../../src/core/limits.ts';
import { sha256Hex } from '../../src/core/digest.ts';
import { startRift } from '../helpers/mcp.ts';
import { eventually, removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// A file whose parse runs past PARSE_TIME_MAX_MS is stored unparsed with its reason, and reads are
// answered while it parses: parsing runs in worker threads, off the request path (issue 10).

type Symbols = { hits: Array<{ path: string }>; warnings: Array<{ kind: string }> };

// Thousands of comment lines in one indented block make tree-sitter-python's scanner quadratic.
const SLOW = `def slow():\n${'    # zanzibar comment line\n'.repeat(6000)}    return 1\n`;

test('a parse past the time budget never holds reads and leaves the file unparsed, naming why', async () => {
  const root = tempWorkspace({ 'a.py': 'def alpha(): pass\n' });
  // No coalescing delay: from the watcher's event on, the index is busy with the slow file.
  const rift = await startRift(root, { RIFT_WATCH_DEBOUNCE_MS: '0' });
  try {
    assert.deepEqual(((await rift.call('get_symbol', { name: 'alpha' })) as Symbols).warnings, []);
    // Written beside the workspace and renamed in, so the watcher never sees a partial file.
    writeFileSync(`${root}.slow.py`, SLOW);
    renameSync(`${root}.slow.py`, join(root, 'slow.py'));
    const stale = async () => ((await rift.call('get_symbol', { name: 'alpha' })) as Symbols).warnings.some((w) => w.kind === 'stale_index');
    // A read answered with stale_index was answered from the index without the slow file while
    // its parse was due or running: a read held by the parse would have come back after it, fresh.
    // (How many more reads land before the parse ends depends on the machine; what the parse
    // leaves behind is checked below.)
    await eventually(stale, 10_000);
    await eventually(async () => ((await stale()) ? undefined : true), 4 * PARSE_TIME_MAX_MS);

    const nodes = await rift.fail('nodes', { path: 'slow.py', position: 0 });
    assert.equal(nodes.data.code, 'content_unavailable');
    assert.equal(
      nodes.data.message,
      `the addressed content exists but its bytes cannot be served: path slow.py, reason its parse ran past ${PARSE_TIME_MAX_MS} ms and was cancelled; it is searchable as text; request the declaration without its body, or read a source-backed unit`,
    );
    assert.deepEqual(((await rift.call('get_symbol', { name: 'slow' })) as Symbols).hits, [], 'no declarations from an unparsed file');
    const text = (await rift.call('search', { query: 'zanzibar', target: 'file' })) as { results: Array<{ path: string }> };
    assert.ok(text.results.some((r) => r.path === 'slow.py'), 'still searchable as text');
    // The rest of the tree is parsed as before.
    writeFileSync(join(root, 'b.py'), 'def beta(): pass\n');
    await eventually(async () => (((await rift.call('get_symbol', { name: 'beta' })) as Symbols).hits.length === 1 ? true : undefined), 30_000);
  } finally {
    await rift.close();
    removeWorkspace(root);
  }
});

test('a warm start keeps the unparsed file and its reason without parsing it again', async () => {
  const root = tempWorkspace({ 'a.py': 'def alpha(): pass\n', 'slow.py': SLOW });
  // Standalone: each start is its own process over the persisted store (a warm start).
  let rift = await startRift(root, {}, { standalone: true });
  try {
    assert.equal((await rift.fail('nodes', { path: 'slow.py', position: 0 })).data.code, 'content_unavailable');
  } finally {
    await rift.close();
  }
  rift = await startRift(root, {}, { standalone: true });
  try {
    assert.equal(((await rift.call('get_symbol', { name: 'alpha' })) as Symbols).hits.length, 1);
    // The warm start's refresh runs beside the first reads; its summary line says what it parsed.
    const reparsed = await eventually(() => /index built .*reparsed=(\d+)/.exec(rift.stderr())?.[1], 60_000);
    assert.equal(reparsed, '0', 'nothing parsed on the warm start');
    assert.match((await rift.fail('nodes', { path: 'slow.py', position: 0 })).message, /reason its parse ran past \d+ ms and was cancelled/);
  } finally {
    await rift.close();
    removeWorkspace(root);
  }
});

test('a file written again while it is read is read again, though no event reports the second write', async () => {
  const root = tempWorkspace({ 'a.py': 'def alpha(): pass\n' });
  // A second name for the file outside the workspace: writes through it change the file, and no
  // event reaches the workspace's watcher (inotify reports a write under the name written).
  const outside = mkdtempSync(join(tmpdir(), 'rift-link-'));
  const rift = await startRift(root, { RIFT_WATCH_DEBOUNCE_MS: '0' }, { standalone: true });
  const indexedDigest = async () => {
    const r = await rift.client.readResource({ uri: 'rift://workspace' });
    return (JSON.parse((r.contents[0] as { text: string }).text) as { source: Array<{ path: string; digest: string }> }).source.find((s) => s.path === 'slow.py')?.digest;
  };
  try {
    assert.deepEqual(((await rift.call('get_symbol', { name: 'alpha' })) as Symbols).warnings, []);
    writeFileSync(`${root}.slow.py`, `${SLOW}# first\n`);
    renameSync(`${root}.slow.py`, join(root, 'slow.py'));
    linkSync(join(root, 'slow.py'), join(outside, 'slow.py'));
    // The watcher's event is in: the file is read, then parsed for seconds.
    await eventually(async () => ((await rift.call('get_symbol', { name: 'alpha' })) as Symbols).warnings.some((w) => w.kind === 'stale_index'), 10_000);
    await new Promise((r) => setTimeout(r, 500));
    const second = `${SLOW}# second, and longer\n`;
    writeFileSync(join(outside, 'slow.py'), second);
    await eventually(async () => ((await indexedDigest()) === sha256Hex(second).slice(0, 8) ? true : undefined), 6 * PARSE_TIME_MAX_MS);
  } finally {
    await rift.close();
    removeWorkspace(root);
    rmSync(outside, { recursive: true, force: true });
  }
});
