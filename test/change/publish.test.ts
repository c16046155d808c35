import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, renameSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { digest8 } from '../../src/core/digest.ts';
import { Publication } from '../../src/change/publish.ts';
import { fileWrite } from './fixtures/file-write.ts';
import { lineStats } from '../../src/change/line-stats.ts';
import { removalRange, reindent } from '../../src/change/layout.ts';
import { isRefusal } from '../../src/change/refusal.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// Publication (reference F.10 rules 105–106) and the pieces the change pipeline counts with.

const w = fileWrite;

describe('publish', () => {
  test('a failure part-way restores every file already published, deletions and creations included', () => {
    const root = tempWorkspace({ 'a.txt': 'a0\n', 'b.txt': 'b0\n', 'c.txt': 'c0\n' });
    try {
      let calls = 0;
      const step = () => {
        if (++calls === 4) throw Object.assign(new Error('injected'), { code: 'EIO' });
      };
      const failing = {
        rename(from: string, to: string) {
          step();
          renameSync(from, to);
        },
        unlink(path: string) {
          step();
          unlinkSync(path);
        },
      };
      const writes = [w('a.txt', 'a0\n', 'a1\n'), w('b.txt', 'b0\n', null), w('c.txt', 'c0\n', 'c1\n'), w('new/d.txt', null, 'd1\n')];
      assert.throws(() => Publication.begin(root, writes, [], 1024, failing), (e: Error & { code?: string }) => e.code === 'storage_failure' && /path new\/d\.txt, io EIO/.test(e.message));
      assert.equal(readFileSync(join(root, 'a.txt'), 'utf8'), 'a0\n');
      assert.equal(readFileSync(join(root, 'b.txt'), 'utf8'), 'b0\n');
      assert.equal(readFileSync(join(root, 'c.txt'), 'utf8'), 'c0\n');
      assert.equal(existsSync(join(root, 'new')), false, 'created parents are removed again');
      assert.deepEqual(readdirSync(join(root, '.rift', 'changes')), [], 'no staged file is left behind');
    } finally {
      removeWorkspace(root);
    }
  });

  test('verification refuses source_unchanged with both digests when disk moved, before writing anything', () => {
    const root = tempWorkspace({ 'a.txt': 'now\n' });
    try {
      assert.throws(
        () => Publication.begin(root, [w('a.txt', 'then\n', 'x')], [], 1024),
        (e: unknown) =>
          isRefusal(e) &&
          e.result.preconditions[0].kind === 'source_unchanged' &&
          e.result.preconditions[0].expected.value === digest8('then\n') &&
          e.result.preconditions[0].observed.value === digest8('now\n'),
      );
      assert.throws(() => Publication.begin(root, [w('a.txt', null, 'x')], [], 1024), (e: unknown) => isRefusal(e) && e.result.preconditions[0].expected.value === 'absent');
      assert.equal(readFileSync(join(root, 'a.txt'), 'utf8'), 'now\n');
      assert.equal(existsSync(join(root, '.rift', 'changes')), false, 'a refusal stages nothing');
      Publication.begin(root, [w('a.txt', 'now\n', 'x'), w('b.txt', null, 'y')], [], 1024).commit();
      assert.equal(readFileSync(join(root, 'a.txt'), 'utf8'), 'x');
      assert.equal(readFileSync(join(root, 'b.txt'), 'utf8'), 'y');
      assert.deepEqual(readdirSync(join(root, '.rift', 'changes')), [], 'a commit leaves no change directory');
    } finally {
      removeWorkspace(root);
    }
  });
});

describe('line stats and layout', () => {
  test('a changed line counts once in each; endings count', () => {
    assert.deepEqual(lineStats(Buffer.from('a\nb\nc\n'), Buffer.from('a\nB\nc\n')), { added: 1, removed: 1 });
    assert.deepEqual(lineStats(Buffer.from('a\nb\nc\nd\ne\n'), Buffer.from('a\nx\nc\nd\ny\nz\ne\n')), { added: 3, removed: 1 });
    assert.deepEqual(lineStats(Buffer.from('a\n'), Buffer.from('a\r\n')), { added: 1, removed: 1 });
    assert.deepEqual(lineStats(null, Buffer.from('a\nb')), { added: 2, removed: 0 });
  });

  test('removal takes whole lines and one separator, and never leaves a trailing blank run', () => {
    const s = 'a\n\nb\n\nc\n';
    const mid = removalRange(s, 3, 4);
    assert.equal(s.slice(0, mid.start) + s.slice(mid.end), 'a\n\nc\n');
    const last = removalRange(s, 6, 7);
    assert.equal(s.slice(0, last.start) + s.slice(last.end), 'a\n\nb\n');
    const grouped = 'a\nb\n\nc\n';
    const g = removalRange(grouped, 2, 3);
    assert.equal(grouped.slice(0, g.start) + grouped.slice(g.end), 'a\n\nc\n');
    const inline = 'x = f(1, 2)\n';
    assert.deepEqual(removalRange(inline, 9, 10), { start: 9, end: 10 });
  });

  test('reindent strips the common indentation and applies the anchor column to later lines', () => {
    assert.equal(reindent('    def f(self):\n        pass', '    '), 'def f(self):\n        pass');
    assert.equal(reindent('fn a() {\n    1\n}', '  '), 'fn a() {\n      1\n  }');
  });
});
