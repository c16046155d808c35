import { describe, it, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAgentConfig } from '../../../src/agent/base/config.ts';
import type { Gate } from '../../../src/agent/policy/gate.ts';
import { HOOK_OUTPUT_CHARS_MAX, PostEditHooks, quote } from '../../../src/agent/policy/hooks.ts';
import type { ToolContext } from '../../../src/agent/tools/context.ts';
import { ToolRegistry } from '../../../src/agent/tools/registry.ts';
import { TrustStore } from '../../../src/agent/policy/trust.ts';
import type { AgentEvent } from '../../../src/agent/base/types.ts';
import { Engine } from '../../../src/services/engine.ts';
import { ollamaReply } from '../../support/model-server.ts';
import { tempDir, toolContext, toolError, useModelServer, type ToolContextOptions } from '../../support/agent-harness.ts';

// Post-edit hooks (reference B.13): run after each applied write/edit/replace_symbol/patch,
// a failure reported in the tool result, trust-gated when they come from the project.

const FAIL3 = "sh -c 'echo bad; exit 3'";
const APPLIED = (path: string) => `\nThe edit to ${path} is applied, but the checks above now fail — fix them before moving on.`;

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function ctx(hooks: PostEditHooks, o: Omit<ToolContextOptions, 'hooks'> = {}): ToolContext & { events: AgentEvent[] } {
  const c = toolContext({ ...o, hooks });
  dirs.push(c.cwd);
  return c;
}

const run = (c: ToolContext, name: string, args: Record<string, unknown>) => ToolRegistry.standard(c.code).get(name)!.run(args, c);

const info = (text: string): AgentEvent => ({ event: 'info', text });

