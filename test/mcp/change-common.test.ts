import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { serveWorkspace, startRift, type RiftMcp } from '../helpers/mcp.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// Rules every change tool shares (reference F.10, F.13 rules 146–147, F.14): the FIFO lane,
// unchanged results, deterministic ids, symlinks, move_file, hooks, the configuration gate.

type Result = {
  status: string;
  reason?: string;
  preconditions?: Array<{ kind: string; paths: string[] }>;
  diagnostics?: Array<{ code: string; message: string }>;
  summary?: {
    id: string;
    files: Array<{ path: string; change: string; size_bytes: number; line_count: number; lines_added: number; lines_removed: number; digest?: string }>;
    diagnostics: Array<{ code: string; message: string; severity: string }>;
    guarantees: Array<{ kind: string; hook: string; detail: string; scope: unknown }>;
    warnings: Array<{ kind: string; path?: string; resolved?: string }>;
  };
};

const node = process.execPath;
const PATH = `${dirname(node)}:${process.env.PATH ?? ''}`;

describe('change tools: lane, ids, symlinks, move', () => {
  let root: string;
  let outside: string;
  let rift: RiftMcp;
  before(async () => {
    root = tempWorkspace({
      'list.py': 'def anchor():\n    pass\n',
      'real/target.txt': 'old\n',
      'move/me.txt': 'moving\n',
      'move/dir/inner.txt': 'x\n',
      'rift.toml': '[source]\nexclude = ["private/"]\n',
      'private/secret.txt': 's\n',
      'realdir/t.txt': 't\n',
    });
    outside = tempWorkspace({ 'out.txt': 'outside\n' });
    symlinkSync('real/target.txt', join(root, 'link.txt'));
    symlinkSync(join(outside, 'out.txt'), join(root, 'escape.txt'));
    symlinkSync('nowhere.txt', join(root, 'broken.txt'));
    symlinkSync('cycle-b.txt', join(root, 'cycle-a.txt'));
    symlinkSync('cycle-a.txt', join(root, 'cycle-b.txt'));
    symlinkSync('real/target.txt', join(root, 'dellink.txt'));
    symlinkSync('realdir', join(root, 'linkdir'));
    rift = await startRift(root);
  });
  after(async () => {
    await rift.close();
    removeWorkspace(root);
    removeWorkspace(outside);
  });
  const read = (p: string) => readFileSync(join(root, p), 'utf8');
  const call = async (tool: string, args: Record<string, unknown>) => (await rift.call(tool, args)) as Result;

  test('concurrent changes apply one after the other, each against the result of the one before', async () => {
    const bodies = Array.from({ length: 8 }, (_, i) => `def f${i}():\n    pass`);
    const results = await Promise.all(
      bodies.map((body) => call('insert_symbol', { anchor: 'rift://symbol/python/list.py/anchor', position: 'after', body })),
    );
    assert.deepEqual(results.map((r) => r.status), Array(8).fill('applied'));
    // Each insert lands right after the anchor, so the last one sent is nearest to it; top-level
    // Python definitions are two blank lines apart (PEP 8, then the file's own separation).
    const expected = 'def anchor():\n    pass' + [...bodies].reverse().map((b) => `\n\n\n${b}`).join('') + '\n';
    assert.equal(read('list.py'), expected);
  });

  test('change ids are deterministic in the paths and resulting bytes', async () => {
    const a = await call('insert_symbol', { file: 'ids/one.txt', position: 'after', body: 'same\n', create_missing: true });
    const b = await call('insert_symbol', { file: 'ids/two.txt', position: 'after', body: 'same\n', create_missing: true });
    assert.notEqual(a.summary!.id, b.summary!.id);
    await call('patch', { patch: '--- a/ids/one.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-same\n' });
    const again = await call('insert_symbol', { file: 'ids/one.txt', position: 'after', body: 'same\n', create_missing: true });
    assert.equal(again.summary!.id, a.summary!.id);
  });

  test('a symlink inside the workspace: the write lands on the resolved file and the link stays', async () => {
    const r = await call('patch', { patch: '--- a/link.txt\n+++ b/link.txt\n@@ -1 +1 @@\n-old\n+new\n' });
    assert.equal(r.status, 'applied');
    assert.equal(read('real/target.txt'), 'new\n');
    assert.ok(lstatSync(join(root, 'link.txt')).isSymbolicLink());
    assert.equal(readlinkSync(join(root, 'link.txt')), 'real/target.txt');
    assert.deepEqual(r.summary!.files.map((f) => f.path), ['real/target.txt']);
    assert.deepEqual(r.summary!.warnings, [{ kind: 'rift.symlink.resolved', message: 'link.txt is a symlink; the change was written to real/target.txt and the link kept', path: 'link.txt', resolved: 'real/target.txt' }]);
  });

  test('a symlinked directory above the target: the write lands below the real directory (rule 108)', async () => {
    const r = await call('insert_symbol', { file: 'linkdir/t.txt', position: 'after', body: 'u\n' });
    assert.equal(r.status, 'applied');
    assert.equal(read('realdir/t.txt'), 't\n\nu\n');
    assert.ok(lstatSync(join(root, 'linkdir')).isSymbolicLink());
    assert.deepEqual(r.summary!.files.map((f) => f.path), ['realdir/t.txt']);
    assert.deepEqual(r.summary!.warnings.map((w) => [w.kind, w.path, w.resolved]), [['rift.symlink.resolved', 'linkdir/t.txt', 'realdir/t.txt']]);
  });

  test('escaping, broken and cyclic links refuse unsupported; a deletion removes the link itself', async () => {
    for (const p of ['escape.txt', 'broken.txt', 'cycle-a.txt']) {
      const r = await call('insert_symbol', { file: p, position: 'after', body: 'x' });
      assert.equal(r.status, 'refused', p);
      assert.equal(r.reason, 'unsupported', p);
    }
    assert.equal(readFileSync(join(outside, 'out.txt'), 'utf8'), 'outside\n');
    const del = await call('patch', { patch: '--- a/dellink.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-new\n' });
    assert.equal(del.status, 'applied');
    assert.equal(existsSync(join(root, 'dellink.txt')), false);
    assert.equal(read('real/target.txt'), 'new\n', 'the file the link pointed at stays');
  });

  test('move_file moves any visible file, creates parents, and warns references were not updated', async () => {
    const r = await call('move_file', { path: 'move/me.txt', destination: 'moved/deep/me.txt' });
    assert.equal(r.status, 'applied');
    assert.equal(read('moved/deep/me.txt'), 'moving\n');
    assert.equal(existsSync(join(root, 'move/me.txt')), false);
    assert.deepEqual(r.summary!.files.map((f) => `${f.path}:${f.change}`), ['move/me.txt:deleted', 'moved/deep/me.txt:created']);
    assert.deepEqual(r.summary!.warnings.map((w) => w.kind), ['rift.move.references_not_updated']);
  });

  test('move_file refuses a directory (target_is_file), an existing destination, and an excluded destination', async () => {
    const dir = await call('move_file', { path: 'move/dir', destination: 'elsewhere' });
    assert.equal(dir.status, 'refused');
    assert.equal(dir.preconditions![0].kind, 'target_is_file');
    const exists = await call('move_file', { path: 'moved/deep/me.txt', destination: 'real/target.txt' });
    assert.equal(exists.preconditions![0].kind, 'target_exists');
    const excluded = await call('move_file', { path: 'moved/deep/me.txt', destination: 'private/me.txt' });
    assert.equal(excluded.reason, 'unsupported');
    assert.match(excluded.diagnostics![0].message, /\[source\] policy/);
    assert.equal(read('moved/deep/me.txt'), 'moving\n');
    const bad = await rift.fail('move_file', { path: 'a/../b', destination: 'c' });
    assert.match(bad.data.message as string, /field path, violation dot_segment/);
  });
});

