import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { sha256Hex } from '../../core/digest.ts';

// Agent configuration (reference C.1–C.2, C.5): the user file, then the project's `.rift.json`
// overlaid, then env, then flags. A cloned repository can only tighten: its deny and ask rules
// join the user's, and nothing it says changes where the model runs (host, providers, a model
// routed to a provider), where an API key is sent, the approval mode or the hooks that run —
// until the user trusts that exact file (its content digest), when those keys apply too. Allow
// rules, the bash wrapper and loosening the sandbox stay user-only even then.

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

/** Providers every build knows (reference C.3); a user entry of the same name overrides one. */
export const BUILTIN_PROVIDERS: Readonly<Record<string, ProviderConfig>> = {
  openai: { base_url: 'https://api.openai.com/v1', kind: 'openai', api_key_env: 'OPENAI_API_KEY' },
};

/** The OS sandbox for bash: `auto` uses it where the machine allows, `required` refuses commands without it. */
export interface SandboxConfig {
  mode: 'auto' | 'required' | 'off';
  /** Network inside the sandbox (off unless the user config turns it on). */
  network: boolean;
  /** Writable paths besides the workspace (user config only). */
  writable: string[];
}

export interface PermissionConfig {
  approve: boolean;
  allow: string[];
  ask: string[];
  deny: string[];
  bash_wrapper?: string;
}

/**
 * An MCP server whose tools the agent offers (reference B.11): from the user config, the
 * project's `.rift.json` (started only once the user trusts that exact server), or the editor
 * driving the session (ACP `session/new`).
 */
export interface McpServerConfig {
  name: string;
  scope: 'user' | 'project' | 'client';
  transport: { kind: 'stdio'; command: string; args: string[]; env: Record<string, string> } | { kind: 'http'; url: string; headers: Record<string, string> };
  /** A stdio server runs inside the bash sandbox: always for a project's, by choice (`"sandbox": true`) for the user's. */
  sandbox: boolean;
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
  /** The project file's gated keys apply (the user trusted its exact content). */
  projectTrusted: boolean;
  sandbox: SandboxConfig;
  /** MCP servers: the user's, then the names the project adds (each trust-gated). */
  mcp: McpServerConfig[];
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

function readJson(path: string, warnings: string[]): { raw: Raw; text: string } | null {
  if (!existsSync(path)) return null;
  try {
    const text = readFileSync(path, 'utf8');
    const v = JSON.parse(text) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) return { raw: v as Raw, text };
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

/** A project file asking for what only the user's trust allows. */
export interface ProjectConfigTrust {
  /** The project file, absolute. */
  path: string;
  /** Trust-store key: `project-config:sha256:<digest of the exact file text>`. */
  key: string;
  /** What trusting it changes, one line each. */
  changes: string[];
  /** The configuration with the file trusted. */
  config: AgentConfig;
}

export interface LoadedConfig {
  config: AgentConfig;
  warnings: string[];
  /** Set while the project file's gated keys wait for a trust decision (`config` leaves them out). */
  projectTrust: ProjectConfigTrust | null;
}

export const PROJECT_CONFIG_FILE = '.rift.json';

export function projectConfigKey(text: string): string {
  return `project-config:sha256:${sha256Hex(text)}`;
}

/** Loads both files; `trusted` answers whether a trust-store key was granted. */
export function loadAgentConfig(cwd: string, flags: AgentFlags = {}, env: NodeJS.ProcessEnv = process.env, trusted: (key: string) => boolean = () => false): LoadedConfig {
  const warnings: string[] = [];
  const user = readJson(join(userDirs(env).config, 'config.json'), warnings)?.raw ?? null;
  const path = join(cwd, PROJECT_CONFIG_FILE);
  const file = readJson(path, warnings);
  const project = file?.raw ?? null;
  const key = file ? projectConfigKey(file.text) : '';
  const granted = file !== null && trusted(key);
  const config = mergeConfig(user, project, flags, env, warnings, granted);
  if (!file || granted) return { config, warnings, projectTrust: null };
  const full = mergeConfig(user, project, flags, env, [], true);
  const changes = gatedChanges(config, full);
  return { config: changes.length === 0 ? full : config, warnings, projectTrust: changes.length === 0 ? null : { path, key, changes, config: full } };
}

/** What the trusted configuration does that the untrusted one does not, one line each. */
export function gatedChanges(untrusted: AgentConfig, trusted: AgentConfig): string[] {
  const out: string[] = [];
  if (trusted.host !== untrusted.host) out.push(`host: ${trusted.host} (instead of ${untrusted.host}) — where the model runs and your prompts and files are sent`);
  for (const [name, p] of Object.entries(trusted.providers)) {
    if (name in untrusted.providers) continue;
    out.push(`provider '${name}': ${p.base_url}${p.api_key_env ? `, sent the API key in $${p.api_key_env}` : ''}`);
  }
  if (trusted.model !== untrusted.model) out.push(`model: ${trusted.model} (instead of ${untrusted.model})`);
  for (const [role, m] of Object.entries(trusted.models)) {
    if (untrusted.models[role] !== m) out.push(`model role '${role}': ${m}`);
  }
  if (trusted.permissions.approve !== untrusted.permissions.approve) out.push('approval: off — the agent edits files and runs commands without asking');
  for (const h of trusted.postEditHooks.project) out.push(`post_edit hook: ${h} — runs after every edit`);
  return out;
}

/** A model address whose prefix names a provider: it leaves the default host. */
function routesToProvider(model: string, providers: Record<string, ProviderConfig>): boolean {
  const slash = model.indexOf('/');
  return slash > 0 && (model.slice(0, slash) in providers || model.slice(0, slash) in BUILTIN_PROVIDERS);
}

const textMap = (v: unknown): Record<string, string> =>
  v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Raw).filter((e): e is [string, string] => typeof e[1] === 'string')) : {};

