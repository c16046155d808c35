import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  classifyBytes,
  readSourceFile,
  readSourceFileSync,
  type ReadOutcome,
} from '../../src/workspace/read.ts';

function tree(files: Record<string, string | Uint8Array>): string {
  const root = mkdtempSync(join(tmpdir(), 'rift-read-'));
  for (const [rel, data] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), data);
  }
  return root;
}

const readers: [string, (root: string, path: string, max: number) => Promise<ReadOutcome>][] = [
  ['readSourceFile', readSourceFile],
  ['readSourceFileSync', async (root, path, max) => readSourceFileSync(root, path, max)],
];

function reason(o: ReadOutcome): string {
  return o.ok ? 'ok' : o.reason;
}

test('classifyBytes tells UTF-8 text from NUL bytes and invalid UTF-8', () => {
  assert.equal(classifyBytes(new Uint8Array()), 'ok');
  assert.equal(classifyBytes(Buffer.from('h\u00e9llo \u{1F600}\n')), 'ok');
  assert.equal(classifyBytes(Buffer.from([0xef, 0xbb, 0xbf, 0x61])), 'ok'); // BOM
  assert.equal(classifyBytes(Buffer.from([0x61, 0x00, 0x62])), 'nul_byte');
  assert.equal(classifyBytes(Buffer.from([0x61, 0xff])), 'not_utf8');
  assert.equal(classifyBytes(Buffer.from([0xc3])), 'not_utf8'); // truncated sequence
  assert.equal(classifyBytes(Buffer.from([0xed, 0xa0, 0x80])), 'not_utf8'); // encoded surrogate
  assert.equal(classifyBytes(Buffer.from([0xc0, 0xaf])), 'not_utf8'); // overlong
  assert.equal(classifyBytes(Buffer.from([0xff, 0x00])), 'nul_byte');
});

for (const [name, read] of readers) {
  test(`${name}: a UTF-8 file reads with its full SHA-256 and mtime`, async () => {
    const text = 'export const x = "\u00e9";\n';
    const root = tree({ 'src/a.ts': text, 'empty.txt': '' });
    try {
      const o = await read(root, 'src/a.ts', 1024);
      assert.ok(o.ok);
      assert.equal(Buffer.from(o.bytes).toString('utf8'), text);
      assert.equal(o.sha256, createHash('sha256').update(text).digest('hex'));
      assert.match(o.sha256, /^[0-9a-f]{64}$/);
      assert.equal(o.mtimeMs, statSync(join(root, 'src/a.ts')).mtimeMs);
      const e = await read(root, 'empty.txt', 1024);
      assert.ok(e.ok);
      assert.equal(e.bytes.byteLength, 0);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test(`${name}: every failure has its reason`, async (t) => {
    const outside = tree({ 'secret.ts': 'secret' });
    const root = tree({
      'nul.bin': Buffer.from([0x61, 0x00, 0x62]),
      'latin1.txt': Buffer.from([0x63, 0x61, 0x66, 0xe9]),
      'big.txt': 'x'.repeat(11),
      'edge.txt': 'x'.repeat(10),
      'real/a.ts': 'a',
      'dir/keep': '',
      '.git/config': '[core]',
      'sub/.rift/x': '',
    });
    try {
      symlinkSync('real/a.ts', join(root, 'link.ts'));
      symlinkSync('real', join(root, 'linkdir'));
      symlinkSync(outside, join(root, 'escape'));
      const cases: [string, string][] = [
        ['nul.bin', 'nul_byte'],
        ['latin1.txt', 'not_utf8'],
        ['big.txt', 'too_large'],
        ['edge.txt', 'ok'],
        ['missing.ts', 'missing'],
        ['nope/missing.ts', 'missing'],
        ['edge.txt/below', 'missing'],
        ['link.ts', 'symlink'],
        ['linkdir/a.ts', 'symlink'],
        ['escape/secret.ts', 'symlink'],
        ['dir', 'not_regular'],
        ['.git/config', 'missing'],
        ['sub/.rift/x', 'missing'],
        ['../x', 'unreadable'],
        ['/etc/passwd', 'unreadable'],
        ['a//b', 'unreadable'],
        ['', 'unreadable'],
      ];
      for (const [path, expected] of cases) assert.equal(reason(await read(root, path, 10)), expected, path);

      if (spawnSync('mkfifo', [join(root, 'pipe')]).status === 0) {
        // Opening a FIFO must not wait for a writer.
        assert.equal(reason(await read(root, 'pipe', 10)), 'not_regular');
      } else {
        t.diagnostic('mkfifo unavailable: FIFO case not exercised');
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
      rmSync(outside, { recursive: true, force: true });
    }
  });

  test(`${name}: a root reached through a symlink still reads`, async () => {
    const real = tree({ 'a/b.ts': 'b' });
    const linkParent = mkdtempSync(join(tmpdir(), 'rift-read-link-'));
    try {
      const root = join(linkParent, 'ws');
      symlinkSync(real, root);
      assert.equal(reason(await read(root, 'a/b.ts', 10)), 'ok');
    } finally {
      rmSync(linkParent, { recursive: true, force: true });
      rmSync(real, { recursive: true, force: true });
    }
  });
}

test('a file larger than a read chunk reads whole', async () => {
  const text = 'line\n'.repeat(50_000);
  const root = tree({ 'big.txt': text });
  try {
    for (const [, read] of readers) {
      const o = await read(root, 'big.txt', 1 << 20);
      assert.ok(o.ok);
      assert.equal(o.bytes.byteLength, text.length);
      assert.equal(Buffer.from(o.bytes).toString('utf8'), text);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a file that holds more than its stat said reads whole, and still within the bound', async (t) => {
  // procfs files report size 0 but have content: the same path a file growing after its stat takes.
  if (!existsSync('/proc/self/status')) {
    t.skip('no procfs');
    return;
  }
  for (const [, read] of readers) {
    const o = await read('/proc/self', 'status', 1 << 20);
    assert.ok(o.ok);
    assert.match(Buffer.from(o.bytes).toString('utf8'), /^Name:/);
    assert.equal(reason(await read('/proc/self', 'status', 8)), 'too_large');
  }
});
