import { ProviderError, failOnStatus, lines, release, send, type HttpOptions } from './http.ts';
import { assistantMessage, type ChatOutcome, type ChatRequest, type Message, type ModelInfo, type Provider, type StreamDelta, type ToolCall } from '../base/types.ts';

// OpenAI-compatible chat completions over SSE (reference E.4). num_ctx is never sent here: it is
// only rift's own budget, and truncation cannot be detected from this API.

/** Tool-call indices above this are a broken server, not a real parallel call. */
const TOOL_INDEX_MAX = 1024;

interface Partial {
  id?: string;
  name: string;
  args: string;
}

interface SseChunk {
  choices?: Array<{
    delta?: {
      content?: string | null;
      reasoning?: string | null;
      reasoning_content?: string | null;
      tool_calls?: Array<{ index?: number; id?: string; function?: { name?: string; arguments?: string } }>;
    };
    finish_reason?: string | null;
  }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number };
  error?: unknown;
}

export class OpenAIProvider implements Provider {
  readonly kind = 'openai' as const;

  constructor(
    /** Ends in `/v1`. */
    readonly baseUrl: string,
    private readonly apiKey: string | undefined,
    private readonly http: HttpOptions,
  ) {}

  private headers(): Record<string, string> {
    const h: Record<string, string> = { 'content-type': 'application/json' };
    if (this.apiKey) h.authorization = `Bearer ${this.apiKey}`;
    return h;
  }

  private async models(signal?: AbortSignal): Promise<Array<Record<string, unknown>>> {
    const res = await send(`${this.baseUrl}/models`, { method: 'GET', headers: this.headers() }, this.http, signal);
    if (!res.ok) await failOnStatus(res, undefined, '');
    const j = (await res.json()) as { data?: Array<Record<string, unknown>> };
    release(res);
    return Array.isArray(j.data) ? j.data : [];
  }

  async tags(signal?: AbortSignal): Promise<string[]> {
    return (await this.models(signal)).map((m) => m.id).filter((id): id is string => typeof id === 'string');
  }

  async show(model: string, signal?: AbortSignal): Promise<ModelInfo> {
    const list = await this.models(signal);
    const entry = list.find((m) => m.id === model);
    // Servers that list nothing (or not this model) still may serve it; only a listed set without it is a miss.
    if (!entry && list.length > 0) {
      throw new ProviderError('model_missing', `model '${model}' is not served by ${this.baseUrl} (it lists: ${list.slice(0, 8).map((m) => String(m.id)).join(', ')}) — choose one of those with --model`);
    }
    const meta = entry?.meta as Record<string, unknown> | undefined;
    const ctx = [entry?.max_model_len, entry?.context_length, entry?.max_context_length, meta?.n_ctx_train].find(
      (v): v is number => typeof v === 'number' && v > 0,
    );
    return { capabilities: ['tools'], contextLength: ctx };
  }

