import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigLoader } from '../../src/config/loader.ts';
import { RevisionIndex } from '../../src/index/revision.ts';
import { Store } from '../../src/index/store.ts';
import { initSyntax } from '../../src/syntax/runtime.ts';
import { gitFixture } from '../helpers/git.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// The bounds of the revision index (REVISION_SNAPSHOT_BYTES_MAX, REVISION_BLOBS_MAX,
// REVISION_BLOB_BYTES_MAX), exercised with small values: what is kept stays within them and
// goes least recently used first. (The count bound is tested through MCP in revisions.test.ts.)

/** A Python file of about `lines` lines, distinct per `tag`. */
const file = (tag: string, lines: number) => Array.from({ length: lines }, (_, i) => `def f_${tag}_${i}():\n    return ${i}\n`).join('');

function fixture(): { root: string; commits: string[] } {
  const root = tempWorkspace();
  const repo = gitFixture(root);
  const commits: string[] = [];
  for (let i = 0; i < 5; i++) commits.push(repo.commit(`step ${i}`, { 'a.py': file(`a${i}`, 100), 'b.py': file(`b${i}`, 100), 'c.py': file('c', 100) }));
  return { root, commits };
}

test('snapshots past the byte bound are evicted least recently used first, keeping at least one', async () => {
  await initSyntax();
  const { root, commits } = fixture();
  try {
    const config = new ConfigLoader(root).current().config;
    const probe = new RevisionIndex(root, () => Store.memory(root));
    const one = (await probe.snapshot(commits[0], config)).bytes;
    probe.close();
    // Room for two snapshots of this size, not three.
    const index = new RevisionIndex(root, () => Store.memory(root), { bounds: { snapshots: 8, snapshotBytes: Math.floor(one * 2.5), blobs: 1000, blobBytes: 1 << 30 } });
    try {
      // Each is read twice: a snapshot read once moves forward to the next revision instead.
      const twice = async (c: string) => {
        await index.snapshot(c, config);
        return index.snapshot(c, config);
      };
      const first = await twice(commits[0]);
      const second = await twice(commits[1]);
      assert.equal(index.kept, 2);
      // The first is used again, so the second is the least recently used when the third arrives.
      assert.equal(await index.snapshot(commits[0], config), first);
      await twice(commits[2]);
      assert.equal(index.kept, 2);
      assert.equal(await index.snapshot(commits[0], config), first, 'the recently used snapshot is kept');
      assert.notEqual(await index.snapshot(commits[1], config), second, 'the least recently used one was evicted and is built again');
      assert.equal(index.kept, 2);
    } finally {
      index.close();
    }
    // A bound smaller than one snapshot still keeps the snapshot being read (here each read
    // once, so each also moves forward to the next).
    const tiny = new RevisionIndex(root, () => Store.memory(root), { bounds: { snapshots: 8, snapshotBytes: 1, blobs: 1000, blobBytes: 1 << 30 } });
    try {
      for (const c of commits.slice(0, 3)) await tiny.snapshot(c, config);
      assert.equal(tiny.kept, 1);
    } finally {
      tiny.close();
    }
  } finally {
    removeWorkspace(root);
  }
});

test('the parsed-blob cache stays within its count and byte bounds', async () => {
  await initSyntax();
  const { root, commits } = fixture();
  try {
    const config = new ConfigLoader(root).current().config;
    const counted = new RevisionIndex(root, () => Store.memory(root), { bounds: { snapshots: 8, snapshotBytes: 1 << 30, blobs: 4, blobBytes: 1 << 30 } });
    const blob = Buffer.byteLength(file('a0', 100));
    const sized = new RevisionIndex(root, () => Store.memory(root), { bounds: { snapshots: 8, snapshotBytes: 1 << 30, blobs: 1000, blobBytes: Math.floor(blob * 3.5) } });
    try {
      for (const c of commits) {
        await counted.snapshot(c, config);
        await sized.snapshot(c, config);
        assert.ok(counted.cachedBlobs.count <= 4, `count ${counted.cachedBlobs.count}`);
        assert.ok(sized.cachedBlobs.bytes <= Math.floor(blob * 3.5), `bytes ${sized.cachedBlobs.bytes}`);
      }
      // Eleven distinct blobs were read (a and b per commit, and c once); each cache holds its bound's worth.
      assert.equal(counted.cachedBlobs.count, 4);
      assert.equal(sized.cachedBlobs.count, 3);
      // An evicted blob is read and parsed again when a snapshot needs it: the answer is the same.
      const again = await counted.snapshot(commits[0], config);
      assert.equal(again.store.findSymbols({ query: 'f_a0_7', offset: 0, limit: 5 }).rows[0]?.qname, 'f_a0_7');
    } finally {
      counted.close();
      sized.close();
    }
  } finally {
    removeWorkspace(root);
  }
});
