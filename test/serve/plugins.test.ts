import { describe, it, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ollamaReply } from '../support/model-server.ts';
import { useModelServer } from '../support/agent-harness.ts';
import { ServeClient } from './client.ts';

const MANIFEST = {
  name: 'demo',
  description: 'demo helpers',
  commands: [{ name: 'standup', description: 'summarize recent work', prompt: 'Summarize the log. Focus: {args}' }],
  tools: [{ name: 'echo_args', description: 'Echo the arguments', command: 'cat', parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } }],
};

describe('rift --serve plugins', () => {
  const { server, workspace, killAtEnd } = useModelServer({ clearBeforeEach: true });
  let cwd: string;
  let home: string;
  const open = () => {
    const c = new ServeClient(['--host', server.url, '--model', 'test-model', '--no-index'], cwd, home);
    killAtEnd(c.child);
    return c;
  };
  beforeEach(() => {
    ({ cwd, home } = workspace('rift-serve-plugin-'));
    mkdirSync(join(cwd, '.rift', 'plugins', 'demo'), { recursive: true });
    writeFileSync(join(cwd, '.rift', 'plugins', 'demo', 'plugin.json'), JSON.stringify(MANIFEST, null, 2));
  });

  it('offers an untrusted project plugin at the first hello; trust registers its tools live and persists', async () => {
    server.script(ollamaReply({ toolCalls: [{ name: 'echo_args', arguments: { id: '7' } }] }), ollamaReply({ content: 'ok' }), ollamaReply({ content: 'summary' }));
    const c = open();
    const ready = await c.event('ready');
    assert.deepEqual(ready.skills, [{ name: 'standup', description: 'summarize recent work' }]);
    await c.event('context');
    c.send({ cmd: 'hello', edit_review: false });
    const ask = await c.event('ask');
    assert.deepEqual(ask, {
      event: 'ask',
      id: 1,
      question: "Project plugin 'demo' declares 1 tool(s) — each runs a command from this repo when the model calls it. Trust this manifest on this machine?",
      detail: ['echo_args: Echo the arguments — `cat`'],
      choices: ['trust', 'skip'],
    });
    c.send({ cmd: 'hello', edit_review: false });
    c.send({ cmd: 'answer', id: 1, text: ' Trust ' });
    const info = await c.event('info');
    assert.equal(info.text, "plugin 'demo' trusted — tools registered: echo_args");
    assert.equal(c.events.filter((e) => e.event === 'ask').length, 1, 'offered once');
    const store = JSON.parse(readFileSync(join(home, 'trusted-hooks.json'), 'utf8'));
    assert.deepEqual(store, [`plugin:demo:${JSON.stringify(MANIFEST, null, 2)}`]);
    // The model's tool call runs `sh -c cat` with the arguments as JSON on stdin; ask ids keep counting.
    const from = c.events.length;
    c.send({ cmd: 'prompt', text: 'look up 7' });
    const bash = await c.waitFor((e) => e.event === 'tool_result' || e.event === 'ask', { from });
    assert.deepEqual(bash, { event: 'tool_result', name: 'echo_args', ok: true, preview: '{"id":"7"}' });
    await c.event('done', from);
    const turn = await c.turn('/skill:standup since monday');
    assert.equal(turn.at(-1)!.event, 'done');
    assert.match(server.chatRequests().at(-1)!.body.messages.at(-1).content, /--- SKILL: standup ---\nSummarize the log. Focus: since monday\n--- END SKILL ---\n\nTask: since monday$/);
    assert.equal(await c.close(), 0);
    assert.match(c.stderr, /plugin 'demo': tools not registered \(manifest not trusted yet\)/);

    const again = open();
    await again.event('context');
    again.send({ cmd: 'hello', edit_review: true });
    await again.event('capabilities');
    again.send({ cmd: 'list_sessions' });
    await again.event('sessions');
    assert.ok(!again.events.some((e) => e.event === 'ask'), 'trusted manifests are not asked again');
    assert.equal(await again.close(), 0);
  });

  it('with auto-approve on, the trust ask becomes an info line; skipping leaves the tools unregistered', async () => {
    const c = open();
    await c.event('context');
    c.send({ cmd: 'hello', edit_review: true, approve: false });
    const info = await c.event('info');
    assert.match(info.text, /^project plugin 'demo' left untrusted — its 1 tool\(s\) stay unregistered while auto-approve is on/);
    assert.equal(await c.close(), 0);

    server.script(ollamaReply({ content: 'hi' }));
    const d = open();
    await d.event('context');
    d.send({ cmd: 'prompt', text: 'hello' });
    const ask = await d.event('ask');
    assert.deepEqual(ask.choices, ['trust', 'skip']);
    d.send({ cmd: 'answer', id: ask.id, text: 'skip' });
    await d.event('done');
    const tools = server.chatRequests().at(-1)!.body.tools.map((t: { function: { name: string } }) => t.function.name);
    assert.ok(!tools.includes('echo_args'));
    assert.ok(tools.includes('skill'));
    assert.equal(await d.close(), 0);
    rmSync(cwd, { recursive: true, force: true });
  });

  it("trusting a project plugin activates its post_edit hooks live and adds each command to trusted-hooks.json", async () => {
    const hook = 'echo checked >> hook.log';
    const manifest = { ...MANIFEST, hooks: { post_edit: [hook] } };
    const text = JSON.stringify(manifest, null, 2);
    writeFileSync(join(cwd, '.rift', 'plugins', 'demo', 'plugin.json'), text);
    const write = (content: string) => ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'a.txt', content } }] });
    server.script(write('one\n'), ollamaReply({ content: 'ok' }), write('two\n'), ollamaReply({ content: 'ok' }), write('three\n'), ollamaReply({ content: 'ok' }));
    const c = open();
    await c.event('context');
    c.send({ cmd: 'hello', edit_review: false });
    const ask = await c.event('ask');
    assert.deepEqual(ask.detail, ['echo_args: Echo the arguments — `cat`', `post_edit hook — \`${hook}\``], 'the question shows every command trusting runs');
    c.send({ cmd: 'set_approval', approve: false });
    await c.event('approval_changed');
    const before = await c.turn('write one');
    assert.ok(before.some((e) => e.event === 'tool_result' && e.name === 'write' && e.ok));
    assert.ok(!before.some((e) => e.event === 'info'), 'an untrusted plugin hook does not run');
    assert.ok(!existsSync(join(cwd, 'hook.log')));
    c.send({ cmd: 'answer', id: ask.id, text: 'trust' });
    await c.waitFor((e) => e.event === 'info' && e.text === `plugin 'demo' trusted — tools registered: echo_args; post-edit hooks active: ${hook}`);
    assert.deepEqual(JSON.parse(readFileSync(join(home, 'trusted-hooks.json'), 'utf8')), [`plugin:demo:${text}`, hook]);
    const after = await c.turn('write two');
    const kinds = after.map((e) => (e.event === 'info' ? e.text : e.event));
    assert.deepEqual(kinds.slice(kinds.indexOf('tool_start'), kinds.indexOf('tool_result') + 1), ['tool_start', `hook ✓ ${hook}`, 'tool_result']);
    assert.equal(readFileSync(join(cwd, 'hook.log'), 'utf8'), 'checked\n');
    assert.equal(await c.close(), 0);
    assert.match(c.stderr, /plugin 'demo': post_edit hook skipped \(manifest not trusted yet\): echo checked >> hook\.log/);

    // The next session starts with the plugin trusted: its hook runs without a question.
    const again = open();
    await again.event('context');
    again.send({ cmd: 'set_approval', approve: false });
    await again.event('approval_changed');
    const turn = await again.turn('write three');
    assert.deepEqual(turn.filter((e) => e.event === 'info').map((e) => e.text), [`hook ✓ ${hook}`]);
    assert.ok(!again.events.some((e) => e.event === 'ask'));
    assert.equal(readFileSync(join(cwd, 'hook.log'), 'utf8'), 'checked\nchecked\n');
    assert.equal(await again.close(), 0);
    assert.doesNotMatch(again.stderr, /post_edit hook skipped/);
    rmSync(cwd, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  });

  it('a project plugin with post-edit hooks and no tools is offered for trust too; with approval off it stays inactive', async () => {
    const hook = 'echo linted >> lint.log';
    const text = JSON.stringify({ name: 'lint', hooks: { post_edit: [hook] } });
    rmSync(join(cwd, '.rift', 'plugins', 'demo'), { recursive: true });
    mkdirSync(join(cwd, '.rift', 'plugins', 'lint'), { recursive: true });
    writeFileSync(join(cwd, '.rift', 'plugins', 'lint', 'plugin.json'), text);
    server.script(ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'x.txt', content: 'x\n' } }] }), ollamaReply({ content: 'ok' }));

    const off = open();
    await off.event('context');
    off.send({ cmd: 'hello', edit_review: false, approve: false });
    const info = await off.event('info');
    assert.equal(info.text, "project plugin 'lint' left untrusted — its 1 post-edit hook(s) stay inactive while auto-approve is on (trusting a repo's commands is a separate decision from approving the agent's edits). Turn approval back on to be asked.");
    assert.equal(await off.close(), 0);

    const c = open();
    await c.event('context');
    c.send({ cmd: 'hello', edit_review: false });
    const ask = await c.event('ask');
    assert.deepEqual(ask, {
      event: 'ask',
      id: 1,
      question: "Project plugin 'lint' declares 1 post-edit hook(s) — each runs a command from this repo after every edit. Trust this manifest on this machine?",
      detail: [`post_edit hook — \`${hook}\``],
      choices: ['trust', 'skip'],
    });
    c.send({ cmd: 'answer', id: 1, text: 'y' });
    await c.waitFor((e) => e.event === 'info' && e.text === `plugin 'lint' trusted — post-edit hooks active: ${hook}`);
    assert.deepEqual(JSON.parse(readFileSync(join(home, 'trusted-hooks.json'), 'utf8')), [`plugin:lint:${text}`, hook]);
    c.send({ cmd: 'set_approval', approve: false });
    const turn = await c.turn('write x');
    assert.deepEqual(turn.filter((e) => e.event === 'info').map((e) => e.text), [`hook ✓ ${hook}`]);
    assert.equal(readFileSync(join(cwd, 'lint.log'), 'utf8'), 'linted\n');
    assert.equal(await c.close(), 0);
  });

  it("a sub-agent's edit runs the session's hooks: the user's and trusted project ones, with info lines on the wire", async () => {
    writeFileSync(join(home, 'config.json'), JSON.stringify({ hooks: { post_edit: ['echo user >> hooks.log'] }, permissions: { approve: false } }));
    writeFileSync(join(cwd, '.rift.json'), JSON.stringify({ hooks: { post_edit: ['echo trusted >> hooks.log', 'echo untrusted >> hooks.log'] } }));
    writeFileSync(join(home, 'trusted-hooks.json'), JSON.stringify(['echo trusted >> hooks.log']));
    server.script(
      ollamaReply({ toolCalls: [{ name: 'agent', arguments: { tasks: [{ description: 'writer', prompt: 'write b.txt' }] } }] }),
      ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'b.txt', content: 'from child\n' } }] }),
      ollamaReply({ content: 'Wrote it.' }),
      ollamaReply({ content: 'Done.' }),
    );
    const c = open();
    await c.event('context');
    const ev = await c.turn('delegate the write');
    const hooks = ev.filter((e) => e.event === 'info' && e.text.startsWith('hook '));
    assert.deepEqual(hooks, [
      { event: 'info', text: 'hook ✓ echo user >> hooks.log' },
      { event: 'info', text: 'hook ✓ echo trusted >> hooks.log' },
    ]);
    const i = ev.indexOf(hooks[0]);
    assert.ok(ev.findIndex((e) => e.event === 'subagent_started') < i && i < ev.findIndex((e) => e.event === 'subagent_finished'), 'emitted while the sub-agent runs');
    assert.equal(readFileSync(join(cwd, 'hooks.log'), 'utf8'), 'user\ntrusted\n');
    assert.equal(readFileSync(join(cwd, 'b.txt'), 'utf8'), 'from child\n');
    assert.equal(await c.close(), 0);
    assert.match(c.stderr, /project post_edit hook skipped \(not trusted\): echo untrusted >> hooks\.log — add the exact command to .*trusted-hooks\.json to run it/);
    rmSync(cwd, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  });
});
