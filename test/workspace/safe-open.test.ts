import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DirHandle, LOCATE, OpenError, isAt, openInside, readBounded, type Located } from '../../src/workspace/safe-open.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// The safe-open primitive both reads and publication use (issue 10): what a descriptor opened,
// verified after the open — by the kernel's own record (/proc/self/fd) or, where there is none,
// by re-resolving the path and comparing inodes — and directory handles whose entries stay
// inside the directory they opened however the tree moves.

const STRATEGIES: Located[] = LOCATE === 'kernel' ? ['kernel', 'resolved'] : ['resolved'];

for (const how of STRATEGIES) {
  test(`${how}: a descriptor is where it was opened, and a symlinked component is refused`, () => {
    const root = tempWorkspace({ 'real/a.txt': 'inside\n' });
    const outside = tempWorkspace({ 'a.txt': 'outside\n' });
    try {
      symlinkSync('real', join(root, 'alias'));
      symlinkSync(outside, join(root, 'escape'));
      const fd = openInside(root, 'real/a.txt', how);
      assert.equal(readBounded(fd, 7, 64)!.toString(), 'inside\n');
      assert.equal(isAt(fd, join(root, 'real/a.txt'), how), true);
      assert.equal(isAt(fd, join(root, 'alias/a.txt'), how), false);
      closeSync(fd);
      for (const p of ['alias/a.txt', 'escape/a.txt']) {
        assert.throws(() => openInside(root, p, how), (e: unknown) => e instanceof OpenError && e.reason === 'symlink', p);
      }
      assert.throws(() => DirHandle.open(join(root, 'escape'), how), (e: unknown) => e instanceof OpenError && e.reason === 'symlink');
      assert.throws(() => openInside(root, 'real/none.txt', how), (e: unknown) => e instanceof OpenError && e.reason === 'missing');
    } finally {
      removeWorkspace(root);
      removeWorkspace(outside);
    }
  });

  test(`${how}: a directory handle notices being moved or replaced by a symlink`, () => {
    const root = tempWorkspace({ 'pkg/a.txt': 'a\n' });
    const outside = tempWorkspace({ 'a.txt': 'outside\n' });
    try {
      const dir = DirHandle.open(join(root, 'pkg'), how);
      const sub = dir.child('made', true);
      assert.equal(sub.abs, join(root, 'pkg/made'));
      assert.deepEqual(dir.list().sort(), ['a.txt', 'made']);
      assert.equal(dir.stillAt(), true);
      renameSync(join(root, 'pkg'), join(root, 'pkg.old'));
      symlinkSync(outside, join(root, 'pkg'));
      assert.equal(dir.stillAt(), false);
      assert.equal(sub.stillAt(), false);
      if (how === 'kernel') {
        // Entries named through the handle stay in the directory it opened, not where the path points now.
        writeFileSync(dir.entry('b.txt'), 'b\n');
        assert.equal(readFileSync(join(root, 'pkg.old/b.txt'), 'utf8'), 'b\n');
        assert.equal(readFileSync(join(outside, 'a.txt'), 'utf8'), 'outside\n');
      }
      dir.close();
      sub.close();
    } finally {
      removeWorkspace(root);
      removeWorkspace(outside);
    }
  });
}

test('readBounded reads to EOF whatever the stat said, and never past its bound', () => {
  const root = tempWorkspace({ 'f.txt': 'x'.repeat(100) });
  try {
    mkdirSync(join(root, 'd'));
    const fd = openInside(root, 'f.txt');
    assert.equal(readBounded(fd, 0, 1000)!.length, 100, 'a file stating no size is still read whole');
    closeSync(fd);
    const again = openInside(root, 'f.txt');
    assert.equal(readBounded(again, 100, 99), null);
    closeSync(again);
    const exact = openInside(root, 'f.txt');
    assert.equal(readBounded(exact, 100, 100)!.length, 100);
    closeSync(exact);
  } finally {
    removeWorkspace(root);
  }
});
