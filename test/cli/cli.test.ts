import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';
import { runCli } from '../helpers/cli.ts';

// The command line: index (cold in worker threads, then warm), symbol, nodes, help, errors.


function rift(args: string[], cwd: string) {
  return runCli(args, cwd);
}

function manyFiles(n: number): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < n; i++) files[`pkg/mod_${String(i).padStart(3, '0')}.py`] = `class Widget${i}:\n    def render(self):\n        return ${i}\n`;
  files['README.md'] = '# widgets\n';
  return files;
}

test('rift index parses a cold tree in worker threads, then a warm start parses nothing', () => {
  const root = tempWorkspace(manyFiles(120));
  const cold = rift(['index', '--json'], root);
  assert.equal(cold.code, 0, cold.stderr);
  const stats = JSON.parse(cold.stdout);
  assert.equal(stats.files, 121);
  assert.equal(stats.parsed, 120);
  assert.equal(stats.symbols, 240);
  assert.equal(stats.reparsed, 120);
  assert.match(stats.revision, /^[0-9a-f]{8}$/);
  assert.ok(existsSync(join(root, '.rift/rift.db')));
  assert.equal(readFileSync(join(root, '.rift/.gitignore'), 'utf8'), '*\n');
  const warm = JSON.parse(rift(['index', '--json'], root).stdout);
  assert.equal(warm.reparsed, 0);
  assert.equal(warm.symbols, 240);
  assert.equal(warm.revision, stats.revision);
  writeFileSync(join(root, 'pkg/mod_007.py'), 'class Gadget:\n    pass\n');
  const edited = JSON.parse(rift(['index', '--json'], root).stdout);
  assert.equal(edited.reparsed, 1);
  assert.equal(edited.symbols, 239);
  assert.notEqual(edited.revision, stats.revision);
  const human = rift(['index'], root);
  assert.match(
    human.stdout,
    /^indexed 121 files: 120 parsed for declarations \(239 symbols\), 1 stored as text only; 0 skipped \(visible but left out: .*`rift index --skipped` lists them\)\. This run re-parsed 0 changed files and removed 0, in \d+\.\d\ds — tree [0-9a-f]{8}\n$/,
  );
  removeWorkspace(root);
});

