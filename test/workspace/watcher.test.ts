import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { watchWorkspace, isPolicyFile, type WatchEvent } from '../../src/workspace/watcher.ts';

async function until(predicate: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('the watcher reports create, update, delete and rename as project-relative paths', async () => {
  const root = mkdtempSync(join(tmpdir(), 'rift-watch-'));
  mkdirSync(join(root, '.git'));
  mkdirSync(join(root, '.rift'));
  mkdirSync(join(root, 'sub/.git'), { recursive: true });
  mkdirSync(join(root, 'src'));
  const batches: WatchEvent[][] = [];
  const errors: Error[] = [];
  const w = await watchWorkspace(
    root,
    (events) => batches.push(events),
    (err) => errors.push(err),
  );
  const all = (): WatchEvent[] => batches.flat();
  const seen = (path: string, type: WatchEvent['type']): boolean => all().some((e) => e.path === path && e.type === type);
  try {
    // Floor traffic first, so it would be delivered before the events we wait for.
    writeFileSync(join(root, '.git/index'), 'x');
    writeFileSync(join(root, '.rift/rift.db'), 'x');
    writeFileSync(join(root, 'sub/.git/HEAD'), 'x');
    mkdirSync(join(root, '.rift/projections/p1'), { recursive: true });
    writeFileSync(join(root, '.rift/projections/p1/file.ts'), 'x');

    writeFileSync(join(root, 'src/a.ts'), 'one\n');
    await until(() => seen('src/a.ts', 'create'), 'create of src/a.ts');

    writeFileSync(join(root, 'src/a.ts'), 'two\n');
    await until(() => seen('src/a.ts', 'update'), 'update of src/a.ts');

    const before = batches.length;
    renameSync(join(root, 'src/a.ts'), join(root, 'src/b.ts'));
    await until(() => seen('src/a.ts', 'delete') && seen('src/b.ts', 'create'), 'rename to src/b.ts');
    const renameEvents = batches.slice(before).flat();
    assert.ok(renameEvents.some((e) => e.path === 'src/a.ts' && e.type === 'delete'));
    assert.ok(renameEvents.some((e) => e.path === 'src/b.ts' && e.type === 'create'));

    unlinkSync(join(root, 'src/b.ts'));
    await until(() => seen('src/b.ts', 'delete'), 'delete of src/b.ts');

    writeFileSync(join(root, '.gitignore'), '*.log\n');
    await until(() => all().some((e) => isPolicyFile(e.path)), 'the .gitignore event');

    // More floor traffic, then a sentinel: everything before it has been delivered.
    writeFileSync(join(root, '.git/index'), 'y');
    writeFileSync(join(root, 'sub/.git/HEAD'), 'y');
    writeFileSync(join(root, 'sentinel'), '');
    await until(() => seen('sentinel', 'create'), 'the sentinel');

    for (const e of all()) {
      assert.ok(!/(^|\/)\.(git|rift)(\/|$)/.test(e.path), `floor path reported: ${e.path}`);
      assert.ok(!e.path.startsWith('/') && !e.path.includes('\\'), `not project-relative: ${e.path}`);
      assert.notEqual(e.path, '');
    }
    assert.deepEqual(errors, []);
  } finally {
    await w.close();
    rmSync(root, { recursive: true, force: true });
  }
});

test('close stops delivery and is idempotent', async () => {
  const root = mkdtempSync(join(tmpdir(), 'rift-watch-'));
  const events: WatchEvent[] = [];
  const w = await watchWorkspace(
    root,
    (batch) => events.push(...batch),
    () => undefined,
  );
  try {
    writeFileSync(join(root, 'a.txt'), 'a');
    await until(() => events.some((e) => e.path === 'a.txt'), 'create of a.txt');
    await w.close();
    await w.close();
    const count = events.length;
    writeFileSync(join(root, 'b.txt'), 'b');
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(events.length, count);
  } finally {
    await w.close();
    rmSync(root, { recursive: true, force: true });
  }
});
