import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { OllamaProvider, truncationSuspected } from '../../../src/agent/providers/ollama.ts';
import { OpenAIProvider } from '../../../src/agent/providers/openai.ts';
import { ProviderError, type HttpOptions } from '../../../src/agent/providers/http.ts';
import { buildRoute, preflight } from '../../../src/agent/providers/routing.ts';
import type { ChatRequest, StreamDelta } from '../../../src/agent/base/types.ts';
import { ScriptedModelServer, ollamaReply, openaiReply } from '../../support/model-server.ts';
import { useModelServer } from '../../support/agent-harness.ts';

const http: HttpOptions = { connectTimeoutMs: 2000, readIdleTimeoutMs: 2000, attempts: 1, backoffMs: 10 };

function req(over: Partial<ChatRequest> = {}): ChatRequest {
  return { model: 'test-model', messages: [{ role: 'user', content: 'hi' }], tools: [], numCtx: 32768, temperature: 0.2, ...over };
}

async function errorOf(p: Promise<unknown>): Promise<ProviderError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ProviderError, `expected ProviderError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected a rejection');
}

describe('agent providers: Ollama native', () => {
  const { server } = useModelServer({
    models: {
      'test-model': { capabilities: ['completion', 'tools'], contextLength: 8192 },
      thinker: { capabilities: ['completion', 'tools', 'thinking'], contextLength: 131072 },
      plain: { capabilities: ['completion'] },
    },
  });

  it('streams thinking and content, sends num_ctx, keep_alive and think on every request', async () => {
    server.script(ollamaReply({ thinking: 'Let me look', content: ['Hel', 'lo'], promptEvalCount: 11, evalCount: 2, evalDurationNs: 1_000_000 }));
    const p = new OllamaProvider(server.url, http);
    const deltas: StreamDelta[] = [];
    const out = await p.chat(req({ think: false, numCtx: 4000 }), (d) => deltas.push(d));
    assert.equal(out.message.content, 'Hello');
    assert.equal(out.message.thinking, 'Let me look');
    assert.deepEqual(deltas.map((d) => d.kind), ['thinking', 'content', 'content']);
    assert.equal(out.stats.prompt_eval_count, 11);
    assert.equal(out.stats.eval_count, 2);
    const body = server.requests.at(-1)!.body;
    assert.equal(body.options.num_ctx, 4000);
    assert.equal(body.keep_alive, '10m');
    assert.equal(body.think, false);
    assert.equal(body.stream, true);
  });

  it('tolerates lines split across reads and a final line without a newline', async () => {
    server.script({
      gapMs: 5,
      chunks: [
        '{"message":{"role":"assistant","content":"Hel"}}\n{"message":{"role":"assist',
        'ant","content":"lo"}}\n',
        '{"done":true,"done_reason":"stop","prompt_eval_count":11,"eval_count":2,"eval_duration":1000000}',
      ],
    });
    const out = await new OllamaProvider(server.url, http).chat(req(), () => {});
    assert.equal(out.message.content, 'Hello');
    assert.equal(out.stats.prompt_eval_count, 11);
    assert.equal(out.stats.eval_count, 2);
  });

  it('returns tool calls arriving together or in separate chunks', async () => {
    const calls = [
      { name: 'read', arguments: { path: 'a.rs' } },
      { name: 'ls', arguments: {}, id: 'call_x' },
    ];
    for (const split of [false, true]) {
      server.script(ollamaReply({ toolCalls: calls }, { splitToolCalls: split }));
      const out = await new OllamaProvider(server.url, http).chat(req(), () => {});
      assert.equal(out.message.tool_calls?.length, 2);
      assert.deepEqual(out.message.tool_calls![0].function.arguments, { path: 'a.rs' });
      assert.equal(out.message.tool_calls![1].id, 'call_x');
    }
  });

  it('flags truncation when the prompt filled num_ctx (1000 → 995 flags, 400 does not)', async () => {
    assert.equal(truncationSuspected(995, 1000), true);
    assert.equal(truncationSuspected(400, 1000), false);
    assert.equal(truncationSuspected(0, 1000), false);
    server.script(ollamaReply({ content: 'x', promptEvalCount: 995 }), ollamaReply({ content: 'x', promptEvalCount: 400 }));
    const p = new OllamaProvider(server.url, http);
    assert.equal((await p.chat(req({ numCtx: 1000 }), () => {})).truncation_suspected, true);
    assert.equal((await p.chat(req({ numCtx: 1000 }), () => {})).truncation_suspected, false);
  });

  it('fails on an error line mid-stream with the server message', async () => {
    server.script({ chunks: ['{"message":{"role":"assistant","content":"par"}}\n', '{"error":"model runner has unexpectedly stopped"}\n'] });
    const e = await errorOf(new OllamaProvider(server.url, http).chat(req(), () => {}));
    assert.equal(e.kind, 'stream');
    assert.match(e.message, /model runner has unexpectedly stopped/);
  });

  it('keeps the HTTP status and the server message on a non-2xx reply', async () => {
    server.script({ status: 500, body: JSON.stringify({ error: { message: 'out of memory' } }) });
    let e = await errorOf(new OllamaProvider(server.url, http).chat(req(), () => {}));
    assert.equal(e.kind, 'http');
    assert.match(e.message, /HTTP 500: out of memory/);
    server.script({ status: 502, body: '<html>502 Bad Gateway</html>', contentType: 'text/html' });
    e = await errorOf(new OllamaProvider(server.url, http).chat(req(), () => {}));
    assert.match(e.message, /HTTP 502: <html>502 Bad Gateway/);
  });

  it('show reads capabilities and context length; a missing model says how to fix it', async () => {
    const p = new OllamaProvider(server.url, http);
    assert.deepEqual(await p.show('test-model'), { capabilities: ['completion', 'tools'], contextLength: 8192 });
    const e = await errorOf(p.show('nope:1b'));
    assert.equal(e.kind, 'model_missing');
    assert.match(e.message, /ollama pull nope:1b/);
    assert.deepEqual((await p.tags()).sort(), ['plain', 'test-model', 'thinker']);
  });

  it('preflight clamps num_ctx, refuses models without tools, omits think for thinkers', async () => {
    const cfg = { host: server.url, providers: {} };
    const pf = await preflight(buildRoute('test-model', cfg, {}, http), 32768, false);
    assert.equal(pf.numCtx, 8192);
    assert.equal(pf.note, '(num_ctx clamped 32768 → 8192)');
    assert.equal(pf.think, false);
    const thinker = await preflight(buildRoute('thinker', cfg, {}, http), 32768, false);
    assert.equal(thinker.numCtx, 32768, 'Ollama never inflates num_ctx');
    assert.equal(thinker.think, undefined);
    const e = await errorOf(preflight(buildRoute('plain', cfg, {}, http), 32768, false));
    assert.equal(e.kind, 'no_tools');
    assert.match(e.message, /does not support tool calling/);
  });

  it('an unreachable server is a clear, actionable error', async () => {
    const port = await freePort();
    const e = await errorOf(new OllamaProvider(`http://127.0.0.1:${port}`, { ...http, attempts: 2, backoffMs: 5 }).chat(req(), () => {}));
    assert.equal(e.kind, 'unreachable');
    assert.match(e.message, /cannot reach the model server at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\).*--host/);
  });

  it('times out when headers never arrive and when the stream goes silent', async () => {
    server.script({ delayMs: 400, chunks: [] });
    let e = await errorOf(new OllamaProvider(server.url, { ...http, connectTimeoutMs: 100 }).chat(req(), () => {}));
    assert.equal(e.kind, 'timeout');
    assert.match(e.message, /did not answer within/);
    server.script({ chunks: ['{"message":{"role":"assistant","content":"a"}}\n'], hang: true });
    e = await errorOf(new OllamaProvider(server.url, { ...http, readIdleTimeoutMs: 100 }).chat(req(), () => {}));
    assert.equal(e.kind, 'timeout');
    assert.match(e.message, /RIFT_READ_TIMEOUT/);
  });

  it('cancel mid-stream rejects as cancelled', async () => {
    server.script({ chunks: ['{"message":{"role":"assistant","content":"a"}}\n'], hang: true });
    const ctl = new AbortController();
    const p = new OllamaProvider(server.url, http).chat(req(), () => ctl.abort(), ctl.signal);
    const e = await errorOf(p);
    assert.equal(e.kind, 'cancelled');
  });
});

