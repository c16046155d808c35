import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { APPLY_NUDGE, CANCEL_NOTE, REPEAT_REFUSED, WRAP_UP_NOTE, preview } from '../../../src/agent/loop/agent.ts';
import { ALIASES } from '../../../src/agent/tools/registry.ts';
import { ollamaReply, openaiReply } from '../../support/model-server.ts';
import { TEST_HTTP, useModelServer } from '../../support/agent-harness.ts';
import { buildRoute } from '../../../src/agent/providers/routing.ts';

describe('agent loop', () => {
  const { server, harness } = useModelServer({ assertConsumed: true });

  it('runs the appendix exchange: write, edit_diff, answer, stats summed over calls', async () => {
    server.script(
      ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'a.txt', content: 'hi\n' } }], promptEvalCount: 1200, evalCount: 20, evalDurationNs: 500_000_000 }),
      ollamaReply({ content: 'Done.', promptEvalCount: 1300, evalCount: 3, evalDurationNs: 100_000_000 }),
    );
    const h = harness();
    const r = await h.run('create a.txt');
    assert.equal(r.outcome, 'answered');
    assert.deepEqual(h.kinds(), ['iteration', 'tool_start', 'tool_result', 'edit_diff', 'iteration', 'content', 'done', 'context']);
    assert.deepEqual(h.of('tool_start')[0].args, { path: 'a.txt', content: 'hi\n' });
    assert.equal(h.of('tool_result')[0].preview, `Wrote 3 bytes to ${join(h.cwd, 'a.txt')}`);
    assert.deepEqual(h.of('edit_diff')[0], { event: 'edit_diff', path: join(h.cwd, 'a.txt'), added: 1, removed: 0, diff: ['+hi'] });
    const stats = h.of('done')[0].stats;
    assert.equal(stats.iterations, 2);
    assert.equal(stats.prompt_tokens, 1300);
    assert.equal(stats.billed_prompt_tokens, 2500);
    assert.equal(stats.output_tokens, 23);
    assert.equal(stats.tokens_per_sec, 30);
    assert.equal(readFileSync(join(h.cwd, 'a.txt'), 'utf8'), 'hi\n');
    // The second request carries the tool result, correlated by name and id.
    const second = server.chatRequests().at(-1)!.body;
    const tool = second.messages.at(-1);
    assert.equal(tool.role, 'tool');
    assert.equal(tool.tool_name, 'write');
    assert.equal(tool.tool_call_id, second.messages.at(-2).tool_calls[0].id);
    assert.equal(second.options.num_ctx, 32768);
  });

  it('streams thinking then content and strips old thinking from later requests', async () => {
    server.script(ollamaReply({ thinking: ['pon', 'der'], content: ['Hi', ' there'] }), ollamaReply({ content: 'again' }));
    const h = harness();
    await h.run('hello');
    assert.deepEqual(h.of('thinking').map((e) => e.text), ['pon', 'der']);
    assert.deepEqual(h.of('content').map((e) => e.text), ['Hi', ' there']);
    assert.equal(h.agent.messages.at(-1)!.thinking, 'ponder');
    await h.run('and again');
    const sent = server.chatRequests().at(-1)!.body.messages;
    assert.equal(sent.find((m: { role: string }) => m.role === 'assistant').thinking, undefined);
  });

  for (const [form, content] of [
    ['bare JSON', '{"name": "read", "arguments": {"path": "f.txt"}}'],
    ['fenced JSON', '```json\n[{"name": "read", "parameters": {"path": "f.txt"}}]\n```'],
    ['XML-style', '<tool_call>\n<function=read>\n<parameter=path>\nf.txt\n</parameter>\n<parameter=limit>\n5\n</parameter>\n</function>\n</tool_call>'],
  ] as const) {
    it(`recovers a textual tool call written as ${form}`, async () => {
      server.script(ollamaReply({ content }), ollamaReply({ content: 'ok' }));
      const h = harness();
      writeFileSync(join(h.cwd, 'f.txt'), 'one\n');
      await h.run('look at f.txt');
      assert.ok(h.of('warning').some((w) => w.text === 'model emitted a textual tool call; recovered it'));
      const start = h.of('tool_start')[0];
      assert.equal(start.name, 'read');
      assert.equal(start.args.path, 'f.txt');
      if (form === 'XML-style') assert.equal(start.args.limit, 5, 'integer parameters are typed from the schema');
      assert.equal(h.of('tool_result')[0].ok, true);
      const assistant = h.agent.messages.find((m) => m.role === 'assistant')!;
      assert.equal(assistant.content, '', 'the recovered text is cleared from history');
    });
  }

  it('does not recover JSON that names an unregistered tool or mixes prose', async () => {
    server.script(ollamaReply({ content: '{"name": "launch_rockets", "arguments": {}}' }), ollamaReply({ content: 'Here: {"name": "read", "arguments": {"path": "x"}}' }));
    const h = harness();
    await h.run('hi');
    await h.run('hi');
    assert.equal(h.of('tool_start').length, 0);
  });

  it('resolves every hallucinated alias to its tool and keeps the requested name on the result', async () => {
    const expected: Record<string, string> = {};
    for (const [from, to] of ALIASES) if (['read', 'write', 'edit', 'bash', 'ls', 'grep', 'glob'].includes(to)) expected[from] = to;
    const h = harness();
    writeFileSync(join(h.cwd, 'f.txt'), 'x\n');
    const argsFor: Record<string, Record<string, unknown>> = {
      read: { path: 'f.txt' }, write: { path: 'w.txt', content: 'w' }, edit: { path: 'f.txt', old_string: 'zzz', new_string: 'y' },
      bash: { command: 'true' }, ls: {}, grep: { pattern: 'x' }, glob: { pattern: '*.txt' },
    };
    const names = Object.keys(expected);
    server.script(ollamaReply({ toolCalls: names.map((n, i) => ({ name: n, arguments: { ...argsFor[expected[n]], ...(expected[n] === 'bash' ? { command: `true ${i}` } : { _n: i }) } })) }), ollamaReply({ content: 'ok' }));
    await h.run('go');
    assert.deepEqual(h.of('tool_start').map((e) => e.name), names.map((n) => expected[n]));
    const toolMsgs = h.agent.messages.filter((m) => m.role === 'tool');
    assert.deepEqual(toolMsgs.map((m) => m.tool_name), names);
    // Aliases whose tool is not built in (outline, fetch, …) stay unknown with a helpful list.
    server.script(ollamaReply({ toolCalls: [{ name: 'wget', arguments: { url: 'x' } }] }), ollamaReply({ content: 'ok' }));
    await h.run('go');
    assert.match(h.agent.messages.filter((m) => m.role === 'tool').at(-1)!.content, /^ERROR: unknown tool 'wget'\. Available tools: read, write, edit, bash, ls, grep, glob, plan, ask_user, task$/);
  });

  it('refuses the third identical call without running it, with one warning', async () => {
    const call = { name: 'bash', arguments: { command: 'echo hi >> log.txt' } };
    server.script(
      ollamaReply({ toolCalls: [call] }),
      ollamaReply({ toolCalls: [call] }),
      ollamaReply({ toolCalls: [call] }),
      ollamaReply({ toolCalls: [call] }),
      ollamaReply({ content: 'giving up' }),
    );
    const h = harness();
    await h.run('append');
    assert.equal(readFileSync(join(h.cwd, 'log.txt'), 'utf8'), 'hi\nhi\n', 'only two runs happened');
    assert.equal(h.of('tool_start').length, 2);
    const warnings = h.of('warning').filter((w) => w.text.includes('identical arguments'));
    assert.deepEqual(warnings.map((w) => w.text), ["tool 'bash' called 3x with identical arguments; refusing the repeat"]);
    assert.equal(h.agent.messages.filter((m) => m.content === REPEAT_REFUSED).length, 2);
  });

  it('nudges after four failures in a row and ends the turn at seven', async () => {
    for (let i = 0; i < 7; i++) server.script(ollamaReply({ toolCalls: [{ name: 'read', arguments: { path: `missing-${i}.txt` } }] }));
    const h = harness({ maxIterations: 20 });
    const r = await h.run('read things');
    assert.equal(r.outcome, 'stuck');
    assert.ok(h.agent.messages.some((m) => m.role === 'user' && m.content.includes('change approach')));
    assert.equal(h.of('done').length, 1);
    assert.equal(h.of('tool_result').length, 7);
  });

  it('a success resets the stuck counter', async () => {
    const h = harness({ maxIterations: 20 });
    writeFileSync(join(h.cwd, 'ok.txt'), 'fine\n');
    for (let i = 0; i < 6; i++) server.script(ollamaReply({ toolCalls: [{ name: 'read', arguments: { path: i === 3 ? 'ok.txt' : `nope-${i}` } }] }));
    server.script(ollamaReply({ content: 'done' }));
    const r = await h.run('read');
    assert.equal(r.outcome, 'answered');
  });

  it('caps iterations with a tool-less final round that must answer', async () => {
    server.script(
      ollamaReply({ toolCalls: [{ name: 'ls', arguments: {} }] }),
      ollamaReply({ toolCalls: [{ name: 'ls', arguments: { path: '.' } }] }),
      ollamaReply({ content: 'summary of work' }),
    );
    const h = harness({ maxIterations: 3 });
    const r = await h.run('explore');
    assert.equal(r.outcome, 'wrapped');
    const last = server.chatRequests().at(-1)!.body;
    assert.equal(last.tools, undefined, 'the final round offers no tools');
    assert.match(last.messages.at(-1).content, /final round/);
    assert.equal(h.of('done')[0].stats.iterations, 3);
  });

  it('tells the model to wrap up two rounds before the cap, in that request only', async () => {
    server.script(
      ollamaReply({ toolCalls: [{ name: 'ls', arguments: {} }] }),
      ollamaReply({ toolCalls: [{ name: 'ls', arguments: { path: '.' } }] }),
      ollamaReply({ content: 'summary of work' }),
    );
    const h = harness({ maxIterations: 4 });
    const r = await h.run('explore');
    assert.equal(r.outcome, 'answered');
    const lasts = server.chatRequests().slice(-3).map((q) => q.body.messages.at(-1).content);
    assert.equal(lasts[1], WRAP_UP_NOTE(2));
    assert.ok(!lasts[0].includes('iteration limit') && !lasts[2].includes('iteration limit'));
    assert.ok(!h.agent.messages.some((m) => m.content === WRAP_UP_NOTE(2)), 'the note is never kept in the history');
  });

  it('nudges a model that answered an actionable prompt without changing files', async () => {
    server.script(ollamaReply({ content: 'Change x to y:\n```\ny\n```' }), ollamaReply({ content: 'my previous answer stands' }));
    const h = harness();
    await h.run('fix the bug in x');
    assert.ok(h.of('warning').some((w) => w.text.startsWith('model finished without modifying any files')));
    assert.ok(h.agent.messages.some((m) => m.content === APPLY_NUDGE));
  });

  it('answers every tool call id when cancelled mid-tool, then the next prompt carries the cancel note', async () => {
    server.script(ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: 'sleep 5' } }, { name: 'ls', arguments: {} }] }));
    const h = harness();
    const ctl = new AbortController();
    const started = Date.now();
    const p = h.run('wait', ctl.signal);
    while (!h.events.some((e) => e.event === 'tool_start')) await new Promise((r) => setTimeout(r, 5));
    ctl.abort();
    const r = await p;
    assert.ok(Date.now() - started < 3000, 'the sleeping process group was killed');
    assert.equal(r.outcome, 'cancelled');
    const tools = h.agent.messages.filter((m) => m.role === 'tool');
    assert.deepEqual(tools.map((m) => m.content), ['ERROR: cancelled by user', 'ERROR: cancelled by user']);
    const ids = h.agent.messages.find((m) => m.tool_calls)!.tool_calls!.map((c) => c.id);
    assert.deepEqual(tools.map((m) => m.tool_call_id), ids);
    assert.deepEqual(h.kinds().slice(-3), ['warning', 'done', 'context']);
    assert.equal(h.of('warning').at(-1)!.text, 'turn cancelled');
    server.script(ollamaReply({ content: 'ok' }));
    await h.run('next');
    assert.ok(server.chatRequests().at(-1)!.body.messages.at(-1).content.startsWith(CANCEL_NOTE));
  });

  it('cancel while streaming drops the call and ends the turn', async () => {
    server.script({ chunks: ['{"message":{"role":"assistant","content":"par"}}\n'], hang: true });
    const h = harness();
    const ctl = new AbortController();
    const p = h.run('stream', ctl.signal);
    while (!h.events.some((e) => e.event === 'content')) await new Promise((r) => setTimeout(r, 5));
    ctl.abort();
    const r = await p;
    assert.equal(r.outcome, 'cancelled');
    assert.deepEqual(h.kinds().slice(-3), ['warning', 'done', 'context']);
  });

  it('a model error ends the turn with a warning and zero-stats done', async () => {
    server.script({ chunks: ['{"message":{"role":"assistant","content":"par"}}\n', '{"error":"model runner has unexpectedly stopped"}\n'] });
    const h = harness();
    const r = await h.run('x');
    assert.equal(r.outcome, 'error');
    assert.match(h.of('warning').at(-1)!.text, /^error: .*model runner has unexpectedly stopped/);
    assert.deepEqual(h.of('done')[0].stats, { iterations: 0, prompt_tokens: 0, billed_prompt_tokens: 0, output_tokens: 0, duration_ms: 0, tokens_per_sec: 0 });
  });

  it('warns about front truncation from prompt_eval_count', async () => {
    server.script(ollamaReply({ content: 'x', promptEvalCount: 995 }));
    const h = harness({ numCtx: 1000 });
    await h.run('x');
    assert.ok(h.of('warning').some((w) => w.text === 'context overflow: prompt filled num_ctx=1000 and was likely front-truncated; results may be degraded'));
  });

  it('strips leaked template tokens', async () => {
    server.script(ollamaReply({ content: 'answer<|im_end|>' }));
    const h = harness();
    const r = await h.run('x');
    assert.equal(r.reply, 'answer');
    assert.ok(h.of('warning').some((w) => w.text === 'stripped leaked template tokens from output'));
  });

  it('emits a plan event with the full list after the plan tool', async () => {
    server.script(ollamaReply({ toolCalls: [{ name: 'plan', arguments: { set: ['a', 'b'] } }, { name: 'plan', arguments: { done: 1 } }] }), ollamaReply({ content: 'ok' }));
    const h = harness();
    await h.run('plan it');
    const plans = h.of('plan');
    assert.equal(plans.length, 2);
    assert.deepEqual(plans[1].items, [{ text: 'a', done: true }, { text: 'b', done: false }]);
    assert.equal(h.of('tool_result')[1].preview, 'Current plan: [x] 1. a [ ] 2. b');
  });

  it('runs the same loop over the OpenAI-compatible provider with split tool-call deltas', async () => {
    server.script(openaiReply({ toolCalls: [{ name: 'write', arguments: { path: 'o.txt', content: 'z' }, id: 'call_a' }] }), openaiReply({ content: 'done' }));
    const h = harness({ route: buildRoute('test-model', { host: `${server.url}/v1`, providers: {} }, {}, TEST_HTTP) });
    await h.run('create o.txt');
    assert.equal(readFileSync(join(h.cwd, 'o.txt'), 'utf8'), 'z');
    const second = server.chatRequests().at(-1)!.body.messages;
    assert.deepEqual(second.at(-2).tool_calls, [{ id: 'call_a', type: 'function', function: { name: 'write', arguments: '{"path":"o.txt","content":"z"}' } }]);
    assert.equal(second.at(-2).content, null);
    assert.equal(second.at(-1).tool_call_id, 'call_a');
  });

  it('previews are trimmed, single-line and cut at 200 bytes with …', () => {
    assert.equal(preview('  a\nb  '), 'a b');
    const long = 'é'.repeat(150);
    const p = preview(long);
    assert.ok(p.endsWith('…'));
    assert.equal(Buffer.byteLength(p.slice(0, -1)), 200);
  });
});
