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

test('answers every request in order, byte for byte; a missing object is null', async () => {
  const cat = new SpooledCatFile(root, gitEnv);
  try {
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
  } finally {
    cat.close();
  }
});

test('is started afresh once its file is long and nothing is in flight, answering as before', async () => {
  const cat = new SpooledCatFile(root, gitEnv, 1);
  try {
    for (const b of blobs) assert.equal((await cat.request(b.oid))!.bytes.toString('utf8'), b.text);
    assert.equal(cat.processes, blobs.length, 'one process per request, each past the bound');
    // Requests sent together stay on one process.
    const together = await Promise.all(blobs.map((b) => cat.request(b.oid)));
    assert.deepEqual(together.map((a) => a!.bytes.toString('utf8')), blobs.map((b) => b.text));
    assert.equal(cat.processes, blobs.length + 1);
  } finally {
    cat.close();
  }
});

test('a process that dies fails what was sent to it; the next request starts another', async () => {
  const cat = new SpooledCatFile(root, gitEnv);
  try {
    cat.start();
    process.kill(cat.pid!, 'SIGKILL');
    await assert.rejects(Promise.all(blobs.map((b) => cat.request(b.oid))), /git cat-file --batch/);
    assert.equal((await cat.request(blobs[5].oid))!.bytes.toString('utf8'), blobs[5].text);
    assert.equal(cat.processes, 2);
  } finally {
    cat.close();
  }
});

test('closing fails what is in flight; a request right after it gets its own answer from another process', async () => {
  const cat = new SpooledCatFile(root, gitEnv);
  try {
    const inFlight = blobs.map((b) => cat.request(b.oid));
    cat.close();
    const after = cat.request(blobs[7].oid);
    const settled = await Promise.allSettled(inFlight);
    assert.ok(settled.every((x) => x.status === 'rejected'), 'every request sent to the closed process failed');
    assert.equal((await after)!.bytes.toString('utf8'), blobs[7].text);
    assert.equal(cat.processes, 2);
  } finally {
    cat.close();
  }
});

test('closes when the last holder releases it; the next request starts another', async () => {
  const cat = new SpooledCatFile(root, gitEnv);
  try {
    const first = cat.hold();
    const second = cat.hold();
    assert.equal((await cat.request(blobs[1].oid))!.bytes.toString('utf8'), blobs[1].text);
    first();
    first(); // a second release of one hold counts once
    assert.notEqual(cat.pid, undefined, 'still held');
    second();
    assert.equal(cat.pid, undefined, 'closed');
    assert.equal((await cat.request(blobs[2].oid))!.bytes.toString('utf8'), blobs[2].text);
    assert.equal(cat.processes, 2);
  } finally {
    cat.close();
  }
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
