import { join } from 'node:path';
import { sha256Hex } from '../../core/digest.ts';
import { isRiftError } from '../../core/errors.ts';
import { ConfigLoader } from '../../config/loader.ts';
import { semanticModelDir, semanticModelTrustKey, type HookConfig } from '../../config/workspace-config.ts';
import { hooksKey } from '../../services/change-service.ts';
import { engineTrustKey, engineTrustLine } from '../../engine/definitions.ts';
import { PROJECT_CONFIG_FILE, loadAgentConfig, userDirs, type McpServerConfig, type ProjectConfigTrust } from '../base/config.ts';
import type { TrustStore } from '../policy/trust.ts';
import { discoverPlugins, type Plugin } from './plugins.ts';

// What a cloned repository asks to be trusted with before any of it runs or redirects the
// agent: a `.rift.json` that sets gated keys, `rift.toml` `[[hooks]]` (run after the agent's
// edits through the change engine), `rift.toml` language engines that name a program, arguments
// or initialization options of the project's choosing (started by every rift front end, the MCP
// server included, only once trusted) and the in-process embedding model it names (loaded only
// once trusted, the same way), project plugins that declare tools or hooks, and MCP
// servers the project declares (each started only once trusted). Each is
// one question with the choices `trust` / `skip`; skipping, or no answer, keeps it off. A
// decision is stored per content (a digest, or the plugin manifest text), so an edited file is
// asked about again. Front ends raise the questions; headless runs only note them.

export type TrustSubject =
  | { kind: 'project-config'; config: ProjectConfigTrust }
  | { kind: 'workspace-hooks'; hooks: readonly HookConfig[]; key: string }
  | { kind: 'language-engines'; engines: readonly ProjectEngine[] }
  | { kind: 'plugin'; plugin: Plugin }
  | { kind: 'mcp-server'; server: McpServerConfig };

export interface TrustRequest {
  subject: TrustSubject;
  question: string;
  detail: string[];
  /** Said instead of asking while auto-approve is on. */
  skippedNote: string;
  /** Said at startup while it is untrusted ('' when another note covers it). */
  startupNote: string;
  /** Trust-store keys a `trust` answer persists. */
  keys: string[];
}

export const TRUST_CHOICES: readonly string[] = ['trust', 'skip'];

/** `trust`, `yes` or `y`, trimmed and in any case; anything else (or no answer) is skip. */
export function trustAnswered(answer: string | null): boolean {
  return ['trust', 'yes', 'y'].includes((answer ?? '').trim().toLowerCase());
}

/** A `[languages.<id>].lsp` definition of the project's that waits for trust before it runs. */
export interface ProjectEngine {
  language: string;
  /** What it runs, for the question. */
  line: string;
  key: string;
}

/**
 * The workspace's `rift.toml` engine definitions that run what the project chose
 * (`engineTrustKey`), and the in-process embedding model it names (`semanticModelTrustKey`).
 */
export function workspaceEngines(cwd: string): ProjectEngine[] {
  const accepted = new ConfigLoader(cwd).tryCurrent();
  if (isRiftError(accepted)) return [];
  const engines = accepted.config.languages.flatMap((entry) => {
    const key = entry.enabled ? engineTrustKey(entry) : null;
    return key === null ? [] : [{ language: entry.id, line: engineTrustLine(entry), key }];
  });
  const semantic = accepted.config.search.semantic;
  const key = semantic.enabled ? semanticModelTrustKey(cwd, semantic) : null;
  if (key !== null) engines.push({ language: 'search.semantic', line: `[search.semantic] model: the ONNX embedding model in \`${semanticModelDir(cwd, semantic)}\`, loaded and run in this process`, key });
  return engines;
}

/** The workspace's `rift.toml` hooks, or none (no file, no hooks, or a file the engine refuses anyway). */
export function workspaceHooks(cwd: string): readonly HookConfig[] {
  const accepted = new ConfigLoader(cwd).tryCurrent();
  return isRiftError(accepted) ? [] : accepted.config.hooks;
}

