import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigLoader } from '../../src/config/loader.ts';
import { defaultConfig, languageFor } from '../../src/config/workspace-config.ts';
import { digest8 } from '../../src/core/digest.ts';
import { RiftError } from '../../src/core/errors.ts';
import { CONFIG_BYTES_MAX } from '../../src/core/limits.ts';

function tempRoot(): string {
  return mkdtempSync(join(tmpdir(), 'rift-config-'));
}

function thrown(fn: () => unknown): RiftError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof RiftError, `expected RiftError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected a RiftError');
}

/** Write and push mtime into the past, so the loader trusts the stat fingerprint. */
function writeSettled(path: string, text: string, ageSeconds = 60): void {
  writeFileSync(path, text);
  const t = Date.now() / 1000 - ageSeconds;
  utimesSync(path, t, t);
}

test('a missing file serves the defaults with a null revision', () => {
  const root = tempRoot();
  try {
    const loader = new ConfigLoader(root);
    const a = loader.current();
    assert.equal(a.revision, null);
    assert.deepEqual(a.config, defaultConfig());
    assert.equal(loader.current(), a, 'unchanged state returns the same object');
    assert.ok(Object.isFrozen(a.config) && Object.isFrozen(a.config.source.exclude));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a missing workspace root also serves the defaults', () => {
  const loader = new ConfigLoader(join(tmpdir(), 'rift-config-does-not-exist-' + process.pid));
  assert.equal(loader.current().revision, null);
});

test('valid → invalid → fixed without a new loader', () => {
  const root = tempRoot();
  const file = join(root, 'rift.toml');
  try {
    const valid = '[logs]\npage_records = 50\n';
    writeFileSync(file, valid);
    const loader = new ConfigLoader(root);
    const first = loader.current();
    assert.equal(first.config.logs.page_records, 50);
    assert.equal(first.revision, digest8(valid));

    // Breaking the file after boot gates the next request.
    writeFileSync(file, '[logs]\npage_records = 0\n# now invalid\n');
    const e1 = thrown(() => loader.current());
    assert.equal(e1.code, 'configuration_invalid');
    assert.equal(e1.retry, 'operator_action');
    assert.match(e1.message, /field logs\.page_records, violation limit_out_of_range, value 0, range 1\.\.1000/);
    // Every later call throws the same error while the file stays invalid.
    const e2 = thrown(() => loader.current());
    assert.equal(e2.message, e1.message);
    assert.deepEqual(e2.evidence, e1.evidence);

    // Fixing it recovers on the next call.
    const fixed = '[logs]\npage_records = 75\n';
    writeFileSync(file, fixed);
    const again = loader.current();
    assert.equal(again.config.logs.page_records, 75);
    assert.equal(again.revision, digest8(fixed));

    // Deleting it falls back to the defaults.
    unlinkSync(file);
    assert.deepEqual(loader.current(), { config: defaultConfig(), revision: null });
    // And recreating it is picked up.
    writeFileSync(file, valid);
    assert.equal(loader.current().revision, digest8(valid));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a syntax error gates with the parser detail', () => {
  const root = tempRoot();
  try {
    writeFileSync(join(root, 'rift.toml'), '[source\n');
    const e = thrown(() => new ConfigLoader(root).current());
    assert.equal(e.code, 'configuration_invalid');
    assert.equal(e.evidence[0][0], 'file');
    assert.equal(e.evidence[0][1], 'rift.toml');
    assert.equal(e.evidence[1][0], 'detail');
    assert.match(String(e.evidence[1][1]), /line 1 column \d+/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('the accepted object is kept while the content is unchanged, and replaced when it changes', () => {
  const root = tempRoot();
  const file = join(root, 'rift.toml');
  try {
    writeSettled(file, '[logs]\npage_records = 10\n');
    const loader = new ConfigLoader(root);
    const a = loader.current();
    // Identity is kept across calls while the file is unchanged.
    assert.equal(loader.current(), a);
    assert.equal(loader.current(), a);
    // Rewriting identical bytes (new mtime) keeps the accepted object: the digest is unchanged.
    writeFileSync(file, '[logs]\npage_records = 10\n');
    assert.equal(loader.current(), a);
    // A different content of the same size is seen.
    writeFileSync(file, '[logs]\npage_records = 20\n');
    const b = loader.current();
    assert.notEqual(b, a);
    assert.equal(b.config.logs.page_records, 20);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a rewrite of the same size right after a read is seen', () => {
  const root = tempRoot();
  const file = join(root, 'rift.toml');
  try {
    writeFileSync(file, '[logs]\npage_records = 10\n');
    const loader = new ConfigLoader(root);
    assert.equal(loader.current().config.logs.page_records, 10);
    // Same size, written within the racy window of the previous read.
    writeFileSync(file, '[logs]\npage_records = 11\n');
    assert.equal(loader.current().config.logs.page_records, 11);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a file over 256 KiB gates before being read', () => {
  const root = tempRoot();
  try {
    writeFileSync(join(root, 'rift.toml'), '#'.repeat(CONFIG_BYTES_MAX + 10));
    const e = thrown(() => new ConfigLoader(root).current());
    assert.equal(e.code, 'configuration_invalid');
    assert.deepEqual(
      e.evidence.map(([k, v]) => [k, String(v)]),
      [
        ['file', 'rift.toml'],
        ['bytes', String(CONFIG_BYTES_MAX + 10)],
        ['bytes_max', '262144'],
      ],
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a directory named rift.toml is a storage failure', () => {
  const root = tempRoot();
  try {
    mkdirSync(join(root, 'rift.toml'));
    const loader = new ConfigLoader(root);
    const e = thrown(() => loader.current());
    assert.equal(e.code, 'storage_failure');
    assert.equal(e.retry, 'same_request');
    assert.deepEqual(e.evidence, [
      ['file', 'rift.toml'],
      ['io', 'EISDIR'],
    ]);
    // Replacing it with a valid file recovers.
    rmSync(join(root, 'rift.toml'), { recursive: true });
    writeFileSync(join(root, 'rift.toml'), '');
    assert.equal(loader.current().revision, digest8(''));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('an unreadable file is a storage failure naming the io code', { skip: process.getuid?.() === 0 ? 'root reads any file' : false }, () => {
  const root = tempRoot();
  const file = join(root, 'rift.toml');
  try {
    writeFileSync(file, '');
    chmodSync(file, 0o000);
    const loader = new ConfigLoader(root);
    const e = thrown(() => loader.current());
    assert.equal(e.code, 'storage_failure');
    assert.deepEqual(e.evidence, [
      ['file', 'rift.toml'],
      ['io', 'EACCES'],
    ]);
    chmodSync(file, 0o644);
    assert.equal(loader.current().revision, digest8(''));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('tryCurrent hands the error back instead of throwing', () => {
  const root = tempRoot();
  try {
    writeFileSync(join(root, 'rift.toml'), 'bogus = 1\n');
    const r = new ConfigLoader(root).tryCurrent();
    assert.ok(r instanceof RiftError);
    assert.equal(r.code, 'configuration_invalid');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('languageFor on a loaded config selects extensionless files through a custom entry', () => {
  const root = tempRoot();
  try {
    writeFileSync(join(root, 'rift.toml'), '[languages.make]\ninclude = ["Makefile", "*.mk"]\n');
    const { config } = new ConfigLoader(root).current();
    assert.equal(languageFor(config, 'Makefile')?.id, 'make');
    assert.equal(languageFor(config, 'sub/dir/Makefile')?.id, 'make');
    assert.equal(languageFor(config, 'rules.mk')?.id, 'make');
    assert.equal(languageFor(config, 'Makefile.bak'), null);
    assert.equal(languageFor(config, 'src/main.rs')?.id, 'rust');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