describe('post-edit hooks: write and edit', () => {
  it('a passing hook emits info "hook ✓ <cmd>" and leaves the result unchanged; it sees the new bytes', async () => {
    const c = ctx(new PostEditHooks(['grep -q new a.txt']), { files: { 'a.txt': 'old\n' } });
    assert.equal(await run(c, 'write', { path: 'a.txt', content: 'new\n' }), `Wrote 4 bytes to ${join(c.cwd, 'a.txt')}`);
    assert.deepEqual(c.events, [info('hook ✓ grep -q new a.txt')]);
  });

  it('a failing hook appends the exact FAILED block and the "is applied" sentence; the edit stays applied', async () => {
    const c = ctx(new PostEditHooks(['true', FAIL3]), { files: { 'src/a.txt': 'one\ntwo\n' } });
    const text = await run(c, 'edit', { path: 'src/a.txt', old_string: 'two', new_string: 'three' });
    assert.equal(text, `Edited ${join(c.cwd, 'src/a.txt')} (1 replacement)\n\n[post-edit hook FAILED (exit 3): ${FAIL3}]\nbad${APPLIED('src/a.txt')}`);
    assert.deepEqual(c.events, [info('hook ✓ true'), info(`hook ✗ ${FAIL3}`)]);
    assert.equal(readFileSync(join(c.cwd, 'src/a.txt'), 'utf8'), 'one\nthree\n');
  });

  it('each failing hook gets its own block with stdout and stderr; the sentence comes once, after the last', async () => {
    const both = 'echo out; echo err >&2; exit 1';
    const c = ctx(new PostEditHooks([both, 'exit 2']));
    const text = await run(c, 'write', { path: 'n.txt', content: 'x' });
    assert.equal(
      text,
      `Wrote 1 bytes to ${join(c.cwd, 'n.txt')}\n\n[post-edit hook FAILED (exit 1): ${both}]\nout\nerr\n\n[post-edit hook FAILED (exit 2): exit 2]\n(no output)${APPLIED('n.txt')}`,
    );
  });

  it('quotes at most 4000 chars of output, the cut marked inside that budget', async () => {
    const c = ctx(new PostEditHooks(["head -c 9000 /dev/zero | tr '\\0' x; exit 1"]));
    const text = await run(c, 'write', { path: 'n.txt', content: 'x' });
    const quoted = text.slice(text.indexOf(']\n') + 2, text.indexOf('\nThe edit to n.txt'));
    assert.equal(quoted.length, HOOK_OUTPUT_CHARS_MAX);
    assert.match(quoted, /^x{3000,}\n\[hook output truncated at 4000 chars\]$/);
    assert.equal(quote('y'.repeat(4000)), 'y'.repeat(4000), 'exactly at the cap: nothing cut');
    assert.equal(quote('\x1b[31mred\x1b[0m\n\n'), 'red', 'colours stripped, trailing blank lines trimmed');
  });

  it('no hook runs after a failed, rule-denied or user-denied edit', async () => {
    const hooks = new PostEditHooks(['touch ran']);
    const miss = ctx(hooks, { files: { 'a.txt': 'one\n' } });
    assert.match(await toolError(run(miss, 'edit', { path: 'a.txt', old_string: 'zzz', new_string: 'y' })), /^old_string not found in a\.txt/);
    const ruled = ctx(hooks, { files: { 'a.txt': 'one\n' }, deny: ['Edit(a.txt)'] });
    assert.equal(await toolError(run(ruled, 'write', { path: 'a.txt', content: 'two\n' })), "this write was blocked by permission rule 'Edit(a.txt)'");
    const refuse: Gate = { interactive: true, ask: async () => 'deny' };
    const user = ctx(hooks, { files: { 'a.txt': 'one\n' }, approve: true, gate: refuse });
    assert.match(await toolError(run(user, 'edit', { path: 'a.txt', old_string: 'one', new_string: 'two' })), /^the user DENIED this edit action/);
    for (const c of [miss, ruled, user]) {
      assert.deepEqual(c.events, []);
      assert.ok(!existsSync(join(c.cwd, 'ran')));
      assert.equal(readFileSync(join(c.cwd, 'a.txt'), 'utf8'), 'one\n');
    }
  });

  it('a hook past its timeout is killed with its process tree and reported as exit timeout', async () => {
    const slow = 'echo started; sleep 5; echo late';
    const c = ctx(new PostEditHooks([slow], 300));
    const t0 = Date.now();
    const text = await run(c, 'write', { path: 'n.txt', content: 'x' });
    assert.ok(Date.now() - t0 < 3000, 'sh and its sleep both died at the timeout');
    assert.ok(text.endsWith(`\n\n[post-edit hook FAILED (exit timeout): ${slow}]\nstarted\n[killed after 0.3s with its whole process tree]${APPLIED('n.txt')}`), text);
    assert.deepEqual(c.events, [info(`hook ✗ ${slow}`)]);
  });

  it('cancel kills the running hook and ends the call; the edit stays applied', async () => {
    const ctl = new AbortController();
    const c = ctx(new PostEditHooks(['sleep 5', 'touch second']), { signal: ctl.signal });
    const t0 = Date.now();
    setTimeout(() => ctl.abort(), 200);
    assert.equal(await toolError(run(c, 'write', { path: 'n.txt', content: 'kept' })), 'cancelled by user');
    assert.ok(Date.now() - t0 < 3000);
    assert.equal(readFileSync(join(c.cwd, 'n.txt'), 'utf8'), 'kept');
    assert.ok(!existsSync(join(c.cwd, 'second')), 'later hooks do not start');
    assert.deepEqual(c.events, []);
  });

  it('a command added to the live list reaches the next edit; duplicates run once', async () => {
    const hooks = new PostEditHooks(['echo a >> log', 'echo a >> log']);
    const c = ctx(hooks);
    await run(c, 'write', { path: 'n.txt', content: '1' });
    hooks.add('echo b >> log');
    hooks.add('echo a >> log');
    await run(c, 'write', { path: 'n.txt', content: '2' });
    assert.equal(readFileSync(join(c.cwd, 'log'), 'utf8'), 'a\na\nb\n');
    assert.deepEqual(hooks.commands, ['echo a >> log', 'echo b >> log']);
  });
});

