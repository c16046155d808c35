import type { AgentConfig } from '../base/config.ts';
import { buildRoute } from './routing.ts';

// Model discovery (reference A.14), shared by serve's `list_models` and the TUI's `/model`
// picker: the default host's list, then each provider's as `<name>/<model>`, duplicates removed.

export const PROBE_TIMEOUT_MS = 2500;

/**
 * Every model reachable now. The providers probed are the configured ones plus the current
 * model's built-in prefix; each probe has 2.5 s, and an unreachable server is skipped silently.
 */
export async function discoverModels(cfg: Pick<AgentConfig, 'host' | 'providers'>, current: string, env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  const names = new Set(Object.keys(cfg.providers));
  const prefix = current.includes('/') ? current.slice(0, current.indexOf('/')) : '';
  if (prefix === 'openai' && !cfg.providers.openai) names.add('openai');
  const probe = async (addr: string, withPrefix: string) => {
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), PROBE_TIMEOUT_MS);
    try {
      // A provider this build cannot speak (or a bad entry) is skipped like an unreachable one.
      const route = buildRoute(addr, { host: cfg.host, providers: cfg.providers }, env);
      const list = await route.provider.tags(ctl.signal);
      return list.map((m) => (withPrefix ? `${withPrefix}/${m}` : m));
    } catch {
      return [];
    } finally {
      clearTimeout(timer);
    }
  };
  // Each probe answers [] on any failure, so this never rejects.
  const lists = await Promise.all([probe('probe', ''), ...[...names].sort().map((name) => probe(`${name}/probe`, name))]);
  return [...new Set(lists.flat())];
}
