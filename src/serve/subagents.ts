import { Agent } from '../agent/agent.ts';
import type { AgentConfig } from '../agent/config.ts';
import { systemPrompt } from '../agent/prompt.ts';
import { buildRoute } from '../agent/routing.ts';
import { ToolError, type Tool } from '../agent/tool.ts';
import type { ToolContext } from '../agent/tools/context.ts';
import type { AgentEvent } from '../agent/types.ts';

// The `agent` tool (reference B.9, foreground only): 1–4 sub-agents run concurrently, each with
// a fresh context and the standard tools (no `agent` tool, so no recursion), sharing the
// parent's permission rules, approval flag and ask/review channel. Their activity is mirrored
// as `subagent*` events; content and thinking are not forwarded.

export const SUBAGENTS_MAX = 4;
export const SUBAGENT_NOTE =
  '\n\nYou are a sub-agent handling ONE delegated task. Work autonomously with your tools, then reply with a concise final report of what you found or changed.';
export const NO_REPORT = '(the sub-agent finished without a final report)';

interface Task {
  description: string;
  prompt: string;
  model?: string;
}

function tasksOf(args: Record<string, unknown>): Task[] {
  const raw = Array.isArray(args.tasks) ? args.tasks : typeof args.prompt === 'string' ? [args] : null;
  if (!raw) throw new ToolError("agent needs 'tasks': [{description, prompt, model?}] (1–4)");
  if (raw.length < 1 || raw.length > SUBAGENTS_MAX) throw new ToolError(`agent runs 1–${SUBAGENTS_MAX} tasks at once, got ${raw.length}`);
  return raw.map((t, i) => {
    const o = (t && typeof t === 'object' ? t : {}) as Record<string, unknown>;
    if (typeof o.prompt !== 'string' || o.prompt.trim() === '') throw new ToolError(`agent: task ${i + 1} needs a 'prompt' string`);
    return { description: typeof o.description === 'string' && o.description !== '' ? o.description : `task ${i + 1}`, prompt: o.prompt, model: typeof o.model === 'string' && o.model !== '' ? o.model : undefined };
  });
}

export function agentTool(parent: () => Agent, config: AgentConfig): Tool<ToolContext> {
  return {
    name: 'agent',
    description: 'Delegate 1–4 independent tasks to sub-agents that run concurrently, each with a fresh context and the standard tools; returns their final reports.',
    parameters: {
      type: 'object',
      properties: {
        background: { type: 'boolean', description: 'run as background tasks; their reports arrive later as task notices' },
        tasks: {
          type: 'array',
          items: { type: 'object', properties: { description: { type: 'string' }, prompt: { type: 'string' }, model: { type: 'string' } }, required: ['description', 'prompt'] },
        },
      },
      required: ['tasks'],
    },
    mutating: true,
    async run(args, ctx) {
      const tasks = tasksOf(args);
      const p = parent();
      const spawnChild = (t: Task) => {
        const route = t.model ? buildRoute(t.model, config) : p.route;
        const child = new Agent({
          cwd: ctx.cwd,
          route,
          numCtx: p.numCtx,
          think: t.model ? undefined : p.think,
          temperature: p.opts.temperature,
          maxIterations: p.opts.maxIterations,
          approval: ctx.approval,
          gate: ctx.gate,
          systemPrompt: systemPrompt(ctx.cwd) + SUBAGENT_NOTE,
          code: ctx.code,
          bashWrapper: ctx.bashWrapper,
          sessionPath: null,
        });
        return { child, route };
      };
      const mirror = (tag: () => string) => (e: AgentEvent) => {
        if (e.event === 'tool_start') ctx.emit({ event: 'subagent', tag: tag(), text: `→ ${e.name} ${JSON.stringify(e.args).slice(0, 80)}`, warn: false });
        else if (e.event === 'tool_result') ctx.emit({ event: 'subagent', tag: tag(), text: `${e.ok ? '✓' : '✗'} ${e.name}`, warn: false });
        else if (e.event === 'warning') ctx.emit({ event: 'subagent', tag: tag(), text: `! ${e.text}`, warn: true });
      };

      if (args.background === true) {
        const launched = tasks.map((t) => {
          const { child } = spawnChild(t);
          let id = 0;
          id = ctx.tasks.startInProcess(t.description, async (signal) => {
            const r = await child.runTurn(t.prompt, mirror(() => `task #${id}`), signal);
            child.tasks.killAll();
            return { ok: r.outcome === 'answered' || r.outcome === 'wrapped', output: r.reply.trim() || NO_REPORT };
          });
          return `#${id} ${t.description}`;
        });
        return `launched ${launched.length} background agent(s): ${launched.join(', ')}. Their reports arrive as task notices.`;
      }

      const reports = await Promise.all(
        tasks.map(async (t, i) => {
          const tag = `agent ${i + 1}`;
          const { child, route } = spawnChild(t);
          ctx.emit({ event: 'subagent_started', tag, model: route.address, label: t.description });
          const r = await child.runTurn(t.prompt, mirror(() => tag), ctx.signal);
          child.tasks.killAll();
          ctx.emit({ event: 'subagent_finished', tag, steps: r.stats.iterations });
          return { label: t.description, report: r.reply.trim() || NO_REPORT };
        }),
      );
      if (reports.length === 1) return reports[0].report;
      return reports.map((r, i) => `### agent ${i + 1} — ${r.label}\n${r.report}`).join('\n\n');
    },
  };
}
