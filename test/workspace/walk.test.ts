import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { isRiftError } from '../../src/core/errors.ts';
import { WORKSPACE_DEPTH_MAX } from '../../src/core/limits.ts';
import { Visibility, type SourcePolicy } from '../../src/workspace/visibility.ts';
import { compareProjectPaths, nfcConflict, walkWorkspace } from '../../src/workspace/walk.ts';

function policy(over: Partial<SourcePolicy> = {}): SourcePolicy {
  return {
    include: [],
    exclude: ['node_modules/', 'target/', '.venv/', '__pycache__/'],
    respectGitignore: true,
    maxFileBytes: 4 * 1024 * 1024,
    maxFiles: 200_000,
    ...over,
  };
}

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'rift-walk-'));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
  return root;
}

async function walk(root: string, p: SourcePolicy = policy()) {
  return walkWorkspace(root, await Visibility.load(root, p), p);
}

test('files carry size and mtime and come sorted by path', async () => {
  const root = tree({ 'b.ts': 'bb', 'a/z.ts': 'z', 'a/b.ts': '', 'a.ts': 'aaa', 'a-b.ts': '' });
  try {
    const r = await walk(root);
    assert.deepEqual(
      r.files.map((f) => f.path),
      ['a-b.ts', 'a.ts', 'a/b.ts', 'a/z.ts', 'b.ts'],
    );
    const a = r.files.find((f) => f.path === 'a.ts')!;
    assert.equal(a.size, 3);
    assert.equal(a.mtimeMs, statSync(join(root, 'a.ts')).mtimeMs);
    assert.deepEqual(r.skipped, []);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('path order is UTF-8 byte order, not UTF-16 code-unit order', async () => {
  const names = ['\uFF21.txt', '\u{1F600}.txt', 'z.txt', '\u00E9.txt'];
  const root = tree(Object.fromEntries(names.map((n) => [n, ''])));
  try {
    const expected = [...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    assert.deepEqual(
      (await walk(root)).files.map((f) => f.path),
      expected,
    );
    assert.ok(compareProjectPaths('\uFF21', '\u{1F600}') < 0);
    assert.ok(compareProjectPaths('\u{1F600}', '\uFF21') > 0);
    assert.ok(compareProjectPaths('a', 'a/b') < 0);
    assert.equal(compareProjectPaths('same', 'same'), 0);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('symlinked files and directories are skipped and never followed', async () => {
  const root = tree({ 'real/a.ts': '', 'b.ts': '' });
  const outside = tree({ 'secret.ts': '' });
  try {
    symlinkSync('b.ts', join(root, 'link.ts'));
    symlinkSync('real', join(root, 'linkdir'));
    symlinkSync(outside, join(root, 'escape'));
    symlinkSync('missing', join(root, 'dangling'));
    const r = await walk(root);
    assert.deepEqual(
      r.files.map((f) => f.path),
      ['b.ts', 'real/a.ts'],
    );
    assert.deepEqual(r.skipped, [
      { path: 'dangling', reason: 'symlink' },
      { path: 'escape', reason: 'symlink' },
      { path: 'link.ts', reason: 'symlink' },
      { path: 'linkdir', reason: 'symlink' },
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  }
});

test('FIFOs and other non-regular entries are skipped', async (t) => {
  const root = tree({ 'a.ts': '' });
  try {
    if (spawnSync('mkfifo', [join(root, 'pipe')]).status !== 0) {
      t.skip('mkfifo is not available');
      return;
    }
    const r = await walk(root);
    assert.deepEqual(
      r.files.map((f) => f.path),
      ['a.ts'],
    );
    assert.deepEqual(r.skipped, [{ path: 'pipe', reason: 'not_regular' }]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('files over max_file_bytes are skipped and reported', async () => {
  const root = tree({ 'big.txt': 'x'.repeat(101), 'edge.txt': 'x'.repeat(100), 'small.txt': 'x' });
  try {
    const r = await walk(root, policy({ maxFileBytes: 100 }));
    assert.deepEqual(
      r.files.map((f) => f.path),
      ['edge.txt', 'small.txt'],
    );
    assert.deepEqual(r.skipped, [{ path: 'big.txt', reason: 'too_large' }]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('paths are NFC: a non-NFC name and names sharing an NFC form are skipped; nfcConflict says which', async () => {
  const nfc = 'caf\u00e9.py';
  const nfd = 'cafe\u0301.py';
  const onlyNfd = 'u\u0308ber.py';
  const root = tree({ [nfc]: 'a', [nfd]: 'b', [onlyNfd]: 'c', 'plain.py': 'd', 'na\u00efve.py': 'e', ['dir\u0065\u0301/x.py']: 'f' });
  try {
    const r = await walk(root);
    assert.deepEqual(r.files.map((f) => f.path), ['na\u00efve.py', 'plain.py']);
    assert.deepEqual(
      r.skipped.map((k) => `${k.path.normalize('NFC') === k.path ? 'nfc' : 'nfd'}:${k.path.normalize('NFC')}:${k.reason}`).sort(),
      [`nfc:${nfc}:nfc_collision`, `nfd:${nfc}:nfc_collision`, 'nfd:dir\u00e9/x.py:non_nfc', `nfd:\u00fcber.py:non_nfc`].sort(),
    );
    assert.equal(nfcConflict(root, nfc), 'nfc_collision');
    assert.equal(nfcConflict(root, '\u00fcber.py'), 'non_nfc');
    assert.equal(nfcConflict(root, 'dir\u00e9/x.py'), 'non_nfc');
    assert.equal(nfcConflict(root, 'na\u00efve.py'), null);
    assert.equal(nfcConflict(root, 'plain.py'), null);
    assert.equal(nfcConflict(root, '\u00e9t\u00e9.py'), null, 'absent');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('directories deeper than the depth bound are reported, not walked', async () => {
  const segs = Array.from({ length: WORKSPACE_DEPTH_MAX + 1 }, () => 'd');
  const deepest = segs.join('/');
  const atBound = segs.slice(0, WORKSPACE_DEPTH_MAX).join('/');
  const root = tree({ [`${atBound}/ok.ts`]: '', [`${deepest}/deep.ts`]: '' });
  try {
    const r = await walk(root);
    assert.deepEqual(
      r.files.map((f) => f.path),
      [`${atBound}/ok.ts`],
    );
    assert.deepEqual(r.skipped, [{ path: deepest, reason: 'depth' }]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('crossing max_files refuses with limit_exceeded and the full count as evidence', async () => {
  const root = tree({ 'a.ts': '', 'b.ts': '', 'c/d.ts': '', 'c/e.ts': '', 'f.ts': '', 'node_modules/x.js': '' });
  try {
    assert.equal((await walk(root, policy({ maxFiles: 5 }))).files.length, 5);
    await assert.rejects(walk(root, policy({ maxFiles: 3 })), (e: unknown) => {
      assert.ok(isRiftError(e));
      assert.equal(e.code, 'limit_exceeded');
      assert.deepEqual(e.limit, { field: 'source.max_files', limit: 3, required: 5 });
      assert.match(e.message, /limit source\.max_files, maximum 3, required 5/);
      return true;
    });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a missing root fails the walk', async () => {
  const root = join(tmpdir(), `rift-walk-missing-${process.pid}-${Date.now()}`);
  const p = policy();
  await assert.rejects(walkWorkspace(root, await Visibility.load(tree({}), p), p), /ENOENT/);
  await assert.rejects(Visibility.load(root, p), /ENOENT/);
});

test('a long walk yields to the event loop between slices (a server keeps answering while it walks)', async () => {
  // 10,000 files in 500 directories: far more than one slice of work on any machine.
  const root = mkdtempSync(join(tmpdir(), 'rift-walk-slices-'));
  try {
    for (let d = 0; d < 500; d++) {
      mkdirSync(join(root, `d${d}`));
      for (let f = 0; f < 20; f++) writeFileSync(join(root, `d${d}`, `f${f}.ts`), '');
    }
    const p = policy();
    const visibility = await Visibility.load(root, p);
    let ticks = 0;
    let walking = true;
    const tick = (): void => {
      if (!walking) return;
      ticks++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const r = await walkWorkspace(root, visibility, p);
    walking = false;
    assert.equal(r.files.length, 10_000);
    assert.ok(ticks >= 2, `the event loop ran ${ticks} time(s) during the walk`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