/** `"mcp": {"<name>": {"command", "args", "env"} | {"url", "headers"}}` of one file; a bad entry is skipped with a warning. */
function mcpOf(raw: Raw | null, scope: 'user' | 'project', file: string, warnings: string[]): McpServerConfig[] {
  const m = raw?.mcp;
  if (m === undefined) return [];
  if (!m || typeof m !== 'object' || Array.isArray(m)) {
    warnings.push(`ignoring 'mcp' in ${file}: it must map server names to {"command", "args", "env"} or {"url", "headers"}`);
    return [];
  }
  const out: McpServerConfig[] = [];
  for (const [name, v] of Object.entries(m as Raw)) {
    const e = v && typeof v === 'object' && !Array.isArray(v) ? (v as Raw) : {};
    const command = str(e.command);
    const url = str(e.url);
    if ((command === undefined) === (url === undefined)) {
      warnings.push(`ignoring MCP server '${name}' in ${file}: it needs either a 'command' (a stdio server) or a 'url' (Streamable HTTP), not ${command ? 'both' : 'neither'}`);
      continue;
    }
    if (url !== undefined && !/^https?:\/\//i.test(url)) {
      warnings.push(`ignoring MCP server '${name}' in ${file}: 'url' must start with http:// or https://, got ${JSON.stringify(url)}`);
      continue;
    }
    const transport: McpServerConfig['transport'] =
      command !== undefined ? { kind: 'stdio', command, args: strings(e.args), env: textMap(e.env) } : { kind: 'http', url: url!, headers: textMap(e.headers) };
    if (scope === 'project' && e.sandbox === false) warnings.push(`project ${PROJECT_CONFIG_FILE} MCP server '${name}': 'sandbox: false' ignored — a repository's server runs in the sandbox`);
    out.push({ name, scope, transport, sandbox: scope === 'project' || e.sandbox === true });
  }
  return out;
}

/** The user's servers, then each server the project adds; a project cannot redefine one of the user's. */
function mergeMcp(user: Raw | null, project: Raw | null, warnings: string[]): McpServerConfig[] {
  const mine = mcpOf(user, 'user', 'the user config', warnings);
  const names = new Set(mine.map((s) => s.name));
  const theirs = mcpOf(project, 'project', PROJECT_CONFIG_FILE, warnings).filter((s) => {
    if (!names.has(s.name)) return true;
    warnings.push(`project config redefines MCP server '${s.name}'; keeping the user definition (a project must not change what your servers run)`);
    return false;
  });
  return [...mine, ...theirs];
}

function sandboxOf(raw: Raw | null): Raw {
  const v = raw?.sandbox;
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Raw) : {};
}

