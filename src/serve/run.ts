import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Agent } from '../agent/agent.ts';
import { loadAgentConfig, userDirs, type AgentFlags } from '../agent/config.ts';
import { PostEditHooks } from '../agent/hooks.ts';
import { systemPrompt } from '../agent/prompt.ts';
import { buildRoute, preflight, type Route } from '../agent/routing.ts';
import { createApproval, historyMessages, openSession } from '../agent/setup.ts';
import { ToolRegistry } from '../agent/tools/registry.ts';
import type { CodeServices } from '../agent/tools/context.ts';
import { TrustStore } from '../agent/trust.ts';
import { log } from '../core/log.ts';
import type { Engine } from '../services/engine.ts';
import { ServeGate, ServeSession, type Wire } from './server.ts';
import { discoverPlugins, pluginTool, type Plugin } from '../agent/plugins.ts';
import { discoverPersonas, rolesAndPersonasSection } from '../agent/personas.ts';
import { compareNames, discoverSkills, skillsSection, skillTool } from '../agent/skills.ts';
import { agentTool } from '../agent/subagents.ts';

// Wiring for `rift --serve`: config, route and preflight, session, approval, the agent, and
// stdio. Events go to stdout (one JSON line each), diagnostics to stderr.

export interface ServeFlags extends AgentFlags {
  continue?: boolean;
  resume?: string;
  /** undefined: config decides; true/false: --approve / --approve=false. */
  approveMode?: boolean;
  /** Skip the code index (benchmarks). */
  noIndex?: boolean;
}

