import { BUILTIN_PROVIDERS, type AgentConfig } from '../base/config.ts';
import { ProviderError, defaultHttpOptions, type HttpOptions } from './http.ts';
import { OllamaProvider } from './ollama.ts';
import { OpenAIProvider } from './openai.ts';
import type { Provider } from '../base/types.ts';
import { PREFLIGHT_TIMEOUT_MS } from '../../core/limits.ts';

// Model addressing (reference C.3) and the startup preflight (A.15 / B.7 num_ctx rules).

/** Context a routed model may adopt when the server reports a larger window (A.15). */
export const ADOPT_CTX_MAX = 131072;

export interface Route {
  provider: Provider;
  /** The name sent on the wire (prefix stripped when a provider matched). */
  model: string;
  /** The addressable name (prefix intact), for ready.model and model lists. */
  address: string;
  /** A provider prefix matched, or the default host is OpenAI-compatible. */
  routed: boolean;
}

export function withV1(url: string): string {
  const u = url.replace(/\/+$/, '');
  return u.endsWith('/v1') ? u : `${u}/v1`;
}

export function buildRoute(address: string, cfg: Pick<AgentConfig, 'host' | 'providers'>, env: NodeJS.ProcessEnv = process.env, http: HttpOptions = defaultHttpOptions(env)): Route {
  const slash = address.indexOf('/');
  if (slash > 0) {
    const prefix = address.slice(0, slash);
    const def = cfg.providers[prefix] ?? BUILTIN_PROVIDERS[prefix];
    if (def) {
      if (def.kind === 'anthropic') {
        throw new ProviderError('protocol', `provider '${prefix}' is of kind anthropic, which this build does not speak — use an OpenAI-compatible endpoint for it`);
      }
      const key = def.api_key ?? (def.api_key_env ? env[def.api_key_env] : undefined);
      return { provider: new OpenAIProvider(withV1(def.base_url), key, http), model: address.slice(slash + 1), address, routed: true };
    }
  }
  // Unknown prefixes fall through whole: Ollama names such as `hf.co/org/model` carry slashes.
  if (/\/v1\/?$/.test(cfg.host)) {
    return { provider: new OpenAIProvider(withV1(cfg.host), undefined, http), model: address, address, routed: true };
  }
  return { provider: new OllamaProvider(cfg.host, http), model: address, address, routed: false };
}

export interface Preflight {
  numCtx: number;
  /** undefined: omit `think` (the model thinks by default); false: the model cannot think. */
  think: boolean | undefined;
  note: string;
  contextLength?: number;
}

/**
 * The model's details within PREFLIGHT_TIMEOUT_MS in all: a server that accepts the connection
 * and never answers must not hold a front end's startup for the connect timeout times every
 * retry. `signal` (stdin closing, say) cancels it sooner.
 */
async function showWithin(route: Route, signal: AbortSignal | undefined) {
  const deadline = AbortSignal.timeout(PREFLIGHT_TIMEOUT_MS);
  try {
    return await route.provider.show(route.model, signal ? AbortSignal.any([signal, deadline]) : deadline);
  } catch (e) {
    if (deadline.aborted && !signal?.aborted) {
      throw new ProviderError('timeout', `the model server at ${route.provider.baseUrl} did not answer within ${PREFLIGHT_TIMEOUT_MS / 1000} s — check that it is running and not overloaded, or point rift at another with --host / RIFT_HOST`);
    }
    throw e;
  }
}

/**
 * Checks the model exists and can call tools, then settles num_ctx: clamp to the model's
 * maximum; a routed model adopts a larger window (up to 128k) unless num_ctx was set explicitly.
 * On Ollama num_ctx sizes the KV cache, so it is never inflated there.
 */
export async function preflight(route: Route, numCtx: number, numCtxExplicit: boolean, signal?: AbortSignal): Promise<Preflight> {
  const info = await showWithin(route, signal);
  if (!info.capabilities.includes('tools')) {
    throw new ProviderError('no_tools', `model '${route.address}' does not support tool calling (no 'tools' capability) — choose a tools-capable model (\`ollama list\`, or see ollama.com/search?c=tools)`);
  }
  const think = info.capabilities.includes('thinking') ? undefined : false;
  let ctx = numCtx;
  let note = '';
  const max = info.contextLength;
  if (max !== undefined) {
    if (ctx > max) {
      note = `(num_ctx clamped ${ctx} → ${max})`;
      ctx = max;
    } else if (route.routed && !numCtxExplicit && max > ctx) {
      const adopted = Math.min(max, ADOPT_CTX_MAX);
      if (adopted > ctx) {
        note = `(context budget ${ctx} → ${adopted}; /ctx overrides)`;
        ctx = adopted;
      }
    }
  }
  return { numCtx: ctx, think, note, contextLength: max };
}
