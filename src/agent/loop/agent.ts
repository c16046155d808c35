import type { Approval } from '../policy/approval.ts';
import {
  calibrate, estimate, pruneOldOutputs, summarizeHistory, toolsOverhead, turnStart, unscaledEstimate, usableBudget,
} from '../session/compaction.ts';
import type { Gate } from '../policy/gate.ts';
import type { PostEditHooks } from '../policy/hooks.ts';
import type { Sandbox } from '../policy/sandbox.ts';
import { ProviderError } from '../providers/http.ts';
import { recoverTextualToolCalls, stripTemplateTokens } from './recovery.ts';
import type { AgentConfig } from '../base/config.ts';
import { buildRoute, preflight, type Route } from '../providers/routing.ts';
import { Session } from '../session/session.ts';
import { BackgroundTasks, type CommandEnv } from '../base/tasks.ts';
import { ToolError } from '../base/tool.ts';
import type { CodeServices, CommandRunner, EditorFiles, ToolContext } from '../tools/context.ts';
import { ToolRegistry } from '../tools/registry.ts';
import {
  assistantMessage, zeroFailures, zeroStats, type AgentEvent, type EventSink, type FailureCounters, type Message, type PlanItem, type ToolCall, type TurnStats,
} from '../base/types.ts';
import { NOTHING_TO_UNDO, UndoJournal, undoMessage } from '../session/undo.ts';

// The agent loop (reference B.3): one model call at a time, tools run in order through the
// permission gate, typed events out. It knows nothing of stdio, terminals or wire formats.

export const CANCEL_NOTE =
  '[note: the user pressed Esc to CANCEL your previous, incomplete turn. Treat that interrupted task as abandoned — do NOT resume it unless this message asks you to.]\n\n';
export const CANCELLED_RESULT = 'ERROR: cancelled by user';
export const REPEAT_REFUSED =
  'ERROR: repeated identical tool call refused. You already ran this exact call and have its result. Take a different action or summarize what you have so far.';
export const APPLY_NUDGE =
  '[system] You have not changed any project files this turn. If the request was to fix/implement something, apply it now using the edit/write tools and verify the result. If the user only wanted content or an explanation, reply that your previous answer stands — do not rewrite or shorten it.';
export const STUCK_NUDGE =
  '[system] Your last several tool calls all failed or were refused. Stop and change approach: re-read the relevant files, check paths with ls or glob, or explain to the user what is blocking you.';
export const WRAP_UP_NOTE = (left: number) =>
  `[system] You are near the iteration limit (${left} rounds left, the last one without tools). Finish the current step, then give your final answer.`;
export const FINAL_ROUND_NOTE =
  '[system] This is the final round and tools are unavailable. Reply with your final answer, or a handoff summary of what is done and what remains.';

/** Identical calls allowed per turn before the next one is refused (B.5). */
export const DOOM_LOOP_REPEATS = 3;
export const STUCK_NUDGE_AT = 4;
export const STUCK_END_AT = 7;
export const PREVIEW_BYTES = 200;
const WRAP_UP_ROUNDS = 2;

const ACTIONABLE = ['fix', 'implement', 'add ', 'refactor', 'rename', 'create', 'write ', 'update', 'change', 'make ', 'remove', 'delete', 'extend', 'convert', 'build '];
const CHAT_OUTPUT = ["do not use any tools", "don't use any tools", 'do not use tools', "don't use tools", 'without using tools', 'no tools', 'in a code block', 'in the chat', 'in your reply'];

export type TurnOutcome = 'answered' | 'cancelled' | 'max_iterations' | 'wrapped' | 'stuck' | 'error';

export interface TurnResult {
  outcome: TurnOutcome;
  stats: TurnStats;
  reply: string;
  tools: Array<{ name: string; ok: boolean; target?: string }>;
  failures: FailureCounters;
  error?: string;
}

