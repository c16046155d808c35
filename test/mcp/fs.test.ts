import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { treeRevision } from '../../src/core/digest.ts';
import { readFails, startRift, type RiftMcp } from '../helpers/mcp.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// rift://fs over real stdio MCP (reference B.4, C.1, F.9 rule 101): directory listings of the
// visible entries, paged; byte ranges continued through `next` with the file's digest; binary
// files as base64; the visibility policy, the floor and symlinks; percent-encoded paths; the
// projection-scoped form; and the refusals.

const sha = (b: string | Uint8Array) => createHash('sha256').update(b).digest('hex');
const d8 = (b: string | Uint8Array) => sha(b).slice(0, 8);
const b64 = (s: string) => Buffer.from(s).toString('base64');

const LONG = 'héllo wörld ☃ 🎉 plain ascii words\n'.repeat(40);
const BLOB = Uint8Array.from({ length: 600 }, (_, i) => i % 256);
const MANY = 1002;

const FILES: Record<string, string | Uint8Array> = {
  'rift.toml': '[source]\nexclude = ["secret/"]\n',
  '.gitignore': 'ignored.txt\nbuild/\n',
  'src/a.ts': 'export const a = 1;\n',
  'src/nested/b.py': 'def b():\n    return 2\n',
  'text/long.txt': LONG,
  'text/empty.txt': '',
  'text/changing.txt': 'first version of the file\n'.repeat(10),
  'bin/blob.bin': BLOB,
  'bin/latin1.txt': Uint8Array.from([0x63, 0x61, 0x66, 0xe9, 0x0a]),
  'docs/ünï cøde.md': '# unicode name\n',
  'ignored.txt': 'hidden by .gitignore\n',
  'build/out.js': 'hidden below an ignored directory\n',
  'secret/key.txt': 'hidden by [source].exclude\n',
  '.git/config': '[core]\n',
  'many/Z.txt': 'z\n',
  'many/é.txt': 'e\n',
  'many/sub/x.txt': 'x\n',
};
for (let i = 0; i < MANY; i++) FILES[`many/f${String(i).padStart(4, '0')}.txt`] = `${i}\n`;

/** The files the index holds (visible, UTF-8 without NUL: rule 22), for the expected tree revision. */
const INDEXED = Object.keys(FILES)
  .filter((p) => !['ignored.txt', 'build/out.js', 'secret/key.txt', '.git/config', 'bin/blob.bin', 'bin/latin1.txt'].includes(p))
  .sort();
const size = (path: string) => Buffer.byteLength(FILES[path]);

interface Fs {
  uri: string;
  snapshot: { tree_revision: string };
  entry: Record<string, unknown>;
  encoding: string;
  entries?: Array<Record<string, unknown>>;
  pagination?: { page_index: number; total_pages: number };
  start?: number;
  end?: number;
  total_bytes?: number;
  content?: string;
  digest?: string;
  next?: string;
}

async function read(rift: RiftMcp, uri: string): Promise<Fs> {
  const r = await rift.client.readResource({ uri });
  const [c] = r.contents as Array<{ uri: string; mimeType: string; text: string }>;
  assert.equal(c.uri, uri);
  assert.equal(c.mimeType, 'application/json');
  return JSON.parse(c.text) as Fs;
}

const file = (path: string, size: number, languages: string[] = []) => ({ kind: 'file', file: { path, content: { kind: 'regular', size_bytes: size }, languages } });
const dir = (path: string) => ({ kind: 'directory', path });
const link = (path: string, target: string) => ({ kind: 'file', file: { path, content: { kind: 'symlink', target: b64(target) }, languages: [] } });

