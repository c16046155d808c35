import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gitFixture } from '../helpers/git.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// The revision and history commands: `rift symbol --rev/--history`, `rift search --rev`, `rift log`.

const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const entry = fileURLToPath(new URL('../../src/cli/entry.ts', import.meta.url));

function rift(args: string[], cwd: string) {
  const r = spawnSync(process.execPath, ['--import', tsx, entry, ...args], { cwd, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('rift symbol --rev, --history; rift search --rev; rift log prints the timeline one line a version', () => {
  const root = tempWorkspace();
  try {
    const repo = gitFixture(root);
    const c1 = repo.commit('add load', { 'src/io.py': 'def load(path):\n    return path\n' });
    const c2 = repo.commit('load strips', { 'src/io.py': 'def load(path):\n    return path.strip()\n' });
    const c3 = repo.commit('load takes a mode', { 'src/io.py': 'def load(path, mode):\n    return path.strip()\n' });
    writeFileSync(join(root, 'src/io.py'), 'def load(path, mode, extra):\n    return path\n');

    const old = rift(['symbol', 'load', '--rev', c1.slice(0, 7), '--source'], root);
    assert.equal(old.code, 0, old.stderr);
    assert.equal(old.stdout, 'src/io.py:1  function load\n    def load(path):\n        return path\n');

    const withHistory = rift(['symbol', 'load', '--rev', 'main', '--history'], root);
    assert.equal(withHistory.code, 0, withHistory.stderr);
    assert.equal(
      withHistory.stdout,
      [
        'src/io.py:1  function load',
        `    ${c3.slice(0, 7)} 2024-01-01 signature_changed  load takes a mode`,
        `    ${c2.slice(0, 7)} 2024-01-01 body_changed       load strips`,
        `    ${c1.slice(0, 7)} 2024-01-01 introduced         add load`,
        '',
      ].join('\n'),
    );

    const log = rift(['log', 'load'], root);
    assert.equal(log.code, 0, log.stderr);
    assert.equal(log.stdout, withHistory.stdout.split('\n').slice(1).map((l) => l.slice(4)).join('\n'));
    assert.match(log.stderr, /^load {2}src\/io\.py:1\n$/);
    const json = JSON.parse(rift(['log', 'rift://symbol/python/src/io.py/load', '--rev', c2, '--json'], root).stdout);
    assert.deepEqual(json.versions.map((v: { kind: string }) => v.kind), ['body_changed', 'introduced']);
    assert.equal(json.complete, true);

    const committed = rift(['search', 'extra', '--rev', 'main'], root);
    assert.equal(committed.code, 1);
    assert.match(committed.stderr, /nothing matches 'extra'/);
    assert.equal(rift(['search', 'extra'], root).code, 0);

    const unknown = rift(['log', 'load', '--rev', 'nope'], root);
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /rev nope, requires a revision the repository resolves/);
  } finally {
    removeWorkspace(root);
  }
});
