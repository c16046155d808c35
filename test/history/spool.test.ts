import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Feed } from '../../src/history/feed.ts';
import { Repository } from '../../src/history/git.ts';
import { SpooledCatFile, SpoolUnavailable } from '../../src/history/spool.ts';
import { gitEnv, gitFixture } from '../helpers/git.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// A history walk reads its versions through `git cat-file --batch` writing into an unlinked
// temporary file (src/history/spool.ts): answers in order, byte for byte, across restarts of the
// process, a process that dies mid-read, and holders releasing it; nothing left in the temp folder.

let root: string;
const blobs: Array<{ oid: string; text: string }> = [];

before(() => {
  root = tempWorkspace();
  const fx = gitFixture(root);
  for (let i = 0; i < 12; i++) {
    // Sizes from empty to ~300 KB, so answers cross any read size.
    const text = i === 0 ? '' : `${i}\n`.repeat(i * 12_000);
    fx.commit(`c${i}`, { 'a.txt': text });
    blobs.push({ oid: fx.git('rev-parse', 'HEAD:a.txt'), text });
  }
});

after(() => removeWorkspace(root));

const spooled = () => readdirSync(tmpdir()).filter((f) => f.startsWith(`rift-cat-file-${process.pid}-`));

/** Runs `check` on a spool over the fixture (rotated past `rotateBytes`), closed afterwards whatever happens. */
async function withCat(check: (cat: SpooledCatFile) => Promise<void>, rotateBytes?: number): Promise<void> {
  const cat = rotateBytes === undefined ? new SpooledCatFile(root, gitEnv) : new SpooledCatFile(root, gitEnv, rotateBytes);
  try {
    await check(cat);
  } finally {
    cat.close();
  }
}

/** The text `cat` answers for `oid` (an object that exists). */
const textOf = async (cat: SpooledCatFile, oid: string) => (await cat.request(oid))!.bytes.toString('utf8');

test('answers every request in order, byte for byte; a missing object is null', async () => {
  await withCat(async (cat) => {
    const answers = await Promise.all([...blobs.map((b) => cat.request(b.oid)), cat.request('0'.repeat(40)), cat.request('HEAD:a.txt')]);
    for (let i = 0; i < blobs.length; i++) {
      assert.equal(answers[i]!.oid, blobs[i].oid);
      assert.equal(answers[i]!.type, 'blob');
      assert.equal(answers[i]!.bytes.toString('utf8'), blobs[i].text, `blob ${i}`);
    }
    assert.equal(answers[blobs.length], null, 'missing');
    assert.equal(answers[blobs.length + 1]!.bytes.toString('utf8'), blobs.at(-1)!.text, 'any name git resolves');
    assert.deepEqual(spooled(), [], 'the spool file is unlinked once open');
    // Into the caller's buffers.
    const mine = Buffer.alloc(blobs[3].text.length + 10);
    const into = await cat.request(blobs[3].oid, (size) => mine.subarray(0, size));
    assert.equal(into!.bytes.buffer, mine.buffer);
    assert.equal(into!.bytes.toString('utf8'), blobs[3].text);
  });
});

test('is started afresh once its file is long and nothing is in flight, answering as before', async () => {
  await withCat(async (cat) => {
    for (const b of blobs) assert.equal(await textOf(cat, b.oid), b.text);
    assert.equal(cat.processes, blobs.length, 'one process per request, each past the bound');
    // Requests sent together stay on one process.
    const together = await Promise.all(blobs.map((b) => cat.request(b.oid)));
    assert.deepEqual(together.map((a) => a!.bytes.toString('utf8')), blobs.map((b) => b.text));
    assert.equal(cat.processes, blobs.length + 1);
  }, 1);
});

test('a process that dies fails what was sent to it; the next request starts another', async () => {
  await withCat(async (cat) => {
    cat.start();
    process.kill(cat.pid!, 'SIGKILL');
    await assert.rejects(Promise.all(blobs.map((b) => cat.request(b.oid))), /git cat-file --batch/);
    assert.equal(await textOf(cat, blobs[5].oid), blobs[5].text);
    assert.equal(cat.processes, 2);
  });
});

test('closing fails what is in flight; a request right after it gets its own answer from another process', async () => {
  await withCat(async (cat) => {
    const inFlight = blobs.map((b) => cat.request(b.oid));
    cat.close();
    const after = cat.request(blobs[7].oid);
    const settled = await Promise.allSettled(inFlight);
    assert.ok(settled.every((x) => x.status === 'rejected'), 'every request sent to the closed process failed');
    assert.equal((await after)!.bytes.toString('utf8'), blobs[7].text);
    assert.equal(cat.processes, 2);
  });
});

test('closes when the last holder releases it; the next request starts another', async () => {
  await withCat(async (cat) => {
    const first = cat.hold();
    const second = cat.hold();
    assert.equal(await textOf(cat, blobs[1].oid), blobs[1].text);
    first();
    first(); // a second release of one hold counts once
    assert.notEqual(cat.pid, undefined, 'still held');
    second();
    assert.equal(cat.pid, undefined, 'closed');
    assert.equal(await textOf(cat, blobs[2].oid), blobs[2].text);
    assert.equal(cat.processes, 2);
  });
});

test('where no spool file can be made, a walk reads its versions through the pipe', async () => {
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = `${root}/no-such-folder`;
  const repo = Repository.at(root, '');
  try {
    await assert.rejects(new SpooledCatFile(root, gitEnv).request(blobs[1].oid), SpoolUnavailable);
    repo.prepareReads();
    const read: string[] = [];
    for await (const bytes of repo.blobs(Feed.of(blobs.map((b) => b.oid)))) read.push(bytes!.toString('utf8'));
    assert.deepEqual(read, blobs.map((b) => b.text));
  } finally {
    repo.close();
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
});