/**
 * What an MCP server is, for its trust decision (reference B.11):
 * `name \0 command \0 args (joined \1) \0 env (sorted) \0 url \0 headers (sorted)`.
 */
export function mcpIdentity(s: McpServerConfig): string {
  const pairs = (m: Record<string, string>) =>
    Object.entries(m)
      .map(([k, v]) => `${k}=${v}`)
      .sort()
      .join('\x01');
  const t = s.transport;
  return t.kind === 'stdio' ? [s.name, t.command, t.args.join('\x01'), pairs(t.env), '', ''].join('\0') : [s.name, '', '', '', t.url, pairs(t.headers)].join('\0');
}

/** The trust-store key of one MCP server: a digest of its identity (a header's secret never lands in the store). */
export function mcpServerKey(s: McpServerConfig): string {
  return `mcp-server:sha256:${sha256Hex(mcpIdentity(s))}`;
}

/** What an MCP server runs or where it connects, one line. */
export function mcpServerLine(s: McpServerConfig): string {
  const t = s.transport;
  return t.kind === 'stdio' ? `\`${[t.command, ...t.args].join(' ')}\`` : t.url;
}

function mcpRequest(s: McpServerConfig): TrustRequest {
  const t = s.transport;
  const what =
    t.kind === 'stdio'
      ? `runs ${mcpServerLine(s)} — a program from this repo, inside the bash sandbox where there is one, whose tools the model can call`
      : `connects to ${t.url} — the model's calls to its tools, and what they carry from your files, go there`;
  const detail =
    t.kind === 'stdio'
      ? [`command: ${mcpServerLine(s)}`, ...(Object.keys(t.env).length > 0 ? [`environment: ${Object.keys(t.env).sort().join(', ')}`] : [])]
      : [`url: ${t.url}`, ...(Object.keys(t.headers).length > 0 ? [`headers: ${Object.keys(t.headers).sort().join(', ')}`] : [])];
  return {
    subject: { kind: 'mcp-server', server: s },
    question: `Project MCP server '${s.name}' ${what}. Trust this server on this machine?`,
    detail,
    skippedNote: `project MCP server '${s.name}' left untrusted — it does not start while auto-approve is on ${SEPARATE}`,
    startupNote: `project MCP server '${s.name}' not trusted yet — not started: ${mcpServerLine(s)}. Trust it with \`rift trust\` or at the trust question of rift --serve or rift acp`,
    keys: [mcpServerKey(s)],
  };
}

function hookLine(h: HookConfig): string {
  return `${h.id} (${h.role}): \`${[h.program, ...h.arguments].join(' ')}\``;
}

const SEPARATE = "(trusting a repo's commands is a separate decision from approving the agent's edits). Turn approval back on to be asked.";

