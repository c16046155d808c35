import { describe, it, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RequestPermissionRequest, SessionUpdate } from '@agentclientprotocol/sdk';
import { ollamaReply } from '../support/model-server.ts';
import { pick, useAcp } from './client.ts';
import { schemaProblems } from './schema.ts';

// The ACP conformance suite: `rift acp` as a process, driven by the ACP SDK's client side the
// way an editor drives it, with the scripted model server standing in for the model. Each test
// ends by checking every message of its transcript, both ways, against the ACP JSON Schema.

type U = SessionUpdate;
const of = <K extends U['sessionUpdate']>(us: U[], kind: K) => us.filter((u) => u.sessionUpdate === kind) as Array<Extract<U, { sessionUpdate: K }>>;

describe('rift acp: conformance', () => {
  const { server, dirs, chats, open, done } = useAcp('rift-acp-', {
    'test-model': { capabilities: ['completion', 'tools'], contextLength: 32768 },
    'small-model': { capabilities: ['completion', 'tools'], contextLength: 8192 },
  });
  let cwd: string;
  let home: string;
  beforeEach(() => {
    ({ cwd, home } = dirs());
    mkdirSync(join(cwd, 'src'));
    writeFileSync(join(cwd, 'src', 'a.ts'), 'export const a = 1;\nexport const b = 2;\n');
  });

  it('the schema check itself: it passes a conforming exchange and names each message that does not conform', () => {
    const ok = [
      { from: 'client' as const, message: { jsonrpc: '2.0', id: 1, method: 'session/prompt', params: { sessionId: 's', prompt: [{ type: 'text', text: 'hi' }] } } },
      { from: 'agent' as const, message: { jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'hello' } } } } },
      { from: 'agent' as const, message: { jsonrpc: '2.0', id: 1, result: { stopReason: 'end_turn' } } },
    ];
    assert.deepEqual(schemaProblems(ok), []);
    const bad = [
      { from: 'client' as const, message: { jsonrpc: '2.0', id: 1, method: 'session/prompt', params: { sessionId: 's', prompt: [{ type: 'text', text: 'hi' }] } } },
      { from: 'agent' as const, message: { jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's', update: { sessionUpdate: 'agent_message', content: { type: 'text', text: 'x' } } } } },
      { from: 'agent' as const, message: { jsonrpc: '2.0', id: 2, method: 'session/request_permission', params: { sessionId: 's', toolCall: { toolCallId: 't' }, options: [{ optionId: 'a', name: 'A', kind: 'allow_sometimes' }] } } },
      { from: 'client' as const, message: { jsonrpc: '2.0', id: 2, result: { outcome: { outcome: 'picked' } } } },
      { from: 'agent' as const, message: { jsonrpc: '2.0', id: 1, result: { stopReason: 'done' } } },
      { from: 'agent' as const, message: { jsonrpc: '2.0', id: 9, result: {} } },
    ];
    const problems = schemaProblems(bad);
    assert.equal(problems.length, 5, problems.join('\n'));
    assert.match(problems[0], /^agent .*agent_message/);
    assert.match(problems[1], /^agent .*session\/request_permission.*PermissionOptionKind/);
    assert.match(problems[2], /^client .*picked/);
    assert.match(problems[3], /^agent .*"done"/);
    assert.match(problems[4], /a response to no request/);
  });

  it('initialize, session/new, and a full prompt: a permission allowed once and one rejected always, a plan, a diff tool call', async () => {
    const answers = ['allow_once', 'reject_always', 'allow_once'];
    const c = open({ caps: { fs: { readTextFile: true, writeTextFile: true } }, permission: (req) => pick(req, answers.shift()!) });
    const init = await c.initialize();
    assert.deepEqual(init, {
      protocolVersion: 1,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: false, audio: false, embeddedContext: true },
        mcpCapabilities: { http: true, sse: false },
        sessionCapabilities: { list: {}, close: {} },
        _meta: { rift: { undo: '_rift/undo', editReview: '_rift/edit_review' } },
      },
      authMethods: [],
      agentInfo: { name: 'rift', title: 'rift', version: init.agentInfo!.version },
    });
    assert.deepEqual(await c.agent.request('authenticate', { methodId: 'none' }), {});
    const created = await c.agent.request('session/new', { cwd, mcpServers: [] });
    const id = created.sessionId;
    assert.match(id, /^\d+(-\d+)?$/);
    assert.deepEqual(created.configOptions, [
      { id: 'model', name: 'Model', category: 'model', type: 'select', currentValue: 'test-model', options: [{ value: 'test-model', name: 'test-model' }, { value: 'small-model', name: 'small-model' }] },
      {
        id: 'approval',
        name: 'Approval',
        category: 'mode',
        description: 'Whether edits, commands and MCP tool calls wait for your answer',
        type: 'select',
        currentValue: 'ask',
        options: [
          { value: 'ask', name: 'Ask', description: 'Ask before each edit, command or MCP tool call that no allow rule covers' },
          { value: 'auto', name: 'Auto-approve', description: 'Run them without asking; deny rules still refuse' },
        ],
      },
    ]);
    await c.until(() => of(c.updatesOf(id), 'available_commands_update').length > 0, 'the commands');
    assert.deepEqual(of(c.updatesOf(id), 'available_commands_update')[0].availableCommands, [
      { name: 'undo', description: 'Restore the files the last turn changed (write, edit, replace_symbol, patch)' },
    ]);

    server.script(
      ollamaReply({ thinking: 'Plan first.', toolCalls: [{ name: 'plan', arguments: { set: ['say hi', 'edit a.ts'] } }, { name: 'bash', arguments: { command: 'echo hi > hi.txt' } }] }),
      ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: 'touch x1.txt' } }] }),
      ollamaReply({ toolCalls: [{ name: 'edit', arguments: { path: 'src/a.ts', old_string: 'export const b = 2;', new_string: 'export const b = 3;' } }] }),
      ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: 'touch x2.txt' } }] }),
      ollamaReply({ content: ['All ', 'done.'] }),
    );
    const mark = c.updates.length;
    const r = await c.agent.request('session/prompt', { sessionId: id, prompt: [{ type: 'text', text: 'set things up' }, { type: 'resource_link', uri: `file://${join(cwd, 'src', 'a.ts')}`, name: 'a.ts' }] });
    assert.deepEqual(r, { stopReason: 'end_turn' });
    assert.equal(chats()[0].body.messages.at(-1).content, `set things up @${join(cwd, 'src', 'a.ts')}`);

    // The first bash ran (allowed once), the second was rejected always, which became a deny
    // rule in the user config: the third never asked and never ran.
    assert.equal(readFileSync(join(cwd, 'hi.txt'), 'utf8'), 'hi\n');
    assert.equal(existsSync(join(cwd, 'x1.txt')), false);
    assert.equal(existsSync(join(cwd, 'x2.txt')), false);
    assert.deepEqual(JSON.parse(readFileSync(join(home, 'config.json'), 'utf8')).permissions, { deny: ['Bash(touch *)'] });
    const results = chats().at(-1)!.body.messages.filter((m: { role: string }) => m.role === 'tool').map((m: { content: string }) => m.content);
    assert.equal(results[2], 'ERROR: the user DENIED this bash action. Do not retry it; ask them how to proceed or choose another approach.');
    assert.equal(results[4], "ERROR: this bash command was blocked by permission rule 'Bash(touch *)'");
    assert.equal(readFileSync(join(cwd, 'src', 'a.ts'), 'utf8'), 'export const a = 1;\nexport const b = 3;\n');

    assert.equal(c.permissions.length, 3);
    const bashAsk: RequestPermissionRequest = c.permissions[0];
    assert.deepEqual(bashAsk.options, [
      { optionId: 'allow_once', name: 'allow once', kind: 'allow_once' },
      { optionId: 'allow_always', name: "always allow 'echo hi *'", kind: 'allow_always' },
      { optionId: 'allow_session', name: 'allow all bash this session', kind: 'allow_always' },
      { optionId: 'deny', name: 'deny', kind: 'reject_once' },
      { optionId: 'reject_always', name: "always deny 'Bash(echo hi *)'", kind: 'reject_always' },
    ]);
    assert.deepEqual(bashAsk.toolCall.content, [{ type: 'content', content: { type: 'text', text: 'Allow bash: echo hi > hi.txt' } }]);
    const editAsk = c.permissions[2];
    assert.deepEqual(editAsk.options.map((o) => [o.optionId, o.kind]), [['allow_once', 'allow_once'], ['allow_session', 'allow_always'], ['allow_always', 'allow_always'], ['deny', 'reject_once'], ['reject_always', 'reject_always']]);
    assert.deepEqual(editAsk.toolCall.content![0], { type: 'diff', path: join(cwd, 'src', 'a.ts'), oldText: 'export const a = 1;\nexport const b = 2;\n', newText: 'export const a = 1;\nexport const b = 3;\n' });

    const us = c.updatesOf(id, mark);
    const calls = of(us, 'tool_call');
    assert.deepEqual(calls.map((t) => [t.title, t.kind, t.status]), [
      ['Update the plan', 'think', 'pending'],
      ['`echo hi > hi.txt`', 'execute', 'pending'],
      ['`touch x1.txt`', 'execute', 'pending'],
      ['Edit src/a.ts', 'edit', 'pending'],
      ['`touch x2.txt`', 'execute', 'pending'],
    ]);
    assert.deepEqual(calls[3].locations, [{ path: join(cwd, 'src', 'a.ts') }]);
    assert.deepEqual(calls[3].rawInput, { path: 'src/a.ts', old_string: 'export const b = 2;', new_string: 'export const b = 3;' });
    // Each permission request is about the tool call announced just before it.
    assert.deepEqual(c.permissions.map((p) => p.toolCall.toolCallId), [calls[1].toolCallId, calls[2].toolCallId, calls[3].toolCallId]);
    const finals = of(us, 'tool_call_update').filter((u) => u.status === 'completed' || u.status === 'failed');
    assert.deepEqual(finals.map((u) => [u.toolCallId, u.status]), [
      [calls[0].toolCallId, 'completed'],
      [calls[1].toolCallId, 'completed'],
      [calls[2].toolCallId, 'failed'],
      [calls[3].toolCallId, 'completed'],
      [calls[4].toolCallId, 'failed'],
    ]);
    assert.deepEqual(finals[3].content, [
      { type: 'diff', path: join(cwd, 'src', 'a.ts'), oldText: 'export const a = 1;\nexport const b = 2;\n', newText: 'export const a = 1;\nexport const b = 3;\n' },
      { type: 'content', content: { type: 'text', text: `Edited ${join(cwd, 'src', 'a.ts')} (1 replacement)` } },
    ]);
    assert.deepEqual(of(us, 'tool_call_update').filter((u) => u.status === 'in_progress').map((u) => u.toolCallId), [calls[1].toolCallId, calls[3].toolCallId], 'allowed calls go in progress');
    assert.deepEqual(of(us, 'plan')[0].entries, [
      { content: 'say hi', priority: 'medium', status: 'in_progress' },
      { content: 'edit a.ts', priority: 'medium', status: 'pending' },
    ]);
    assert.deepEqual(of(us, 'agent_thought_chunk')[0].content, { type: 'text', text: 'Plan first.' });
    assert.equal(of(us, 'agent_message_chunk').map((m) => (m.content as { text: string }).text).join(''), 'All done.');
    const usage = of(us, 'usage_update');
    assert.equal(usage.at(-1)!.size, 32768);
    // The editor's file system served the edit: rift read the buffer and wrote through it.
    const asked = c.transcript.filter((m) => m.from === 'agent' && typeof m.message.method === 'string').map((m) => m.message.method);
    assert.ok(asked.includes('fs/read_text_file') && asked.includes('fs/write_text_file'), JSON.stringify(asked));
  });

  it('session/cancel: mid-stream, and while a permission request is open (answered cancelled); the tool never runs', async () => {
    let release: (() => void) | undefined;
    const c = open({ permission: () => new Promise((resolve) => (release = () => resolve({ outcome: { outcome: 'cancelled' } }))) });
    await c.initialize();
    const { sessionId } = await c.agent.request('session/new', { cwd, mcpServers: [] });
    server.script({ chunks: [`${JSON.stringify({ model: 'm', message: { role: 'assistant', content: 'partial' }, done: false })}\n`], hang: true });
    const mark = c.updates.length;
    const turn = c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'a long task' }] });
    await c.until(() => of(c.updatesOf(sessionId, mark), 'agent_message_chunk').length > 0, 'the partial reply');
    await c.agent.notify('session/cancel', { sessionId });
    assert.deepEqual(await turn, { stopReason: 'cancelled' });

    server.script(ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: 'touch ran.txt' } }] }), ollamaReply({ content: 'never' }));
    const second = c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'touch it' }] });
    await c.until(() => c.permissions.length === 1, 'the permission request');
    await c.agent.notify('session/cancel', { sessionId });
    release!();
    assert.deepEqual(await second, { stopReason: 'cancelled' });
    assert.equal(existsSync(join(cwd, 'ran.txt')), false);
    // The next prompt tells the model the previous task was abandoned.
    server.clear();
    server.script(ollamaReply({ content: 'ok' }));
    assert.deepEqual(await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'next' }] }), { stopReason: 'end_turn' });
    assert.match(chats().at(-1)!.body.messages.at(-1).content, /^\[note: the user pressed Esc to CANCEL your previous, incomplete turn\./);
  });

  it('session/load replays the conversation before answering and resumes it; session/list finds it', async () => {
    const first = open({ args: ['--no-index', '--approve=false'] });
    await first.initialize();
    const { sessionId } = await first.agent.request('session/new', { cwd, mcpServers: [] });
    server.script(
      ollamaReply({ thinking: 'hmm', toolCalls: [{ name: 'write', arguments: { path: 'notes.txt', content: 'n\n' } }, { name: 'read', arguments: { path: 'missing.txt' } }] }),
      ollamaReply({ content: 'Wrote the notes.' }),
    );
    await first.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'write notes' }] });
    await done(first);

    const c = open();
    await c.initialize();
    const listed = await c.agent.request('session/list', { cwd });
    assert.deepEqual(listed.sessions.map((s) => [s.sessionId, s.cwd, s.title]), [[sessionId, cwd, 'write notes']]);
    assert.match(listed.sessions[0].updatedAt!, /^\d{4}-\d\d-\d\dT/);
    assert.deepEqual((await c.agent.request('session/list', { cwd: join(cwd, 'src') })).sessions, []);
    const loaded = await c.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
    assert.equal(loaded.configOptions![0].currentValue, 'test-model');
    // Replayed before the answer: the transcript has every update ahead of the load response.
    const answerAt = c.transcript.findIndex((m) => m.from === 'agent' && 'result' in m.message && (m.message.result as { configOptions?: unknown }).configOptions !== undefined && !('sessionId' in (m.message.result as object)));
    const replayed = c.transcript.slice(0, answerAt).filter((m) => m.message.method === 'session/update').map((m) => (m.message.params as { update: U }).update);
    assert.deepEqual(
      replayed.map((u) => [u.sessionUpdate, 'content' in u && u.content && !Array.isArray(u.content) ? (u.content as { text: string }).text : 'title' in u ? u.title : '']),
      [
        ['user_message_chunk', 'write notes'],
        ['agent_thought_chunk', 'hmm'],
        ['tool_call', 'Write notes.txt'],
        ['tool_call', 'Read missing.txt'],
        ['agent_message_chunk', 'Wrote the notes.'],
      ],
    );
    const calls = of(replayed, 'tool_call');
    assert.deepEqual(calls.map((t) => t.status), ['completed', 'failed']);
    assert.match((calls[1].content![0] as { content: { text: string } }).content.text, /^ERROR: missing\.txt does not exist/);
    server.script(ollamaReply({ content: 'Still here.' }));
    assert.deepEqual(await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'and now?' }] }), { stopReason: 'end_turn' });
    const sent = chats().at(-1)!.body.messages.map((m: { role: string; content: string }) => m.content);
    assert.ok(sent.includes('write notes') && sent.includes('Wrote the notes.'), 'the model sees the earlier turn');
    await assert.rejects(c.agent.request('session/load', { sessionId: '../../etc', cwd, mcpServers: [] }), (e: { code: number; message: string }) => e.code === -32602 && /'sessionId' is not a rift session id/.test(e.message));
    await assert.rejects(c.agent.request('session/load', { sessionId: '1', cwd, mcpServers: [] }), (e: { code: number }) => e.code === -32002);
    await assert.rejects(c.agent.request('session/prompt', { sessionId: 'nope', prompt: [] }), (e: { code: number }) => e.code === -32002);
    await assert.rejects(c.agent.request('session/new', { cwd: 'relative/dir', mcpServers: [] }), (e: { code: number; message: string }) => e.code === -32602 && /'cwd' must be an absolute path/.test(e.message));
  });

  it('config options: a model switch applies to the next turn (a failed one keeps the model); approval auto runs unasked', async () => {
    const c = open();
    await c.initialize();
    const { sessionId } = await c.agent.request('session/new', { cwd, mcpServers: [] });
    const switched = await c.agent.request('session/set_config_option', { sessionId, configId: 'model', value: 'small-model' });
    assert.equal(switched.configOptions[0].currentValue, 'small-model');
    await assert.rejects(
      c.agent.request('session/set_config_option', { sessionId, configId: 'model', value: 'no-such-model' }),
      (e: { code: number; message: string }) => e.code === -32602 && /model switch failed: .*no-such-model/.test(e.message),
    );
    await assert.rejects(c.agent.request('session/set_config_option', { sessionId, configId: 'colour', value: 'blue' }), (e: { code: number; message: string }) => e.code === -32602 && /unknown 'configId'/.test(e.message));
    await assert.rejects(c.agent.request('session/set_config_option', { sessionId, configId: 'approval', value: 'sometimes' }), (e: { code: number }) => e.code === -32602);
    const auto = await c.agent.request('session/set_config_option', { sessionId, configId: 'approval', value: 'auto' });
    assert.deepEqual(auto.configOptions.map((o) => o.currentValue), ['small-model', 'auto']);
    server.script(ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: 'touch auto.txt' } }] }), ollamaReply({ content: 'ok' }));
    await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'touch' }] });
    assert.equal(chats().at(-1)!.body.model, 'small-model');
    assert.equal(chats().at(-1)!.body.options.num_ctx, 8192, 'num_ctx follows the new model');
    assert.ok(existsSync(join(cwd, 'auto.txt')));
    assert.equal(c.permissions.length, 0);
  });
});
