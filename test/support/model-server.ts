import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// The scripted model server: speaks Ollama's /api/chat (NDJSON), /api/show, /api/tags,
// /api/embed and OpenAI's /v1/chat/completions (SSE), /v1/models and /v1/embeddings, replaying scripted replies
// in order and recording every request. Binds 127.0.0.1 on an ephemeral port only.

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  /** performance.now() when the request body had fully arrived. */
  receivedAt: number;
  /** performance.now() when the reply's last byte was written (chat only). */
  finishedAt?: number;
}

/** One scripted reply to one chat request. */
export interface Step {
  /** Raw pieces written in order, `gapMs` apart, so split reads happen for real. */
  chunks?: string[];
  status?: number;
  /** Whole body for a non-streaming reply (also used with `status` for errors). */
  body?: string;
  contentType?: string;
  gapMs?: number;
  /** Stop writing after the chunks and keep the connection open (for cancel and timeouts). */
  hang?: boolean;
  /** Delay before the response headers. */
  delayMs?: number;
  /** Stop after this many chunks until `resume` settles, then write the rest (a reply paused mid-stream). */
  pauseAt?: number;
  resume?: Promise<void>;
  /**
   * Serve this step only to a request whose parsed body matches (agents running concurrently);
   * a request takes the first queued step it matches.
   */
  when?: (body: any) => boolean;
}

export interface ModelSpec {
  capabilities?: string[];
  contextLength?: number;
  /** Extra fields on the /v1/models entry (max_model_len, …). */
  openai?: Record<string, unknown>;
}

export interface ReplyShape {
  content?: string | string[];
  thinking?: string | string[];
  toolCalls?: Array<{ name: string; arguments: Record<string, unknown>; id?: string }>;
  promptEvalCount?: number;
  evalCount?: number;
  evalDurationNs?: number;
  doneReason?: string;
}

export class ScriptedModelServer {
  readonly requests: RecordedRequest[] = [];
  readonly models = new Map<string, ModelSpec>();
  /** Ids appended to both model listings after the served models (duplicates included, as some servers do). */
  readonly extraListed: string[] = [];
  /**
   * Embedding concepts: a text's vector has one dimension per concept, the number of the
   * concept's words the text holds (whole words, case-insensitive), plus a last dimension of 1.
   * Texts sharing a concept point the same way whatever their other words, so a test can make a
   * query and a declaration "mean" the same thing. Without concepts, a toy character vector.
   */
  embedConcepts: string[][] = [];
  /** Delay before each embedding reply (to observe preparation while it runs). */
  embedDelayMs = 0;
  /** When set, every embedding request fails with this status and error. */
  embedFailure: { status: number; error: string } | null = null;
  private readonly queue: Step[] = [];
  private readonly waiters: Array<{ match: (body: any) => boolean; resolve: () => void }> = [];
  private server: Server | undefined;
  private readonly open = new Set<ServerResponse>();
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Serves `models`; not listening (no `url`) until `listen()`. */
  constructor(models: Record<string, ModelSpec> = { 'test-model': { capabilities: ['completion', 'tools'], contextLength: 32768 } }) {
    for (const [k, v] of Object.entries(models)) this.models.set(k, v);
  }

  static async start(models?: Record<string, ModelSpec>): Promise<ScriptedModelServer> {
    return new ScriptedModelServer(models).listen();
  }

