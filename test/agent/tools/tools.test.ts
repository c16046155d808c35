import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { recoverTextualToolCalls } from '../../../src/agent/loop/recovery.ts';
import { ToolError } from '../../../src/agent/base/tool.ts';
import { middleTruncate } from '../../../src/agent/tools/bash.ts';
import { stripAnsi } from '../../../src/agent/base/tasks.ts';
import type { ToolContext } from '../../../src/agent/tools/context.ts';
import { ToolRegistry } from '../../../src/agent/tools/registry.ts';
import { pluginTool } from '../../../src/agent/extensions/plugins.ts';
import type { AgentEvent } from '../../../src/agent/base/types.ts';
import { Engine } from '../../../src/services/engine.ts';
import { tempDir, toolContext } from '../../support/agent-harness.ts';
import { Approval } from '../../../src/agent/policy/approval.ts';
import { PermissionRules } from '../../../src/agent/policy/permissions.ts';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function ctx(files: Record<string, string | Buffer> = {}, deny: string[] = []): ToolContext & { events: AgentEvent[] } {
  const c = toolContext({ files, deny });
  dirs.push(c.cwd);
  return c;
}

const registry = ToolRegistry.standard();
async function call(c: ToolContext, name: string, args: Record<string, unknown>): Promise<string> {
  return registry.get(name)!.run(args, c);
}
async function fails(c: ToolContext, name: string, args: Record<string, unknown>): Promise<string> {
  try {
    await call(c, name, args);
  } catch (e) {
    assert.ok(e instanceof ToolError);
    return e.message;
  }
  assert.fail('expected a tool error');
}

describe('agent tools: read', () => {
  it('numbers lines, pages with offset/limit, and reports what remains', async () => {
    const c = ctx({ 'a.txt': 'one\ntwo\r\nthree\n', 'e.txt': '', 'bin.dat': Buffer.from([1, 0, 2]) });
    assert.equal(await call(c, 'read', { path: 'a.txt' }), '    1\tone\n    2\ttwo\n    3\tthree\n');
    assert.equal(await call(c, 'read', { path: 'a.txt', offset: 2, limit: 1 }), '    2\ttwo\n[showing lines 2-2 of 3; continue with offset=3]\n');
    assert.equal(await call(c, 'read', { path: 'e.txt' }), '(empty file)\n');
    assert.equal(await fails(c, 'read', { path: 'a.txt', offset: 9 }), 'offset 9 is past the end of the file (3 lines)');
    assert.equal(await fails(c, 'read', { path: 'bin.dat' }), 'bin.dat appears to be a binary file');
    assert.equal(await fails(c, 'read', { path: 'b.txt' }), 'b.txt does not exist. Did you mean: a.txt, e.txt?');
    assert.equal(await fails(c, 'read', { path: 'zzz/qqq' }), 'zzz/qqq does not exist. Use ls or glob to find the right path.');
    assert.equal(await fails(c, 'read', {}), "read needs the 'path' argument (a string)");
  });

  it('caps output at 50,000 bytes and long lines at 2000 chars; deny rules come first', async () => {
    const c = ctx({ 'big.txt': `${'x'.repeat(3000)}\n`.repeat(40) }, ['Read(secret.txt)']);
    const out = await call(c, 'read', { path: 'big.txt' });
    assert.ok(Buffer.byteLength(out) < 52_000);
    assert.match(out, /\[truncated at 50000 bytes; use offset\/limit to read more\]/);
    assert.equal(out.split('\n')[0].length, 6 + 2000);
    writeFileSync(join(c.cwd, 'secret.txt'), 's');
    assert.match(await fails(c, 'read', { path: 'secret.txt' }), /blocked by permission rule 'Read\(secret.txt\)'/);
  });
});

