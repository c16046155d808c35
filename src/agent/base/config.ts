import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

// Agent configuration (reference C.1–C.2, C.5): the user file, then the project's `.rift.json`
// overlaid so that a cloned repository can only tighten security, then env, then flags.

export const DEFAULT_HOST = 'http://localhost:11434';
export const DEFAULT_MODEL = 'gemma4:26b';
export const DEFAULT_NUM_CTX = 32768;
export const DEFAULT_TEMPERATURE = 0.2;
export const DEFAULT_MAX_ITERATIONS = 40;

export interface ProviderConfig {
  base_url: string;
  kind?: 'openai' | 'anthropic';
  api_key_env?: string;
  api_key?: string;
}

export interface PermissionConfig {
  approve: boolean;
  allow: string[];
  ask: string[];
  deny: string[];
  bash_wrapper?: string;
}

export interface AgentConfig {
  host: string;
  model: string;
  numCtx: number;
  /** Whether num_ctx came from config, env or a flag (adoption only happens when it did not). */
  numCtxExplicit: boolean;
  temperature: number;
  maxIterations: number;
  providers: Record<string, ProviderConfig>;
  permissions: PermissionConfig;
  /** Model roles for the agent tool (`{"smart": "<address>"}`): the project extends the user's. */
  models: Record<string, string>;
  /** `hooks.post_edit` per file: the user's always run, the project's only once trusted (B.13). */
  postEditHooks: { user: string[]; project: string[] };
}

export interface AgentFlags {
  host?: string;
  model?: string;
  numCtx?: number;
  temperature?: number;
  maxIterations?: number;
  /** `--approve` only forces approval on (C.6). */
  approve?: boolean;
}

/** Per-user directories (decisions.md): $RIFT_HOME, else XDG, else ~/.local/share and ~/.config. */
export function userDirs(env: NodeJS.ProcessEnv = process.env): { data: string; config: string } {
  if (env.RIFT_HOME) return { data: env.RIFT_HOME, config: env.RIFT_HOME };
  const home = env.HOME ?? env.USERPROFILE ?? homedir();
  return {
    data: env.XDG_DATA_HOME ? join(env.XDG_DATA_HOME, 'rift') : join(home, '.local', 'share', 'rift'),
    config: env.XDG_CONFIG_HOME ? join(env.XDG_CONFIG_HOME, 'rift') : join(home, '.config', 'rift'),
  };
}

type Raw = Record<string, unknown>;

function readJson(path: string, warnings: string[]): Raw | null {
  if (!existsSync(path)) return null;
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Raw;
    warnings.push(`ignoring ${path}: the file must hold a JSON object`);
  } catch (e) {
    warnings.push(`ignoring ${path}: ${(e as Error).message}`);
  }
  return null;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

function permissionsOf(raw: Raw | null): Raw {
  const p = raw?.permissions;
  return p && typeof p === 'object' ? (p as Raw) : {};
}

/** Legacy `bash_allow` / `bash_deny` entries are bare command patterns; fold them into Bash(...) rules. */
function bashRules(list: unknown): string[] {
  return strings(list).map((p) => (/^\w+\(.*\)$/.test(p) ? p : `Bash(${p})`));
}

function postEditOf(raw: Raw | null): string[] {
  const h = raw?.hooks;
  return h && typeof h === 'object' ? strings((h as Raw).post_edit).filter((c) => c.trim() !== '') : [];
}

function rolesOf(raw: Raw | null): Record<string, string> {
  const m = raw?.models;
  if (!m || typeof m !== 'object' || Array.isArray(m)) return {};
  return Object.fromEntries(Object.entries(m as Raw).filter((e): e is [string, string] => str(e[1]) !== undefined));
}

