import { Agent } from './agent.ts';
import type { AgentConfig } from '../base/config.ts';
import { systemPrompt } from './prompt.ts';
import { isHookInfo } from '../policy/hooks.ts';
import { buildRoute } from '../providers/routing.ts';
import { ToolError, type Tool } from '../base/tool.ts';
import type { ToolContext } from '../tools/context.ts';
import type { AgentEvent } from '../base/types.ts';
import type { Persona } from '../extensions/personas.ts';

// The `agent` tool (reference B.9): 1–4 sub-agents run concurrently (or as background tasks),
// each with a fresh context and the standard tools (no `agent` tool, so no recursion), sharing
// the parent's permission rules, approval flag, ask/review channel and background-task
// registry. Their activity is mirrored as `subagent*` events; content and thinking are not
// forwarded.

export const SUBAGENTS_MAX = 4;
export const SUBAGENT_NOTE =
  '\n\nYou are a sub-agent handling ONE delegated task. Work autonomously with your tools, then reply with a concise final report of what you found or changed.';
export const NO_REPORT = '(the sub-agent finished without a final report)';

interface Task {
  description: string;
  prompt: string;
  model?: string;
  /** A persona name. */
  agent?: string;
}

function tasksOf(args: Record<string, unknown>): Task[] {
  const raw = Array.isArray(args.tasks) ? args.tasks : typeof args.prompt === 'string' ? [args] : null;
  if (!raw) throw new ToolError("agent needs 'tasks': [{description, prompt, model?}] (1–4)");
  if (raw.length < 1 || raw.length > SUBAGENTS_MAX) throw new ToolError(`agent runs 1–${SUBAGENTS_MAX} tasks at once, got ${raw.length}`);
  return raw.map((t, i) => {
    const o = (t && typeof t === 'object' ? t : {}) as Record<string, unknown>;
    if (typeof o.prompt !== 'string' || o.prompt.trim() === '') throw new ToolError(`agent: task ${i + 1} needs a 'prompt' string`);
    const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
    return { description: text(o.description) ?? `task ${i + 1}`, prompt: o.prompt, model: text(o.model), agent: text(o.agent) };
  });
}

export function agentTool(parent: () => Agent, config: AgentConfig, personas: readonly Persona[] = []): Tool<ToolContext> {
  const roles = Object.keys(config.models).sort();
  const taskProps: Record<string, unknown> = {
    description: { type: 'string' },
    prompt: { type: 'string' },
    model: { type: 'string', description: roles.length > 0 ? `a model address or role: ${roles.join(', ')}` : 'a model address (default: the session model)' },
  };
  if (personas.length > 0) taskProps.agent = { type: 'string', description: `persona: ${personas.map((x) => x.name).join(', ')}` };

  /** Persona, model and route for one task, resolved before anything starts (B.9 precedence: task > persona > session). */
  const resolveTask = (t: Task, i: number, session: Agent) => {
    const persona = t.agent === undefined ? undefined : personas.find((x) => x.name === t.agent);
    if (t.agent !== undefined && !persona) {
      throw new ToolError(`agent: task ${i + 1} names unknown persona '${t.agent}'${personas.length > 0 ? `; available: ${personas.map((x) => x.name).join(', ')}` : ' (no personas are defined in .rift/agents/)'}`);
    }
    const wanted = t.model ?? persona?.model;
    let route = session.route;
    if (wanted !== undefined) {
      try {
        route = buildRoute(config.models[wanted] ?? wanted, config);
      } catch (e) {
        throw new ToolError(`agent: task ${i + 1}: model '${wanted}' is not usable: ${(e as Error).message}`);
      }
    }
    return { task: t, persona, route };
  };

  return {
    name: 'agent',
    description: 'Delegate 1–4 independent tasks to sub-agents that run concurrently, each with a fresh context and the standard tools; returns their final reports.',
    parameters: {
      type: 'object',
      properties: {
        background: { type: 'boolean', description: 'run as background tasks; their reports arrive later as task notices' },
        tasks: { type: 'array', items: { type: 'object', properties: taskProps, required: ['description', 'prompt'] } },
      },
      required: ['tasks'],
    },
    mutating: true,
    async run(args, ctx) {
      const p = parent();
      const tasks = tasksOf(args).map((t, i) => resolveTask(t, i, p));
      const spawnChild = ({ persona, route }: ReturnType<typeof resolveTask>) => {
        const child = new Agent({
          cwd: ctx.cwd,
          route,
          numCtx: p.numCtx,
          // A different model gets the server's default thinking.
          think: route.address === p.route.address ? p.think : undefined,
          temperature: p.opts.temperature,
          maxIterations: p.opts.maxIterations,
          approval: ctx.approval,
          gate: ctx.gate,
          systemPrompt: systemPrompt(ctx.cwd) + (persona ? `\n\n[persona: ${persona.name}]\n${persona.body}` : '') + SUBAGENT_NOTE,
          code: ctx.code,
          // One task registry for the session: ids, the 8-task cap and task events are shared.
          tasks: ctx.tasks,
          bashWrapper: ctx.bashWrapper,
          sandbox: ctx.sandbox,
          hooks: ctx.hooks,
          sessionPath: null,
        });
        // A persona's whitelist narrows the standard tools (names may be aliases).
        if (persona?.tools) child.registry.retain(persona.tools.map((n) => child.registry.resolve(n)));
        return { child, route };
      };
      const mirror = (tag: () => string) => (e: AgentEvent) => {
        if (e.event === 'tool_start') ctx.emit({ event: 'subagent', tag: tag(), text: `→ ${e.name} ${JSON.stringify(e.args).slice(0, 80)}`, warn: false });
        else if (e.event === 'tool_result') ctx.emit({ event: 'subagent', tag: tag(), text: `${e.ok ? '✓' : '✗'} ${e.name}`, warn: false });
        else if (e.event === 'warning') ctx.emit({ event: 'subagent', tag: tag(), text: `! ${e.text}`, warn: true });
        else if (isHookInfo(e)) ctx.emit(e);
      };

      if (args.background === true) {
        const launched = tasks.map((resolved) => {
          const { child } = spawnChild(resolved);
          const t = resolved.task;
          let id = 0;
          id = ctx.tasks.startInProcess(t.description, async (signal) => {
            const r = await child.runTurn(t.prompt, mirror(() => `task #${id}`), signal);
            return { ok: r.outcome === 'answered' || r.outcome === 'wrapped', output: r.reply.trim() || NO_REPORT };
          });
          return `#${id} ${t.description}`;
        });
        return `launched ${launched.length} background agent(s): ${launched.join(', ')}. Their reports arrive as task notices.`;
      }

      const reports = await Promise.all(
        tasks.map(async (resolved, i) => {
          const tag = `agent ${i + 1}`;
          const t = resolved.task;
          const { child, route } = spawnChild(resolved);
          ctx.emit({ event: 'subagent_started', tag, model: route.address, label: t.description });
          const r = await child.runTurn(t.prompt, mirror(() => tag), ctx.signal);
          ctx.emit({ event: 'subagent_finished', tag, steps: r.stats.iterations });
          return { label: t.description, report: r.reply.trim() || NO_REPORT };
        }),
      );
      if (reports.length === 1) return reports[0].report;
      return reports.map((r, i) => `### agent ${i + 1} — ${r.label}\n${r.report}`).join('\n\n');
    },
  };
}