describe('agent tools: edit', () => {
  it('diagnoses near misses: whitespace, closest line, nothing close, several matches', async () => {
    const c = ctx({ 'f.py': 'def mean(xs):\n    return sum(xs) / len(xs)\n\nx = 1\nx = 1\n' });
    assert.equal(
      await fails(c, 'edit', { path: 'f.py', old_string: 'def mean(xs):\n  return sum(xs) / len(xs)', new_string: 'y' }),
      'old_string not found in f.py, but the same text DOES exist with different whitespace/indentation. Re-read those lines and copy them exactly (tabs vs spaces, line breaks).',
    );
    assert.equal(
      await fails(c, 'edit', { path: 'f.py', old_string: 'def mean(values):', new_string: 'y' }),
      'old_string not found in f.py. Closest match is line 1: `def mean(xs):`. Read around that line and use its exact text.',
    );
    assert.equal(await fails(c, 'edit', { path: 'f.py', old_string: 'qqqq zzzz', new_string: 'y' }), 'old_string not found in f.py. Read the file again and match the text exactly.');
    assert.equal(await fails(c, 'edit', { path: 'f.py', old_string: 'x = 1', new_string: 'x = 2' }), 'old_string occurs 2 times in f.py; include more surrounding context to make it unique, or set replace_all');
    assert.equal(await fails(c, 'edit', { path: 'f.py', old_string: '', new_string: 'y' }), 'old_string must not be empty');
    assert.equal(await fails(c, 'edit', { path: 'f.py', old_string: 'a', new_string: 'a' }), 'old_string and new_string are identical');
    assert.match(await call(c, 'edit', { path: 'f.py', old_string: 'x = 1', new_string: 'x = 2', replace_all: true }), /\(2 replacements\)$/);
  });

  it('reconciles LF arguments with a CRLF file and keeps its line endings', async () => {
    const c = ctx({ 'w.txt': 'one\r\ntwo\r\nthree\r\n' });
    assert.match(await call(c, 'edit', { path: 'w.txt', old_string: 'one\ntwo', new_string: 'uno\ndos' }), /\(1 replacement\)$/);
    assert.equal(readFileSync(join(c.cwd, 'w.txt'), 'utf8'), 'uno\r\ndos\r\nthree\r\n');
    const l = ctx({ 'l.txt': 'a\nb\n' });
    await call(l, 'edit', { path: 'l.txt', old_string: 'a\r\nb', new_string: 'c\r\nd' });
    assert.equal(readFileSync(join(l.cwd, 'l.txt'), 'utf8'), 'c\nd\n');
  });
});