describe('change tools: hooks', () => {
  // A transform hook that upper-cases `.up` files; a hook that restores `.keep` files from a
  // backup; validation hooks that pass, fail with output, and time out.
  const TOML = `
[[hooks]]
id = "upper"
role = "transform"
kind = "format"
program = "node"
arguments = ["-e", "const fs=require('fs');for(const p of process.argv.slice(1)){fs.writeFileSync(p,fs.readFileSync(p,'utf8').toUpperCase())}"]
changed_paths = "append"
include = ["*.up"]

[[hooks]]
id = "restore"
role = "transform"
program = "node"
arguments = ["-e", "const fs=require('fs');for(const p of process.argv.slice(1)){fs.writeFileSync(p,'kept\\\\n')}"]
changed_paths = "append"
include = ["*.keep"]

[[hooks]]
id = "stamp"
role = "transform"
program = "node"
arguments = ["-e", "require('fs').writeFileSync('stamp.log','stamped\\\\n')"]
include = ["*.stamp"]

[[hooks]]
id = "check"
role = "validation"
kind = "test"
program = "node"
arguments = ["-e", "process.exit(0)"]
changed_paths = "append"
include = ["*.up", "*.txt"]
guarantees = [{ kind = "behavior_checked", detail = "unit tests pass" }]

[[hooks]]
id = "lint"
role = "validation"
kind = "lint"
program = "node"
arguments = ["-e", "console.log('bad style'); console.error('x'.repeat(5000)); process.exit(3)"]
output_limit_bytes = 256
include = ["*.txt"]

[[hooks]]
id = "slow"
role = "validation"
program = "node"
arguments = ["-e", "setTimeout(()=>{}, 60000)"]
timeout_ms = 300
include = ["*.slow"]

[[hooks]]
id = "absent"
role = "validation"
program = "definitely-not-a-program-rift"
include = ["*.slow"]

[[hooks]]
id = "order"
role = "validation"
program = "node"
arguments = ["-e", "console.log(process.argv.slice(1).join(' ')); process.exit(1)"]
changed_paths = "append"
include = ["*.ord"]
`;
  const FILES = {
    'rift.toml': TOML,
    'a.up': 'hello\n',
    'b.keep': 'kept\n',
    'c.txt': 'plain\n',
    'd.slow': 'slow\n',
    'e.stamp': 's\n',
    'Z.ord': 'z\n',
    'a.ord': 'a\n',
    'b.ord': 'b\n',
  };
  const ws = serveWorkspace({ before, after }, FILES, { PATH });
  const read = (p: string) => readFileSync(join(ws.root, p), 'utf8');
  const patchOne = (path: string, from: string, to: string) =>
    ws.rift.call('patch', { patch: `--- a/${path}\n+++ b/${path}\n@@ -1 +1 @@\n-${from}\n+${to}\n` }) as Promise<Result>;

  test('a transform hook rewrites the change; its bytes are the ones reported; validation guarantees attach', async () => {
    const r = await patchOne('a.up', 'hello', 'goodbye');
    assert.equal(r.status, 'applied');
    assert.equal(read('a.up'), 'GOODBYE\n');
    assert.deepEqual(r.summary!.files.map((f) => [f.path, f.size_bytes]), [['a.up', 8]]);
    assert.deepEqual(r.summary!.guarantees, [{ kind: 'behavior_checked', scope: { kind: 'reach', reach: 'request' }, hook: 'check', detail: 'unit tests pass' }]);
    assert.deepEqual(r.summary!.diagnostics, []);
  });

  test('a transform hook that restores the original bytes makes the change unchanged', async () => {
    const r = await patchOne('b.keep', 'kept', 'changed');
    assert.deepEqual(r, { status: 'unchanged' });
    assert.equal(read('b.keep'), 'kept\n');
  });

  test('a transform hook writing another file joins that file to the change', async () => {
    const r = await patchOne('e.stamp', 's', 't');
    assert.equal(r.status, 'applied');
    assert.deepEqual(r.summary!.files.map((f) => `${f.path}:${f.change}`), ['e.stamp:modified', 'stamp.log:created']);
  });

  test('a failing validation hook adds rift.hook.failed quoting exit and capped output; nothing rolls back', async () => {
    const r = await patchOne('c.txt', 'plain', 'fancy');
    assert.equal(r.status, 'applied');
    assert.equal(read('c.txt'), 'fancy\n');
    const failed = r.summary!.diagnostics.filter((d) => d.code === 'rift.hook.failed');
    assert.equal(failed.length, 1);
    assert.match(failed[0].message, /^hook lint did not pass: exited 3; stdout \(10 of 10 bytes\): bad style\n; stderr \(256 of 5001 bytes\): x{256}$/);
    assert.deepEqual(r.summary!.guarantees.map((g) => g.hook), ['check']);
  });

  test('a timed-out hook is killed without waiting; a missing program is a diagnostic, not a crash', async () => {
    const started = Date.now();
    const r = await patchOne('d.slow', 'slow', 'fast');
    assert.ok(Date.now() - started < 10_000);
    assert.equal(r.status, 'applied');
    const msgs = r.summary!.diagnostics.map((d) => d.message);
    assert.ok(msgs.includes('hook slow did not pass: killed after 300ms'), msgs.join(' | '));
    assert.ok(msgs.some((m) => m.startsWith('hook absent did not pass: could not be launched: definitely-not-a-program-rift (ENOENT)')), msgs.join(' | '));
  });

  test('changed paths are appended to a hook in byte order, not locale order (rule 153)', async () => {
    const hunk = (p: string, from: string) => `--- a/${p}\n+++ b/${p}\n@@ -1 +1 @@\n-${from}\n+${from}${from}\n`;
    const r = (await ws.rift.call('patch', { patch: hunk('b.ord', 'b') + hunk('a.ord', 'a') + hunk('Z.ord', 'z') })) as Result;
    assert.equal(r.status, 'applied');
    const msgs = r.summary!.diagnostics.filter((d) => d.code === 'rift.hook.failed').map((d) => d.message);
    assert.deepEqual(msgs, ['hook order did not pass: exited 1; stdout (18 of 18 bytes): Z.ord a.ord b.ord\n']);
  });
});

describe('change tools: configuration gate', () => {
  test('a change against an invalid rift.toml fails configuration_invalid before it runs', async () => {
    const root = tempWorkspace({ 'a.txt': 'a\n' });
    const rift = await startRift(root);
    try {
      writeFileSync(join(root, 'rift.toml'), '[source]\nbogus = 1\n');
      const e = await rift.fail('patch', { patch: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n' });
      assert.equal(e.data.code, 'configuration_invalid');
      assert.equal(e.data.phase, 'change');
      assert.equal(readFileSync(join(root, 'a.txt'), 'utf8'), 'a\n');
    } finally {
      await rift.close();
      removeWorkspace(root);
    }
  });
});