export interface AgentOptions {
  cwd: string;
  route: Route;
  numCtx: number;
  think: boolean | undefined;
  temperature: number;
  maxIterations: number;
  approval: Approval;
  gate: Gate;
  systemPrompt: string;
  code?: CodeServices;
  tasks?: BackgroundTasks;
  /** Headless: nudge and greedy retry on, ask_user answered by best judgment. */
  alwaysTask?: boolean;
  bashWrapper?: string;
  /** The OS sandbox for bash commands; sub-agents share it (an isolated one gets it around its projection). */
  sandbox?: Sandbox;
  /** Environment changes for the commands bash and the post-edit hooks run. */
  commandEnv?: CommandEnv;
  /** Post-edit hooks (B.13): a live list the front end may extend mid-session; sub-agents share it. */
  hooks?: PostEditHooks;
  /** The editor's files and terminal (ACP), when the front end offers them. */
  editorFiles?: EditorFiles;
  runner?: CommandRunner;
  /** Autosave target; null disables saving (benchmarks). */
  sessionPath?: string | null;
  messages?: Message[];
}

/** `preview(text, 200)`: trimmed, newlines as spaces, cut at a char boundary with a trailing … */
export function preview(text: string, max: number = PREVIEW_BYTES): string {
  const flat = text.trim().replace(/\r?\n/g, ' ');
  if (Buffer.byteLength(flat) <= max) return flat;
  let out = '';
  let bytes = 0;
  for (const ch of flat) {
    const b = Buffer.byteLength(ch);
    if (bytes + b > max) break;
    out += ch;
    bytes += b;
  }
  return `${out}…`;
}

export function promptLooksActionable(p: string): boolean {
  const l = p.toLowerCase();
  return ACTIONABLE.some((w) => l.includes(w));
}

export function promptWantsChatOutput(p: string): boolean {
  const l = p.toLowerCase();
  return CHAT_OUTPUT.some((w) => l.includes(w));
}

export class Agent {
  readonly messages: Message[];
  readonly journal = new UndoJournal();
  readonly plan: PlanItem[] = [];
  readonly registry: ToolRegistry;
  readonly tasks: BackgroundTasks;
  route: Route;
  numCtx: number;
  think: boolean | undefined;
  calibration = 1;
  /** Autosave target; a front end's /clear or /resume points it at another session. */
  sessionPath: string | null;
  private interrupted = false;
  private busy = false;

  constructor(readonly opts: AgentOptions) {
    this.route = opts.route;
    this.numCtx = opts.numCtx;
    this.think = opts.think;
    this.registry = ToolRegistry.standard(opts.code);
    this.tasks = opts.tasks ?? new BackgroundTasks();
    this.sessionPath = opts.sessionPath ?? null;
    this.messages = opts.messages && opts.messages.length > 0 ? opts.messages : [{ role: 'system', content: opts.systemPrompt }];
  }

  get running(): boolean {
    return this.busy;
  }

  /** (used, limit): the calibrated estimate of the whole prompt against the working num_ctx (A.12). */
  contextUsage(): { used: number; limit: number } {
    return { used: estimate(this.messages, toolsOverhead(this.registry.defs()), this.calibration), limit: this.numCtx };
  }

  /** Reverts the most recent turn's write/edit changes (A.18); returns the event to show. */
  async undo(): Promise<AgentEvent> {
    if (this.busy) return { event: 'warning', text: 'undo is not available while a turn is running' };
    // Busy while the files are put back (the tree lock may be held by another process), so no turn starts on half of them.
    this.busy = true;
    try {
      const r = await this.journal.undo();
      return r ? { event: 'info', text: undoMessage(r) } : { event: 'warning', text: NOTHING_TO_UNDO };
    } catch (e) {
      return { event: 'warning', text: `undo failed: ${(e as Error).message}` };
    } finally {
      this.busy = false;
    }
  }

  /**
   * One turn. Always ends with `done` (success, cancel or error), then the autosave, idle
   * compaction and a `context` event. Never throws for model or tool failures.
   */
  async runTurn(input: string, emit: EventSink, signal: AbortSignal = new AbortController().signal): Promise<TurnResult> {
    this.busy = true;
    // A shared registry (a sub-agent's) keeps reporting to its owner, not to this turn.
    if (!this.opts.tasks) this.tasks.setSink(emit);
    try {
      const result = await new Turn(this, input, emit, signal).run();
      this.interrupted = result.outcome === 'cancelled';
      this.save(emit);
      await this.compact(emit, signal, 'idle');
      emit({ event: 'context', ...this.contextUsage() });
      return result;
    } finally {
      this.busy = false;
    }
  }

