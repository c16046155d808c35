import { join } from 'node:path';
import { loadAgentConfig, userDirs, type AgentConfig, type AgentFlags, type McpServerConfig } from '../base/config.ts';
import type { Approval } from '../policy/approval.ts';
import type { Gate } from '../policy/gate.ts';
import { PostEditHooks } from '../policy/hooks.ts';
import { Sandbox } from '../policy/sandbox.ts';
import { TrustStore } from '../policy/trust.ts';
import { buildRoute, preflight, type Route } from '../providers/routing.ts';
import { log } from '../../core/log.ts';
import type { CodeServices, CommandRunner, EditorFiles } from '../tools/context.ts';
import { ToolRegistry } from '../tools/registry.ts';
import { discoverPersonas, rolesAndPersonasSection, type Persona } from '../extensions/personas.ts';
import { discoverPlugins, pluginTool, type Plugin } from '../extensions/plugins.ts';
import { McpServers } from '../extensions/mcp-servers.ts';
import { mcpServerKey, trustRequests, workspaceEngines, workspaceHooks, type TrustRequest } from '../extensions/project-trust.ts';
import { hooksKey } from '../../services/change-service.ts';
import { canonicalRoot } from '../../workspace/root.ts';
import { compareNames, discoverSkills, skillsSection, skillTool, type Skill } from '../extensions/skills.ts';
import { Agent } from './agent.ts';
import { systemPrompt } from './prompt.ts';
import { createApproval, openSession, type OpenedSession } from './setup.ts';
import { agentTool } from './subagents.ts';
import { WorkspaceCode } from './workspace-code.ts';
import { Session } from '../session/session.ts';

// One assembly of the agent for every front end (`-p`, `--serve`, the TUI, and later ACP):
// configuration, the model route and its preflight, the session, approval, extensions (skills,
// plugins, personas, sub-agents), post-edit hooks, the bash sandbox, and the code tools once the
// engine opens, and MCP servers as tools (started in the background; `mcp.ready()` waits for
// them). Front ends differ only in their gate, their approval default and how they word a
// failure. Everything the repository asks to be trusted with (its `.rift.json` gated keys,
// `rift.toml` hooks, plugins, MCP servers) stays off until a front end asks the user
// (`trustRequests`, then `trust`); headless runs never ask, so those stay off with a note.

export interface AssemblyOptions {
  cwd: string;
  /** rift's version: the workspace server is used only when it runs the same one. */
  version: string;
  flags: AgentFlags;
  session: { resume?: string; continue?: boolean };
  /** The approval switch; undefined lets the configuration decide. */
  approve: boolean | undefined;
  /** Answers asks and edit reviews (a terminal, the serve channel, or nobody). */
  gate: Gate;
  /** Headless task mode (`-p`, B.15): nudge and greedy retry on. */
  alwaysTask?: boolean;
  /** Notes and warnings for the user (stderr in the current front ends). */
  note: (text: string) => void;
  /** The editor's files and terminal, for front ends whose editor offers them (ACP). */
  editorFiles?: EditorFiles;
  runner?: CommandRunner;
  /** Abandons the startup (the model check) early: the front end is going away. */
  signal?: AbortSignal;
}

/** What trusting a request changed, for the front end to show. */
export interface TrustOutcome {
  info: string;
  /** Persisting the decision failed (the trust still holds for this session). */
  persistError?: string;
  /** The approval mode the trusted project config set. */
  approve?: boolean;
  /** The model the trusted project config switched to. */
  model?: { address: string; numCtx: number; note: string };
  /** Why switching to the trusted config's model failed (the previous model stays). */
  modelError?: string;
}

/** Why the configured model cannot serve a turn: its address did not route, or preflight failed. */
export interface Unusable {
  stage: 'route' | 'preflight';
  message: string;
}

export class AgentAssembly {
  private workspace: WorkspaceCode | null = null;