  async listen(): Promise<this> {
    const server = createServer((req, res) => void this.handle(req, res));
    // undici keeps a pooled connection only when the server's keep-alive hint leaves more than its 1 s margin.
    server.keepAliveTimeout = 10_000;
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  script(...steps: Step[]): this {
    this.queue.push(...steps);
    return this;
  }

  /**
   * Steps served only to chat requests naming `model` (and matching the step's own `when`):
   * one script per model, for agents that run at once.
   */
  scriptFor(model: string, ...steps: Step[]): this {
    return this.script(...steps.map((s) => ({ ...s, when: (b: any) => b?.model === model && (!s.when || s.when(b)) })));
  }

  /** Resolves when a chat request matching `match` arrives after this call. */
  arrival(match: (body: any) => boolean): Promise<void> {
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  /** Drops the scripted replies not served yet; the recorded requests stay. */
  clear(): void {
    this.queue.length = 0;
  }

  get pending(): number {
    return this.queue.length;
  }

  chatRequests(): RecordedRequest[] {
    return this.requests.filter((r) => r.path === '/api/chat' || r.path === '/v1/chat/completions');
  }

  async close(): Promise<void> {
    for (const r of this.open) r.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const receivedAt = performance.now();
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // recorded raw
    }
    const path = (req.url ?? '/').split('?')[0];
    const rec: RecordedRequest = { method: req.method ?? 'GET', path, headers: req.headers, body, receivedAt };
    this.requests.push(rec);
    if (path === '/api/chat' || path === '/v1/chat/completions') {
      for (const w of this.waiters.filter((x) => x.match(body))) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve();
      }
    }

    switch (`${req.method} ${path}`) {
      case 'GET /api/tags':
        return json(res, 200, {
          models: [...[...this.models.entries()].map(([name, m]) => ({ name, model: name, capabilities: m.capabilities ?? [] })), ...this.extraListed.map((name) => ({ name, model: name, capabilities: [] }))],
        });
      case 'POST /api/show': {
        const name = (body as { model?: string })?.model ?? '';
        const m = this.models.get(name);
        if (!m) return json(res, 404, { error: `model '${name}' not found` });
        const info: Record<string, unknown> = { 'general.architecture': 'llama' };
        if (m.contextLength) info['llama.context_length'] = m.contextLength;
        return json(res, 200, { capabilities: m.capabilities ?? ['completion'], model_info: info });
      }
      case 'POST /api/embed':
      case 'POST /v1/embeddings': {
        const input = (body as { input?: string | string[] })?.input ?? [];
        const list = Array.isArray(input) ? input : [input];
        const model = (body as { model?: string })?.model;
        if (this.embedDelayMs > 0) await sleep(this.embedDelayMs);
        if (this.embedFailure) return json(res, this.embedFailure.status, { error: this.embedFailure.error });
        const vectors = list.map((s) => this.embedding(s));
        if (path === '/api/embed') return json(res, 200, { model, embeddings: vectors });
        return json(res, 200, { object: 'list', model, data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })) });
      }
      case 'GET /v1/models':
        return json(res, 200, {
          object: 'list',
          data: [...[...this.models.entries()].map(([id, m]) => ({ id, object: 'model', ...(m.openai ?? {}) })), ...this.extraListed.map((id) => ({ id, object: 'model' }))],
        });
      case 'POST /api/chat':
      case 'POST /v1/chat/completions':
        return this.chat(rec, res);
      default:
        return json(res, 404, { error: `no route ${req.method} ${path}` });
    }
  }

  /** The scripted vector of one text (see `embedConcepts`). */
  embedding(text: string): number[] {
    if (this.embedConcepts.length === 0) return toyEmbedding(text);
    const words = text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
    return [...this.embedConcepts.map((c) => words.filter((w) => c.includes(w)).length), 1];
  }

  /** The texts every embedding request so far asked for, in order. */
  embeddedTexts(): string[] {
    return this.requests
      .filter((r) => r.method === 'POST' && (r.path === '/api/embed' || r.path === '/v1/embeddings'))
      .flatMap((r) => arr(r.body?.input));
  }

  private async chat(rec: RecordedRequest, res: ServerResponse): Promise<void> {
    const at = this.queue.findIndex((s) => !s.when || s.when(rec.body));
    const step = at < 0 ? undefined : this.queue.splice(at, 1)[0];
    if (!step) {
      rec.finishedAt = performance.now();
      return json(res, 500, { error: 'scripted model server: script exhausted' });
    }
    if (step.delayMs) await sleep(step.delayMs);
    const streaming = rec.path === '/v1/chat/completions';
    if (step.body !== undefined || step.status !== undefined && !step.chunks) {
      res.writeHead(step.status ?? 200, { 'content-type': step.contentType ?? 'application/json' });
      res.end(step.body ?? '');
      rec.finishedAt = performance.now();
      return;
    }
    res.writeHead(step.status ?? 200, {
      'content-type': step.contentType ?? (streaming ? 'text/event-stream' : 'application/x-ndjson'),
    });
    this.open.add(res);
    res.on('close', () => this.open.delete(res));
    for (const [i, piece] of (step.chunks ?? []).entries()) {
      if (i === step.pauseAt && step.resume) await step.resume;
      if (res.destroyed) return;
      res.write(piece);
      if (step.gapMs) await sleep(step.gapMs);
    }
    rec.finishedAt = performance.now();
    if (!step.hang) res.end();
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** A deterministic toy embedding: enough for wiring tests, meaningless otherwise. */
function toyEmbedding(s: string): number[] {
  const v = new Array(8).fill(0);
  for (let i = 0; i < s.length; i++) v[i % 8] += s.charCodeAt(i) / 1000;
  return v;
}

const arr = (x: string | string[] | undefined): string[] => (x === undefined ? [] : Array.isArray(x) ? x : [x]);

/** Ollama NDJSON lines for one reply: thinking, content pieces, tool calls (one chunk), final counters. */
export function ollamaReply(r: ReplyShape, opts: { splitToolCalls?: boolean } = {}): Step {
  const line = (o: unknown) => JSON.stringify(o) + '\n';
  const msg = (m: Record<string, unknown>) => line({ model: 'm', created_at: '2025-01-01T00:00:00Z', message: { role: 'assistant', content: '', ...m }, done: false });
  const chunks: string[] = [];
  for (const t of arr(r.thinking)) chunks.push(msg({ thinking: t }));
  for (const c of arr(r.content)) chunks.push(msg({ content: c }));
  const calls = (r.toolCalls ?? []).map((c) => ({ ...(c.id ? { id: c.id } : {}), function: { name: c.name, arguments: c.arguments } }));
  if (calls.length > 0) {
    if (opts.splitToolCalls) for (const c of calls) chunks.push(msg({ tool_calls: [c] }));
    else chunks.push(msg({ tool_calls: calls }));
  }
  chunks.push(
    line({
      model: 'm', created_at: '2025-01-01T00:00:00Z', message: { role: 'assistant', content: '' }, done: true,
      done_reason: r.doneReason ?? 'stop', total_duration: 5_000_000, load_duration: 1000,
      prompt_eval_count: r.promptEvalCount ?? 100, prompt_eval_duration: 1000,
      eval_count: r.evalCount ?? 10, eval_duration: r.evalDurationNs ?? 100_000_000,
    }),
  );
  return { chunks };
}

/**
 * OpenAI SSE events for one reply. Tool calls stream as deltas by index: the name and id in the
 * first delta, the arguments string split in two (or, with `repeatName`, the name in every delta).
 */
export function openaiReply(r: ReplyShape, opts: { repeatName?: boolean; noDone?: boolean; usage?: boolean } = {}): Step {
  const ev = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
  const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 0, model: 'm' };
  const chunks: string[] = [];
  for (const t of arr(r.thinking)) chunks.push(ev({ ...base, choices: [{ index: 0, delta: { reasoning_content: t }, finish_reason: null }] }));
  for (const c of arr(r.content)) chunks.push(ev({ ...base, choices: [{ index: 0, delta: { content: c }, finish_reason: null }] }));
  (r.toolCalls ?? []).forEach((c, index) => {
    const args = JSON.stringify(c.arguments);
    const cut = Math.floor(args.length / 2);
    chunks.push(ev({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index, ...(c.id ? { id: c.id } : {}), type: 'function', function: { name: c.name, arguments: args.slice(0, cut) } }] }, finish_reason: null }] }));
    chunks.push(ev({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index, function: { ...(opts.repeatName ? { name: c.name } : {}), arguments: args.slice(cut) } }] }, finish_reason: null }] }));
  });
  chunks.push(ev({ ...base, choices: [{ index: 0, delta: {}, finish_reason: r.doneReason ?? (r.toolCalls?.length ? 'tool_calls' : 'stop') }] }));
  if (opts.usage !== false) chunks.push(ev({ ...base, choices: [], usage: { prompt_tokens: r.promptEvalCount ?? 100, completion_tokens: r.evalCount ?? 10 } }));
  if (!opts.noDone) chunks.push('data: [DONE]\n\n');
  return { chunks };
}
