import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { serveWorkspace } from '../helpers/mcp.ts';

// `patch` over stdio (reference F.12 rules 128–141), asserting exact bytes on disk.

type Pre = { kind: string; status: string; addresses: unknown[]; paths: string[]; expected: { kind: string; value: unknown }; observed: { kind: string; value: unknown } };
type Result = { status: string; reason?: string; preconditions?: Pre[]; diagnostics?: Array<{ message: string }>; summary?: { files: Array<{ path: string; change: string; size_bytes: number; line_count: number; lines_added: number; lines_removed: number; digest?: string }>; warnings: unknown[] } };

const FILES = {
  'src/a.txt': 'one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n',
  'src/crlf.txt': 'alpha\r\nbeta\r\ngamma\r\ndelta\r\n',
  'src/nofinal.txt': 'x\ny\nz',
  'justfile': 'build:\n\tcargo build\n',
  'docs/content/docs/configuration.mdx': '# Configuration\n\nText.\n',
  'vendor/lib.js': 'module.exports = 1;\n',
  'gone.txt': 'a\nb\n',
  'dir/inner.txt': 'i\n',
  'src/wide.txt': 'plain\n',
  'rift.toml': '[source]\nexclude = ["vendor/"]\n',
};

describe('change tools: patch', () => {
  const ws = serveWorkspace({ before, after }, FILES);
  const read = (p: string) => readFileSync(join(ws.root, p), 'utf8');
  const patch = async (text: string) => (await ws.rift.call('patch', { patch: text })) as Result;

  test('a drifted, miscounted header still applies by context', async () => {
    const r = await patch('--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1,9 +1,2 @@\n five\n-six\n+SIX\n seven\n');
    assert.equal(r.status, 'applied');
    assert.equal(read('src/a.txt'), 'one\ntwo\nthree\nfour\nfive\nSIX\nseven\neight\nnine\nten\n');
    assert.deepEqual(r.summary!.files, [{ path: 'src/a.txt', change: 'modified', size_bytes: 49, line_count: 10, lines_added: 1, lines_removed: 1, digest: r.summary!.files[0].digest }]);
  });

  test('multi-hunk: the running drift carries to the next hunk', async () => {
    const r = await patch('--- a/src/a.txt\n+++ b/src/a.txt\n@@ -3,2 +3,3 @@\n three\n+three-and-a-half\n four\n@@ -8,2 +9,2 @@\n eight\n-nine\n+NINE\n');
    assert.equal(r.status, 'applied');
    assert.equal(read('src/a.txt'), 'one\ntwo\nthree\nthree-and-a-half\nfour\nfive\nSIX\nseven\neight\nNINE\nten\n');
  });

  test('an LF diff applies to a CRLF file; inserted lines take CRLF', async () => {
    const r = await patch('--- a/src/crlf.txt\n+++ b/src/crlf.txt\n@@ -1,3 +1,4 @@\n alpha\n-beta\n+BETA\n+beta2\n gamma\n');
    assert.equal(r.status, 'applied');
    assert.equal(read('src/crlf.txt'), 'alpha\r\nBETA\r\nbeta2\r\ngamma\r\ndelta\r\n');
  });

  test('a file without a final newline: the final-newline state follows the diff', async () => {
    const r = await patch('--- a/src/nofinal.txt\n+++ b/src/nofinal.txt\n@@ -2,2 +2,2 @@\n y\n-z\n\\ No newline at end of file\n+Z\n\\ No newline at end of file\n');
    assert.equal(r.status, 'applied');
    assert.equal(read('src/nofinal.txt'), 'x\ny\nZ');
    const add = await patch('--- a/src/nofinal.txt\n+++ b/src/nofinal.txt\n@@ -3 +3,2 @@\n-Z\n\\ No newline at end of file\n+Z\n+end\n');
    assert.equal(add.status, 'applied');
    assert.equal(read('src/nofinal.txt'), 'x\ny\nZ\nend\n');
  });

  test('any visible file resolves, parsed or not', async () => {
    const r = await patch('--- a/justfile\n+++ b/justfile\n@@ -1,2 +1,2 @@\n build:\n-\tcargo build\n+\tcargo build --release\n--- a/docs/content/docs/configuration.mdx\n+++ b/docs/content/docs/configuration.mdx\n@@ -3 +3 @@\n-Text.\n+More text.\n');
    assert.equal(r.status, 'applied');
    assert.deepEqual(r.summary!.files.map((f) => f.path), ['docs/content/docs/configuration.mdx', 'justfile']);
    assert.equal(read('justfile'), 'build:\n\tcargo build --release\n');
    assert.equal(read('docs/content/docs/configuration.mdx'), '# Configuration\n\nMore text.\n');
  });

  test('/dev/null creates (parents and empty files included) and refuses an existing target', async () => {
    const r = await patch('--- /dev/null\n+++ b/new/deep/file.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n');
    assert.equal(r.status, 'applied');
    assert.equal(r.summary!.files[0].change, 'created');
    assert.equal(read('new/deep/file.txt'), 'hello\nworld\n');
    const empty = await patch('--- /dev/null\n+++ b/new/empty.txt\n');
    assert.equal(empty.status, 'applied');
    assert.equal(read('new/empty.txt'), '');
    const again = await patch('--- /dev/null\n+++ b/new/deep/file.txt\n@@ -0,0 +1 @@\n+x\n');
    assert.equal(again.status, 'refused');
    assert.deepEqual(again.preconditions![0], { kind: 'target_exists', status: 'failed', addresses: [], paths: ['new/deep/file.txt'], expected: { kind: 'boolean', value: false }, observed: { kind: 'boolean', value: true } });
    const ctx = await patch('--- /dev/null\n+++ b/new/ctx.txt\n@@ -0,0 +1,2 @@\n context\n+x\n');
    assert.equal(ctx.status, 'refused');
    assert.equal(existsSync(join(ws.root, 'new/ctx.txt')), false);
  });

  test('+++ /dev/null deletes only when the hunks consume the whole file', async () => {
    const partial = await patch('--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n');
    assert.equal(partial.status, 'refused');
    assert.deepEqual(partial.preconditions![0].expected, { kind: 'text', value: 'file fully deleted' });
    assert.deepEqual(partial.preconditions![0].observed, { kind: 'text', value: '1 line(s) remain after applying the hunks' });
    assert.equal(read('gone.txt'), 'a\nb\n');
    const full = await patch('--- a/gone.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n');
    assert.equal(full.status, 'applied');
    assert.deepEqual(full.summary!.files, [{ path: 'gone.txt', change: 'deleted', size_bytes: 0, line_count: 0, lines_added: 0, lines_removed: 2 }]);
    assert.equal(existsSync(join(ws.root, 'gone.txt')), false);
  });

  test('a hunk found nowhere names the ordinal, the line searched from, and both sides with endings', async () => {
    const before = read('src/a.txt');
    const r = await patch('--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n@@ -6,2 +6,2 @@\n five\n-sixx \n+six\n');
    assert.equal(r.status, 'refused');
    assert.equal(r.reason, 'unmet_precondition');
    const p = r.preconditions![0];
    assert.equal(p.kind, 'source_unchanged');
    assert.deepEqual(p.paths, ['src/a.txt']);
    assert.deepEqual(p.addresses, []);
    assert.equal(p.expected.value, 'hunk 2 `@@ -6,2 +6,2 @@`, searched from line 6: line 7 expected "sixx " (lf)');
    assert.equal(p.observed.value, 'hunk 2 `@@ -6,2 +6,2 @@`, searched from line 6: line 7 found "SIX" (lf)');
    assert.equal(read('src/a.txt'), before, 'the first hunk did not land either');
  });

  test('several files form one change: a refusal in the second leaves the first untouched', async () => {
    const before = read('src/a.txt');
    const r = await patch('--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n--- a/src/crlf.txt\n+++ b/src/crlf.txt\n@@ -1 +1 @@\n-nope\n+x\n');
    assert.equal(r.status, 'refused');
    assert.equal(read('src/a.txt'), before);
  });

  test('rename, copy and /dev/null on both sides are unsupported; excluded paths name the policy', async () => {
    const rename = await patch('--- a/src/a.txt\n+++ b/src/b.txt\n@@ -1 +1 @@\n-one\n+uno\n');
    assert.equal(rename.status, 'refused');
    assert.equal(rename.reason, 'unsupported');
    assert.deepEqual(rename.preconditions, []);
    const git = await patch('diff --git a/src/a.txt b/src/c.txt\nsimilarity index 90%\nrename from src/a.txt\nrename to src/c.txt\n--- a/src/a.txt\n+++ b/src/c.txt\n@@ -1 +1 @@\n-one\n+uno\n');
    assert.equal(git.reason, 'unsupported');
    const both = await patch('--- /dev/null\n+++ /dev/null\n@@ -0,0 +1 @@\n+x\n');
    assert.equal(both.reason, 'unsupported');
    const excluded = await patch('--- a/vendor/lib.js\n+++ b/vendor/lib.js\n@@ -1 +1 @@\n-module.exports = 1;\n+module.exports = 2;\n');
    assert.equal(excluded.status, 'refused');
    assert.equal(excluded.reason, 'unsupported');
    assert.match(excluded.diagnostics![0].message, /outside the workspace's \[source\] policy/);
    assert.equal(read('vendor/lib.js'), 'module.exports = 1;\n');
  });

  test('a reversed diff (git diff -R: --- b/x, +++ a/x) applies like git apply; a pure rename or copy is unsupported', async () => {
    writeFileSync(join(ws.root, 'src/rev.txt'), 'new\n');
    const r = await patch('diff --git b/src/rev.txt a/src/rev.txt\nindex 3e75765..3367afd 100644\n--- b/src/rev.txt\n+++ a/src/rev.txt\n@@ -1 +1 @@\n-new\n+old\n');
    assert.equal(r.status, 'applied', JSON.stringify(r));
    assert.equal(read('src/rev.txt'), 'old\n');
    const rename = await patch('diff --git a/src/rev.txt b/src/moved.txt\nsimilarity index 100%\nrename from src/rev.txt\nrename to src/moved.txt\n');
    assert.equal(rename.status, 'refused');
    assert.equal(rename.reason, 'unsupported');
    assert.match(rename.diagnostics![0].message, /rename or copy without content changes; .*use move_file/);
    const copy = await patch('diff --git a/src/rev.txt b/src/copy.txt\nsimilarity index 100%\ncopy from src/rev.txt\ncopy to src/copy.txt\ndiff --git a/src/a.txt b/src/a.txt\n--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1 +1 @@\n-one\n+uno\n');
    assert.equal(copy.reason, 'unsupported');
    assert.equal(read('src/rev.txt'), 'old\n');
    assert.equal(existsSync(join(ws.root, 'src/moved.txt')), false);
  });

  test('a directory at the target refuses target_is_file', async () => {
    const r = await patch('--- a/dir\n+++ b/dir\n@@ -1 +1 @@\n-i\n+j\n');
    assert.equal(r.status, 'refused');
    assert.equal(r.preconditions![0].kind, 'target_is_file');
    assert.deepEqual(r.preconditions![0].paths, ['dir']);
  });

  test('bodies that are not unified diffs fail invalid_request naming the form', async () => {
    const envelope = await ws.rift.fail('patch', { patch: '*** Begin Patch\n*** Update File: src/a.txt\n@@\n-one\n+uno\n*** End Patch\n' });
    assert.equal(envelope.data.code, 'invalid_request');
    assert.match(envelope.data.message as string, /field patch, violation an `\*\*\* Begin Patch` envelope is not a unified diff; send a unified diff: `--- a\/<path>` and `\+\+\+ b\/<path>`/);
    const none = await ws.rift.fail('patch', { patch: 'just some text\n' });
    assert.match(none.data.message as string, /field patch, violation carries no `---` file header/);
    const backslash = await ws.rift.fail('patch', { patch: '--- a/src\\a.txt\n+++ b/src\\a.txt\n@@ -1 +1 @@\n-one\n+uno\n' });
    assert.match(backslash.data.message as string, /path uses backslash separators; project paths are forward-slash relative/);
    const dotted = await ws.rift.fail('patch', { patch: '--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n' });
    assert.match(dotted.data.message as string, /file 1: path "..\/x" dot_segment/);
    const header = await ws.rift.fail('patch', { patch: '--- a/src/a.txt\n+++ b/src/a.txt\n@@ -x +y @@\n-a\n+b\n' });
    assert.match(header.data.message as string, /file 1 hunk 1: malformed `@@` header/);
    const empty = await ws.rift.fail('patch', { patch: '' });
    assert.match(empty.data.message as string, /field patch, violation empty/);
  });

  test('absolute and .rift paths fail invalid_request before anything resolves (rules 103, 130)', async () => {
    const absolute = await ws.rift.fail('patch', { patch: '--- /etc/hosts\n+++ /etc/hosts\n@@ -1 +1 @@\n-a\n+b\n' });
    assert.equal(absolute.data.code, 'invalid_request');
    assert.match(absolute.data.message as string, /file 1: path "\/etc\/hosts" absolute/);
    const state = await ws.rift.fail('patch', { patch: '--- /dev/null\n+++ b/.rift/x.txt\n@@ -0,0 +1 @@\n+x\n' });
    assert.match(state.data.message as string, /file 1: path "\.rift\/x\.txt" rift_state/);
    assert.equal(existsSync(join(ws.root, '.rift/x.txt')), false);
  });

  test('mismatch texts are cut to 256 bytes without splitting a character (rule 140)', async () => {
    const r = await patch(`--- a/src/wide.txt\n+++ b/src/wide.txt\n@@ -1 +1 @@\n-${'é'.repeat(200)}\n+x\n`);
    assert.equal(r.status, 'refused');
    // The 61-byte head leaves 195 bytes: 97 whole two-byte characters fit, the 98th would split.
    assert.equal(r.preconditions![0].expected.value, `hunk 1 \`@@ -1 +1 @@\`, searched from line 1: line 1 expected "${'é'.repeat(97)}`);
    assert.equal(read('src/wide.txt'), 'plain\n');
  });

  test('the 64-file bound and the 4 MiB bound are limit_exceeded', async () => {
    let body = '';
    for (let i = 0; i < 65; i++) body += `--- /dev/null\n+++ b/many/f${i}.txt\n@@ -0,0 +1 @@\n+x\n`;
    const e = await ws.rift.fail('patch', { patch: body });
    assert.equal(e.data.code, 'limit_exceeded');
    assert.deepEqual(e.data.limit, { field: 'patch.files', limit: 64, required: 65 });
    const big = join(ws.root, '..', `big-${process.pid}.diff`);
    writeFileSync(big, Buffer.alloc(4 * 1024 * 1024 + 1, 0x20));
    const b = await ws.rift.fail('patch', { patch: { file: big } });
    assert.deepEqual(b.data.limit, { field: 'patch', limit: 4194304, required: 4194305 });
  });

  test('a patch from a file applies; the next read sees a created source file', async () => {
    mkdirSync(join(ws.root, 'py'), { recursive: true });
    const file = join(ws.root, '..', `p-${process.pid}.diff`);
    writeFileSync(file, '--- /dev/null\n+++ b/py/made.py\n@@ -0,0 +1,2 @@\n+def made_by_patch():\n+    return 1\n');
    const r = await ws.rift.call('patch', { patch: { file } }) as Result;
    assert.equal(r.status, 'applied');
    const hit = (await ws.rift.call('get_symbol', { name: 'made_by_patch' })) as { hits: Array<{ path: string }> };
    assert.deepEqual(hit.hits.map((h) => h.path), ['py/made.py']);
  });
});