  async chat(req: ChatRequest, onDelta: (d: StreamDelta) => void, signal?: AbortSignal): Promise<ChatOutcome> {
    const body: Record<string, unknown> = {
      model: req.model,
      messages: req.messages.map(wireMessage),
      stream: true,
      temperature: req.temperature,
      stream_options: { include_usage: true },
    };
    if (req.tools.length > 0) body.tools = req.tools;
    if (req.numPredict !== undefined) body.max_tokens = req.numPredict;
    if (req.format) body.response_format = { type: 'json_schema', json_schema: { name: req.format.name, schema: req.format.schema, strict: true } };

    const url = `${this.baseUrl}/chat/completions`;
    let res = await send(url, { method: 'POST', headers: this.headers(), body: JSON.stringify(body) }, this.http, signal);
    if (res.status === 400) {
      // Some servers reject stream_options; they get one retry without it.
      const text = await res.text().catch(() => '');
      release(res);
      if (!/stream_options/.test(text)) {
        throw new ProviderError('http', `model server returned HTTP 400: ${text.slice(0, 600)}`, 400);
      }
      delete body.stream_options;
      res = await send(url, { method: 'POST', headers: this.headers(), body: JSON.stringify(body) }, this.http, signal);
    }
    if (!res.ok) await failOnStatus(res, req.model, 'check the model name with /v1/models or choose another with --model');

    const started = Date.now();
    let firstChunkAt = 0;
    let content = '';
    let thinking = '';
    let finish: string | undefined;
    let usage: SseChunk['usage'];
    const partials = new Map<number, Partial>();

    for await (const raw of lines(res, this.http, signal)) {
      const line = raw.trim();
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data === '[DONE]') break;
      let chunk: SseChunk;
      try {
        chunk = JSON.parse(data) as SseChunk;
      } catch {
        throw new ProviderError('protocol', `the model server sent an SSE event that is not JSON: ${data.slice(0, 200)}`);
      }
      if (firstChunkAt === 0) firstChunkAt = Date.now();
      if (chunk.error !== undefined) {
        const e = chunk.error as { message?: string } | string;
        throw new ProviderError('stream', `the model failed mid-reply: ${typeof e === 'string' ? e : (e.message ?? JSON.stringify(e))}`);
      }
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      const d = choice.delta ?? {};
      const reasoning = d.reasoning_content ?? d.reasoning;
      if (reasoning) {
        thinking += reasoning;
        onDelta({ kind: 'thinking', text: reasoning });
      }
      if (d.content) {
        content += d.content;
        onDelta({ kind: 'content', text: d.content });
      }
      for (const tc of d.tool_calls ?? []) {
        const index = tc.index ?? 0;
        if (!Number.isInteger(index) || index < 0 || index > TOOL_INDEX_MAX) {
          throw new ProviderError('protocol', `the model server sent a tool call with an impossible index ${index}`);
        }
        const p = partials.get(index) ?? { name: '', args: '' };
        if (tc.id) p.id = tc.id;
        p.name = mergeName(p.name, tc.function?.name ?? '');
        if (tc.function?.arguments) p.args += tc.function.arguments;
        partials.set(index, p);
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }

    const calls: ToolCall[] = [];
    for (const [index, p] of [...partials.entries()].sort((a, b) => a[0] - b[0])) {
      let args: unknown = {};
      if (p.args.trim() !== '') {
        try {
          args = JSON.parse(p.args);
        } catch {
          if (finish === 'length') {
            throw new ProviderError('stream', `the arguments of tool call '${p.name}' were truncated (finish_reason length) — the reply hit the output limit`);
          }
          throw new ProviderError('protocol', `the arguments of tool call '${p.name}' are not valid JSON: ${p.args.slice(0, 200)}`);
        }
      }
      const call: ToolCall = {
        function: { index, name: p.name, arguments: args && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {} },
      };
      if (p.id) call.id = p.id;
      calls.push(call);
      onDelta({ kind: 'tool_call', call });
    }

    const end = Date.now();
    const decodeMs = firstChunkAt > 0 ? end - firstChunkAt : end - started;
    const message = assistantMessage(content, thinking, calls);
    return {
      message,
      done_reason: finish,
      stats: {
        prompt_eval_count: usage?.prompt_tokens ?? 0,
        eval_count: usage?.completion_tokens ?? 0,
        total_duration_ns: (end - started) * 1e6,
        eval_duration_ns: decodeMs * 1e6,
      },
      truncation_suspected: false,
    };
  }
}

/**
 * Names arrive whole in the first delta, split across deltas, or repeated whole in every delta
 * (llama.cpp). Keep a repeat, replace with a longer complete name, append a true fragment.
 */
function mergeName(acc: string, piece: string): string {
  if (piece === '') return acc;
  if (acc === '' || piece === acc) return piece;
  if (piece.startsWith(acc)) return piece;
  return acc + piece;
}

function wireMessage(m: Message): Record<string, unknown> {
  if (m.role === 'tool') {
    return { role: 'tool', content: m.content, tool_call_id: m.tool_call_id ?? m.tool_name ?? '', name: m.tool_name };
  }
  if (m.role === 'assistant' && m.tool_calls?.length) {
    return {
      role: 'assistant',
      content: m.content === '' ? null : m.content,
      tool_calls: m.tool_calls.map((c) => ({
        id: c.id ?? c.function.name,
        type: 'function',
        function: { name: c.function.name, arguments: JSON.stringify(c.function.arguments) },
      })),
    };
  }
  if (m.role === 'user' && m.images?.length) {
    return {
      role: 'user',
      content: [{ type: 'text', text: m.content }, ...m.images.map((url) => ({ type: 'image_url', image_url: { url } }))],
    };
  }
  return { role: m.role, content: m.content };
}
