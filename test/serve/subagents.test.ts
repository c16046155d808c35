import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { ScriptedModelServer, ollamaReply } from '../support/model-server.ts';
import { tempDir } from '../support/agent-harness.ts';
import { ServeClient } from './client.ts';

describe('rift --serve sub-agents', () => {
  let server: ScriptedModelServer;
  let cwd: string;
  let home: string;
  before(async () => {
    server = await ScriptedModelServer.start();
    cwd = tempDir('rift-serve-sub-');
    home = tempDir('rift-home-');
  });
  after(async () => {
    await server.close();
    rmSync(cwd, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  });

  it('the agent tool runs concurrent sub-agents with subagent_* events and returns their reports', async () => {
    server.script(
      ollamaReply({ toolCalls: [{ name: 'agent', arguments: { tasks: [{ description: 'look left', prompt: 'check a' }, { description: 'look right', prompt: 'check b' }] } }] }),
      ollamaReply({ content: 'same report' }),
      ollamaReply({ content: 'same report' }),
      ollamaReply({ content: 'All checked.' }),
    );
    const c = new ServeClient(['--host', server.url, '--model', 'test-model', '--no-index'], cwd, home);
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

  it('background bash reports task_started in the turn and task_finished between turns', async () => {
    server.script(
      ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: 'sleep 0.3; echo finished-ok', run_in_background: true } }] }),
      ollamaReply({ content: 'Started.' }),
    );
    const c = new ServeClient(['--host', server.url, '--model', 'test-model', '--no-index', '--approve=false'], cwd, home);
    await c.event('context');
    const ev = await c.turn('start it');
    assert.deepEqual(ev.find((e) => e.event === 'task_started'), { event: 'task_started', id: 1, label: 'sleep 0.3; echo finished-ok' });
    const fin = await c.event('task_finished');
    assert.deepEqual(fin, { event: 'task_finished', id: 1, label: 'sleep 0.3; echo finished-ok', ok: true, preview: 'finished-ok\n' });
    assert.ok(c.events.indexOf(fin) > c.events.findIndex((e) => e.event === 'done'));
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
    const c = new ServeClient(['--host', server.url, '--model', 'test-model', '--no-index'], cwd, home);
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