  /**
   * Live model switch on the same conversation (A.15): preflight (tools capability, num_ctx
   * clamp/adopt) first, so a failure leaves the current model in place. Returns the note.
   */
  async switchModel(address: string, cfg: Pick<AgentConfig, 'host' | 'providers'>, numCtxExplicit: boolean, env: NodeJS.ProcessEnv = process.env): Promise<string> {
    if (this.busy) throw new Error('the model cannot change while a turn is running');
    const route = buildRoute(address, cfg, env);
    const pf = await preflight(route, this.numCtx, numCtxExplicit);
    this.route = route;
    this.numCtx = pf.numCtx;
    this.think = pf.think;
    return pf.note;
  }

  /**
   * Replaces the conversation and its autosave target (a front end's /clear or /resume). A
   * resumed conversation runs under this session's system prompt; the plan and the cancel note
   * start over. The undo journal stays: file changes remain revertible.
   */
  resetConversation(messages: Message[] | undefined, sessionPath: string | null): void {
    if (this.busy) throw new Error('the conversation cannot change while a turn is running');
    const next: Message[] = messages && messages.length > 0 ? [...messages] : [{ role: 'system', content: this.opts.systemPrompt }];
    if (next[0].role === 'system') next[0] = { role: 'system', content: this.opts.systemPrompt };
    this.messages.splice(0, this.messages.length, ...next);
    this.plan.length = 0;
    this.interrupted = false;
    this.calibration = 1;
    this.sessionPath = sessionPath;
  }

  /** Consumed by the next turn: the model is told the previous one was abandoned. */
  takeInterrupted(): boolean {
    const v = this.interrupted;
    this.interrupted = false;
    return v;
  }

  private save(emit: EventSink): void {
    const path = this.sessionPath;
    if (!path) return;
    try {
      Session.save(path, { model: this.route.model, saved_at: Math.floor(Date.now() / 1000), cwd: this.opts.cwd, messages: this.messages });
    } catch (e) {
      emit({ event: 'warning', text: `session save failed: ${(e as Error).message}` });
    }
  }

  /**
   * Two-stage compaction when the estimate is over the usable budget (B.6), reported as info
   * events. `manual` (a front end's /compact) runs both stages whatever the budget says.
   */
  async compact(emit: EventSink, signal: AbortSignal, when: 'before_call' | 'idle' | 'manual', failures?: FailureCounters, overhead = toolsOverhead(this.registry.defs())): Promise<void> {
    const usable = usableBudget(this.numCtx);
    const before = estimate(this.messages, overhead, this.calibration);
    const manual = when === 'manual';
    if (manual && !this.messages.slice(0, turnStart(this.messages, 1)).some((m) => m.role !== 'system')) {
      emit({ event: 'info', text: 'nothing to compact yet: the conversation has no earlier turns' });
      return;
    }
    if (!manual && before <= usable) return;
    const pruned = pruneOldOutputs(this.messages);
    const after = estimate(this.messages, overhead, this.calibration);
    if (pruned > 0) {
      if (failures) failures.compact_prunes++;
      emit({ event: 'info', text: `compacted: pruned ${pruned} old outputs (~${before} → ~${after} tok, budget ${usable})` });
    }
    if (!manual && after <= usable) return;
    emit({ event: 'info', text: 'compacting: summarizing earlier conversation…' });
    try {
      await summarizeHistory(this.messages, { provider: this.route.provider, model: this.route.model, numCtx: this.numCtx }, usable, signal);
      if (failures) failures.compact_summaries++;
      emit({ event: 'info', text: `compacted: history summarized (~${estimate(this.messages, overhead, this.calibration)} tok)` });
    } catch (e) {
      if (signal.aborted && when === 'before_call') throw e;
      emit({ event: 'warning', text: `summarization failed (${(e as Error).message}); continuing pruned` });
    }
  }
}

/** The state of one turn; a small object so each policy reads as its own method. */
class Turn {
  private readonly stats = zeroStats();
  private readonly failures = zeroFailures();
  private readonly tools: TurnResult['tools'] = [];
  private readonly started = Date.now();
  private readonly repeats = new Map<string, number>();
  private readonly warnedRepeat = new Set<string>();
  private usedMutating = false;
  private usedTools = false;
  private nudged = false;
  private retried = false;
  private stuck = 0;
  private stuckNudged = false;
  private temperature: number;
  private turnStart = 0;
  private reply = '';