  private constructor(
    readonly agent: Agent,
    /** Live: trusting the project config updates it in place. */
    readonly config: AgentConfig,
    readonly route: Route,
    readonly unusable: Unusable | null,
    readonly session: OpenedSession,
    readonly approval: Approval,
    readonly trustStore: TrustStore,
    readonly hooks: PostEditHooks,
    readonly skills: readonly Skill[],
    readonly plugins: readonly Plugin[],
    /** What the repository waits to be trusted with, in the order to ask. */
    readonly trustRequests: readonly TrustRequest[],
    readonly personas: readonly Persona[],
    readonly sandbox: Sandbox,
    /** The session's MCP servers: the user's and trusted project ones start with the session. */
    readonly mcp: McpServers,
    /** Filled when the code engine opens; the agent's code tools read it live. */
    private readonly code: CodeServices,
    private readonly note: (text: string) => void,
    /** The approval mode was given by the front end, so a trusted config does not change it. */
    private readonly approveFixed: boolean,
    private readonly version: string,
  ) {}

  static async create(opts: AssemblyOptions): Promise<AgentAssembly> {
    const { cwd, note } = opts;
    const warn = (w: string) => note(`warning: ${w}`);
    const trust = TrustStore.user();
    const { config, warnings, projectTrust } = loadAgentConfig(cwd, opts.flags, process.env, (key) => trust.has(key));
    for (const w of warnings) warn(w);

    let route: Route;
    let unusable: Unusable | null = null;
    let numCtx = config.numCtx;
    let think: boolean | undefined = false;
    try {
      route = buildRoute(config.model, config);
    } catch (e) {
      unusable = { stage: 'route', message: (e as Error).message };
      route = buildRoute(config.model, { host: config.host, providers: {} });
    }
    if (!unusable) {
      try {
        const pf = await preflight(route, config.numCtx, config.numCtxExplicit, opts.signal);
        numCtx = pf.numCtx;
        think = pf.think;
        if (pf.note) note(pf.note);
      } catch (e) {
        unusable = { stage: 'preflight', message: (e as Error).message };
      }
    }

    const session = openSession(opts.session);
    for (const n of session.notes) note(n);
    const approval = createApproval(opts.approve ?? config.permissions.approve, config.permissions, cwd, warn);

    const found = discoverSkills([join(cwd, '.rift', 'skills'), join(userDirs().config, 'skills')]);
    const { plugins, warnings: pluginWarnings } = discoverPlugins(join(cwd, '.rift', 'plugins'), join(userDirs().config, 'plugins'));
    for (const w of pluginWarnings) warn(w);
    const names = new Set(found.map((s) => s.name));
    const skills = [
      ...found,
      ...plugins.flatMap((p) => p.commands.filter((c) => !names.has(c.name)).map((c) => ({ name: c.name, description: c.description, path: '', template: c.prompt }))),
    ].sort(compareNames);
    if (skills.length > 0) note(`skills: ${skills.map((s) => s.name).join(', ')}`);
    // The project config, rift.toml hooks and plugins that run commands wait for a trust decision.
    const requests = trustRequests({ projectConfig: projectTrust, hooks: workspaceHooks(cwd), engines: workspaceEngines(cwd), plugins, mcp: config.mcp, trust });
    for (const r of requests) if (r.startupNote !== '') note(r.startupNote);
    const untrusted = new Set(requests.flatMap((r) => (r.subject.kind === 'plugin' ? [r.subject.plugin] : [])));
    const sandbox = Sandbox.create(config.sandbox, cwd, [userDirs().config, userDirs().data]);
    note(sandbox.describe());
    // Post-edit hooks (B.13): config hooks (project ones only if trusted), then those of every
    // user plugin and trusted project plugin. Trusting a plugin later adds its hooks live.
    const hooks = PostEditHooks.fromConfig(config, trust, note);
    for (const p of plugins) {
      const trusted = p.scope === 'user' || trust.has(p.key);
      for (const h of p.hooks) {
        if (trusted) hooks.add(h);
        else note(`plugin '${p.name}': post_edit hook skipped (manifest not trusted yet): ${h}`);
      }
    }

    const { personas, warnings: personaWarnings } = discoverPersonas([join(cwd, '.rift', 'agents'), join(userDirs().config, 'agents')]);
    for (const w of personaWarnings) warn(w);
    const prompt = systemPrompt(cwd) + skillsSection(skills) + rolesAndPersonasSection(config.models, personas);
    // A resumed conversation runs under today's system prompt (guides and skills may have changed).
    if (session.messages?.[0]?.role === 'system') session.messages[0] = { role: 'system', content: prompt };

    const code: CodeServices = {};
    const agent = new Agent({
      cwd,
      route,
      numCtx,
      think,
      temperature: config.temperature,
      maxIterations: config.maxIterations,
      approval,
      gate: opts.gate,
      systemPrompt: prompt,
      code,
      alwaysTask: opts.alwaysTask,
      bashWrapper: config.permissions.bash_wrapper,
      sandbox,
      hooks,
      sessionPath: session.path,
      messages: session.messages,
      editorFiles: opts.editorFiles,
      runner: opts.runner,
    });
    if (skills.length > 0) agent.registry.register(skillTool(skills));
    agent.registry.register(agentTool(() => agent, config, personas));
    const mcp = new McpServers({ cwd, version: opts.version, registry: agent.registry, sandbox, note });
    const assembly = new AgentAssembly(agent, config, route, unusable, session, approval, trust, hooks, skills, plugins, requests, personas, sandbox, mcp, code, note, opts.approve !== undefined, opts.version);
    for (const p of plugins) if (!untrusted.has(p)) assembly.registerTools(p);
    for (const s of config.mcp) if (s.scope !== 'project' || trust.has(mcpServerKey(s))) void mcp.start(s);
    return assembly;
  }