export async function runServe(flags: ServeFlags, version: string): Promise<number> {
  const cwd = process.cwd();
  const err = (s: string) => process.stderr.write(s);
  const { config, warnings } = loadAgentConfig(cwd, flags);
  for (const w of warnings) err(`warning: ${w}\n`);

  let route: Route;
  let unusable: string | null = null;
  let numCtx = config.numCtx;
  let think: boolean | undefined = false;
  try {
    route = buildRoute(config.model, config);
  } catch (e) {
    unusable = `model '${config.model}' is not usable: ${(e as Error).message} — pick another with set_model`;
    route = buildRoute(config.model, { host: config.host, providers: {} });
  }
  if (!unusable) {
    try {
      const pf = await preflight(route, config.numCtx, config.numCtxExplicit);
      numCtx = pf.numCtx;
      think = pf.think;
      if (pf.note) err(`${pf.note}\n`);
    } catch (e) {
      unusable = `${(e as Error).message} — fix the server or model, then send set_model`;
    }
  }

  const opened = openSession({ resume: flags.resume, continue: flags.continue });
  for (const n of opened.notes) err(`${n}\n`);

  const approve = flags.approveMode ?? config.permissions.approve;
  const approval = createApproval(approve, config.permissions, cwd, (w) => err(`warning: ${w}\n`));

  const found = discoverSkills([join(cwd, '.rift', 'skills'), join(userDirs().config, 'skills')]);
  const { plugins, warnings: pluginWarnings } = discoverPlugins(join(cwd, '.rift', 'plugins'), join(userDirs().config, 'plugins'));
  for (const w of pluginWarnings) err(`warning: ${w}\n`);
  const trust = TrustStore.user();
  const names = new Set(found.map((s) => s.name));
  const skills = [
    ...found,
    ...plugins.flatMap((p) => p.commands.filter((c) => !names.has(c.name)).map((c) => ({ name: c.name, description: c.description, path: '', template: c.prompt }))),
  ].sort(compareNames);
  if (skills.length > 0) err(`skills: ${skills.map((s) => s.name).join(', ')}\n`);
  // A project plugin that runs commands (tools or post-edit hooks) waits for a trust decision.
  const untrusted = plugins.filter((p) => p.scope === 'project' && (p.tools.length > 0 || p.hooks.length > 0) && !trust.has(p.key));
  for (const p of untrusted) {
    if (p.tools.length > 0) err(`plugin '${p.name}': tools not registered (manifest not trusted yet) — approve the startup prompt (TUI) or the trust question (serve consumers) to enable them\n`);
  }
  // Post-edit hooks (B.13): config hooks (project ones only if trusted), then those of every
  // user plugin and trusted project plugin. Trusting a plugin later adds its hooks live.
  const hooks = PostEditHooks.fromConfig(config, trust, (n) => err(`${n}\n`));
  for (const p of plugins) {
    const trusted = p.scope === 'user' || trust.has(p.key);
    for (const h of p.hooks) {
      if (trusted) hooks.add(h);
      else err(`plugin '${p.name}': post_edit hook skipped (manifest not trusted yet): ${h}\n`);
    }
  }

  let stdoutOpen = true;
  process.stdout.on('error', () => {
    stdoutOpen = false;
  });
  const out = (e: Wire) => {
    if (stdoutOpen) process.stdout.write(`${JSON.stringify(e)}\n`);
  };

  const code: CodeServices = {};
  let server: ServeSession | undefined;
  const gate = new ServeGate(() => server!);
  const { personas, warnings: personaWarnings } = discoverPersonas([join(cwd, '.rift', 'agents'), join(userDirs().config, 'agents')]);
  for (const w of personaWarnings) err(`warning: ${w}\n`);
  const prompt = systemPrompt(cwd) + skillsSection(skills) + rolesAndPersonasSection(config.models, personas);
  // A resumed conversation runs under today's system prompt (guides and skills may have changed).
  if (opened.messages?.[0]?.role === 'system') opened.messages[0] = { role: 'system', content: prompt };
  const agent = new Agent({
    cwd,
    route,
    numCtx,
    think,
    temperature: config.temperature,
    maxIterations: config.maxIterations,
    approval,
    gate,
    systemPrompt: prompt,
    // Filled in after `ready` once the index is open; the code tools are registered then.
    code,
    bashWrapper: config.permissions.bash_wrapper,
    hooks,
    sessionPath: opened.path,
    messages: opened.messages,
  });
  if (skills.length > 0) agent.registry.register(skillTool(skills));
  agent.registry.register(agentTool(() => agent, config, personas));
  const registerTools = (p: Plugin) => {
    for (const t of p.tools) agent.registry.register(pluginTool(t, p.name));
    return p.tools.map((t) => t.name);
  };
  for (const p of plugins) if (!untrusted.includes(p)) registerTools(p);
  const trustPlugin = (p: Plugin) => {
    const tools = registerTools(p);
    for (const h of p.hooks) hooks.add(h);
    try {
      trust.add(p.key);
      for (const h of p.hooks) trust.add(h);
      return { tools };
    } catch (e) {
      return { tools, persistError: (e as Error).message };
    }
  };
  server = new ServeSession({ agent, approval, config, out, skills, unusable, untrusted, trustPlugin });
  // Background tasks report between turns too.
  agent.tasks.setSink((e) => out(e as Wire));
  server.start({ session: opened.path, cwd, version, history: historyMessages(opened.messages ?? []) });

  // The code index opens after `ready` so an editor is not kept waiting; a turn that starts
  // before it is open simply runs without the code tools.
  let engine: Engine | undefined;
  const opening = flags.noIndex
    ? Promise.resolve()
    : (async () => {
        try {
          const { Engine } = await import('../services/engine.ts');
          engine = await Engine.open(cwd, { watch: true });
          code.read = engine.read;
          code.search = engine.search;
          code.change = engine.change;
          // Every tool whose in-process service now exists joins the live registry.
          const std = ToolRegistry.standard(code);
          for (const name of std.names()) if (!agent.registry.get(name)) agent.registry.register(std.get(name)!);
          engine.build().catch((e: Error) => log('warn', 'index.build', 'index build failed', { error: e.message }));
        } catch (e) {
          log('warn', 'agent', 'code tools unavailable', { error: (e as Error).message });
        }
      })();

  const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
  rl.on('line', (line) => server!.handleLine(line));
  await new Promise<void>((resolve) => rl.once('close', resolve));
  // Nothing is printed after stdin EOF: not even a background task finishing during shutdown.
  stdoutOpen = false;
  await server.close();
  await opening;
  const killed = agent.tasks.killAll();
  if (killed > 0) err(`killed ${killed} background task(s) still running at exit\n`);
  await engine?.close().catch(() => {});
  return 0;
}