describe('agent providers: OpenAI-compatible', () => {
  const { server } = useModelServer({ models: { 'gpt-x': { openai: { max_model_len: 65536 } } } });

  it('assembles tool-call deltas by index, sends the bearer key, never sends num_ctx', async () => {
    server.script(openaiReply({ content: 'ok', thinking: 'hmm', toolCalls: [{ name: 'read', arguments: { path: 'a.ts' }, id: 'c1' }, { name: 'grep', arguments: { pattern: 'x' } }], promptEvalCount: 42, evalCount: 7 }));
    const p = new OpenAIProvider(`${server.url}/v1`, 'sk-test', http);
    const deltas: StreamDelta[] = [];
    const out = await p.chat(req({ model: 'gpt-x', tools: [{ type: 'function', function: { name: 'read', description: 'r', parameters: {} } }] }), (d) => deltas.push(d));
    assert.equal(out.message.content, 'ok');
    assert.equal(out.message.thinking, 'hmm');
    assert.deepEqual(out.message.tool_calls!.map((c) => [c.id, c.function.name, c.function.arguments]), [
      ['c1', 'read', { path: 'a.ts' }],
      [undefined, 'grep', { pattern: 'x' }],
    ]);
    assert.equal(out.stats.prompt_eval_count, 42);
    assert.equal(out.stats.eval_count, 7);
    assert.equal(out.truncation_suspected, false);
    const rec = server.requests.at(-1)!;
    assert.equal(rec.headers.authorization, 'Bearer sk-test');
    assert.equal(rec.body.options, undefined);
    assert.equal(rec.body.num_ctx, undefined);
    assert.deepEqual(rec.body.stream_options, { include_usage: true });
  });

  it('keeps a name that the server repeats in every delta, and tolerates a missing [DONE]', async () => {
    server.script(openaiReply({ toolCalls: [{ name: 'read', arguments: { path: 'b' } }] }, { repeatName: true, noDone: true }));
    const out = await new OpenAIProvider(`${server.url}/v1`, undefined, http).chat(req({ model: 'gpt-x' }), () => {});
    assert.equal(out.message.tool_calls![0].function.name, 'read');
  });

  it('retries once without stream_options when the server rejects them', async () => {
    server.script({ status: 400, body: JSON.stringify({ error: { message: 'unknown field stream_options' } }) }, openaiReply({ content: 'fine' }));
    const n = server.requests.length;
    const out = await new OpenAIProvider(`${server.url}/v1`, undefined, http).chat(req({ model: 'gpt-x' }), () => {});
    assert.equal(out.message.content, 'fine');
    const sent = server.requests.slice(n);
    assert.equal(sent.length, 2);
    assert.equal(sent[1].body.stream_options, undefined);
  });

  it('a mid-stream error event, truncated arguments and an absurd index fail clearly', async () => {
    const p = new OpenAIProvider(`${server.url}/v1`, undefined, http);
    server.script({ chunks: ['data: {"choices":[{"delta":{"content":"a"}}]}\n\n', 'data: {"error":{"message":"rate limit exceeded","code":429}}\n\n'] });
    assert.match((await errorOf(p.chat(req({ model: 'gpt-x' }), () => {}))).message, /rate limit exceeded/);
    server.script({ chunks: ['data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"write","arguments":"{\\"path\\":\\"x"}}]}}]}\n\n', 'data: {"choices":[{"delta":{},"finish_reason":"length"}]}\n\n', 'data: [DONE]\n\n'] });
    const t = await errorOf(p.chat(req({ model: 'gpt-x' }), () => {}));
    assert.match(t.message, /'write'.*truncated/);
    server.script({ chunks: ['data: {"choices":[{"delta":{"tool_calls":[{"index":4000000000,"function":{"name":"read","arguments":"{}"}}]}}]}\n\n'] });
    assert.match((await errorOf(p.chat(req({ model: 'gpt-x' }), () => {}))).message, /impossible index/);
  });

  it('routes provider/model, reads the context window from /v1/models, adopts it when routed', async () => {
    const cfg = { host: 'http://127.0.0.1:1', providers: { local: { base_url: server.url, api_key_env: 'LOCAL_KEY' } } };
    const route = buildRoute('local/gpt-x', cfg, { LOCAL_KEY: 'k1' }, http);
    assert.equal(route.model, 'gpt-x');
    assert.equal(route.provider.kind, 'openai');
    assert.equal(route.provider.baseUrl, `${server.url}/v1`);
    const pf = await preflight(route, 32768, false);
    assert.equal(pf.numCtx, 65536);
    assert.match(pf.note, /context budget 32768 → 65536/);
    assert.equal((await preflight(route, 32768, true)).numCtx, 32768, 'an explicit num_ctx is kept');
    assert.equal(server.requests.at(-1)!.headers.authorization, 'Bearer k1');
    // An unknown prefix goes to the default host whole (Ollama `hf.co/...` names).
    const fall = buildRoute('hf.co/org/m', { host: 'http://127.0.0.1:1', providers: {} }, {}, http);
    assert.equal(fall.model, 'hf.co/org/m');
    assert.equal(fall.provider.kind, 'ollama');
    assert.equal(buildRoute('m', { host: `${server.url}/v1`, providers: {} }, {}, http).provider.kind, 'openai');
    const missing = await errorOf(new OpenAIProvider(`${server.url}/v1`, undefined, http).show('nope'));
    assert.equal(missing.kind, 'model_missing');
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe('agent model switch', () => {
  it('switches after a preflight, keeps the conversation, and leaves the model in place on failure', async () => {
    const { harness } = await import('../../support/agent-harness.ts');
    const server = await ScriptedModelServer.start({
      'test-model': { capabilities: ['completion', 'tools'], contextLength: 32768 },
      small: { capabilities: ['completion', 'tools', 'thinking'], contextLength: 4096 },
      chat: { capabilities: ['completion'] },
    });
    const h = harness(server);
    try {
      server.script(ollamaReply({ content: 'hi' }));
      await h.run('hello');
      const cfg = { host: server.url, providers: {} };
      assert.equal(await h.agent.switchModel('small', cfg, false, {}), '(num_ctx clamped 32768 → 4096)');
      assert.equal(h.agent.numCtx, 4096);
      assert.equal(h.agent.think, undefined);
      await assert.rejects(h.agent.switchModel('chat', cfg, false, {}), /does not support tool calling/);
      assert.equal(h.agent.route.model, 'small');
      server.script(ollamaReply({ content: 'again' }));
      await h.run('more');
      const body = server.chatRequests().at(-1)!.body;
      assert.equal(body.model, 'small');
      assert.equal(body.options.num_ctx, 4096);
      assert.equal(body.think, undefined);
      assert.ok(body.messages.some((m: { content: string }) => m.content === 'hello'), 'same conversation');
    } finally {
      h.cleanup();
      await server.close();
    }
  });
});