test('rift index --skipped lists the files left out with their reasons', () => {
  const root = tempWorkspace({ 'a.py': 'def a(): pass\n', 'data.bin': 'x\0y', 'latin.txt': '' });
  writeFileSync(join(root, 'latin.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
  symlinkSync('a.py', join(root, 'link.py'));
  const r = rift(['index', '--skipped'], root);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  assert.deepEqual(lines.slice(0, -1), [
    'data.bin\tthe file contains a NUL byte',
    'latin.txt\tthe file is not valid UTF-8',
    'link.py\tit is a symbolic link (walks never follow links)',
  ]);
  assert.match(lines.at(-1)!, /^indexed 1 files: 1 parsed for declarations \(1 symbols\), 0 stored as text only; 3 skipped /);
  // A warm run remembers why, without reading the files again.
  const json = JSON.parse(rift(['index', '--json', '--skipped'], root).stdout);
  assert.equal(json.skipped, 3);
  assert.deepEqual(json.skippedFiles, [
    { path: 'data.bin', reason: 'nul_byte' },
    { path: 'latin.txt', reason: 'not_utf8' },
    { path: 'link.py', reason: 'symlink' },
  ]);
  removeWorkspace(root);
});

test('rift symbol prints clickable path:line rows; rift nodes prints the node chain', () => {
  const root = tempWorkspace(manyFiles(3));
  const r = rift(['symbol', 'render'], root);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    'pkg/mod_000.py:2  method Widget0.render\npkg/mod_001.py:2  method Widget1.render\npkg/mod_002.py:2  method Widget2.render\n',
  );
  const src = rift(['symbol', 'Widget1.render', '--source'], root);
  assert.match(src.stdout, /^pkg\/mod_001\.py:2  method Widget1\.render\n    def render\(self\):\n            return 1\n$/);
  const json = JSON.parse(rift(['symbol', 'Widget2', '--json', '--limit', '1'], root).stdout);
  assert.equal(json.hits[0].symbol.name, 'Widget2');
  assert.deepEqual(json.pagination, { page_index: 0, total_pages: 2 });
  const none = rift(['symbol', 'nothing_here'], root);
  assert.equal(none.code, 1);
  assert.match(none.stderr, /no declaration matches 'nothing_here'/);
  const nodes = rift(['nodes', 'pkg/mod_000.py', '30'], root);
  assert.equal(nodes.code, 0, nodes.stderr);
  assert.match(nodes.stdout, /^module 0-\d+  rift:\/\/node\/python\/pkg\/mod_000\.py@0-\d+#[0-9a-f]{8}\n  class_definition 0-\d+ .*→ rift:\/\/symbol\/python\/pkg\/mod_000\.py\/Widget0\n/);
  removeWorkspace(root);
});

test('rift search prints path:line rows for symbols and files, narrowed by --include-path', () => {
  const root = tempWorkspace({ ...manyFiles(2), 'docs/notes.md': 'How to render a widget\n' });
  const r = rift(['search', 'render widget', '--limit', '3'], root);
  assert.equal(r.code, 0, r.stderr);
  const rows = r.stdout.trim().split('\n');
  assert.equal(rows.length, 3);
  for (const row of rows) assert.match(row, /^[\w./]+:\d+  (file|method \w+\.render|class Widget\d)$/);
  assert.ok(rows.includes('docs/notes.md:1  file'), r.stdout);
  const narrowed = rift(['search', 'render', '--include-path', 'docs/**'], root);
  assert.equal(narrowed.stdout, 'docs/notes.md:1  file\n');
  const symbols = rift(['search', 'render', '--target', 'symbol', '--json'], root);
  const json = JSON.parse(symbols.stdout);
  assert.ok(json.results.length > 0 && json.results.every((h: { hit: { target: string } }) => h.hit.target === 'symbol'));
  assert.equal(typeof json.results[0].source, 'string');
  const none = rift(['search', 'zzzqqqxxx'], root);
  assert.equal(none.code, 1);
  assert.match(none.stderr, /nothing matches 'zzzqqqxxx'/);
  const bad = rift(['search', 'x', '--target', 'node'], root);
  assert.equal(bad.code, 2);
  removeWorkspace(root);
});

test('help, version, and errors that say what to do next', () => {
  const root = tempWorkspace({});
  const help = rift(['--help'], root);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /rift index \[--workspace DIR\]/);
  assert.match(help.stdout, /rift mcp/);
  assert.match(help.stdout, /rift \[--model M\] .*\n.*the terminal UI/);
  // No command word opens the terminal UI, which needs a terminal: without one it says what to run instead.
  for (const args of [[], ['--model', 'm', '--continue']]) {
    const noTty = rift(args, root);
    assert.equal(noTty.code, 2);
    assert.match(noTty.stderr, /the terminal UI needs a terminal on stdin and stdout — run `rift -p "<prompt>"` for one headless turn, or `rift --serve` for an editor/);
  }
  assert.match(rift(['--continue', '--resume', 'x'], root).stderr, /--continue and --resume cannot be combined/);
  assert.match(rift(['--version'], root).stdout, /^rift \d+\.\d+\.\d+\n$/);
  const unknown = rift(['frobnicate'], root);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown command 'frobnicate'/);
  const badFlag = rift(['index', '--nope'], root);
  assert.equal(badFlag.code, 2);
  assert.match(badFlag.stderr, /Run 'rift --help' for usage/);
  const missing = rift(['index', '--workspace', join(root, 'absent')], root);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /resource_not_found: .*requires an existing directory/);
  const badPath = rift(['nodes', '../x.py', '0'], root);
  assert.equal(badPath.code, 2);
  assert.match(badPath.stderr, /field path, violation dot_segment/);
  writeFileSync(join(root, 'rift.toml'), '[source]\nnope = true\n');
  const badConfig = rift(['index'], root);
  assert.equal(badConfig.code, 1);
  assert.match(badConfig.stderr, /configuration_invalid: .*field source\.nope, violation unknown_key/);
  removeWorkspace(root);
});

test('a workspace that does not exist is named with advice that fits: start inside one, or pass --workspace', () => {
  const root = tempWorkspace({});
  const r = rift(['index', '--workspace', join(root, 'nope')], root);
  assert.equal(r.code, 1);
  assert.equal(r.stderr, `rift: resource_not_found: the requested resource does not exist in the current snapshot: workspace ${join(root, 'nope')}, requires an existing directory; start rift inside an existing directory, or name one with --workspace DIR\n`);
  removeWorkspace(root);
});

