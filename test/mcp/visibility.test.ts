import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { startRift } from '../helpers/mcp.ts';
import { eventually, removeWorkspace, tempWorkspace, writeFiles } from '../helpers/workspace.ts';

// Visibility (reference F.2 rules 15–22): the floor, .gitignore, [source], bad files.

async function pathsOf(root: string, name: string, env: Record<string, string> = {}): Promise<string[]> {
  const rift = await startRift(root, env);
  try {
    const r = (await rift.call('get_symbol', { name, limit: 1000, include: [] })) as { hits: Array<{ path: string }> };
    return [...new Set(r.hits.map((h) => h.path))].sort();
  } finally {
    await rift.close();
  }
}

test('the floor hides .git and .rift at every depth, whatever [source] and .gitignore say', async () => {
  const root = tempWorkspace({
    'a.py': 'def probe(): pass\n',
    '.git/hooks/b.py': 'def probe(): pass\n',
    'vendor/dep/.git/c.py': 'def probe(): pass\n',
    'pkg/.rift/d.py': 'def probe(): pass\n',
    'rift.toml': '[source]\ninclude = [".git/**", "**/.git/**", "*.py"]\nrespect_gitignore = false\n',
  });
  assert.deepEqual(await pathsOf(root, 'probe'), ['a.py']);
  removeWorkspace(root);
});

test('root and nested .gitignore files hide files; respect_gitignore = false admits them; parents and .git/info/exclude never apply', async () => {
  const parent = tempWorkspace({ '.gitignore': 'kept.py\n' });
  const root = join(parent, 'ws');
  mkdirSync(root);
  writeFiles(root, {
    '.gitignore': 'ignored.py\nbuild/\n',
    'ignored.py': 'def probe(): pass\n',
    'kept.py': 'def probe(): pass\n',
    'build/gen.py': 'def probe(): pass\n',
    'sub/.gitignore': 'local.py\n!again.py\n',
    'sub/local.py': 'def probe(): pass\n',
    'sub/again.py': 'def probe(): pass\n',
    'sub/other.py': 'def probe(): pass\n',
    '.git/info/exclude': 'other.py\n',
    '.hidden/dot.py': 'def probe(): pass\n',
  });
  assert.deepEqual(await pathsOf(root, 'probe'), ['.hidden/dot.py', 'kept.py', 'sub/again.py', 'sub/other.py']);
  writeFiles(root, { 'rift.toml': '[source]\nrespect_gitignore = false\n' });
  assert.deepEqual(await pathsOf(root, 'probe'), [
    '.hidden/dot.py',
    'build/gen.py',
    'ignored.py',
    'kept.py',
    'sub/again.py',
    'sub/local.py',
    'sub/other.py',
  ]);
  removeWorkspace(parent);
});

test('[source] include narrows, exclude wins over include, and the default exclude hides node_modules', async () => {
  const root = tempWorkspace({
    'src/a.py': 'def probe(): pass\n',
    'src/gen/b.py': 'def probe(): pass\n',
    'tests/c.py': 'def probe(): pass\n',
    'node_modules/dep/d.py': 'def probe(): pass\n',
  });
  assert.deepEqual(await pathsOf(root, 'probe'), ['src/a.py', 'src/gen/b.py', 'tests/c.py']);
  writeFiles(root, { 'rift.toml': '[source]\ninclude = ["src/"]\nexclude = ["gen/"]\n' });
  assert.deepEqual(await pathsOf(root, 'probe'), ['src/a.py']);
  writeFiles(root, { 'rift.toml': '[source]\nexclude = []\n' });
  assert.deepEqual(await pathsOf(root, 'probe'), ['node_modules/dep/d.py', 'src/a.py', 'src/gen/b.py', 'tests/c.py']);
  removeWorkspace(root);
});

test('symlinks, FIFOs, oversized, non-UTF-8 and NUL-carrying files are skipped, never fatal', async () => {
  const root = tempWorkspace({
    'good.py': 'def probe(): pass\n',
    'latin1.py': Buffer.concat([Buffer.from('def probe(): pass\n# caf'), Buffer.from([0xe9, 0x0a])]),
    'nul.py': Buffer.from('def probe(): pass\n\u0000\n'),
    'big.py': 'def probe(): pass\n' + '#'.repeat(3000) + '\n',
    'outside/real.py': 'def probe(): pass\n',
    'rift.toml': '[source]\nexclude = ["outside/"]\nmax_file_bytes = "2kb"\n',
  });
  symlinkSync(join(root, 'outside/real.py'), join(root, 'link.py'));
  symlinkSync(join(root, 'outside'), join(root, 'linkdir'));
  let fifo = true;
  try {
    execFileSync('mkfifo', [join(root, 'pipe.py')]);
  } catch {
    fifo = false;
  }
  assert.deepEqual(await pathsOf(root, 'probe'), ['good.py']);
  assert.ok(fifo || true);
  removeWorkspace(root);
});

test('paths are NFC (rule 24): non-NFC and colliding names are left out, nodes says why, the watcher keeps it so', async () => {
  const nfc = 'caf\u00e9.py';
  const nfd = 'cafe\u0301.py';
  const root = tempWorkspace({ [nfc]: 'def in_cafe(): pass\n', 'u\u0308ber.py': 'def in_uber(): pass\n', 'plain.py': 'def in_plain(): pass\n' });
  const rift = await startRift(root);
  const names = async () => ((await rift.call('get_symbol', { name: 'in_', limit: 100, include: [] })) as { hits: Array<{ path: string; symbol: { name: string } }> }).hits.map((h) => `${h.path}:${h.symbol.name}`).sort();
  try {
    assert.deepEqual(await names(), [`${nfc}:in_cafe`, 'plain.py:in_plain']);
    const uber = await rift.fail('nodes', { path: '\u00fcber.py', position: 0 });
    assert.equal(uber.data.code, 'content_unavailable');
    assert.match(uber.data.message as string, /path über\.py, reason its name on disk is not Unicode NFC; rename it to its NFC form/);

    // A second name with the same NFC form makes both unaddressable; removing it restores the first.
    writeFiles(root, { [nfd]: 'def in_other(): pass\n' });
    await eventually(async () => ((await names()).length === 1 ? true : undefined));
    assert.deepEqual(await names(), ['plain.py:in_plain']);
    const cafe = await rift.fail('nodes', { path: nfc, position: 0 });
    assert.equal(cafe.data.code, 'content_unavailable');
    assert.match(cafe.data.message as string, /reason more than one name on disk normalizes \(NFC\) to this path/);
    rmSync(join(root, nfd));
    await eventually(async () => ((await names()).length === 2 ? true : undefined));
    assert.deepEqual(await names(), [`${nfc}:in_cafe`, 'plain.py:in_plain']);
  } finally {
    await rift.close();
    removeWorkspace(root);
  }
});
