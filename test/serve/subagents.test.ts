import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ollamaReply } from '../support/model-server.ts';
import { tempDir, useModelServer } from '../support/agent-harness.ts';
import { ServeClient } from './client.ts';

describe('rift --serve sub-agents', () => {
  const { server, workspace, killAtEnd } = useModelServer();
  let cwd: string;
  let home: string;
  before(() => ({ cwd, home } = workspace('rift-serve-sub-')));
  const open = (extra: string[] = [], dir = cwd, userHome = home) => {
    const c = new ServeClient(['--host', server.url, '--model', 'test-model', '--no-index', ...extra], dir, userHome);
    killAtEnd(c.child);
    return c;
  };

  it('the agent tool runs concurrent sub-agents with subagent_* events and returns their reports', async () => {
    server.script(
      ollamaReply({ toolCalls: [{ name: 'agent', arguments: { tasks: [{ description: 'look left', prompt: 'check a' }, { description: 'look right', prompt: 'check b' }] } }] }),
      ollamaReply({ content: 'same report' }),
      ollamaReply({ content: 'same report' }),
      ollamaReply({ content: 'All checked.' }),
    );
    const c = open();
    await c.event('context');
    const ev = await c.turn('check both');
    const started = ev.filter((e) => e.event === 'subagent_started');
    assert.deepEqual(started.map((e) => e.tag).sort(), ['agent 1', 'agent 2']);
    assert.deepEqual(started.find((e) => e.tag === 'agent 1'), { event: 'subagent_started', tag: 'agent 1', model: 'test-model', label: 'look left' });
    const finished = ev.filter((e) => e.event === 'subagent_finished');
    assert.deepEqual(finished.map((e) => e.steps), [1, 1]);
    const result = ev.find((e) => e.event === 'tool_result')!;
    assert.equal(result.name, 'agent');
    assert.equal(result.ok, true);
    assert.equal(result.preview, '### agent 1 — look left same report  ### agent 2 — look right same report');
    assert.ok(ev.findIndex((e) => e.event === 'subagent_finished') < ev.indexOf(result));
    const childTools = server.chatRequests()[1].body.tools.map((t: { function: { name: string } }) => t.function.name);
    assert.ok(!childTools.includes('agent'), 'no recursion');
    assert.ok(server.chatRequests()[0].body.tools.some((t: { function: { name: string } }) => t.function.name === 'agent'));
    assert.equal(await c.close(), 0);
  });

  it('personas and model roles: listed in the system prompt; persona body, tool whitelist and model (task > persona > session) reach the child', async () => {
    server.models.set('small-model', { capabilities: ['completion', 'tools'], contextLength: 8192 });
    const dir = tempDir('rift-serve-persona-');
    const userHome = tempDir('rift-home-');
    mkdirSync(join(dir, '.rift', 'agents'), { recursive: true });
    writeFileSync(join(dir, '.rift', 'agents', 'reviewer.md'), '---\nname: reviewer\ndescription: Reviews code for bugs\nmodel: fast\ntools: read, grep\n---\nYou review code. Report bugs only.\n');
    writeFileSync(join(userHome, 'config.json'), JSON.stringify({ models: { fast: 'small-model' } }));
    const isChild = (b: { messages: Array<{ content: string }> }) => b.messages[0].content.includes('You are a sub-agent');
    server.script(
      { ...ollamaReply({ toolCalls: [{ name: 'agent', arguments: { tasks: [{ description: 'quick', prompt: 'review a', agent: 'reviewer' }, { description: 'thorough', prompt: 'review b', agent: 'reviewer', model: 'test-model' }] } }] }), when: (b) => !isChild(b) },
      { ...ollamaReply({ content: 'fast report' }), when: (b) => isChild(b) && b.model === 'small-model' },
      { ...ollamaReply({ content: 'slow report' }), when: (b) => isChild(b) && b.model === 'test-model' },
      { ...ollamaReply({ toolCalls: [{ name: 'agent', arguments: { tasks: [{ description: 'x', prompt: 'y', agent: 'nobody' }] } }] }), when: (b) => !isChild(b) },
      { ...ollamaReply({ content: 'Reviewed.' }), when: (b) => !isChild(b) },
    );
    try {
      const c = open([], dir, userHome);
      await c.event('context');
      const before = server.chatRequests().length;
      const ev = await c.turn('review both');
      const reqs = server.chatRequests().slice(before);
      const system = reqs[0].body.messages[0].content as string;
      assert.match(system, /\n\n## Model roles\n.*\n- fast: small-model\n\n## Personas\n.*\n- reviewer: Reviews code for bugs$/);
      const agentTool = reqs[0].body.tools.find((t: { function: { name: string } }) => t.function.name === 'agent');
      assert.equal(agentTool.function.parameters.properties.tasks.items.properties.agent.description, 'persona: reviewer');
      const quick = reqs.find((r) => isChild(r.body) && r.body.model === 'small-model')!;
      const thorough = reqs.find((r) => isChild(r.body) && r.body.model === 'test-model')!;
      for (const r of [quick, thorough]) {
        assert.deepEqual(r.body.tools.map((t: { function: { name: string } }) => t.function.name).sort(), ['grep', 'read']);
        assert.match(r.body.messages[0].content, /\n\n\[persona: reviewer\]\nYou review code\. Report bugs only\.\n\nYou are a sub-agent handling ONE delegated task/);
      }
      assert.equal('think' in quick.body, false, 'a different model gets the server default');
      assert.equal(thorough.body.think, reqs[0].body.think);
      assert.deepEqual(ev.filter((e) => e.event === 'subagent_started').map((e) => `${e.tag}:${e.model}`).sort(), ['agent 1:small-model', 'agent 2:test-model']);
      const results = ev.filter((e) => e.event === 'tool_result');
      assert.equal(results[0].preview, '### agent 1 — quick fast report  ### agent 2 — thorough slow report');
      assert.equal(results[1].ok, false);
      assert.match(results[1].preview, /unknown persona 'nobody'; available: reviewer/);
      assert.equal(ev.filter((e) => e.event === 'subagent_started').length, 2, 'a bad task list starts nothing');
      assert.equal(await c.close(), 0);
    } finally {
      server.models.delete('small-model');
      rmSync(dir, { recursive: true, force: true });
      rmSync(userHome, { recursive: true, force: true });
    }
  });

  it("a sub-agent's approval questions use the session's channel, and what it allows for the session holds for the parent", async () => {
    server.script(
      ollamaReply({ toolCalls: [{ name: 'agent', arguments: { description: 'echo', prompt: 'say hi' } }] }),
      ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: 'echo from-child' } }] }),
      ollamaReply({ content: 'said it' }),
      ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: 'echo from-parent' } }] }),
      ollamaReply({ content: 'both ran' }),
    );
    const c = open();
    await c.event('context');
    const from = c.events.length;
    c.send({ cmd: 'prompt', text: 'delegate' });
    const ask = await c.event('ask', from);
    assert.equal(ask.question, 'Allow bash: echo from-child');
    assert.ok(c.since(from).some((e) => e.event === 'subagent_started'), 'asked from inside the sub-agent');
    c.send({ cmd: 'answer', id: ask.id, text: 'allow all bash this session' });
    const done = await c.event('done', from);
    const turn = c.since(from).slice(0, c.events.indexOf(done) - from + 1);
    assert.equal(turn.filter((e) => e.event === 'ask').length, 1, 'the parent was not asked again');
    assert.deepEqual(turn.filter((e) => e.event === 'subagent').map((e) => e.text), ['→ bash {"command":"echo from-child"}', '✓ bash']);
    const results = turn.filter((e) => e.event === 'tool_result').map((e) => `${e.name}:${e.ok}`);
    assert.deepEqual(results, ['agent:true', 'bash:true']);
    assert.equal(await c.close(), 0);
  });

  it('background bash reports task_started in the turn and task_finished between turns', async () => {
    server.script(
      ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: 'sleep 0.3; echo finished-ok', run_in_background: true } }] }),
      ollamaReply({ content: 'Started.' }),
    );
    const c = open(['--approve=false']);
    await c.event('context');
    const ev = await c.turn('start it');
    assert.deepEqual(ev.find((e) => e.event === 'task_started'), { event: 'task_started', id: 1, label: 'sleep 0.3; echo finished-ok' });
    const fin = await c.event('task_finished');
    assert.deepEqual(fin, { event: 'task_finished', id: 1, label: 'sleep 0.3; echo finished-ok', ok: true, preview: 'finished-ok\n' });
    assert.ok(c.events.indexOf(fin) > c.events.findIndex((e) => e.event === 'done'));
    assert.equal(await c.close(), 0);
  });

  it('sub-agents share the session task registry: ids continue, the 8-task cap counts every agent, reports reach the wire', async () => {
    const sleeper = (i: number) => ({ name: 'bash', arguments: { command: `sleep 30 # ${i}`, run_in_background: true } });
    server.script(
      ollamaReply({ toolCalls: [1, 2, 3, 4, 5, 6, 7].map(sleeper) }),
      ollamaReply({ toolCalls: [{ name: 'agent', arguments: { tasks: [{ description: 'helper', prompt: 'start two' }] } }] }),
      ollamaReply({
        toolCalls: [
          { name: 'bash', arguments: { command: 'sleep 0.2; echo child-done', run_in_background: true } },
          { name: 'bash', arguments: { command: 'echo ninth', run_in_background: true } },
        ],
      }),
      ollamaReply({ content: 'one started, one refused' }),
      ollamaReply({ content: 'Noted.' }),
    );
    const c = open(['--approve=false']);
    await c.event('context');
    const before = server.chatRequests().length;
    const ev = await c.turn('fill the task slots');
    assert.deepEqual(ev.filter((e) => e.event === 'task_started').map((e) => e.id), [1, 2, 3, 4, 5, 6, 7, 8]);
    assert.equal(ev.find((e) => e.event === 'task_started' && e.id === 8)!.label, 'sleep 0.2; echo child-done');
    assert.deepEqual(ev.filter((e) => e.event === 'subagent' && e.text.startsWith('✗')).map((e) => e.text), ['✗ bash']);
    const childSecond = server.chatRequests()[before + 3].body.messages as Array<{ role: string; content: string }>;
    const refused = childSecond.filter((m) => m.role === 'tool').map((m) => m.content)[1];
    assert.match(refused, /at most 8 background tasks run at once/);
    // The child's task outlives the child and reports through the session's channel.
    const fin = await c.event('task_finished');
    assert.deepEqual(fin, { event: 'task_finished', id: 8, label: 'sleep 0.2; echo child-done', ok: true, preview: 'child-done\n' });
    assert.equal(await c.close(), 0);
    assert.match(c.stderr, /killed 7 background task\(s\) still running at exit/);
  });

  it("a foreground sub-agent's edit is an edit_review on the session's channel", async () => {
    server.script(
      ollamaReply({ toolCalls: [{ name: 'agent', arguments: { description: 'writer', prompt: 'write fg.txt' } }] }),
      ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'fg.txt', content: 'from child\n' } }] }),
      ollamaReply({ content: 'Wrote it.' }),
      ollamaReply({ content: 'Done.' }),
    );
    const c = open();
    await c.event('context');
    await c.hello({ edit_review: true });
    const from = c.events.length;
    c.send({ cmd: 'prompt', text: 'delegate the write' });
    const review = await c.event('edit_review', from);
    assert.equal(review.path, join(cwd, 'fg.txt'));
    assert.deepEqual(review.segments, [{ same: false, old: [], new: ['from child'] }, { same: true, lines: [''] }]);
    c.send({ cmd: 'edit_decision', id: review.id, apply: true });
    await c.event('done', from);
    assert.equal(readFileSync(join(cwd, 'fg.txt'), 'utf8'), 'from child\n');
    assert.equal(await c.close(), 0);
  });

  it("a background agent's edit is approved through an ask, which outlives the turn; the turn's reviews still all close", async () => {
    const child = (b: { messages: Array<{ content: string }> }) => b.messages[0].content.includes('You are a sub-agent');
    const parent = (b: { messages: Array<{ content: string }> }) => !child(b);
    server.script(
      { ...ollamaReply({ toolCalls: [{ name: 'agent', arguments: { background: true, tasks: [{ description: 'writer', prompt: 'write bg.txt' }] } }] }), when: parent },
      { ...ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'bg.txt', content: 'from child\n' } }] }), when: child },
      { ...ollamaReply({ content: 'Launched.' }), when: parent },
      { ...ollamaReply({ content: 'Wrote it.' }), when: child },
    );
    const c = open();
    await c.event('context');
    await c.hello({ edit_review: true });
    const from = c.events.length;
    c.send({ cmd: 'prompt', text: 'write it in the background' });
    const ask = await c.event('ask', from);
    await c.event('done', from);
    assert.equal(ask.question, `Allow write: ${join(cwd, 'bg.txt')} (11 bytes)`);
    assert.deepEqual(ask.detail, ['+from child']);
    c.send({ cmd: 'cancel' });
    c.send({ cmd: 'list_sessions' });
    await c.event('sessions', from);
    assert.ok(!c.since(from).some((e) => e.event === 'edit_review' || e.event === 'edit_review_closed'), 'no review was raised, so none closed');
    c.send({ cmd: 'answer', id: ask.id, text: 'allow' });
    const fin = await c.event('task_finished', from);
    assert.deepEqual(fin, { event: 'task_finished', id: 1, label: 'writer', ok: true, preview: 'Wrote it.' });
    assert.equal(readFileSync(join(cwd, 'bg.txt'), 'utf8'), 'from child\n');
    assert.equal(await c.close(), 0);
  });

  it('background agents run as tasks: task_started, subagent lines tagged task #<id>, task_finished with the report', async () => {
    server.script(
      ollamaReply({ toolCalls: [{ name: 'agent', arguments: { background: true, tasks: [{ description: 'survey', prompt: 'list files' }] } }] }),
      // Parent and child race for replies, so both get the same shape: one ls call, then text.
      ollamaReply({ toolCalls: [{ name: 'ls', arguments: {} }] }),
      ollamaReply({ toolCalls: [{ name: 'ls', arguments: {} }] }),
      ollamaReply({ content: 'Done.' }),
      ollamaReply({ content: 'Done.' }),
    );
    const c = open();
    await c.event('context');
    const from = c.events.length;
    c.send({ cmd: 'prompt', text: 'survey in the background' });
    const fin = await c.event('task_finished', from);
    await c.event('done', from);
    const ev = c.since(from);
    assert.deepEqual(ev.find((e) => e.event === 'task_started'), { event: 'task_started', id: 1, label: 'survey' });
    const result = ev.find((e) => e.event === 'tool_result' && e.name === 'agent')!;
    assert.match(result.preview, /^launched 1 background agent\(s\): #1 survey/);
    assert.equal(fin.id, 1);
    assert.equal(fin.label, 'survey');
    assert.deepEqual(fin, { event: 'task_finished', id: 1, label: 'survey', ok: true, preview: 'Done.' });
    assert.ok(ev.some((e) => e.event === 'subagent' && e.tag === 'task #1'), JSON.stringify(ev.map((e) => e.event)));
    assert.equal(await c.close(), 0);
  });
});