test('rift nodes takes path:line[:col] as well as a byte offset; a position past the end says so', () => {
  const root = tempWorkspace({ 'a.py': 'x = 1\ndef fé(y):\n    return y\n' });
  const byLine = rift(['nodes', 'a.py:3:5'], root);
  assert.equal(byLine.code, 0, byLine.stderr);
  const byOffset = rift(['nodes', 'a.py', String(Buffer.byteLength('x = 1\ndef fé(y):\n    '))], root);
  assert.equal(byLine.stdout, byOffset.stdout, 'line 3 column 5 is the byte offset after the indentation');
  assert.match(byLine.stdout, /return_statement/);
  // Columns count characters: `(` is column 7 of line 2, after the two-byte é.
  const wide = JSON.parse(rift(['nodes', 'a.py:2:7', '--json'], root).stdout);
  assert.ok(wide.nodes.some((n: { kind: string; range: { start: number } }) => n.kind === 'parameters' && n.range.start === Buffer.byteLength('x = 1\ndef fé')));
  assert.equal(rift(['nodes', 'a.py:1'], root).code, 0);
  const pastLine = rift(['nodes', 'a.py:9'], root);
  assert.equal(pastLine.code, 2);
  assert.match(pastLine.stderr, /a\.py has 3 lines; line 9 is past its end/);
  const pastCol = rift(['nodes', 'a.py:1:40'], root);
  assert.match(pastCol.stderr, /line 1 of a\.py has 5 characters; column 40 is past its end/);
  const pastEnd = rift(['nodes', 'a.py', '5000'], root);
  assert.equal(pastEnd.code, 1);
  assert.equal(pastEnd.stdout, '');
  assert.equal(pastEnd.stderr, `no syntax node contains byte 5000: a.py is ${Buffer.byteLength('x = 1\ndef fé(y):\n    return y\n')} bytes long\n`);
  assert.match(rift(['nodes', 'a.py'], root).stderr, /give a position: <path>:<line>\[:<col>\] or <path> <byte-offset>/);
  removeWorkspace(root);
});

test('every command answers --help (and `rift help <command>`) with its own usage from the command list', () => {
  const root = tempWorkspace({});
  for (const command of ['index', 'symbol', 'search', 'log', 'nodes', 'map', 'callers', 'callees', 'path', 'mcp', 'server', 'status', 'projection', 'trust', 'doctor', 'acp']) {
    for (const args of [[command, '--help'], [command, '-h'], ['help', command]]) {
      const r = rift(args, root);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stdout, new RegExp(`^Usage:\\n(  rift \\S+.*\\n)*  rift ${command} `), args.join(' '));
      assert.ok(!r.stdout.includes('rift index ') || command === 'index', `${args.join(' ')} prints only its own entry`);
    }
  }
  // After `--` a `--help` is an argument, not a request for help.
  const literal = rift(['symbol', '--', '--help'], root);
  assert.equal(literal.code, 1);
  assert.match(literal.stderr, /no declaration matches '--help'/);
  const unknown = rift(['help', 'nope'], root);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown command 'nope'/);
});

test('rift --help and README.md list the same commands, and help names the default model and host', () => {
  const readme = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');
  const block = /## Commands\n\n```text\n([\s\S]*?)```/.exec(readme)![1];
  const help = rift(['--help'], tempWorkspace({})).stdout;
  const usage = /Usage:\n([\s\S]*?)\n\n/.exec(help)![1];
  assert.equal(usage.replace(/^ {2}/gm, ''), block.trimEnd());
  for (const flag of ['rift symbol <name> [--source]', '[--exclude-path GLOB]…', '[--limit N] [--page N]']) assert.ok(block.includes(flag), flag);
  assert.match(help, /the model is gemma4:26b on http:\/\/localhost:11434 unless --model\/--host/);
  assert.match(help, /rift index counts: files indexed; parsed, .*re-parsed, .*removed, .*skipped/s);
  assert.match(readme, /The agent's model is `gemma4:26b` on `http:\/\/localhost:11434`/);
});