/** The questions for everything in the repository that waits for trust, the project config first. */
export function trustRequests(o: {
  projectConfig: ProjectConfigTrust | null;
  hooks: readonly HookConfig[];
  engines: readonly ProjectEngine[];
  plugins: readonly Plugin[];
  /** The configured MCP servers; the project's untrusted ones are asked about. */
  mcp: readonly McpServerConfig[];
  trust: TrustStore;
}): TrustRequest[] {
  const out: TrustRequest[] = [];
  if (o.projectConfig) {
    const c = o.projectConfig;
    const n = c.changes.length;
    out.push({
      subject: { kind: 'project-config', config: c },
      question: `Project config '${PROJECT_CONFIG_FILE}' changes ${n} setting(s) a repository may not change on its own — where the model runs, API keys, approval or hooks. Trust this file on this machine?`,
      detail: c.changes,
      skippedNote: `project config '${PROJECT_CONFIG_FILE}' left untrusted — its ${n} gated setting(s) stay off while auto-approve is on ${SEPARATE}`,
      startupNote: `project ${PROJECT_CONFIG_FILE} not trusted yet — ignored: ${c.changes.join('; ')}. Trust it with \`rift trust\` or at the question in rift --serve`,
      keys: [c.key],
    });
  }
  if (o.hooks.length > 0) {
    const key = hooksKey(o.hooks);
    if (!o.trust.has(key)) {
      const n = o.hooks.length;
      out.push({
        subject: { kind: 'workspace-hooks', hooks: o.hooks, key },
        question: `Project rift.toml declares ${n} hook(s) — each runs a program from this repo after the agent's edits. Trust these hooks on this machine?`,
        detail: o.hooks.map(hookLine),
        skippedNote: `project rift.toml hooks left untrusted — its ${n} hook(s) do not run after the agent's edits while auto-approve is on ${SEPARATE}`,
        startupNote: `project rift.toml hooks not trusted yet — they do not run after the agent's edits: ${o.hooks.map((h) => h.id).join(', ')}. Trust them with \`rift trust\` or at the question in rift --serve`,
        keys: [key],
      });
    }
  }
  const engines = o.engines.filter((e) => !o.trust.has(e.key));
  if (engines.length > 0) {
    const n = engines.length;
    out.push({
      subject: { kind: 'language-engines', engines },
      question: `Project rift.toml configures ${n} engine(s) of its own choosing — a language engine's program, arguments or options (started when a rename, removal, move or edit needs it), or an embedding model rift loads and runs. Trust them on this machine?`,
      detail: engines.map((e) => e.line),
      skippedNote: `project rift.toml engines left untrusted — ${engines.map((e) => e.language).join(', ')} run no engine while auto-approve is on ${SEPARATE}`,
      startupNote: `project rift.toml engines not trusted yet — not started: ${engines.map((e) => e.language).join(', ')}. Trust them with \`rift trust\` or at the question in rift --serve`,
      keys: engines.map((e) => e.key),
    });
  }
  for (const p of o.plugins) {
    if (p.scope !== 'project' || (p.tools.length === 0 && p.hooks.length === 0) || o.trust.has(p.key)) continue;
    const n = p.tools.length;
    const what = n > 0 ? `${n} tool(s)` : `${p.hooks.length} post-edit hook(s)`;
    const runs = n > 0 ? 'each runs a command from this repo when the model calls it' : 'each runs a command from this repo after every edit';
    out.push({
      subject: { kind: 'plugin', plugin: p },
      question: `Project plugin '${p.name}' declares ${what} — ${runs}. Trust this manifest on this machine?`,
      detail: [...p.tools.map((t) => `${t.name}: ${t.description} — \`${t.command}\``), ...p.hooks.map((h) => `post_edit hook — \`${h}\``)],
      skippedNote: `project plugin '${p.name}' left untrusted — ${n > 0 ? `its ${what} stay unregistered` : `its ${what} stay inactive`} while auto-approve is on ${SEPARATE}`,
      startupNote: n > 0 ? `plugin '${p.name}': tools not registered (manifest not trusted yet) — approve the startup prompt (TUI) or the trust question (serve consumers) to enable them` : '',
      keys: [p.key, ...p.hooks],
    });
  }
  for (const s of o.mcp) if (s.scope === 'project' && !o.trust.has(mcpServerKey(s))) out.push(mcpRequest(s));
  return out;
}

/** Everything in the workspace at `cwd` that waits for trust, read from disk (for `rift trust` and `rift doctor`). */
export function pendingTrust(cwd: string, trust: TrustStore, env: NodeJS.ProcessEnv = process.env): TrustRequest[] {
  const { config, projectTrust } = loadAgentConfig(cwd, {}, env, (key) => trust.has(key));
  const { plugins } = discoverPlugins(join(cwd, '.rift', 'plugins'), join(userDirs(env).config, 'plugins'));
  return trustRequests({ projectConfig: projectTrust, hooks: workspaceHooks(cwd), engines: workspaceEngines(cwd), plugins, mcp: config.mcp, trust });
}