  constructor(
    private readonly agent: Agent,
    private readonly input: string,
    private readonly emit: EventSink,
    private readonly signal: AbortSignal,
  ) {
    this.temperature = agent.opts.temperature;
  }

  private finish(outcome: TurnOutcome, error?: string): TurnResult {
    this.stats.duration_ms = Date.now() - this.started;
    const stats = outcome === 'error' ? zeroStats() : this.stats;
    if (outcome === 'error') this.emit({ event: 'warning', text: `error: ${error}` });
    if (outcome === 'cancelled') this.emit({ event: 'warning', text: 'turn cancelled' });
    this.emit({ event: 'done', stats });
    return { outcome, stats: this.stats, reply: this.reply, tools: this.tools, failures: this.failures, error };
  }

  /** A bug inside the loop still ends the turn the documented way: warning, done, saved session. */
  async run(): Promise<TurnResult> {
    try {
      return await this.loop();
    } catch (e) {
      return this.finish('error', `internal error: ${(e as Error).message}`);
    }
  }

  private async loop(): Promise<TurnResult> {
    const a = this.agent;
    const text = a.takeInterrupted() ? CANCEL_NOTE + this.input : this.input;
    a.messages.push({ role: 'user', content: text });
    this.turnStart = a.messages.length;
    a.journal.beginTurn();
    const allDefs = a.registry.defs();
    // Measured once per turn: the tool set the loop offers does not change within it.
    const allOverhead = toolsOverhead(allDefs);
    const max = Math.max(1, a.opts.maxIterations);

    for (let iteration = 1; iteration <= max; iteration++) {
      if (this.signal.aborted) return this.finish('cancelled');
      this.stats.iterations = iteration;
      this.emit({ event: 'iteration', n: iteration });
      try {
        await a.compact(this.emit, this.signal, 'before_call', this.failures, allOverhead);
      } catch {
        return this.finish('cancelled');
      }
      const final = iteration === max && max > 1;
      const tools = final ? [] : allDefs;
      const requestMessages = this.requestMessages(iteration, max);
      const overhead = final ? 0 : allOverhead;

      let outcome;
      try {
        outcome = await a.route.provider.chat(
          { model: a.route.model, messages: requestMessages, tools, think: a.think, numCtx: a.numCtx, temperature: this.temperature },
          (d) => {
            if (d.kind === 'thinking') this.emit({ event: 'thinking', text: d.text });
            else if (d.kind === 'content') this.emit({ event: 'content', text: d.text });
          },
          this.signal,
        );
      } catch (e) {
        if (this.signal.aborted || (e instanceof ProviderError && e.kind === 'cancelled')) return this.finish('cancelled');
        return this.finish('error', (e as Error).message);
      }

      const s = outcome.stats;
      this.stats.prompt_tokens = s.prompt_eval_count;
      this.stats.billed_prompt_tokens += s.prompt_eval_count;
      this.stats.output_tokens += s.eval_count;
      this.stats.tokens_per_sec = s.eval_duration_ns > 0 ? s.eval_count / (s.eval_duration_ns / 1e9) : 0;
      a.calibration = calibrate(a.calibration, s.prompt_eval_count, unscaledEstimate(requestMessages, overhead));
      if (outcome.truncation_suspected) {
        this.failures.truncations++;
        this.emit({ event: 'warning', text: `context overflow: prompt filled num_ctx=${a.numCtx} and was likely front-truncated; results may be degraded` });
      }

      const msg = outcome.message;
      const stripped = stripTemplateTokens(msg.content);
      if (stripped !== null) {
        msg.content = stripped;
        this.failures.template_strips++;
        this.emit({ event: 'warning', text: 'stripped leaked template tokens from output' });
      }
      let calls = (msg.tool_calls ?? []).filter((c) => c.function.name !== '');
      if (calls.length === 0 && !final) {
        const recovered = recoverTextualToolCalls(msg.content, {
          names: a.registry.names(),
          known: (n) => a.registry.get(a.registry.resolve(n)) !== undefined,
          paramType: (t, k) => a.registry.paramType(a.registry.resolve(t), k),
        });
        if (recovered) {
          calls = recovered;
          msg.content = '';
          this.failures.textual_recoveries++;
          this.emit({ event: 'warning', text: 'model emitted a textual tool call; recovered it' });
        }
      }
      const msgIndex = a.messages.length;
      calls.forEach((c, i) => {
        c.id ??= `call_${msgIndex}_${i}`;
      });
      a.messages.push(assistantMessage(msg.content, msg.thinking, calls));

      if (calls.length === 0) {
        this.reply = msg.content;
        if (final) return this.finish('wrapped');
        if (this.shouldNudge(msg.content)) continue;
        if (this.shouldRetryGreedy()) continue;
        return this.finish('answered');
      }

      const ended = await this.runCalls(calls);
      if (ended) return ended;
    }
    this.emit({ event: 'warning', text: `stopped after ${max} iterations without a final answer` });
    return this.finish('max_iterations');
  }

