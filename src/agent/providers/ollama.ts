import { ProviderError, failOnStatus, lines, release, send, type HttpOptions } from './http.ts';
import { assistantMessage, type ChatOutcome, type ChatRequest, type Message, type ModelInfo, type Provider, type StreamDelta, type ToolCall } from '../base/types.ts';

// Ollama's native API (reference E.1–E.3, B.7). num_ctx goes on every request because Ollama
// otherwise truncates the front of the prompt at its own default, silently.

const PULL_HINT = 'pull it with `ollama pull <model>` or choose another with --model';

/** B.7: Ollama front-truncates at num_ctx; a prompt that filled it (within 2%) was likely cut. */
export function truncationSuspected(promptEvalCount: number, numCtx: number | undefined): boolean {
  const ctx = numCtx ?? 4096;
  return promptEvalCount > 0 && promptEvalCount >= ctx - Math.floor(ctx / 50);
}

interface OllamaChunk {
  message?: { content?: string; thinking?: string; tool_calls?: Array<{ id?: string; function?: { index?: number; name?: string; arguments?: unknown } }> };
  done?: boolean;
  done_reason?: string;
  prompt_eval_count?: number;
  eval_count?: number;
  total_duration?: number;
  eval_duration?: number;
  error?: unknown;
}

export class OllamaProvider implements Provider {
  readonly kind = 'ollama' as const;

  constructor(
    readonly baseUrl: string,
    private readonly http: HttpOptions,
  ) {}

  async tags(signal?: AbortSignal): Promise<string[]> {
    const res = await send(`${this.baseUrl}/api/tags`, { method: 'GET' }, this.http, signal);
    if (!res.ok) await failOnStatus(res, undefined, '');
    const j = (await res.json()) as { models?: Array<{ name?: string }> };
    release(res);
    return (j.models ?? []).map((m) => m.name).filter((n): n is string => typeof n === 'string');
  }

  async show(model: string, signal?: AbortSignal): Promise<ModelInfo> {
    const res = await send(`${this.baseUrl}/api/show`, post({ model }), this.http, signal);
    if (!res.ok) await failOnStatus(res, model, PULL_HINT.replace('<model>', model));
    const j = (await res.json()) as { capabilities?: unknown; model_info?: Record<string, unknown> };
    release(res);
    const capabilities = Array.isArray(j.capabilities) ? j.capabilities.filter((c): c is string => typeof c === 'string') : [];
    let contextLength: number | undefined;
    for (const [k, v] of Object.entries(j.model_info ?? {})) {
      if (k.endsWith('.context_length') && typeof v === 'number' && v > 0) contextLength = v;
    }
    return { capabilities, contextLength };
  }

  async chat(req: ChatRequest, onDelta: (d: StreamDelta) => void, signal?: AbortSignal): Promise<ChatOutcome> {
    const stream = req.stream ?? true;
    const body: Record<string, unknown> = {
      model: req.model,
      messages: req.messages.map(wireMessage),
      tools: req.tools,
      stream,
    };
    if (req.tools.length === 0) delete body.tools;
    if (req.think !== undefined) body.think = req.think;
    body.keep_alive = '10m';
    const options: Record<string, number> = { num_ctx: req.numCtx, temperature: req.temperature };
    if (req.numPredict !== undefined) options.num_predict = req.numPredict;
    body.options = options;
    if (req.format) body.format = req.format.schema;

    const res = await send(`${this.baseUrl}/api/chat`, post(body), this.http, signal);
    if (!res.ok) await failOnStatus(res, req.model, PULL_HINT.replace('<model>', req.model));

    let content = '';
    let thinking = '';
    const calls: ToolCall[] = [];
    let final: OllamaChunk | undefined;
    for await (const line of lines(res, this.http, signal)) {
      if (line.trim() === '') continue;
      let chunk: OllamaChunk;
      try {
        chunk = JSON.parse(line) as OllamaChunk;
      } catch {
        throw new ProviderError('protocol', `the model server sent a line that is not JSON: ${line.slice(0, 200)}`);
      }
      if (chunk.error !== undefined) {
        const msg = typeof chunk.error === 'string' ? chunk.error : JSON.stringify(chunk.error);
        throw new ProviderError('stream', `the model failed mid-reply: ${msg}`);
      }
      const m = chunk.message;
      if (m?.thinking) {
        thinking += m.thinking;
        if (stream) onDelta({ kind: 'thinking', text: m.thinking });
      }
      if (m?.content) {
        content += m.content;
        if (stream) onDelta({ kind: 'content', text: m.content });
      }
      for (const tc of m?.tool_calls ?? []) {
        const call = toolCallFromWire(tc, calls.length);
        calls.push(call);
        onDelta({ kind: 'tool_call', call });
      }
      if (chunk.done) final = chunk;
    }
    const stats = {
      prompt_eval_count: final?.prompt_eval_count ?? 0,
      eval_count: final?.eval_count ?? 0,
      total_duration_ns: final?.total_duration ?? 0,
      eval_duration_ns: final?.eval_duration ?? 0,
    };
    const message = assistantMessage(content, thinking, calls);
    return {
      message,
      done_reason: final?.done_reason,
      stats,
      truncation_suspected: truncationSuspected(stats.prompt_eval_count, req.numCtx),
    };
  }
}

function post(body: unknown): RequestInit {
  return { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

function toolCallFromWire(tc: { id?: string; function?: { index?: number; name?: string; arguments?: unknown } }, position: number): ToolCall {
  let args: unknown = tc.function?.arguments ?? {};
  // Some servers send arguments as a JSON string even on the native API.
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args);
    } catch {
      args = {};
    }
  }
  const call: ToolCall = {
    function: {
      index: tc.function?.index ?? position,
      name: tc.function?.name ?? '',
      arguments: args && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {},
    },
  };
  if (tc.id) call.id = tc.id;
  return call;
}

/** Ollama wants bare base64 for images; we store data URLs. Empty optional fields are omitted. */
function wireMessage(m: Message): Record<string, unknown> {
  const out: Record<string, unknown> = { role: m.role, content: m.content };
  if (m.images?.length) out.images = m.images.map((u) => u.replace(/^data:[^,]*,/, ''));
  if (m.thinking) out.thinking = m.thinking;
  if (m.tool_calls?.length) out.tool_calls = m.tool_calls;
  if (m.tool_name) out.tool_name = m.tool_name;
  if (m.tool_call_id) out.tool_call_id = m.tool_call_id;
  return out;
}
