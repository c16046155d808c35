import { LineSplitter, type StreamLine } from '../../core/lines.ts';
import { MODEL_STREAM_LINE_BYTES_MAX } from '../../core/limits.ts';

// HTTP plumbing shared by the providers (reference E.1 transport): timeouts, one retry policy
// for the initial send, a line splitter with tail flush, and errors a person can act on.

export type ProviderErrorKind = 'unreachable' | 'model_missing' | 'no_tools' | 'http' | 'timeout' | 'stream' | 'cancelled' | 'protocol';

export class ProviderError extends Error {
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

export interface HttpOptions {
  /** Until response headers arrive (covers connect and the server's queueing). */
  connectTimeoutMs: number;
  /** Longest silence between two body chunks. 0 disables. */
  readIdleTimeoutMs: number;
  /** Attempts for the initial send on a connect failure (never mid-stream). */
  attempts: number;
  backoffMs: number;
}

export function defaultHttpOptions(env: NodeJS.ProcessEnv = process.env): HttpOptions {
  return { connectTimeoutMs: 10_000, readIdleTimeoutMs: readTimeoutFromEnv(env), attempts: 3, backoffMs: 400 };
}

/** RIFT_READ_TIMEOUT in seconds; 0 means none; invalid falls back to 120 s. */
export function readTimeoutFromEnv(env: NodeJS.ProcessEnv): number {
  const raw = env.RIFT_READ_TIMEOUT;
  if (raw === undefined || raw.trim() === '') return 120_000;
  const n = Number(raw);
  return Number.isFinite(n) && n >= 0 ? Math.round(n * 1000) : 120_000;
}

function cancelled(): ProviderError {
  return new ProviderError('cancelled', 'cancelled by user');
}

function networkCode(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (e as Error).message ?? 'network error';
}

/**
 * POSTs or GETs with the connect timeout and the initial-send retry. Returns the response
 * once headers arrive; a non-2xx status is turned into a ProviderError by `failOnStatus`.
 */
export async function send(url: string, init: RequestInit, opts: HttpOptions, signal?: AbortSignal): Promise<Response> {
  let wait = opts.backoffMs;
  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) throw cancelled();
    const ctl = new AbortController();
    const onAbort = () => ctl.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ctl.abort();
    }, opts.connectTimeoutMs);
    try {
      const res = await fetch(url, { ...init, signal: ctl.signal });
      // The body keeps streaming under ctl; hand the abort link to the reader.
      clearTimeout(timer);
      return withAbort(res, ctl, signal, onAbort);
    } catch (e) {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (signal?.aborted) throw cancelled();
      const retryable = attempt < opts.attempts;
      if (timedOut) {
        if (!retryable) {
          throw new ProviderError('timeout', `the model server at ${origin(url)} did not answer within ${Math.round(opts.connectTimeoutMs / 1000)} s — check that it is running and not overloaded`);
        }
      } else if (!retryable) {
        throw new ProviderError('unreachable', `cannot reach the model server at ${origin(url)} (${networkCode(e)}) — start it (for Ollama: \`ollama serve\`) or point rift at it with --host / RIFT_HOST`);
      }
      await delay(wait, signal);
      wait *= 2;
    }
  }
}

interface AbortLinked {
  ctl: AbortController;
  detach: () => void;
}
const links = new WeakMap<Response, AbortLinked>();

function withAbort(res: Response, ctl: AbortController, signal: AbortSignal | undefined, onAbort: () => void): Response {
  links.set(res, { ctl, detach: () => signal?.removeEventListener('abort', onAbort) });
  return res;
}

function origin(url: string): string {
  try {
    const u = new URL(url);
    return u.origin;
  } catch {
    return url;
  }
}

function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(cancelled());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The server's own words for a failed request: `error` string, `error.message`, or the body's head. */
export function apiErrorMessage(body: string): string {
  try {
    const j = JSON.parse(body) as { error?: unknown; message?: unknown };
    if (typeof j.error === 'string') return j.error;
    if (j.error && typeof j.error === 'object' && typeof (j.error as { message?: unknown }).message === 'string') {
      return (j.error as { message: string }).message;
    }
    if (typeof j.message === 'string') return j.message;
  } catch {
    // not JSON: fall through to the raw head
  }
  const head = body.trim().slice(0, 600);
  return head.length > 0 ? head : '(empty body)';
}

/** Reads a failed response's body and classifies it; a 404 that names a model is `model_missing`. */
export async function failOnStatus(res: Response, model: string | undefined, hint: string): Promise<never> {
  const body = await res.text().catch(() => '');
  release(res);
  const msg = apiErrorMessage(body);
  if (model !== undefined && (res.status === 404 || /model .*not found|not found.*model|no such model|does not exist/i.test(msg))) {
    throw new ProviderError('model_missing', `model '${model}' is not available: ${msg} — ${hint}`, res.status);
  }
  throw new ProviderError('http', `model server returned HTTP ${res.status}: ${msg}`, res.status);
}

export function release(res: Response): void {
  const l = links.get(res);
  if (l) {
    l.detach();
    links.delete(res);
  }
}

/**
 * Splits a streamed body into lines, tolerating lines split across reads and a final line
 * with no newline, each bounded. Enforces the read-idle timeout and honours cancel.
 */
export async function* lines(res: Response, opts: HttpOptions, signal?: AbortSignal): AsyncGenerator<string> {
  const link = links.get(res);
  const body = res.body;
  if (!body) return;
  const reader = body.getReader();
  const splitter = new LineSplitter(MODEL_STREAM_LINE_BYTES_MAX);
  const each = (line: StreamLine): string => {
    if ('line' in line) return line.line;
    throw new ProviderError('stream', `the model server sent a line of ${line.overlong} bytes, over the ${MODEL_STREAM_LINE_BYTES_MAX}-byte bound`);
  };
  let finished = false;
  try {
    for (;;) {
      if (signal?.aborted) throw cancelled();
      const { done, value } = await readWithIdle(reader, opts.readIdleTimeoutMs, signal, link?.ctl);
      if (done) break;
      for (const line of splitter.push(value)) yield each(line);
    }
    for (const line of splitter.end()) yield each(line);
    finished = true;
  } finally {
    reader.releaseLock();
    // A body read to its end leaves the connection for reuse; only an abandoned one is cut.
    if (!finished) link?.ctl.abort();
    release(res);
  }
}

async function readWithIdle(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  idleMs: number,
  signal: AbortSignal | undefined,
  ctl: AbortController | undefined,
): Promise<ReadableStreamReadResult<Uint8Array>> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const guards: Promise<never>[] = [];
  if (idleMs > 0) {
    guards.push(
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          // Reject before aborting so the race settles with the timeout, not the abort it causes.
          reject(new ProviderError('timeout', `the model server sent nothing for ${Math.round(idleMs / 1000)} s (read timeout) — the model may be loading or stuck; check the server, or raise RIFT_READ_TIMEOUT`));
          ctl?.abort();
        }, idleMs);
      }),
    );
  }
  if (signal) {
    guards.push(
      new Promise<never>((_, reject) => {
        onAbort = () => {
          reject(cancelled());
          ctl?.abort();
        };
        signal.addEventListener('abort', onAbort, { once: true });
      }),
    );
  }
  try {
    return await Promise.race([reader.read(), ...guards]);
  } catch (e) {
    if (e instanceof ProviderError) throw e;
    if (signal?.aborted) throw cancelled();
    throw new ProviderError('stream', `the model stream broke off: ${(e as Error).message}`);
  } finally {
    if (timer) clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}