  /** Old thinking is dropped from requests (not from history); near the cap the model is told to wrap up. */
  private requestMessages(iteration: number, max: number): Message[] {
    const msgs = this.agent.messages;
    let lastUser = -1;
    for (let i = msgs.length - 1; i >= 0; i--) {
      if (msgs[i].role === 'user') {
        lastUser = i;
        break;
      }
    }
    const out = msgs.map((m, i) => {
      if (m.role === 'assistant' && m.thinking && i < lastUser) {
        const { thinking: _drop, ...rest } = m;
        return rest;
      }
      return m;
    });
    const left = max - iteration;
    if (max > WRAP_UP_ROUNDS + 1 && left === WRAP_UP_ROUNDS) out.push({ role: 'user', content: WRAP_UP_NOTE(left) });
    if (left === 0 && max > 1) out.push({ role: 'user', content: FINAL_ROUND_NOTE });
    return out;
  }

  private shouldNudge(content: string): boolean {
    if (this.usedMutating || this.nudged || promptWantsChatOutput(this.input)) return false;
    if (!content.includes('```') && !promptLooksActionable(this.input)) return false;
    this.nudged = true;
    this.failures.apply_nudges++;
    this.emit({ event: 'warning', text: 'model finished without modifying any files; nudging it to apply the change' });
    this.agent.messages.push({ role: 'user', content: APPLY_NUDGE });
    return true;
  }

  /** Headless work items: a reply without any tool use is retried once at temperature 0. */
  private shouldRetryGreedy(): boolean {
    if (!this.agent.opts.alwaysTask || this.usedTools || this.retried || promptWantsChatOutput(this.input)) return false;
    this.retried = true;
    this.failures.greedy_retries++;
    this.temperature = 0;
    this.agent.messages.splice(this.turnStart);
    this.emit({ event: 'warning', text: 'model never used tools on a work item; retrying the turn at temperature 0' });
    return true;
  }

  /** Runs the calls in order; every id gets a result. Returns a finished result when the turn must end. */
  private async runCalls(calls: ToolCall[]): Promise<TurnResult | null> {
    const a = this.agent;
    for (let i = 0; i < calls.length; i++) {
      const call = calls[i];
      const requested = call.function.name;
      if (this.signal.aborted) {
        this.answerCancelled(calls.slice(i));
        return this.finish('cancelled');
      }
      const canonical = a.registry.resolve(requested);
      if (canonical !== requested && a.registry.get(canonical)) this.failures.alias_hits++;
      const signature = `${canonical}\0${JSON.stringify(call.function.arguments)}`;
      const count = (this.repeats.get(signature) ?? 0) + 1;
      this.repeats.set(signature, count);
      if (count >= DOOM_LOOP_REPEATS) {
        if (!this.warnedRepeat.has(signature)) {
          this.warnedRepeat.add(signature);
          this.emit({ event: 'warning', text: `tool '${canonical}' called ${count}x with identical arguments; refusing the repeat` });
        }
        this.failures.doom_loop_trips++;
        this.pushResult(call, requested, REPEAT_REFUSED);
        if (this.countFailure()) {
          this.answerCancelled(calls.slice(i + 1), 'ERROR: turn ended after repeated failures');
          return this.finishStuck();
        }
        continue;
      }

      this.usedTools = true;
      this.emit({ event: 'tool_start', name: canonical, args: call.function.arguments });
      const { ok, text, ctx } = await this.execute(canonical, requested, call.function.arguments);
      if (this.signal.aborted && !ok) {
        this.emit({ event: 'tool_result', name: canonical, ok: false, preview: preview(CANCELLED_RESULT) });
        this.pushResult(call, requested, CANCELLED_RESULT);
        this.answerCancelled(calls.slice(i + 1));
        return this.finish('cancelled');
      }
      const tool = a.registry.get(canonical);
      if (ok && tool?.mutating) this.usedMutating = true;
      this.tools.push({ name: canonical, ok, ...target(call.function.arguments) });
      this.emit({ event: 'tool_result', name: canonical, ok, preview: preview(text) });
      if (ok && ctx?.lastDiff) this.emit({ event: 'edit_diff', ...ctx.lastDiff });
      if (ok && canonical === 'plan') this.emit({ event: 'plan', items: a.plan.map((p) => ({ ...p })) });
      this.pushResult(call, requested, text);
      if (ok) this.stuck = 0;
      else if (this.countFailure()) {
        this.answerCancelled(calls.slice(i + 1), 'ERROR: turn ended after repeated failures');
        return this.finishStuck();
      }
    }
    if (this.stuck >= STUCK_NUDGE_AT && !this.stuckNudged) {
      this.stuckNudged = true;
      this.emit({ event: 'warning', text: `${this.stuck} tool calls in a row failed; nudging the model to change approach` });
      a.messages.push({ role: 'user', content: STUCK_NUDGE });
    }
    if (this.signal.aborted) return this.finish('cancelled');
    return null;
  }

