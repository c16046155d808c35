import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { recoverChanges } from '../../src/change/journal.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';
import { bundled } from '../support/bundle.ts';

// The change journal (issue 10): a process killed at every step of a publication leaves an
// intent record the next holder of the lock rolls back from — every file wholly old, created
// directories gone, deleted files back — and recovery never deletes what may be a file's only
// copy, nor bytes someone else wrote since (it keeps the originals aside instead).

const child = bundled(fileURLToPath(new URL('./fixtures/publish-steps.ts', import.meta.url)));
const ORIGINAL = { 'a.txt': 'a0\n', 'b/old.txt': 'b0\n', 'd/e.txt': 'd0\n' };

function killedAt(step: string): string {
  const root = tempWorkspace(ORIGINAL);
  const r = spawnSync(process.execPath, [child, root, step], { encoding: 'utf8' });
  assert.equal(r.signal, 'SIGKILL', r.stderr);
  return root;
}

function tree(root: string, dir = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
    const p = dir ? `${dir}/${e.name}` : e.name;
    if (p === '.rift') continue;
    if (e.isDirectory()) {
      const inner = tree(root, p);
      Object.assign(out, Object.keys(inner).length ? inner : { [`${p}/`]: '' });
    } else out[p] = readFileSync(join(root, p), 'utf8');
  }
  return out;
}

const changes = (root: string) => readdirSync(join(root, '.rift', 'changes'));

describe('change journal', () => {
  for (const step of ['1', '2', '3', '4', 'commit', 'hooks']) {
    test(`a kill ${/^\d$/.test(step) ? `before publication step ${step}` : step === 'commit' ? 'before the commit' : 'mid transform hook'} rolls the whole change back`, async () => {
      const root = killedAt(step);
      try {
        assert.equal(changes(root).length, 1, 'the dead change left its directory');
        assert.ok(existsSync(join(root, '.rift', 'changes', changes(root)[0], 'intent.json')));
        const restored = await recoverChanges(root);
        assert.deepEqual(tree(root), ORIGINAL);
        assert.deepEqual(changes(root), []);
        assert.ok(restored.every((p) => ['a.txt', 'b/old.txt', 'c/new/deep.txt', 'd/e.txt'].includes(p)), restored.join());
        assert.deepEqual(await recoverChanges(root), [], 'recovery is idempotent');
      } finally {
        removeWorkspace(root);
      }
    });
  }

  test('bytes someone else wrote after the kill are left as found, the rest rolls back, and the originals are kept aside', async () => {
    const root = killedAt('3');
    try {
      const [id] = changes(root);
      writeFileSync(join(root, 'a.txt'), 'edited by hand\n');
      await recoverChanges(root);
      assert.deepEqual(tree(root), { ...ORIGINAL, 'a.txt': 'edited by hand\n' });
      assert.deepEqual(changes(root), [`${id}.kept`], 'the change directory is set aside for an operator, not deleted');
      assert.equal(readFileSync(join(root, '.rift', 'changes', `${id}.kept`, 'old-0'), 'utf8'), 'a0\n', "a.txt's original is still there");
      assert.deepEqual(await recoverChanges(root), [], 'a kept directory is not recovered again');
    } finally {
      removeWorkspace(root);
    }
  });

  test('a change directory without an intent record holds no only copy and goes; an unreadable record stays', async () => {
    const root = tempWorkspace(ORIGINAL);
    try {
      const staged = join(root, '.rift', 'changes', '1-staged-1');
      mkdirSync(staged, { recursive: true });
      writeFileSync(join(staged, 'new-0'), 'a1\n');
      linkSync(join(root, 'a.txt'), join(staged, 'old-0'));
      const torn = join(root, '.rift', 'changes', '2-torn-1');
      mkdirSync(torn);
      writeFileSync(join(torn, 'intent.json'), '{"version":1,"pha');
      writeFileSync(join(torn, 'old-0'), 'maybe the only copy\n');
      await recoverChanges(root);
      assert.deepEqual(tree(root), ORIGINAL);
      assert.deepEqual(changes(root), ['2-torn-1']);
      assert.equal(readFileSync(join(torn, 'old-0'), 'utf8'), 'maybe the only copy\n');
    } finally {
      removeWorkspace(root);
    }
  });
});
