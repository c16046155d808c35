import { Agent } from './agent.ts';
import type { AgentConfig } from '../base/config.ts';
import { systemPrompt } from './prompt.ts';
import { isHookInfo } from '../policy/hooks.ts';
import { buildRoute } from '../providers/routing.ts';
import { ToolError, type Tool } from '../base/tool.ts';
import { isRiftError } from '../../core/errors.ts';
import type { ToolContext } from '../tools/context.ts';
import type { AgentEvent } from '../base/types.ts';
import type { Persona } from '../extensions/personas.ts';
import type { DependencyConflict, PublishResult } from '../../protocol/projection.ts';
import type { TurnOutcome } from './agent.ts';
import { isolate, isolatedNote, resume, settle, type Isolation, type Settled } from './isolation.ts';

// The `agent` tool (reference B.9): 1–4 sub-agents run concurrently (or as background tasks),
// each with a fresh context and the standard tools (no `agent` tool, so no recursion), sharing
// the parent's permission rules, approval flag, ask/review channel and background-task
// registry. Their activity is mirrored as `subagent*` events; content and thinking are not
// forwarded. With `isolate` each works in its own projection of the workspace, published when
// it finishes (isolation.ts).

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
  /** A kept projection to continue in (isolated). */
  projection?: string;
}

/** An isolated task's projection, prepared before its sub-agent starts. */
interface Setup {
  iso: Isolation;
  /** What the sub-agent is told beyond the isolation note (a retry's state). */
  note: string;
  /** Dependency conflicts the retry's sub-agent was told about: accepted at its publish. */
  acceptDependencies: DependencyConflict[];
  /** The kept projection's record, when this continues one (restored if the task never runs). */
  earlier: { path: string; refusal: PublishResult | null } | null;
}

