import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';
import { CASES } from '../mcp/graph-fixtures.ts';

// rift map, callers, callees, path: the graph for a person at a terminal, and --json for scripts.

const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const entry = fileURLToPath(new URL('../../src/cli/entry.ts', import.meta.url));

function rift(args: string[], cwd: string) {
  const r = spawnSync(process.execPath, ['--import', tsx, entry, ...args], { cwd, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('graph commands', () => {
  let root = '';
  before(() => {
    root = tempWorkspace({ ...CASES[0].files, 'README.md': '# demo\n', 'rs/src/main.rs': 'fn main() {}\n' });
  });
  after(() => removeWorkspace(root));

  test('rift map prints languages, modules, hubs, entry points and docs; --json is the resource', () => {
    const human = rift(['map'], root);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /^tree [0-9a-f]{8}\n\nlanguages\n/);
    assert.match(human.stdout, /\n  typescript\s+5 files\s+10 symbols\n/);
    assert.match(human.stdout, /\nmodules\n  rs\/\s+1 files\s+1 symbols\n    src\/\s+1 files\s+1 symbols\n  ts\/\s+5 files\s+10 symbols\n/);
    assert.match(human.stdout, /\nhubs \(most referenced\)\n\s+\d+  (class|method|function) /);
    assert.match(human.stdout, /\nentry points\n  main  rs\/src\/main\.rs\n/);
    assert.match(human.stdout, /\ndocs\n  README\.md\n$/);
    const json = JSON.parse(rift(['map', '--json'], root).stdout);
    assert.deepEqual(json.entry_points, ['rift://symbol/rust/rs/src/main.rs/main']);
    assert.deepEqual(json.pagination, { page_index: 0, total_pages: 1 });
  });

  test('rift callers and callees print the walk as a tree; a name picks its one declaration', () => {
    const callers = rift(['callers', 'Store.lookup'], root);
    assert.equal(callers.code, 0, callers.stderr);
    assert.equal(callers.stdout, 'Store.lookup  ts/store.ts\n  ← Store.find  ts/store.ts:10  calls\n');
    const callees = rift(['callees', 'main', '--depth', '2'], root);
    assert.equal(callees.code, 2, 'main names two declarations: a usage error');
    assert.match(callees.stderr, /'main' names 2 declarations; pass one SymbolId:\n  rift:\/\/symbol\/rust\/rs\/src\/main\.rs\/main/);
    const tree = rift(['callees', 'rift://symbol/typescript/ts/main.ts/main', '--depth', '2', '--facets', 'calls'], root);
    assert.equal(tree.code, 0, tree.stderr);
    assert.equal(
      tree.stdout,
      [
        'main  ts/main.ts',
        '  → Base.ping  ts/base.ts:2  calls',
        '  → Store.find  ts/store.ts:10  calls',
        '    → Inner.get  ts/store.ts:5  calls',
        '    → Store.lookup  ts/store.ts:15  calls',
        '    → helper  ts/util.ts:1  calls',
        '',
      ].join('\n'),
    );
    const json = JSON.parse(rift(['callers', 'helper', '--json'], root).stdout);
    assert.ok(json.results.every((h: { matched_by: string[] }) => h.matched_by.includes('relationship')));
  });

  test('rift path prints the shortest route, and says so when there is none', () => {
    const path = rift(['path', 'rift://symbol/typescript/ts/main.ts/main', 'helper'], root);
    assert.equal(path.code, 0, path.stderr);
    assert.equal(path.stdout, 'main  ts/main.ts\n  calls → Store.find  ts/store.ts\n  calls → helper  ts/util.ts\n');
    const none = rift(['path', 'helper', 'rift://symbol/typescript/ts/main.ts/main'], root);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /^no path from helper  ts\/util\.ts to main  ts\/main\.ts within depth 8\n$/);
    const unknown = rift(['callers', 'no_such_thing'], root);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /no declaration matches 'no_such_thing'/);
  });

  test('--help lists the graph commands', () => {
    const help = rift(['--help'], root);
    for (const c of ['rift map', 'rift callers <symbol>', 'rift callees <symbol>', 'rift path <from> <to>']) assert.ok(help.stdout.includes(c), c);
  });
});