  /** Counts a failed or refused call; true when the turn must end (stuck-turn guard). */
  private countFailure(): boolean {
    this.stuck++;
    return this.stuck >= STUCK_END_AT;
  }

  private finishStuck(): TurnResult {
    this.failures.stuck_turns++;
    this.emit({ event: 'warning', text: `${this.stuck} tool calls in a row failed or were refused; ending the turn — rephrase the request or check the setup` });
    return this.finish('stuck');
  }

  private async execute(canonical: string, requested: string, args: Record<string, unknown>): Promise<{ ok: boolean; text: string; ctx?: ToolContext }> {
    const a = this.agent;
    const tool = a.registry.get(canonical);
    if (!tool) {
      this.failures.unknown_tools++;
      return { ok: false, text: `ERROR: unknown tool '${requested}'. Available tools: ${a.registry.names().join(', ')}` };
    }
    const ctx: ToolContext = {
      cwd: a.opts.cwd,
      signal: this.signal,
      gate: a.opts.gate,
      approval: a.opts.approval,
      journal: a.journal,
      plan: a.plan,
      tasks: a.tasks,
      emit: this.emit,
      code: a.opts.code ?? {},
      canAskUser: !a.opts.alwaysTask && a.opts.gate.interactive,
      bashWrapper: a.opts.bashWrapper,
      sandbox: a.opts.sandbox,
      commandEnv: a.opts.commandEnv,
      hooks: a.opts.hooks,
      editorFiles: a.opts.editorFiles,
      runner: a.opts.runner,
    };
    try {
      const text = await raceAbort(tool.run(args, ctx), this.signal);
      return { ok: true, text, ctx };
    } catch (e) {
      this.failures.tool_errors++;
      if (this.signal.aborted) return { ok: false, text: CANCELLED_RESULT };
      const msg = e instanceof ToolError ? e.message : `${tool.name} failed: ${(e as Error).message}`;
      return { ok: false, text: `ERROR: ${msg}` };
    }
  }

  private pushResult(call: ToolCall, requested: string, text: string): void {
    this.agent.messages.push({ role: 'tool', content: text, tool_name: requested, tool_call_id: call.id });
  }

  /** Strict servers reject a history where any tool_call id lacks a result. */
  private answerCancelled(rest: ToolCall[], text: string = CANCELLED_RESULT): void {
    for (const c of rest) this.pushResult(c, c.function.name, text);
  }
}

function target(args: Record<string, unknown>): { target?: string } {
  const t = args.path ?? args.pattern ?? args.command;
  return typeof t === 'string' ? { target: t.slice(0, 200) } : {};
}

/** A tool that ignores the signal still yields to cancel; its late result is dropped. */
function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new ToolError('cancelled by user'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new ToolError('cancelled by user'));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
