import { join } from 'node:path';
import { loadAgentConfig, userDirs, type AgentConfig, type AgentFlags } from '../base/config.ts';
import type { Approval } from '../policy/approval.ts';
import type { Gate } from '../policy/gate.ts';
import { PostEditHooks } from '../policy/hooks.ts';
import { TrustStore } from '../policy/trust.ts';
import { buildRoute, preflight, type Route } from '../providers/routing.ts';
import { log } from '../../core/log.ts';
import type { CodeServices } from '../tools/context.ts';
import { ToolRegistry } from '../tools/registry.ts';
import { discoverPersonas, rolesAndPersonasSection, type Persona } from '../extensions/personas.ts';
import { discoverPlugins, pluginTool, type Plugin } from '../extensions/plugins.ts';
import { compareNames, discoverSkills, skillsSection, skillTool, type Skill } from '../extensions/skills.ts';
import { Agent } from './agent.ts';
import { systemPrompt } from './prompt.ts';
import { createApproval, openSession, type OpenedSession } from './setup.ts';
import { agentTool } from './subagents.ts';
import { WorkspaceCode } from './workspace-code.ts';

// One assembly of the agent for every front end (`-p`, `--serve`, and later the TUI and ACP):
// configuration, the model route and its preflight, the session, approval, extensions (skills,
// plugins, personas, sub-agents), post-edit hooks, and the code tools once the engine opens.
// Front ends differ only in their gate, their approval default and how they word a failure.

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
    readonly config: AgentConfig,
    readonly route: Route,
    readonly unusable: Unusable | null,
    readonly session: OpenedSession,
    readonly approval: Approval,
    readonly trust: TrustStore,
    readonly hooks: PostEditHooks,
    readonly skills: readonly Skill[],
    readonly plugins: readonly Plugin[],
    /** Project plugins that run commands and wait for the user's trust decision. */
    readonly untrusted: readonly Plugin[],
    readonly personas: readonly Persona[],
    /** Filled when the code engine opens; the agent's code tools read it live. */
    private readonly code: CodeServices,
    private readonly version: string,
  ) {}

  static async create(opts: AssemblyOptions): Promise<AgentAssembly> {
    const { cwd, note } = opts;
    const warn = (w: string) => note(`warning: ${w}`);
    const { config, warnings } = loadAgentConfig(cwd, opts.flags);
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
        const pf = await preflight(route, config.numCtx, config.numCtxExplicit);
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
    const trust = TrustStore.user();
    const names = new Set(found.map((s) => s.name));
    const skills = [
      ...found,
      ...plugins.flatMap((p) => p.commands.filter((c) => !names.has(c.name)).map((c) => ({ name: c.name, description: c.description, path: '', template: c.prompt }))),
    ].sort(compareNames);
    if (skills.length > 0) note(`skills: ${skills.map((s) => s.name).join(', ')}`);
    // A project plugin that runs commands (tools or post-edit hooks) waits for a trust decision.
    const untrusted = plugins.filter((p) => p.scope === 'project' && (p.tools.length > 0 || p.hooks.length > 0) && !trust.has(p.key));
    for (const p of untrusted) {
      if (p.tools.length > 0) note(`plugin '${p.name}': tools not registered (manifest not trusted yet) — approve the startup prompt (TUI) or the trust question (serve consumers) to enable them`);
    }
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
      hooks,
      sessionPath: session.path,
      messages: session.messages,
    });
    if (skills.length > 0) agent.registry.register(skillTool(skills));
    agent.registry.register(agentTool(() => agent, config, personas));
    const assembly = new AgentAssembly(agent, config, route, unusable, session, approval, trust, hooks, skills, plugins, untrusted, personas, code, opts.version);
    for (const p of plugins) if (!untrusted.includes(p)) assembly.registerTools(p);
    return assembly;
  }

  private registerTools(p: Plugin): string[] {
    for (const t of p.tools) this.agent.registry.register(pluginTool(t, p.name));
    return p.tools.map((t) => t.name);
  }

  /** The user trusted a project plugin: its tools and hooks join the live session, and the decision persists. */
  trustPlugin(p: Plugin): { tools: string[]; persistError?: string } {
    const tools = this.registerTools(p);
    for (const h of p.hooks) this.hooks.add(h);
    try {
      this.trust.add(p.key);
      for (const h of p.hooks) this.trust.add(h);
      return { tools };
    } catch (e) {
      return { tools, persistError: (e as Error).message };
    }
  }

  /**
   * Opens the code services — the workspace server's when one runs, else the engine in this
   * process — and every standard tool whose service now exists joins the live registry. A turn
   * that starts before this runs without the code tools; a failure is logged, not fatal.
   */
  async openCode(cwd: string): Promise<void> {
    try {
      const { canonicalRoot } = await import('../../services/engine.ts');
      const workspace = await WorkspaceCode.open(canonicalRoot(cwd), this.version);
      this.workspace = workspace;
      this.code.read = workspace.read;
      this.code.search = workspace.search;
      this.code.change = workspace.change;
      const std = ToolRegistry.standard(this.code);
      for (const name of std.names()) if (!this.agent.registry.get(name)) this.agent.registry.register(std.get(name)!);
    } catch (e) {
      log('warn', 'agent', 'code tools unavailable', { error: (e as Error).message });
    }
  }

  /** Ends the session's processes: background tasks are killed (their count is returned) and the engine closed. */
  async close(): Promise<number> {
    const killed = this.agent.tasks.killAll();
    await this.workspace?.close().catch(() => {});
    return killed;
  }
}