describe('rift://fs', () => {
  let root = '';
  let rift: RiftMcp;
  before(async () => {
    root = tempWorkspace(FILES);
    symlinkSync('src/a.ts', join(root, 'link-to-a'));
    symlinkSync('/etc', join(root, 'outside'));
    rift = await startRift(root);
  });
  after(async () => {
    await rift.close();
    removeWorkspace(root);
  });

  test('the root lists its visible entries in byte order: hidden, ignored and floor entries left out, symlinks reported with their raw target', async () => {
    const r = await read(rift, 'rift://fs');
    assert.deepEqual(r, {
      uri: 'rift://fs',
      snapshot: { tree_revision: treeRevision(INDEXED.map((path) => ({ path, sha256: sha(readFileSync(join(root, path))) }))) },
      entry: dir(''),
      encoding: 'directory',
      entries: [
        file('.gitignore', size('.gitignore')),
        dir('bin'),
        dir('docs'),
        link('link-to-a', 'src/a.ts'),
        dir('many'),
        link('outside', '/etc'),
        file('rift.toml', size('rift.toml')),
        dir('src'),
        dir('text'),
      ],
      pagination: { page_index: 0, total_pages: 1 },
    });
    const src = await read(rift, 'rift://fs/src');
    assert.deepEqual(src.entries, [file('src/a.ts', size('src/a.ts'), ['typescript']), dir('src/nested')]);
    assert.deepEqual(src.entry, dir('src'));
  });

  test('a directory pages by 1000 entries with page_index; a page past the end is empty and keeps the true total', async () => {
    const page0 = await read(rift, 'rift://fs/many');
    assert.equal(page0.entries!.length, 1000);
    assert.deepEqual(page0.pagination, { page_index: 0, total_pages: 2 });
    // UTF-8 byte order: upper case before lower case, a two-byte é after every ASCII name.
    assert.deepEqual(page0.entries![0], file('many/Z.txt', 2));
    assert.deepEqual(page0.entries![1], file('many/f0000.txt', 2));
    const page1 = await read(rift, 'rift://fs/many?page_index=1');
    assert.deepEqual(page1.entries, [file('many/f0999.txt', 4), file('many/f1000.txt', 5), file('many/f1001.txt', 5), dir('many/sub'), file('many/é.txt', 2)]);
    assert.deepEqual(page1.pagination, { page_index: 1, total_pages: 2 });
    const past = await read(rift, 'rift://fs/many?page_index=5');
    assert.deepEqual(past.entries, []);
    assert.deepEqual(past.pagination, { page_index: 5, total_pages: 2 });
  });

  test('a text file read in ranges continued through next comes back whole, each range ending on a character boundary, under one digest', async () => {
    const bytes = Buffer.from(LONG);
    let uri = 'rift://fs/text/long.txt?length=100';
    let text = '';
    let ranges = 0;
    let expectedStart = 0;
    for (;;) {
      const r = await read(rift, uri);
      ranges++;
      assert.equal(r.encoding, 'utf8');
      assert.equal(r.digest, d8(bytes));
      assert.equal(r.total_bytes, bytes.length);
      assert.deepEqual(r.entry, file('text/long.txt', bytes.length));
      assert.equal(r.start, expectedStart);
      assert.ok(r.end! - r.start! <= 100 && r.end! > r.start!);
      assert.equal(Buffer.byteLength(r.content!), r.end! - r.start!);
      assert.equal(r.content, bytes.subarray(r.start!, r.end!).toString('utf8'), 'the range is exactly those bytes, no character split');
      text += r.content;
      expectedStart = r.end!;
      if (r.next === undefined) {
        assert.equal(r.end, bytes.length);
        break;
      }
      assert.equal(r.next, `rift://fs/text/long.txt?start=${r.end}&length=100`);
      uri = r.next;
    }
    assert.equal(text, LONG);
    assert.ok(ranges >= Math.ceil(bytes.length / 100));
    // Without length the range is the whole file (it is under 1 MiB); a length shorter than the
    // character at start still serves that character; a start inside a character is refused.
    const whole = await read(rift, 'rift://fs/text/long.txt');
    assert.deepEqual([whole.start, whole.end, whole.content, whole.next], [0, bytes.length, LONG, undefined]);
    const snowman = bytes.indexOf(Buffer.from('☃'));
    const one = await read(rift, `rift://fs/text/long.txt?start=${snowman}&length=1`);
    assert.deepEqual([one.start, one.end, one.content], [snowman, snowman + 3, '☃']);
    const inside = await readFails(rift, `rift://fs/text/long.txt?start=${snowman + 1}`);
    assert.equal(inside.data.code, 'invalid_request');
    assert.match(inside.data.message as string, /field start, violation inside a UTF-8 character of text\/long\.txt/);
    // A start past the end is an empty range under the file's digest.
    const past = await read(rift, `rift://fs/text/long.txt?start=${bytes.length + 5}`);
    assert.deepEqual([past.start, past.end, past.content, past.total_bytes, past.digest, past.next], [bytes.length + 5, bytes.length + 5, '', bytes.length, d8(bytes), undefined]);
    const empty = await read(rift, 'rift://fs/text/empty.txt');
    assert.deepEqual(empty, {
      uri: 'rift://fs/text/empty.txt',
      snapshot: empty.snapshot,
      entry: file('text/empty.txt', 0),
      encoding: 'utf8',
      start: 0,
      end: 0,
      total_bytes: 0,
      content: '',
      digest: d8(''),
    });
  });

  test('a file changed between two ranges answers a new digest; read again from 0, it is whole and consistent', async () => {
    const before = readFileSync(join(root, 'text/changing.txt'));
    const first = await read(rift, 'rift://fs/text/changing.txt?length=64');
    assert.equal(first.digest, d8(before));
    assert.equal(first.next, 'rift://fs/text/changing.txt?start=64&length=64');
    const after = 'second version, another length\n'.repeat(12);
    writeFileSync(join(root, 'text/changing.txt'), after);
    const second = await read(rift, first.next!);
    assert.notEqual(second.digest, first.digest);
    assert.equal(second.digest, d8(after));
    assert.equal(second.content, after.slice(64, 128));
    let uri = 'rift://fs/text/changing.txt?length=64';
    let text = '';
    for (;;) {
      const r = await read(rift, uri);
      assert.equal(r.digest, d8(after));
      text += r.content;
      if (!r.next) break;
      uri = r.next;
    }
    assert.equal(text, after);
  });

  test('a binary file (NUL bytes, or bytes that are not UTF-8) is served as base64, ranges included', async () => {
    const blob = Buffer.from(BLOB);
    const whole = await read(rift, 'rift://fs/bin/blob.bin');
    assert.deepEqual(
      { encoding: whole.encoding, start: whole.start, end: whole.end, total: whole.total_bytes, digest: whole.digest, next: whole.next },
      { encoding: 'base64', start: 0, end: 600, total: 600, digest: d8(blob), next: undefined },
    );
    assert.deepEqual(Buffer.from(whole.content!, 'base64'), blob);
    const range = await read(rift, 'rift://fs/bin/blob.bin?start=250&length=20');
    assert.deepEqual([range.start, range.end, range.content, range.next], [250, 270, blob.subarray(250, 270).toString('base64'), 'rift://fs/bin/blob.bin?start=270&length=20']);
    const latin1 = await read(rift, 'rift://fs/bin/latin1.txt');
    assert.deepEqual([latin1.encoding, latin1.content], ['base64', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]).toString('base64')]);
  });

  test('a symlink is reported, never followed: encoding none, and nothing is reachable through a linked directory', async () => {
    const r = await read(rift, 'rift://fs/link-to-a');
    assert.deepEqual(r, { uri: 'rift://fs/link-to-a', snapshot: r.snapshot, entry: link('link-to-a', 'src/a.ts'), encoding: 'none' });
    const through = await readFails(rift, 'rift://fs/outside/passwd');
    assert.equal(through.data.code, 'resource_not_found');
    const ranged = await readFails(rift, 'rift://fs/link-to-a?start=0');
    assert.match(ranged.data.message as string, /field start, violation applies to a regular file; link-to-a is a symlink/);
  });

  test('paths are percent-encoded as ids are (reference C.1): either hex case decodes; an escaped safe byte, a bare unsafe one or bytes that are not UTF-8 are refused', async () => {
    const uri = 'rift://fs/docs/%C3%BCn%C3%AF%20c%C3%B8de.md';
    const r = await read(rift, uri);
    assert.deepEqual([r.entry, r.content], [file('docs/ünï cøde.md', size('docs/ünï cøde.md')), '# unicode name\n']);
    const lower = await read(rift, 'rift://fs/docs/%c3%bcn%c3%af%20c%c3%b8de.md');
    assert.equal(lower.content, '# unicode name\n');
    const listing = await read(rift, 'rift://fs/docs');
    assert.deepEqual(listing.entries, [file('docs/ünï cøde.md', size('docs/ünï cøde.md'))]);
    for (const bad of ['rift://fs/src%2Fa.ts', 'rift://fs/%73rc/a.ts', 'rift://fs/docs/ünï cøde.md', 'rift://fs/bin/%FF']) {
      const e = await readFails(rift, bad);
      assert.equal(e.data.code, 'invalid_request', bad);
      assert.match(e.data.message as string, /field uri, violation the path is not percent-encoded canonically \(reference C\.1\)/, bad);
    }
  });

  test('what the policy hides, the floor, paths outside the tree and missing paths are all resource_not_found, alike', async () => {
    for (const path of ['ignored.txt', 'build', 'build/out.js', 'secret/key.txt', 'secret', '.git', '.git/config', '.rift', '.rift/rift.db', '../etc/passwd', 'nope.txt', 'src/a.ts/x', 'src//a.ts']) {
      const e = await readFails(rift, `rift://fs/${path}`);
      assert.equal(e.code, -32000, path);
      assert.deepEqual([e.data.code, e.data.phase], ['resource_not_found', 'read'], path);
      assert.match(e.data.message as string, /^the requested resource does not exist in the current snapshot: path .*, requires a visible file or directory of the tree;/, path);
    }
  });

  test('range and page parameters: length is bounded by a named limit; each applies to its kind of entry; cursor is no parameter', async () => {
    const big = await readFails(rift, 'rift://fs/text/long.txt?length=1048577');
    assert.equal(big.data.code, 'limit_exceeded');
    assert.deepEqual(big.data.limit, { field: 'length', limit: 1048576, required: 1048577 });
    const cases: Array<[string, RegExp]> = [
      ['rift://fs/text/long.txt?length=0', /field length, violation zero/],
      ['rift://fs/text/long.txt?start=-1', /field start, violation not a non-negative integer/],
      ['rift://fs/text/long.txt?length=ten', /field length, violation not a non-negative integer/],
      ['rift://fs/text/long.txt?page_index=1', /field page_index, violation applies to a directory; text\/long\.txt is a file/],
      ['rift://fs/src?start=0', /field start, violation applies to a file; src is a directory/],
      ['rift://fs?length=5', /field length, violation applies to a file; the root is a directory/],
      ['rift://fs/src?cursor=abc', /field cursor, violation not a parameter of rift:\/\/fs/],
      ['rift://fs/src?projection=nope', /field projection, violation not a projection id/],
    ];
    for (const [uri, message] of cases) {
      const e = await readFails(rift, uri);
      assert.equal(e.data.code, 'invalid_request', uri);
      assert.match(e.data.message as string, message, uri);
    }
  });

  test('projection=<id> reads the projection\'s tree; next keeps the projection; an unknown projection is resource_not_found', async () => {
    const p = (await rift.call('projection_create', {})) as { id: string; path: string };
    await rift.call('patch', { projection: p.id, patch: '--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1 @@\n-export const a = 1;\n+export const a = 2; // projection\n' });
    writeFileSync(join(p.path, 'src/shell.txt'), 'written by a shell in the projection\n');
    const inProjection = await read(rift, `rift://fs/src/a.ts?projection=${p.id}`);
    assert.equal(inProjection.content, 'export const a = 2; // projection\n');
    const inWorkspace = await read(rift, 'rift://fs/src/a.ts');
    assert.equal(inWorkspace.content, 'export const a = 1;\n');
    const listing = await read(rift, `rift://fs/src?projection=${p.id}`);
    assert.deepEqual(listing.entries, [file('src/a.ts', inProjection.total_bytes!, ['typescript']), dir('src/nested'), file('src/shell.txt', 37)]);
    const ranged = await read(rift, `rift://fs/src/a.ts?length=10&projection=${p.id}`);
    assert.equal(ranged.next, `rift://fs/src/a.ts?start=10&length=10&projection=${p.id}`);
    const missing = await readFails(rift, `rift://fs/src/a.ts?projection=prj_${'a'.repeat(26)}`);
    assert.equal(missing.data.code, 'resource_not_found');
    assert.match(missing.data.message as string, /projection prj_a{26}/);
    // Reading the projection through rift://fs records no read dependency: the workspace moving
    // src/nested/b.py after it was read raises no dependency conflict.
    await read(rift, `rift://fs/src/nested/b.py?projection=${p.id}`);
    writeFileSync(join(root, 'src/nested/b.py'), 'def b():\n    return 3\n');
    const published = (await rift.call('publish', { projection: p.id, accept: [] })) as { dependency_conflicts: unknown[]; unaccepted: string[] };
    assert.deepEqual(published.dependency_conflicts, []);
    await rift.call('projection_remove', { projection: p.id });
  });
});
