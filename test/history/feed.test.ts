import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Feed } from '../../src/history/feed.ts';
import { Repository } from '../../src/history/git.ts';

// A history walk's first segment starts while `git log` still runs: its versions arrive through a
// feed, read by index, and the log's entries are handed on as git finds them.

test('a feed answers for an item once it arrives, and says so when it ended without it', async () => {
  const feed = new Feed<number>();
  const second = feed.has(1);
  let answered: boolean | null = null;
  void second.then((v) => (answered = v));
  feed.push([10]);
  await new Promise((r) => setImmediate(r));
  assert.equal(answered, null, 'item 1 has not arrived');
  feed.push([11, 12]);
  assert.equal(await second, true);
  assert.deepEqual(feed.items, [10, 11, 12]);
  const fourth = feed.has(3);
  feed.end();
  assert.equal(await fourth, false, 'ended without it');
  assert.equal(await feed.has(2), true, 'what arrived stays');
  assert.throws(() => feed.push([13]), /after end/);
  const whole = Feed.of(['a', 'b']);
  assert.deepEqual([whole.done, await whole.has(1), await whole.has(2)], [true, true, false]);
});

test("the log's entries come one by one, newest first, and a log git cannot run rejects", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rift-feed-'));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_DATE: '2020-01-01T00:00:00Z', GIT_COMMITTER_DATE: '2020-01-01T00:00:00Z' } });
  try {
    git('init', '-q');
    git('config', 'user.name', 'Ada');
    git('config', 'user.email', 'ada@example.test');
    for (let i = 0; i < 5; i++) {
      writeFileSync(join(dir, 'a.py'), `x = ${i}\n`);
      if (i === 3) git('rm', '-qf', 'a.py');
      else git('add', 'a.py');
      git('commit', '-q', '-m', `c${i}`, '--allow-empty');
    }
    const repo = (await Repository.open(dir))!;
    try {
      const seen: string[] = [];
      for await (const e of repo.logEntries('HEAD', 'a.py', 10)) seen.push(`${e.summary} ${e.blob === null ? 'deleted' : 'blob'}`);
      assert.deepEqual(seen, ['c4 blob', 'c3 deleted', 'c2 blob', 'c1 blob', 'c0 blob']);
      const bounded: string[] = [];
      for await (const e of repo.logEntries('HEAD', 'a.py', 2)) bounded.push(e.summary);
      assert.deepEqual(bounded, ['c4', 'c3']);
      await assert.rejects(async () => {
        for await (const e of repo.logEntries('no-such-revision', 'a.py', 10)) void e;
      }, /git log failed/);
    } finally {
      repo.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