  private registerTools(p: Plugin): string[] {
    for (const t of p.tools) this.agent.registry.register(pluginTool(t, p.name));
    return p.tools.map((t) => t.name);
  }

  /**
   * The user answered `trust`: the decision persists (per content) and takes effect in this
   * session — a plugin's tools and hooks register, rift.toml hooks run with the next change, and
   * a project config's host, providers, model, approval mode and hooks apply (the model is
   * switched and checked; call this between turns).
   */
  async trust(req: TrustRequest): Promise<TrustOutcome> {
    let persistError: string | undefined;
    const persist = () => {
      try {
        for (const k of req.keys) this.trustStore.add(k);
      } catch (e) {
        persistError = (e as Error).message;
      }
    };
    const s = req.subject;
    if (s.kind === 'plugin') {
      const p = s.plugin;
      const tools = this.registerTools(p);
      for (const h of p.hooks) this.hooks.add(h);
      persist();
      const parts = [...(tools.length > 0 ? [`tools registered: ${tools.join(', ')}`] : []), ...(p.hooks.length > 0 ? [`post-edit hooks active: ${p.hooks.join(', ')}`] : [])];
      return { info: `plugin '${p.name}' trusted — ${parts.join('; ')}`, persistError };
    }
    persist();
    if (s.kind === 'language-engines') {
      // The engine asks at each start, so the next change that needs one starts it.
      if (persistError) for (const e of s.engines) this.sessionTrust.add(e.key);
      return { info: `rift.toml engines trusted — they start when a change needs them (an embedding model: from the next start of rift): ${s.engines.map((e) => e.language).join(', ')}`, persistError };
    }
    if (s.kind === 'mcp-server') {
      const started = await this.mcp.start(s.server);
      return { info: `MCP server '${s.server.name}' trusted — ${started.text}`, persistError };
    }
    if (s.kind === 'workspace-hooks') {
      // Every change asks `trustedHooks` again, so nothing else to do.
      if (persistError) this.sessionTrust.add(s.key);
      return { info: `rift.toml hooks trusted — they run after the agent's edits: ${s.hooks.map((h) => h.id).join(', ')}`, persistError };
    }
    const next = s.config.config;
    const previous = { ...this.config };
    Object.assign(this.config, next);
    for (const h of next.postEditHooks.project) this.hooks.add(h);
    const out: TrustOutcome = { info: `project config '${s.config.path}' trusted — applied: ${s.config.changes.join('; ')}`, persistError };
    if (!this.approveFixed && next.permissions.approve !== this.approval.approve) {
      this.approval.approve = next.permissions.approve;
      out.approve = next.permissions.approve;
    }
    if (next.host !== previous.host || next.model !== previous.model || JSON.stringify(next.providers) !== JSON.stringify(previous.providers)) {
      try {
        const note = await this.agent.switchModel(next.model, next, next.numCtxExplicit);
        out.model = { address: this.agent.route.address, numCtx: this.agent.numCtx, note: note.trim() };
      } catch (e) {
        out.modelError = (e as Error).message;
      }
    }
    return out;
  }