describe('post-edit hooks: replace_symbol and patch', () => {
  let engine: Engine | undefined;
  afterEach(async () => {
    await engine?.close();
    engine = undefined;
  });

  it('run once the change applied, naming the changed files; refused and unchanged changes run none', async () => {
    const cwd = tempDir();
    mkdirSync(join(cwd, 'src'));
    writeFileSync(join(cwd, 'src/a.ts'), 'export const a = 1;\n');
    writeFileSync(join(cwd, 'src/b.ts'), 'export function b(): number {\n  return 1;\n}\n');
    engine = await Engine.open(cwd, { watch: false });
    await engine.build();
    const c = ctx(new PostEditHooks([FAIL3]), { cwd, code: { read: engine.read, search: engine.search, change: engine.change } });

    const diff = '--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1 @@\n-export const a = 1;\n+export const a = 2;\n';
    const patched = await run(c, 'patch', { patch: diff });
    assert.match(patched, /^applied chg_\w+\n {2}src\/a\.ts modified \+1 -1\n\n\[post-edit hook FAILED \(exit 3\): sh -c 'echo bad; exit 3'\]\nbad\nThe edit to src\/a\.ts is applied/);
    assert.ok(patched.endsWith(APPLIED('src/a.ts')));
    assert.deepEqual(c.events, [info(`hook ✗ ${FAIL3}`)]);

    assert.match(await toolError(run(c, 'patch', { patch: diff })), /^patch refused/);
    const same = 'export function b(): number {\n  return 1;\n}';
    assert.match(await run(c, 'replace_symbol', { symbol: 'rift://symbol/typescript/src/b.ts/b', body: same }), /^unchanged: /);
    assert.equal(c.events.length, 1, 'no hook after a refusal or an unchanged result');

    const body = 'export function b(): number {\n  return 2;\n}';
    const replaced = await run(c, 'replace_symbol', { symbol: 'rift://symbol/typescript/src/b.ts/b', body });
    assert.ok(replaced.endsWith(APPLIED('src/b.ts')), replaced);
    assert.equal(c.events.length, 2);
  });
});

describe('post-edit hooks: config and trust', () => {
  it("the user's hooks always run; a project hook runs only when its exact command is in trusted-hooks.json, else it is skipped with a note", async () => {
    const home = tempDir('rift-home-');
    const cwd = tempDir();
    dirs.push(home);
    writeFileSync(join(home, 'config.json'), JSON.stringify({ hooks: { post_edit: ['echo user >> log'] } }));
    writeFileSync(join(cwd, '.rift.json'), JSON.stringify({ hooks: { post_edit: ['echo trusted >> log', 'echo untrusted >> log'] } }));
    writeFileSync(join(home, 'trusted-hooks.json'), JSON.stringify(['echo trusted >> log', 'plugin:x:{}']));
    const env = { RIFT_HOME: home };
    const { config } = loadAgentConfig(cwd, {}, env);
    assert.deepEqual(config.postEditHooks, { user: ['echo user >> log'], project: ['echo trusted >> log', 'echo untrusted >> log'] });
    const trust = TrustStore.user(env);
    assert.equal(trust.path, join(home, 'trusted-hooks.json'));
    const notes: string[] = [];
    const hooks = PostEditHooks.fromConfig(config, trust, (n) => notes.push(n));
    assert.deepEqual(notes, [`project post_edit hook skipped (not trusted): echo untrusted >> log — add the exact command to ${join(home, 'trusted-hooks.json')} to run it`]);
    const c = ctx(hooks, { cwd });
    await run(c, 'write', { path: 'n.txt', content: 'x' });
    assert.equal(readFileSync(join(cwd, 'log'), 'utf8'), 'user\ntrusted\n');
  });

  it('only non-blank strings under hooks.post_edit count as hooks', () => {
    const cwd = tempDir();
    const home = tempDir('rift-home-');
    dirs.push(cwd, home);
    writeFileSync(join(cwd, '.rift.json'), JSON.stringify({ hooks: { post_edit: ['make check', 3, '', '  ', null], pre_edit: ['x'] } }));
    writeFileSync(join(home, 'config.json'), JSON.stringify({ hooks: ['not an object'] }));
    assert.deepEqual(loadAgentConfig(cwd, {}, { RIFT_HOME: home }).config.postEditHooks, { user: [], project: ['make check'] });
  });
});

describe('post-edit hooks: through the agent loop', () => {
  const { server, harness } = useModelServer({ assertConsumed: true });

  it("the hook's info line comes between tool_start and tool_result, and the model reads the failure report", async () => {
    server.script(ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'a.txt', content: 'hi\n' } }] }), ollamaReply({ content: 'Will fix.' }));
    const h = harness({ hooks: new PostEditHooks([FAIL3]) });
    await h.run('create a.txt');
    assert.deepEqual(h.kinds(), ['iteration', 'tool_start', 'info', 'tool_result', 'edit_diff', 'iteration', 'content', 'done', 'context']);
    assert.equal(h.of('info')[0].text, `hook ✗ ${FAIL3}`);
    assert.equal(h.of('tool_result')[0].ok, true, 'the edit itself succeeded');
    const tool = server.chatRequests().at(-1)!.body.messages.at(-1);
    assert.equal(tool.content, `Wrote 3 bytes to ${join(h.cwd, 'a.txt')}\n\n[post-edit hook FAILED (exit 3): ${FAIL3}]\nbad${APPLIED('a.txt')}`);
  });
});
