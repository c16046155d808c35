import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { serveWorkspace } from '../helpers/mcp.ts';

// Hostile and unusual targets (issue 10): paths through symlinked directories keep every
// segment, a non-UTF-8 file is either refused or applied (never written and reported failed),
// read-only files refuse naming their mode, NFC twins of NFD names refuse, special-filesystem
// bodies refuse, and an over-long segment is a clear `invalid_request`.

type Pre = { kind: string; paths: string[]; expected: { kind: string; value: unknown }; observed: { kind: string; value: unknown } };
type Result = {
  status: string;
  reason?: string;
  preconditions?: Pre[];
  diagnostics?: Array<{ message: string }>;
  summary?: { files: Array<{ path: string; change: string }>; diagnostics: Array<{ code: string; severity: string; message: string }>; warnings: Array<{ kind: string; path?: string; resolved?: string }> };
};

const NFD = 'cafe\u0301.py';
const FILES: Record<string, string | Uint8Array> = {
  'pkg/__init__.py': 'top = 1\n',
  'pkg/core/__init__.py': 'core = 1\n',
  'latin.py': Buffer.from('x = "caf\xe9"\ntwo = 2\n', 'latin1'),
  'ro.txt': 'frozen\n',
  [NFD]: 'x = 1\n',
};

describe('change tools: hostile targets', () => {
  const ws = serveWorkspace({ before, after }, FILES);
  before(() => {
    symlinkSync('pkg', join(ws.root, 'alias'));
    chmodSync(join(ws.root, 'ro.txt'), 0o444);
  });
  const read = (p: string) => readFileSync(join(ws.root, p), 'utf8');
  const patch = async (text: string) => (await ws.rift.call('patch', { patch: text })) as Result;

  test('a path through a symlinked directory keeps every segment after the link', async () => {
    const r = await patch('--- a/alias/core/__init__.py\n+++ b/alias/core/__init__.py\n@@ -1 +1 @@\n-core = 1\n+core = 2\n');
    assert.equal(r.status, 'applied');
    assert.equal(read('pkg/core/__init__.py'), 'core = 2\n');
    assert.equal(read('pkg/__init__.py'), 'top = 1\n');
    assert.deepEqual(r.summary!.files.map((f) => f.path), ['pkg/core/__init__.py']);
    assert.deepEqual(r.summary!.warnings.map((w) => [w.kind, w.path, w.resolved]), [['rift.symlink.resolved', 'alias/core/__init__.py', 'pkg/core/__init__.py']]);
    const del = await patch('--- a/alias/core/__init__.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-core = 2\n');
    assert.equal(del.status, 'applied');
    assert.equal(existsSync(join(ws.root, 'pkg/core/__init__.py')), false);
    assert.equal(read('pkg/__init__.py'), 'top = 1\n', 'the file above the addressed one stays');
  });

  test('a change to a source file that is not UTF-8 applies and answers applied, exactly once', async () => {
    const r = await patch('--- a/latin.py\n+++ b/latin.py\n@@ -2 +2 @@\n-two = 2\n+two = 3\n');
    assert.equal(r.status, 'applied');
    assert.deepEqual(readFileSync(join(ws.root, 'latin.py')), Buffer.from('x = "caf\xe9"\ntwo = 3\n', 'latin1'));
    const d = r.summary!.diagnostics;
    assert.deepEqual(d.map((x) => [x.code, x.severity, x.message]), [['rift.change.not_indexed', 'warning', 'latin.py is not valid UTF-8: the change was written, but the file is neither re-parsed nor indexed']]);
    const again = await patch('--- a/latin.py\n+++ b/latin.py\n@@ -2 +2 @@\n-two = 2\n+two = 3\n');
    assert.equal(again.status, 'refused', 'the same patch sent again does not apply twice');
    assert.deepEqual(readFileSync(join(ws.root, 'latin.py')), Buffer.from('x = "caf\xe9"\ntwo = 3\n', 'latin1'));
  });

  test('a read-only file refuses unmet_precondition naming its mode, and keeps its bytes', async () => {
    const r = await patch('--- a/ro.txt\n+++ b/ro.txt\n@@ -1 +1 @@\n-frozen\n+thawed\n');
    assert.equal(r.status, 'refused');
    assert.equal(r.reason, 'unmet_precondition');
    assert.deepEqual(r.preconditions!.map((p) => [p.kind, p.paths, p.expected.value, p.observed.value]), [['writable', ['ro.txt'], 'a file its owner may write', 'mode 0444']]);
    assert.equal(read('ro.txt'), 'frozen\n');
    const move = (await ws.rift.call('move_file', { path: 'ro.txt', destination: 'moved.txt' })) as Result;
    assert.equal(move.status, 'refused');
    assert.equal(move.preconditions![0].kind, 'writable');
    assert.equal(read('ro.txt'), 'frozen\n');
  });

  test('creating the NFC twin of an NFD-named file refuses target_exists and writes nothing', async () => {
    const nfc = NFD.normalize('NFC');
    const r = await patch(`--- /dev/null\n+++ b/${nfc}\n@@ -0,0 +1 @@\n+y = 2\n`);
    assert.equal(r.status, 'refused');
    assert.equal(r.reason, 'unmet_precondition');
    assert.deepEqual(r.preconditions!.map((p) => [p.kind, p.paths, p.expected.value, p.observed.value]), [['target_exists', [nfc], false, true]]);
    assert.deepEqual(readdirSync(ws.root).filter((n) => n.normalize('NFC') === nfc), [NFD]);
  });

  test('a body named under /proc or /sys is refused, never cut short', async () => {
    for (const file of ['/proc/self/status', '/sys/kernel/mm/transparent_hugepage/enabled', '/proc/cpuinfo']) {
      if (!existsSync(file)) continue;
      const e = await ws.rift.fail('insert_symbol', { file: 'body.txt', position: 'after', body: { file }, create_missing: true });
      assert.equal(e.data.code, 'invalid_request', file);
      assert.match(e.message, /field body\.file, violation on the special filesystem (proc|sysfs), /, file);
    }
    assert.equal(existsSync(join(ws.root, 'body.txt')), false);
  });

  test('a 300-byte path segment is invalid_request naming the field; the workspace path never leaks', async () => {
    const long = 'a'.repeat(300);
    const e = await ws.rift.fail('move_file', { path: 'pkg/__init__.py', destination: `${long}/x.py` });
    assert.equal(e.data.code, 'invalid_request');
    assert.match(e.message, /field destination, violation segment_too_long/);
    const p = await ws.rift.fail('patch', { patch: `--- /dev/null\n+++ b/${long}.txt\n@@ -0,0 +1 @@\n+x\n` });
    assert.equal(p.data.code, 'invalid_request');
    assert.match(p.message, /segment_too_long/);
    for (const m of [e.message, p.message]) assert.equal(m.includes(ws.root), false, m);
  });
});