function tasksOf(args: Record<string, unknown>): Task[] {
  const raw = Array.isArray(args.tasks) ? args.tasks : typeof args.prompt === 'string' ? [args] : null;
  if (!raw) throw new ToolError("agent needs 'tasks': [{description, prompt, model?}] (1–4)");
  if (raw.length < 1 || raw.length > SUBAGENTS_MAX) throw new ToolError(`agent runs 1–${SUBAGENTS_MAX} tasks at once, got ${raw.length}`);
  return raw.map((t, i) => {
    const o = (t && typeof t === 'object' ? t : {}) as Record<string, unknown>;
    if (typeof o.prompt !== 'string' || o.prompt.trim() === '') throw new ToolError(`agent: task ${i + 1} needs a 'prompt' string`);
    const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
    return { description: text(o.description) ?? `task ${i + 1}`, prompt: o.prompt, model: text(o.model), agent: text(o.agent), projection: text(o.projection) };
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
  taskProps.projection = { type: 'string', description: 'continue in the projection an isolated sub-agent left unpublished (its id, from that report); implies isolate' };
  /** Projections isolated sub-agents of this session left unpublished, by id: where, and what refused them. */
  const kept = new Map<string, { path: string; refusal: PublishResult | null }>();

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

  /**
   * Each task's projection when the call isolates (a task naming a kept projection implies it):
   * a fresh one, or a kept one refreshed for a retry. Every continuation is checked before
   * anything is created; a failure part way releases what was made.
   */
  const prepare = async (tasks: readonly Task[], isolateAll: boolean, ctx: ToolContext): Promise<Array<Setup | null>> => {
    const named = new Set<string>();
    for (const [i, t] of tasks.entries()) {
      if (t.projection === undefined) continue;
      if (!kept.has(t.projection)) {
        const known = kept.size > 0 ? `; kept: ${[...kept.keys()].join(', ')}` : '';
        throw new ToolError(`agent: task ${i + 1}: projection '${t.projection}' is not one an isolated sub-agent of this session left unpublished${known}`);
      }
      if (named.has(t.projection)) throw new ToolError(`agent: projection '${t.projection}' is named by two tasks; one sub-agent works in a projection at a time`);
      named.add(t.projection);
    }
    const isolated = isolateAll || named.size > 0;
    const setups: Array<Setup | null> = [];
    try {
      for (const t of tasks) {
        if (!isolated) {
          setups.push(null);
        } else if (t.projection !== undefined) {
          const earlier = kept.get(t.projection)!;
          kept.delete(t.projection);
          try {
            const r = await resume(ctx, t.projection, earlier.path, earlier.refusal);
            setups.push({ iso: r.iso, note: r.note, acceptDependencies: r.acceptDependencies, earlier });
          } catch (e) {
            if (isRiftError(e) && e.code === 'resource_not_found') throw new ToolError(`agent: projection '${t.projection}' no longer exists (it was removed outside this session)`);
            kept.set(t.projection, earlier);
            throw e;
          }
        } else {
          setups.push({ iso: await isolate(ctx, t.description), note: '', acceptDependencies: [], earlier: null });
        }
      }
    } catch (e) {
      await release(ctx, setups);
      throw e;
    }
    return setups;
  };
  /** Projections made for sub-agents that will not run: fresh ones removed, kept ones kept again. */
  const release = async (ctx: Pick<ToolContext, 'code'>, setups: ReadonlyArray<Setup | null>): Promise<void> => {
    for (const s of setups) {
      if (!s) continue;
      if (s.earlier) kept.set(s.iso.id, s.earlier);
      else await ctx.code.projections?.remove(s.iso.id).catch(() => {});
    }
  };

  return {
    name: 'agent',
    description:
      'Delegate 1–4 independent tasks to sub-agents that run concurrently, each with a fresh context and the standard tools; returns their final reports. ' +
      'Set isolate when sub-agents change files in parallel: each then works in its own copy of the workspace (a projection), and its changes are published to the workspace when it finishes — refused, with the workspace unchanged, if they conflict with changes made there meanwhile.',
    parameters: {
      type: 'object',
      properties: {
        background: { type: 'boolean', description: 'run as background tasks; their reports arrive later as task notices' },
        isolate: {
          type: 'boolean',
          description: 'each sub-agent works in its own projection (an isolated copy of the workspace) and its changes are published when it finishes; the report says what was published, or what conflicted',
        },
        tasks: { type: 'array', items: { type: 'object', properties: taskProps, required: ['description', 'prompt'] } },
      },
      required: ['tasks'],
    },
    mutating: true,
    async run(args, ctx) {
      const p = parent();
      const tasks = tasksOf(args).map((t, i) => resolveTask(t, i, p));
      const spawnChild = ({ persona, route }: ReturnType<typeof resolveTask>, iso: Isolation | null, note: string) => {
        const cwd = iso?.cwd ?? ctx.cwd;
        const child = new Agent({
          cwd,
          route,
          numCtx: p.numCtx,
          // A different model gets the server's default thinking.
          think: route.address === p.route.address ? p.think : undefined,
          temperature: p.opts.temperature,
          maxIterations: p.opts.maxIterations,
          approval: ctx.approval,
          gate: ctx.gate,
          systemPrompt: systemPrompt(cwd) + (persona ? `\n\n[persona: ${persona.name}]\n${persona.body}` : '') + SUBAGENT_NOTE + (iso ? isolatedNote(iso.id, iso.path) + note : ''),
          code: iso?.code ?? ctx.code,
          // One task registry for the session: ids, the 8-task cap and task events are shared.
          tasks: ctx.tasks,
          bashWrapper: ctx.bashWrapper,
          sandbox: iso ? iso.sandbox : ctx.sandbox,
          commandEnv: iso?.commandEnv,
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

      const setups = await prepare(tasks.map((x) => x.task), args.isolate === true, ctx);
      /** The sub-agent's projection published (or kept) once its turn ended: the line its report ends with, and whether it landed. */
      const finish = async (setup: Setup | null, tag: string, label: string, outcome: TurnOutcome, signal: AbortSignal): Promise<{ text: string; landed: boolean }> => {
        if (!setup) return { text: '', landed: true };
        const settled: Settled = await settle({ code: ctx.code, approval: ctx.approval, gate: ctx.gate, signal }, setup.iso, label, outcome, setup.acceptDependencies);
        if (settled.kept) kept.set(setup.iso.id, { path: setup.iso.path, refusal: settled.kept.refusal });
        // The front end's line for it: the block's first line.
        ctx.emit({ event: 'subagent', tag, text: settled.text.split('\n')[0], warn: settled.kept !== undefined });
        return { text: `\n\n${settled.text}`, landed: settled.kept === undefined };
      };

      if (args.background === true) {
        const launched: string[] = [];
        for (const [i, resolved] of tasks.entries()) {
          const setup = setups[i];
          const { child } = spawnChild(resolved, setup?.iso ?? null, setup?.note ?? '');
          const t = resolved.task;
          let id = 0;
          try {
            id = ctx.tasks.startInProcess(t.description, async (signal) => {
              const r = await child.runTurn(t.prompt, mirror(() => `task #${id}`), signal);
              const done = await finish(setup, `task #${id}`, t.description, r.outcome, signal);
              return { ok: (r.outcome === 'answered' || r.outcome === 'wrapped') && done.landed, output: (r.reply.trim() || NO_REPORT) + done.text };
            });
          } catch (e) {
            await release(ctx, setups.slice(i));
            throw new ToolError(`${(e as Error).message}${launched.length > 0 ? ` (launched before the refusal: ${launched.join(', ')})` : ''}`);
          }
          launched.push(`#${id} ${t.description}`);
        }
        return `launched ${launched.length} background agent(s): ${launched.join(', ')}. Their reports arrive as task notices.`;
      }

      const reports = await Promise.all(
        tasks.map(async (resolved, i) => {
          const tag = `agent ${i + 1}`;
          const t = resolved.task;
          const setup = setups[i];
          const { child, route } = spawnChild(resolved, setup?.iso ?? null, setup?.note ?? '');
          ctx.emit({ event: 'subagent_started', tag, model: route.address, label: t.description });
          const r = await child.runTurn(t.prompt, mirror(() => tag), ctx.signal);
          const done = await finish(setup, tag, t.description, r.outcome, ctx.signal);
          ctx.emit({ event: 'subagent_finished', tag, steps: r.stats.iterations });
          return { label: t.description, report: (r.reply.trim() || NO_REPORT) + done.text };
        }),
      );
      if (reports.length === 1) return reports[0].report;
      return reports.map((r, i) => `### agent ${i + 1} — ${r.label}\n${r.report}`).join('\n\n');
    },
  };
}