  /** Trust granted this session when persisting it failed (the rift.toml hook gate consults it too). */
  private readonly sessionTrust = new Set<string>();
  /** rift.toml hook lists already reported as skipped (once each). */
  private readonly skippedHooks = new Set<string>();

  /**
   * The key of the workspace's rift.toml hooks when the user trusts them, else `''`: every change
   * the agent makes carries it, so the engine (here or in the workspace server) runs exactly the
   * trusted hooks, and none of a list that is untrusted or changed since.
   */
  private trustedHooks(root: string): string {
    const hooks = workspaceHooks(root);
    if (hooks.length === 0) return '';
    const key = hooksKey(hooks);
    if (this.sessionTrust.has(key) || this.trustStore.has(key)) return key;
    if (!this.skippedHooks.has(key)) {
      this.skippedHooks.add(key);
      this.note(`rift.toml hooks skipped after the agent's edit (not trusted): ${hooks.map((h) => h.id).join(', ')}`);
    }
    return '';
  }

  /**
   * Opens the code services — the workspace server's when one runs, else the engine in this
   * process — and every standard tool whose service now exists joins the live registry. A turn
   * that starts before this runs without the code tools; a failure is logged, not fatal.
   */
  async openCode(cwd: string): Promise<void> {
    try {
      const root = canonicalRoot(cwd);
      const workspace = await WorkspaceCode.open(
        root,
        this.version,
        () => ({ trustedHooks: this.trustedHooks(root) }),
        (key) => this.sessionTrust.has(key) || this.trustStore.has(key),
      );
      this.workspace = workspace;
      this.code.read = workspace.read;
      this.code.search = workspace.search;
      this.code.change = workspace.change;
      this.code.engines = workspace.engines ?? undefined;
      this.code.projections = workspace.projections;
      const std = ToolRegistry.standard(this.code);
      for (const name of std.names()) if (!this.agent.registry.get(name)) this.agent.registry.register(std.get(name)!);
    } catch (e) {
      log('warn', 'agent', 'code tools unavailable', { error: (e as Error).message });
    }
  }

  /** MCP servers the front end brings for this session (an editor's, over ACP): trusted as the user's own. */
  async attachMcpServers(servers: readonly McpServerConfig[]): Promise<void> {
    await Promise.all(servers.map((s) => this.mcp.start(s)));
  }

  /**
   * Ends the session's processes: background tasks are killed (their count is returned), MCP
   * servers stopped, the engine closed, and a session file reserved for turns that never ran released.
   */
  async close(): Promise<number> {
    const killed = this.agent.tasks.killAll();
    await this.mcp.close();
    await this.workspace?.close().catch(() => {});
    if (this.session.reserved) Session.release(this.session.path);
    return killed;
  }
}