/** The user's sandbox settings; the project may only require it or keep the network off. */
function mergeSandbox(user: Raw | null, project: Raw | null, warnings: string[]): SandboxConfig {
  const u = sandboxOf(user);
  const p = sandboxOf(project);
  const modes = ['auto', 'required', 'off'] as const;
  const mode = modes.find((m) => m === u.mode) ?? 'auto';
  const out: SandboxConfig = { mode, network: u.network === true, writable: strings(u.writable) };
  if (p.mode === 'required') out.mode = 'required';
  else if (p.mode !== undefined && p.mode !== out.mode) warnings.push(`project ${PROJECT_CONFIG_FILE} 'sandbox.mode' ${JSON.stringify(p.mode)} ignored — a repository may require the sandbox, never loosen it`);
  if (p.network === false) out.network = false;
  else if (p.network !== undefined && p.network !== out.network) warnings.push(`project ${PROJECT_CONFIG_FILE} 'sandbox.network' ignored — network access comes from the user config only`);
  if (p.writable !== undefined) warnings.push(`project ${PROJECT_CONFIG_FILE} 'sandbox.writable' ignored — it is a user-only key`);
  return out;
}

/**
 * The overlay rules of C.1, separated from I/O so each rule is testable alone. `projectTrusted`
 * lets the project's gated keys apply: host, providers, a model or role routed to a provider,
 * `approve: false`, and (in PostEditHooks.fromConfig) its post-edit hooks.
 */
export function mergeConfig(user: Raw | null, project: Raw | null, flags: AgentFlags, env: NodeJS.ProcessEnv, warnings: string[], projectTrusted = false): AgentConfig {
  const pick = <T>(f: (r: Raw | null) => T | undefined): T | undefined => f(project) ?? f(user);

  const providers = providersOf(user);
  const projectProviders = providersOf(project);
  for (const [name, def] of Object.entries(projectProviders)) {
    if (name in providers) {
      warnings.push(`project config redefines provider '${name}'; keeping the user definition (a project must not redirect where API keys are sent)`);
    } else if (projectTrusted) {
      // A literal key in a repository file is never used; the key comes from the user's environment.
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
  const projectApprove = typeof pp.approve === 'boolean' ? pp.approve : undefined;
  const approve = flags.approve === true || projectApprove === true ? true : projectTrusted && projectApprove === false ? false : userApprove;

  const numCtxFromFiles = pick((r) => num(r?.num_ctx));
  const envCtx = env.RIFT_NUM_CTX ? Number(env.RIFT_NUM_CTX) : undefined;
  const numCtx = flags.numCtx ?? (envCtx && envCtx > 0 ? envCtx : undefined) ?? numCtxFromFiles;

  // Until trusted, the project names a model only when it stays on the default host.
  const allProviders = { ...projectProviders, ...providers };
  const projectModel = str(project?.model);
  const modelFromProject = projectModel !== undefined && (projectTrusted || !routesToProvider(projectModel, allProviders)) ? projectModel : undefined;
  const roles = { ...rolesOf(user) };
  for (const [role, m] of Object.entries(rolesOf(project))) if (projectTrusted || !routesToProvider(m, allProviders)) roles[role] = m;

  return {
    host: trimSlash(flags.host ?? str(env.RIFT_HOST) ?? (projectTrusted ? str(project?.host) : undefined) ?? str(user?.host) ?? DEFAULT_HOST),
    model: flags.model ?? str(env.RIFT_MODEL) ?? modelFromProject ?? str(user?.model) ?? DEFAULT_MODEL,
    numCtx: numCtx ?? DEFAULT_NUM_CTX,
    numCtxExplicit: numCtx !== undefined,
    temperature: flags.temperature ?? pick((r) => num(r?.temperature)) ?? DEFAULT_TEMPERATURE,
    maxIterations: flags.maxIterations ?? pick((r) => num(r?.max_iterations)) ?? DEFAULT_MAX_ITERATIONS,
    providers,
    models: roles,
    permissions: {
      approve,
      allow: [...strings(up.allow), ...bashRules(up.bash_allow)],
      ask: [...strings(up.ask), ...strings(pp.ask)],
      deny: [...strings(up.deny), ...bashRules(up.bash_deny), ...strings(pp.deny), ...bashRules(pp.bash_deny)],
      bash_wrapper: str(up.bash_wrapper),
    },
    postEditHooks: { user: postEditOf(user), project: postEditOf(project) },
    projectTrusted,
    sandbox: mergeSandbox(user, project, warnings),
    mcp: mergeMcp(user, project, warnings),
  };
}

function trimSlash(u: string): string {
  return u.replace(/\/+$/, '');
}