function providersOf(raw: Raw | null): Record<string, ProviderConfig> {
  const out: Record<string, ProviderConfig> = {};
  const p = raw?.providers;
  if (!p || typeof p !== 'object') return out;
  for (const [name, v] of Object.entries(p as Raw)) {
    if (!v || typeof v !== 'object') continue;
    const e = v as Raw;
    const base = str(e.base_url);
    if (!base) continue;
    out[name] = {
      base_url: base,
      kind: e.kind === 'anthropic' ? 'anthropic' : 'openai',
      api_key_env: str(e.api_key_env),
      api_key: str(e.api_key),
    };
  }
  return out;
}

export interface LoadedConfig {
  config: AgentConfig;
  warnings: string[];
}

export function loadAgentConfig(cwd: string, flags: AgentFlags = {}, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  const warnings: string[] = [];
  const user = readJson(join(userDirs(env).config, 'config.json'), warnings);
  const project = readJson(join(cwd, '.rift.json'), warnings);
  return { config: mergeConfig(user, project, flags, env, warnings), warnings };
}

/** The overlay rules of C.1, separated from I/O so each rule is testable alone. */
export function mergeConfig(user: Raw | null, project: Raw | null, flags: AgentFlags, env: NodeJS.ProcessEnv, warnings: string[]): AgentConfig {
  const pick = <T>(f: (r: Raw | null) => T | undefined): T | undefined => f(project) ?? f(user);

  const providers = providersOf(user);
  for (const [name, def] of Object.entries(providersOf(project))) {
    if (name in providers) {
      warnings.push(`project config redefines provider '${name}'; keeping the user definition (a project must not redirect where API keys are sent)`);
    } else {
      // A project may add a provider but never supply where its key comes from.
      providers[name] = { base_url: def.base_url, kind: def.kind, api_key_env: def.api_key_env };
    }
  }

  const up = permissionsOf(user);
  const pp = permissionsOf(project);
  if (strings(pp.allow).length > 0 || strings(pp.bash_allow).length > 0) {
    warnings.push("project .rift.json 'allow'/'bash_allow' ignored — allow patterns load from the user config only (a repository must not loosen what the agent may do)");
  }
  if (pp.bash_wrapper !== undefined) warnings.push("project .rift.json 'bash_wrapper' ignored — it is a user-only key");
  const userApprove = typeof up.approve === 'boolean' ? up.approve : true;
  const approve = flags.approve === true || pp.approve === true ? true : userApprove;

  const numCtxFromFiles = pick((r) => num(r?.num_ctx));
  const envCtx = env.RIFT_NUM_CTX ? Number(env.RIFT_NUM_CTX) : undefined;
  const numCtx = flags.numCtx ?? (envCtx && envCtx > 0 ? envCtx : undefined) ?? numCtxFromFiles;

  return {
    host: trimSlash(flags.host ?? str(env.RIFT_HOST) ?? pick((r) => str(r?.host)) ?? DEFAULT_HOST),
    model: flags.model ?? str(env.RIFT_MODEL) ?? pick((r) => str(r?.model)) ?? DEFAULT_MODEL,
    numCtx: numCtx ?? DEFAULT_NUM_CTX,
    numCtxExplicit: numCtx !== undefined,
    temperature: flags.temperature ?? pick((r) => num(r?.temperature)) ?? DEFAULT_TEMPERATURE,
    maxIterations: flags.maxIterations ?? pick((r) => num(r?.max_iterations)) ?? DEFAULT_MAX_ITERATIONS,
    providers,
    models: { ...rolesOf(user), ...rolesOf(project) },
    permissions: {
      approve,
      allow: [...strings(up.allow), ...bashRules(up.bash_allow)],
      ask: [...strings(up.ask), ...strings(pp.ask)],
      deny: [...strings(up.deny), ...bashRules(up.bash_deny), ...strings(pp.deny), ...bashRules(pp.bash_deny)],
      bash_wrapper: str(up.bash_wrapper),
    },
    postEditHooks: { user: postEditOf(user), project: postEditOf(project) },
  };
}

function trimSlash(u: string): string {
  return u.replace(/\/+$/, '');
}