describe('agent tools: files on the workspace layer', () => {
  it('edit keeps every byte it did not change, whatever the encoding; what the encoding cannot hold is refused', async () => {
    const latin1 = Buffer.from('caf\xe9\nline two\n', 'latin1');
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('näme = 1\r\n', 'utf8')]);
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('hello\nwörld\n', 'utf16le')]);
    const c = ctx({ 'l1.txt': latin1, 'bom.txt': bom, 'u16.txt': utf16 });
    assert.match(await call(c, 'read', { path: 'l1.txt' }), /^ {4}1\tcafé\n/);
    await call(c, 'edit', { path: 'l1.txt', old_string: 'line two', new_string: 'LINE TWO' });
    assert.deepEqual(readFileSync(join(c.cwd, 'l1.txt')), Buffer.from('caf\xe9\nLINE TWO\n', 'latin1'));
    await call(c, 'edit', { path: 'l1.txt', old_string: 'café', new_string: 'cafés' });
    assert.deepEqual(readFileSync(join(c.cwd, 'l1.txt')), Buffer.from('caf\xe9s\nLINE TWO\n', 'latin1'));
    assert.match(await fails(c, 'edit', { path: 'l1.txt', old_string: 'TWO', new_string: 'two ✓' }), /encoding \(latin1\) cannot hold/);
    assert.deepEqual(readFileSync(join(c.cwd, 'l1.txt')), Buffer.from('caf\xe9s\nLINE TWO\n', 'latin1'), 'a refused edit writes nothing');
    await call(c, 'edit', { path: 'bom.txt', old_string: '= 1', new_string: '= 2' });
    assert.deepEqual(readFileSync(join(c.cwd, 'bom.txt')), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('näme = 2\r\n', 'utf8')]));
    await call(c, 'edit', { path: 'u16.txt', old_string: 'wörld', new_string: 'world ✓' });
    assert.deepEqual(readFileSync(join(c.cwd, 'u16.txt')), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('hello\nworld ✓\n', 'utf16le')]));
    assert.equal(await call(c, 'grep', { pattern: 'caf.s' }), 'l1.txt:1: cafés');
    assert.equal(readFileSync(join(c.cwd, '.rift/.gitignore'), 'utf8'), '*\n', 'publication keeps rift state out of git');
  });

  it('glob and grep see what the workspace sees: a nested .gitignore re-include shows, the floor never does', async () => {
    const c = ctx({ '.gitignore': '*.log\n', 'sub/.gitignore': '!keep.log\n', 'sub/keep.log': 'needle\n', 'sub/drop.log': 'needle\n', 'top.log': 'needle\n', '.git/HEAD': 'needle\n', 'node_modules/m/i.js': 'needle\n' });
    assert.equal(await call(c, 'glob', { pattern: '**/*.log' }), 'sub/keep.log');
    assert.equal(await call(c, 'grep', { pattern: 'needle' }), 'sub/keep.log:1: needle');
    assert.equal(await call(c, 'glob', { pattern: '*.log', path: 'sub' }), 'keep.log');
    assert.doesNotMatch(await call(c, 'ls', {}), /\.git\//);
  });

  it('the file tools stay inside the workspace: outside paths, links out and .git are refused', async () => {
    const outside = tempDir('rift-outside-');
    dirs.push(outside);
    writeFileSync(join(outside, 'o.txt'), 'outside\n');
    const c = ctx({ 'in.txt': 'inside\n', 'secret/s.txt': 'hidden\n' }, ['Read(secret/**)']);
    symlinkSync(join(outside, 'o.txt'), join(c.cwd, 'out-link.txt'));
    symlinkSync(join(c.cwd, 'secret/s.txt'), join(c.cwd, 'in-link.txt'));
    assert.match(await fails(c, 'read', { path: join(outside, 'o.txt') }), /is outside the workspace/);
    assert.match(await fails(c, 'read', { path: 'out-link.txt' }), /is outside the workspace/);
    assert.match(await fails(c, 'write', { path: '../x.txt', content: 'x' }), /is outside the workspace/);
    assert.match(await fails(c, 'write', { path: '.git/config', content: 'x' }), /inside \.git or \.rift/);
    assert.match(await fails(c, 'read', { path: 'in-link.txt' }), /blocked by permission rule 'Read\(secret\/\*\*\)'/, 'a link is judged by the file it names');
    assert.equal(readFileSync(join(outside, 'o.txt'), 'utf8'), 'outside\n');
    assert.equal(existsSync(join(c.cwd, '..', 'x.txt')), false);
  });

  it('a file changed on disk while its edit waited for approval is not overwritten', async () => {
    const c = ctx({ 'race.txt': 'one\ntwo\n' });
    const racing = {
      ...c,
      approval: new Approval(true, new PermissionRules({ allow: [], ask: [], deny: [] }, c.cwd), c.cwd),
      gate: {
        interactive: true,
        ask: async () => {
          writeFileSync(join(c.cwd, 'race.txt'), 'someone else\n');
          return 'allow';
        },
      },
    };
    assert.match(await fails(racing, 'edit', { path: 'race.txt', old_string: 'two', new_string: 'TWO' }), /^race\.txt changed on disk since it was read \(now digest [0-9a-f]{8}\); read it again and redo the change$/);
    assert.equal(readFileSync(join(c.cwd, 'race.txt'), 'utf8'), 'someone else\n');
  });
});

