import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startRift } from '../helpers/mcp.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';
import { runCli } from '../helpers/cli.ts';

// Workspace errors name the path and the remedy, never a stack trace; kernel pseudo-filesystems
// (procfs, sysfs, …) are never walked, watched or read, wherever they are mounted (issue 10).


function rift(args: string[], cwd: string, wrap: string[] = []) {
  return runCli(args, cwd, { wrap, input: '' });
}

/** A private mount namespace (root only): mounts made in it vanish with the process. */
const namespaces = spawnSync('unshare', ['-m', 'true']).status === 0;
const NO_NAMESPACES = 'needs root: unshare -m (a private mount namespace) is not available';

/** Runs the command in a mount namespace where procfs and sysfs are mounted at `proc` and `sys` under `root`. */
function withKernelMounts(root: string): string[] {
  const script = 'mount -t proc proc "$0/proc" && mount -t sysfs sysfs "$0/sys" && exec "$@"';
  return ['unshare', '-m', 'sh', '-c', script, root];
}

// Run where `/` is mounted read-only, so a regression cannot leave state at the real root.
const READ_ONLY_ROOT = ['unshare', '-m', 'sh', '-c', 'mount -o remount,bind,ro / && exec "$@"', 'sh'];

test('rift mcp and rift index started in / without --workspace refuse, naming / and --workspace DIR', { skip: namespaces ? false : NO_NAMESPACES }, () => {
  for (const command of [['mcp'], ['index']]) {
    const r = rift(command, '/', READ_ONLY_ROOT);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^rift: configuration_invalid: .*workspace \/, requires a project directory: the current directory is the filesystem root and --workspace was not given, remedy pass --workspace DIR/m);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  }
});

test('a workspace that is missing or on a kernel filesystem is refused with the path and the remedy', () => {
  const root = tempWorkspace({});
  try {
    const missing = rift(['index', '--workspace', join(root, 'absent')], root);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, new RegExp(`resource_not_found: .*workspace ${join(root, 'absent')}, requires an existing directory; start rift inside an existing directory, or name one with --workspace DIR`));
    for (const dir of ['/proc', '/proc/self', '/sys']) {
      const r = rift(['index', '--workspace', dir], root);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, new RegExp(`configuration_invalid: .*workspace ${dir.replace('self', '\\d+')}, requires a directory on an ordinary filesystem: /\\w+ is a kernel pseudo-filesystem, remedy pass --workspace DIR`));
      assert.doesNotMatch(r.stderr, /\n\s+at /);
    }
  } finally {
    removeWorkspace(root);
  }
});

test('procfs and sysfs mounted inside a workspace are never walked', { skip: namespaces ? false : NO_NAMESPACES }, () => {
  const root = tempWorkspace({ 'a.py': 'def alpha(): pass\n', 'src/b.py': 'def beta(): pass\n' });
  mkdirSync(join(root, 'proc'));
  mkdirSync(join(root, 'sys'));
  try {
    const r = rift(['index', '--json'], root, withKernelMounts(root));
    assert.equal(r.code, 0, r.stderr);
    const stats = JSON.parse(r.stdout);
    assert.equal(stats.files, 2, 'only the two source files');
    assert.equal(stats.skipped, 0);
  } finally {
    removeWorkspace(root);
  }
});

test('rift mcp over a workspace with procfs and sysfs mounted inside starts, serves, and never reads them', { skip: namespaces ? false : NO_NAMESPACES }, async () => {
  const root = tempWorkspace({ 'a.py': 'def alpha(): pass\n' });
  mkdirSync(join(root, 'proc'));
  mkdirSync(join(root, 'sys'));
  const server = await startRift(root, {}, { standalone: true, wrap: withKernelMounts(root) });
  try {
    const found = (await server.call('get_symbol', { name: 'alpha' })) as { hits: Array<{ path: string }> };
    assert.deepEqual(found.hits.map((h) => h.path), ['a.py']);
    const searched = (await server.call('search', { query: 'cpuinfo', target: 'file' })) as { results: unknown[] };
    assert.deepEqual(searched.results, [], 'nothing under proc/ is indexed');
    const nodes = await server.fail('nodes', { path: 'proc/cpuinfo', position: 0 });
    assert.equal(nodes.data.code, 'resource_not_found');
  } finally {
    await server.close();
    removeWorkspace(root);
  }
});

test('a directory chain longer than PATH_MAX is left out of the walk; the rest is indexed', () => {
  const root = tempWorkspace({ 'a.py': 'def alpha(): pass\n' });
  try {
    const chain = 'import os, sys\nos.chdir(sys.argv[1])\nfor _ in range(22):\n    os.mkdir("d" * 200)\n    os.chdir("d" * 200)\nopen("deep.py", "w").write("def deep(): pass\\n")\n';
    assert.equal(spawnSync('python3', ['-c', chain, root]).status, 0);
    const r = rift(['index', '--json'], root);
    assert.equal(r.code, 0, r.stderr);
    const stats = JSON.parse(r.stdout);
    assert.equal(stats.files, 1);
    assert.equal(stats.skipped, 1, 'the first directory the system cannot open is counted as skipped');
  } finally {
    // rm walks the chain relatively; Node's rmSync cannot name paths past PATH_MAX.
    spawnSync('rm', ['-rf', root]);
  }
});
