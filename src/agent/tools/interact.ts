import { ToolError, optBool, optInt, optString, type Tool } from '../base/tool.ts';
import type { ToolContext } from './context.ts';

// plan and ask_user (reference B.2): the live checklist, and one clarifying question.

export const DISMISSED = '[the user dismissed the question without answering; proceed on your best judgment]';
export const HEADLESS_ANSWER = '[no user is attached (headless run); proceed on your best judgment and state the assumption you made]';

function renderPlan(items: ReadonlyArray<{ text: string; done: boolean }>): string {
  return `Current plan:\n${items.map((it, i) => `[${it.done ? 'x' : ' '}] ${i + 1}. ${it.text}`).join('\n')}\n`;
}

export const planTool: Tool<ToolContext> = {
  name: 'plan',
  description: 'Keep a checklist: plan(set=[steps]) to (re)write it, plan(done=N) to tick step N.',
  parameters: {
    type: 'object',
    properties: { set: { type: 'array', items: { type: 'string' } }, done: { type: 'integer', description: '1-based step' } },
  },
  async run(args, ctx) {
    const set = args.set;
    const done = args.done;
    if (set === undefined && done === undefined) throw new ToolError('plan needs set (a list of steps) or done (a 1-based step number)');
    if (set !== undefined) {
      if (!Array.isArray(set) || set.some((s) => typeof s !== 'string')) throw new ToolError("plan: 'set' must be a list of strings");
      ctx.plan.splice(0, ctx.plan.length, ...(set as string[]).map((text) => ({ text, done: false })));
    }
    if (done !== undefined) {
      const list = Array.isArray(done) ? done : [done];
      for (const d of list) {
        const n = typeof d === 'string' ? Number(d) : d;
        if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > ctx.plan.length) {
          throw new ToolError(`plan: done=${JSON.stringify(d)} is not a step number; the plan has ${ctx.plan.length} step(s)`);
        }
        ctx.plan[n - 1].done = true;
      }
    }
    return renderPlan(ctx.plan);
  },
};

export const askUserTool: Tool<ToolContext> = {
  name: 'ask_user',
  description: 'Ask the user one clarifying question when the request is ambiguous.',
  parameters: {
    type: 'object',
    required: ['question'],
    properties: { question: { type: 'string' }, choices: { type: 'array', items: { type: 'string' } } },
  },
  async run(args, ctx) {
    const question = optString(args, 'question', 'ask_user');
    if (!question || question.trim() === '') throw new ToolError('ask_user needs a question');
    if (!ctx.canAskUser) return HEADLESS_ANSWER;
    const choices = Array.isArray(args.choices) ? args.choices.filter((c): c is string => typeof c === 'string') : [];
    const answer = await ctx.gate.ask({ question, detail: [], choices }, ctx.signal);
    if (answer === null) return DISMISSED;
    return `User answered: ${answer}`;
  },
};

/** Background tasks started by bash run_in_background: list, read output, kill. */
export const taskTool: Tool<ToolContext> = {
  name: 'task',
  description: 'Check background tasks: no id lists them; with id shows status and output; kill=true stops it.',
  parameters: { type: 'object', properties: { id: { type: 'integer' }, kill: { type: 'boolean' } } },
  async run(args, ctx) {
    const id = optInt(args, 'id', 'task');
    if (id === undefined) return ctx.tasks.list();
    if (optBool(args, 'kill', 'task')) {
      if (!ctx.tasks.kill(id)) throw new ToolError(`task #${id} is not running; call task without an id to list tasks`);
      return `killed task #${id}`;
    }
    const status = ctx.tasks.status(id);
    if (status === null) throw new ToolError(`there is no task #${id}; call task without an id to list tasks`);
    return status;
  },
};