describe('agent tools: bash', () => {
  it('reports stdout, stderr and the exit code; (no output) when silent', async () => {
    const c = ctx();
    assert.equal(await call(c, 'bash', { command: 'echo out; echo err >&2; exit 3' }), 'out\n\n--- stderr ---\nerr\n\n[exit code: 3]');
    assert.equal(await call(c, 'bash', { command: 'true' }), '(no output)');
    assert.equal(await call(c, 'bash', { command: "printf '\\033[31mred\\033[0m'" }), 'red');
  });

  it('kills the whole process group on timeout and says how to give it longer', async () => {
    const c = ctx();
    const started = Date.now();
    const out = await call(c, 'bash', { command: 'sleep 30 & sleep 30; echo never', timeout_secs: 1 });
    assert.ok(Date.now() - started < 5000);
    assert.match(out, /\[timed out after 1s; the whole process tree was killed\. If the command needs longer, retry with a larger timeout_secs/);
  });

  it('middle-truncates long output at 30,000 bytes', () => {
    const s = `HEAD${'x'.repeat(40_000)}TAIL`;
    const t = middleTruncate(s);
    assert.ok(t.startsWith('HEAD') && t.endsWith('TAIL'));
    assert.match(t, /\n\.\.\. \[output truncated: 30000 of 40008 bytes shown\] \.\.\.\n/);
  });

  it('runs background tasks with task events', async () => {
    const c = ctx();
    const out = await call(c, 'bash', { command: 'echo bg-done', run_in_background: true });
    assert.match(out, /^started background task #1 \(pid \d+\): echo bg-done/);
    const deadline = Date.now() + 5000;
    while (!c.events.some((e) => e.event === 'task_finished') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(c.events, [
      { event: 'task_started', id: 1, label: 'echo bg-done' },
      { event: 'task_finished', id: 1, label: 'echo bg-done', ok: true, preview: 'bg-done\n' },
    ]);
  });
});

describe('agent tools: ls, grep, glob, plan, ask_user', () => {
  it('respects .gitignore, hides dot entries and denied paths, bounds results', async () => {
    const c = ctx({ '.gitignore': 'build/\n*.log\n', 'src/a.ts': 'const needle = 1;\n', 'src/b.ts': 'other\n', 'build/x.ts': 'needle\n', 'app.log': 'needle\n', '.hidden/y.ts': 'needle\n', 'secret/s.ts': 'needle\n' }, ['Read(secret/**)']);
    assert.equal(await call(c, 'ls', {}), '.gitignore\n.hidden/\napp.log\nbuild/\nsrc/');
    assert.equal(await call(c, 'grep', { pattern: 'needle' }), 'src/a.ts:1: const needle = 1;');
    assert.equal(await call(c, 'glob', { pattern: '*.ts' }), 'src/a.ts\nsrc/b.ts');
    assert.equal(await call(c, 'glob', { pattern: 'src/{a,b}.ts' }), 'src/a.ts\nsrc/b.ts');
    assert.equal(await call(c, 'glob', { pattern: '*.py' }), 'no files matched');
    assert.equal(await call(c, 'grep', { pattern: 'absent' }), 'no matches');
    assert.match(await fails(c, 'grep', { pattern: '(' }), /not a valid regular expression/);
    assert.match(await fails(c, 'ls', { path: 'secret' }), /blocked by permission rule/);
  });

  it('glob: * crosses /, yet a*/b needs the slash; [!x] negates', async () => {
    const c = ctx({ 'ab': '', 'ax/b': '', 'a/x/b': '', 'bx/b': '' });
    assert.equal(await call(c, 'glob', { pattern: 'a*/b' }), 'a/x/b\nax/b');
    assert.equal(await call(c, 'glob', { pattern: '[!a]*/b' }), 'bx/b');
    assert.match(await fails(c, 'glob', { pattern: 'src/{a,b' }), /not a valid glob/);
  });

  it('stripAnsi removes OSC hyperlinks and titles, CSI, charset and DCS sequences', () => {
    assert.equal(stripAnsi('see \x1b]8;;https://example.com\x1b\\the docs\x1b]8;;\x1b\\ now'), 'see the docs now');
    assert.equal(stripAnsi('\x1b]0;build\x07ok'), 'ok');
    assert.equal(stripAnsi('\x1b[1;31merror\x1b[0m: \x1b[2Kx'), 'error: x');
    assert.equal(stripAnsi('\x1b(Bplain\x1bP1;2q\x1b\\'), 'plain');
    assert.equal(stripAnsi('\u009b31mcsi'), 'csi');
  });

  it('task lists, shows and kills background tasks', async () => {
    const c = ctx();
    assert.equal(await call(c, 'task', {}), 'no background tasks');
    await call(c, 'bash', { command: 'echo started; sleep 30', run_in_background: true });
    const deadline = Date.now() + 5000;
    while (!(await call(c, 'task', { id: 1 })).includes('\nstarted') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(await call(c, 'task', { id: 1 }), 'task #1 running: echo started; sleep 30\nstarted\n');
    assert.equal(await call(c, 'task', { id: 1, kill: true }), 'killed task #1');
    assert.match(await fails(c, 'task', { id: 9 }), /there is no task #9/);
    while (!(await call(c, 'task', {})).includes('killed') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(await call(c, 'task', {}), '#1 killed: echo started; sleep 30');
    assert.ok(!c.events.some((e) => e.event === 'task_finished'), 'a kill is silent');
  });

  it('plan keeps a checklist; ask_user headless answers by best judgment', async () => {
    const c = ctx();
    assert.equal(await call(c, 'plan', { set: ['read', 'fix'] }), 'Current plan:\n[ ] 1. read\n[ ] 2. fix\n');
    assert.equal(await call(c, 'plan', { done: 2 }), 'Current plan:\n[ ] 1. read\n[x] 2. fix\n');
    assert.match(await fails(c, 'plan', { done: 5 }), /the plan has 2 step/);
    assert.match(await call(c, 'ask_user', { question: 'which?' }), /best judgment/);
    const asking = { ...c, canAskUser: true, gate: { interactive: true, ask: async () => 'the blue one' } };
    assert.equal(await call(asking, 'ask_user', { question: 'which?', choices: ['blue', 'red'] }), 'User answered: the blue one');
    const dropped = { ...c, canAskUser: true, gate: { interactive: true, ask: async () => null } };
    assert.equal(await call(dropped, 'ask_user', { question: 'which?' }), '[the user dismissed the question without answering; proceed on your best judgment]');
  });
});

describe('agent tools: code tools through the services', () => {
  it('get_symbol and search appear only with their services and answer from the index', async () => {
    assert.equal(ToolRegistry.standard().get('get_symbol'), undefined);
    const c = ctx({ 'src/calc.ts': 'export function add(a: number, b: number): number {\n  return a + b;\n}\n' });
    const engine = await Engine.open(c.cwd, { watch: false });
    try {
      await engine.build();
      const reg = ToolRegistry.standard({ read: engine.read });
      assert.ok(reg.names().includes('get_symbol'));
      const out = await reg.get('get_symbol')!.run({ name: 'add' }, { ...c, code: { read: engine.read } });
      assert.match(out, /^src\/calc\.ts:1 function add \(rift:\/\/symbol\/typescript\/src\/calc\.ts\/add\)\nexport function add/);
      assert.match(await reg.get('get_symbol')!.run({ name: 'nothing_here' }, { ...c, code: { read: engine.read } }), /no declaration named 'nothing_here'/);
      const withSearch = ToolRegistry.standard({ read: engine.read, search: engine.search });
      assert.equal(withSearch.resolve('search'), 'search', 'a real search tool shadows the grep alias');
      const hits = await withSearch.get('search')!.run({ query: 'add' }, { ...c, code: { search: engine.search } });
      assert.match(hits, /^src\/calc\.ts:1: function add — export function add/m);
    } finally {
      await engine.close();
    }
  });
});

describe('agent tools: read outlines large source files', () => {
  it('returns an outline with line numbers when a large source file is read whole', async () => {
    const { initSyntax } = await import('../../../src/syntax/runtime.ts');
    await initSyntax();
    const body = Array.from({ length: 120 }, (_, i) => `export function f${i}(x: number): number {\n  const y = x + ${i};\n  return y;\n}\n`).join('\n');
    const c = ctx({ 'big.ts': body });
    const out = await call(c, 'read', { path: 'big.ts' });
    assert.match(out, /^big\.ts has 599 lines — showing its outline \(line numbers on the left\)\. Re-read with offset\/limit for the exact ranges you need\.\n {4}1\texport function f0\(x: number\): number \{\n {4}6\texport function f1/);
    assert.match(await call(c, 'read', { path: 'big.ts', offset: 2, limit: 1 }), /^ {4}2\t {2}const y = x \+ 0;\n/);
  });
});

describe('agent tools: edit_diff and binary files (A.10, B.2)', () => {
  it('write and edit leave an 80-line edit_diff whose counts are the shown + and - entries', async () => {
    const c = ctx({ 'a.txt': Array.from({ length: 100 }, (_, i) => `o${i}\n`).join('') });
    await call(c, 'write', { path: 'a.txt', content: Array.from({ length: 100 }, (_, i) => `n${i}\n`).join('') });
    assert.equal(c.lastDiff!.path, join(c.cwd, 'a.txt'));
    assert.equal(c.lastDiff!.diff.length, 81);
    assert.equal(c.lastDiff!.diff[80], '… [120 more diff lines]');
    assert.deepEqual([c.lastDiff!.added, c.lastDiff!.removed], [0, 80]);
    await call(c, 'edit', { path: 'a.txt', old_string: 'n5\n', new_string: 'five\nsix\n' });
    assert.deepEqual(c.lastDiff, { path: join(c.cwd, 'a.txt'), diff: ['@@ line 6 @@', '-n5', '+five', '+six'], added: 2, removed: 1 });
  });

  it('a write over a binary prior leaves no edit_diff; grep skips files with a NUL in the first 8 KB', async () => {
    const c = ctx({ 'bin.dat': Buffer.from('needle\0rest\n'), 'late.txt': `${'x'.repeat(9000)}\0\nneedle\n`, 'a.txt': 'needle\n' });
    assert.equal(await call(c, 'grep', { pattern: 'needle' }), 'a.txt:1: needle\nlate.txt:2: needle');
    await call(c, 'write', { path: 'bin.dat', content: 'text\n' });
    assert.equal(c.lastDiff, undefined);
    assert.equal(readFileSync(join(c.cwd, 'bin.dat'), 'utf8'), 'text\n');
  });
});

describe('agent recovery helpers', () => {
  it('recovery is all or nothing and only for registered names', () => {
    const r = { names: ['read'], known: (n: string) => n === 'read' || n === 'read_file', paramType: () => undefined };
    assert.equal(recoverTextualToolCalls('[{"name":"read","arguments":{}},{"name":"nope","arguments":{}}]', r), null);
    assert.equal(recoverTextualToolCalls('{"name":"read"}', r), null);
    assert.deepEqual(recoverTextualToolCalls('<function=read_file><parameter=path>a</parameter></function>', r), [{ function: { index: 0, name: 'read_file', arguments: { path: 'a' } } }]);
    assert.equal(recoverTextualToolCalls('I will call <function=read><parameter=path>a</parameter></function>', r), null);
  });
});

describe('plugin tools', () => {
  it('run sh -c with the arguments as JSON on stdin; a failure names the tool, status and stderr', async () => {
    const c = ctx();
    const echo = pluginTool({ name: 'echo_args', description: 'Echo', command: 'cat', parameters: {} }, 'demo');
    assert.equal(echo.description, 'Echo (plugin: demo)');
    assert.equal(await echo.run({ id: '7' }, c), '{"id":"7"}');
    const quiet = pluginTool({ name: 'quiet', description: '', command: 'true', parameters: {} }, 'demo');
    assert.equal(await quiet.run({}, c), '(no output)');
    const bad = pluginTool({ name: 'bad', description: '', command: 'echo out; echo oops >&2; exit 3', parameters: {} }, 'demo');
    await assert.rejects(bad.run({}, c), (e: Error) => e instanceof ToolError && e.message === "plugin tool 'bad' failed (3): oops");
  });
});
