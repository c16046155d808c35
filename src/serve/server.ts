import type { Agent } from '../agent/loop/agent.ts';
import type { Approval } from '../agent/policy/approval.ts';
import type { AgentConfig } from '../agent/base/config.ts';
import type { AskRequest, Gate, ReviewDecision, ReviewRequest } from '../agent/policy/gate.ts';
import { buildRoute } from '../agent/providers/routing.ts';
import { Session } from '../agent/session/session.ts';
import { zeroStats, type AgentEvent } from '../agent/base/types.ts';
import type { Plugin } from '../agent/extensions/plugins.ts';
import { expandSkill, type Skill } from '../agent/extensions/skills.ts';

// `rift --serve` (serve-protocol-v1): one command per stdin line in, one JSON event per stdout
// line out. This class owns the protocol state — busy flag, the shared ask/review id counter,
// pending replies — and drives the agent engine; it never touches stdio itself.

export const PROTOCOL_VERSION = 1;
export const COMMANDS = ['hello', 'prompt', 'answer', 'edit_decision', 'cancel', 'undo', 'list_sessions', 'list_models', 'set_model', 'set_approval'] as const;
export const UNKNOWN_CMD = `unknown cmd (expected ${COMMANDS.join('/')})`;
export const BUSY_PROMPT = 'turn in progress — cancel it or wait for done';
export const BUSY_UNDO = 'turn in progress — cancel it or wait before undoing';
export const BUSY_MODEL = 'turn in progress — cancel it or wait before switching models';
export const PROBE_TIMEOUT_MS = 2500;

export type Wire = Record<string, unknown> & { event: string };
export type Out = (e: Wire) => void;

/** A question on the wire awaiting its reply; null resolves it as dropped (deny). */
interface Pending<T> {
  resolve: (reply: T | null) => void;
}

export interface ServeOptions {
  agent: Agent;
  approval: Approval;
  config: AgentConfig;
  out: Out;
  skills?: readonly Skill[];
  /** Why the model cannot be used yet (preflight failed); prompts fail until set_model fixes it. */
  unusable?: string | null;
  env?: NodeJS.ProcessEnv;
  /** Project plugins declaring tools whose manifest is not trusted yet (offered at the first hello or prompt). */
  untrusted?: readonly Plugin[];
  /** Registers a plugin's tools and activates its post-edit hooks live, and persists its trust; returns the tool names. A persist failure is reported in `persistError` (tools and hooks stay active). */
  trustPlugin?: (p: Plugin) => { tools: string[]; persistError?: string };
}

export class ServeGate implements Gate {
  readonly interactive = true;
  /** The session is created after the agent (which needs the gate), hence the late lookup. */
  constructor(private readonly server: () => ServeSession) {}
  ask(req: AskRequest, signal: AbortSignal): Promise<string | null> {
    return this.server().raiseAsk(req, signal);
  }
  review(req: ReviewRequest, signal: AbortSignal): Promise<ReviewDecision | null | 'unavailable'> {
    return this.server().raiseReview(req, signal);
  }
}

export class ServeSession {
  private seq = 0;
  private readonly asks = new Map<number, Pending<string>>();
  private readonly reviews = new Map<number, Pending<ReviewDecision>>();
  private editReview = false;
  private busy = false;
  private turn: AbortController | null = null;
  /** Turns and model switches, serialized. */
  private work: Promise<void> = Promise.resolve();
  private closed = false;
  private unusable: string | null;
  private trustOffered = false;

  constructor(private readonly o: ServeOptions) {
    this.unusable = o.unusable ?? null;
  }

  private emit(e: Wire): void {
    if (!this.closed) this.o.out(e);
  }

  private warn(text: string): void {
    this.emit({ event: 'warning', text });
  }

  /** The startup events: ready, context, then history when resuming a conversation. */
  start(info: { session: string; cwd: string; version: string; history: Array<{ role: string; text: string }> }): void {
    this.emit({
      event: 'ready',
      model: this.o.agent.route.address,
      session: info.session,
      cwd: info.cwd,
      version: info.version,
      protocol_version: PROTOCOL_VERSION,
      num_ctx: this.o.agent.numCtx,
      approve: this.o.approval.approve,
      skills: (this.o.skills ?? []).map((s) => ({ name: s.name, description: s.description })),
      commands: [...COMMANDS],
    });
    this.emit({ event: 'context', ...this.o.agent.contextUsage() });
    if (info.history.length > 0) this.emit({ event: 'history', messages: info.history });
    if (this.unusable) this.warn(this.unusable);
  }

  /** One stdin line. Never throws: anything wrong with the line becomes a warning. */
  handleLine(line: string): void {
    if (this.closed || line.trim() === '') return;
    let cmd: unknown;
    try {
      cmd = JSON.parse(line);
    } catch (e) {
      this.warn(`bad command json: ${(e as Error).message}`);
      return;
    }
    try {
      this.dispatch(cmd);
    } catch (e) {
      this.warn(`command failed: ${(e as Error).message}`);
    }
  }

  private dispatch(cmd: unknown): void {
    const c = cmd && typeof cmd === 'object' && !Array.isArray(cmd) ? (cmd as Record<string, unknown>) : {};
    switch (c.cmd) {
      case 'hello':
        return this.hello(c);
      case 'prompt':
        return this.prompt(c.text);
      case 'answer':
        return this.answer(c);
      case 'edit_decision':
        return this.decide(c);
      case 'cancel':
        return this.cancel();
      case 'undo':
        return this.undo();
      case 'list_sessions':
        this.emit({ event: 'sessions', items: Session.list(Session.dir(this.o.env)) });
        return;
      case 'list_models':
        void this.listModels();
        return;
      case 'set_model':
        return this.setModel(c.model);
      case 'set_approval':
        if (typeof c.approve !== 'boolean') return this.warn("set_approval needs a boolean 'approve' field");
        this.o.approval.approve = c.approve;
        this.emit({ event: 'approval_changed', approve: c.approve });
        return;
      default:
        this.warn(UNKNOWN_CMD);
    }
  }

  private hello(c: Record<string, unknown>): void {
    this.editReview = c.edit_review === true;
    if (typeof c.approve === 'boolean') this.o.approval.approve = c.approve;
    this.emit({ event: 'capabilities', protocol_version: PROTOCOL_VERSION, edit_review: this.editReview, approve: this.o.approval.approve });
    this.offerTrust();
  }

  /**
   * Plugin trust asks, once: at the first hello, or at the first prompt when no hello came (A.7).
   * A plugin declaring tools is asked about in the reference's words; one declaring only
   * post-edit hooks gets the same question about its hooks. The detail lists every command.
   */
  private offerTrust(): void {
    if (this.trustOffered) return;
    this.trustOffered = true;
    for (const p of this.o.untrusted ?? []) {
      const n = p.tools.length;
      const what = n > 0 ? `${n} tool(s)` : `${p.hooks.length} post-edit hook(s)`;
      if (!this.o.approval.approve) {
        const stays = n > 0 ? `its ${what} stay unregistered` : `its ${what} stay inactive`;
        this.emit({
          event: 'info',
          text: `project plugin '${p.name}' left untrusted — ${stays} while auto-approve is on (trusting a repo's commands is a separate decision from approving the agent's edits). Turn approval back on to be asked.`,
        });
        continue;
      }
      const runs = n > 0 ? 'each runs a command from this repo when the model calls it' : 'each runs a command from this repo after every edit';
      void this.raiseAsk(
        {
          question: `Project plugin '${p.name}' declares ${what} — ${runs}. Trust this manifest on this machine?`,
          detail: [...p.tools.map((t) => `${t.name}: ${t.description} — \`${t.command}\``), ...p.hooks.map((h) => `post_edit hook — \`${h}\``)],
          choices: ['trust', 'skip'],
        },
        new AbortController().signal,
      ).then((answer) => {
        const a = (answer ?? '').trim().toLowerCase();
        if (!['trust', 'yes', 'y'].includes(a) || !this.o.trustPlugin) return;
        const r = this.o.trustPlugin(p);
        if (r.persistError) this.warn(`could not persist plugin approval: ${r.persistError}`);
        const parts = [...(n > 0 ? [`tools registered: ${r.tools.join(', ')}`] : []), ...(p.hooks.length > 0 ? [`post-edit hooks active: ${p.hooks.join(', ')}`] : [])];
        this.emit({ event: 'info', text: `plugin '${p.name}' trusted — ${parts.join('; ')}` });
      });
    }
  }

  private prompt(raw: unknown): void {
    if (typeof raw !== 'string' || raw.trim() === '') return;
    this.offerTrust();
    if (this.busy) return this.warn(BUSY_PROMPT);
    let text = raw;
    if (raw.trim().startsWith('/skill:')) {
      const expanded = expandSkill(raw, this.o.skills ?? []);
      if ('unknown' in expanded) return this.warn(`unknown skill '${expanded.unknown}'`);
      text = expanded.text;
    }
    this.busy = true;
    const ctl = new AbortController();
    this.turn = ctl;
    this.enqueue(async () => {
      try {
        if (this.unusable) {
          this.warn(this.unusable);
          this.forward({ event: 'done', stats: zeroStats() });
          return;
        }
        await this.o.agent.runTurn(text, (e) => this.forward(e), ctl.signal);
      } finally {
        if (this.turn === ctl) this.turn = null;
        this.busy = false;
      }
    });
  }

  /** Turn events onto the wire; the turn's orphaned reviews are closed just before done, and done clears busy. */
  private forward(e: AgentEvent): void {
    if (e.event === 'done') {
      this.closeReviews();
      this.busy = false;
    }
    this.emit(e as Wire);
  }

  private enqueue(job: () => Promise<void>): void {
    this.work = this.work.then(job).catch((e: Error) => this.warn(`internal error: ${e.message}`));
  }

  private answer(c: Record<string, unknown>): void {
    const id = typeof c.id === 'number' ? c.id : 0;
    const p = this.asks.get(id);
    if (!p) return;
    this.asks.delete(id);
    p.resolve(typeof c.text === 'string' ? c.text : '');
  }

  private decide(c: Record<string, unknown>): void {
    const id = typeof c.id === 'number' ? c.id : 0;
    const p = this.reviews.get(id);
    if (!p) return;
    this.reviews.delete(id);
    if (c.apply !== true) p.resolve({ apply: false });
    else p.resolve(typeof c.content === 'string' ? { apply: true, content: c.content } : { apply: true });
  }

  private cancel(): void {
    this.turn?.abort();
    this.closeReviews();
  }

  /** Every undecided review is orphaned when its turn ends or is cancelled (the v1 contract). */
  private closeReviews(): void {
    for (const [id, p] of [...this.reviews.entries()].sort((a, b) => a[0] - b[0])) {
      this.reviews.delete(id);
      this.emit({ event: 'edit_review_closed', id });
      p.resolve(null);
    }
  }

  private undo(): void {
    if (this.busy) return this.warn(BUSY_UNDO);
    this.emit(this.o.agent.undo() as Wire);
  }

  private setModel(model: unknown): void {
    if (typeof model !== 'string' || model.trim() === '') return this.warn("set_model needs a 'model' field");
    if (this.busy) return this.warn(BUSY_MODEL);
    this.busy = true;
    this.enqueue(async () => {
      try {
        const note = await this.o.agent.switchModel(model, this.o.config, this.o.config.numCtxExplicit, this.o.env);
        this.unusable = null;
        this.emit({ event: 'model_changed', model, num_ctx: this.o.agent.numCtx, note: note.trim() });
        this.emit({ event: 'context', ...this.o.agent.contextUsage() });
      } catch (e) {
        this.warn(`model switch failed: ${(e as Error).message}`);
      } finally {
        this.busy = false;
      }
    });
  }

  /** Every reachable model: the default host's list, then each provider's, duplicates removed (A.14). */
  private async listModels(): Promise<void> {
    const cfg = this.o.config;
    const env = this.o.env ?? process.env;
    const names = new Set(Object.keys(cfg.providers));
    const current = this.o.agent.route.address;
    const prefix = current.includes('/') ? current.slice(0, current.indexOf('/')) : '';
    if (prefix === 'openai' && !cfg.providers.openai) names.add('openai');
    const probe = async (addr: string, host: string, withPrefix: string) => {
      const ctl = new AbortController();
      const timer = setTimeout(() => ctl.abort(), PROBE_TIMEOUT_MS);
      try {
        // A provider this build cannot speak (or a bad entry) is skipped like an unreachable one.
        const route = buildRoute(addr, { host, providers: cfg.providers }, env);
        const list = await route.provider.tags(ctl.signal);
        return list.map((m) => (withPrefix ? `${withPrefix}/${m}` : m));
      } catch {
        return [];
      } finally {
        clearTimeout(timer);
      }
    };
    // Each probe answers [] on any failure, so this never rejects.
    const lists = await Promise.all([probe('probe', cfg.host, ''), ...[...names].sort().map((name) => probe(`${name}/probe`, cfg.host, name))]);
    const models = [...new Set(lists.flat())];
    this.emit({ event: 'models', models, current: this.o.agent.route.address });
  }

  raiseAsk(req: AskRequest, signal: AbortSignal): Promise<string | null> {
    return this.raise(this.asks, signal, (id) => ({ event: 'ask', id, question: req.question, detail: req.detail, choices: req.choices }));
  }

  raiseReview(req: ReviewRequest, signal: AbortSignal): Promise<ReviewDecision | null | 'unavailable'> {
    // Reviews belong to a turn and close with it. A background sub-agent outlives the turn
    // that launched it, so its edits are approved through a plain ask, which stays answerable.
    if (!this.editReview || signal !== this.turn?.signal) return Promise.resolve('unavailable');
    const wire = (id: number): Wire => ({ event: 'edit_review', id, tool: req.tool, path: req.path, old: req.old, new: req.new, segments: req.segments });
    return this.raise(this.reviews, signal, wire, (id) => this.emit({ event: 'edit_review_closed', id }));
  }

  /**
   * One question on the wire under the next id of the shared counter (asks and reviews are one id
   * space, never reused). After EOF or an abort it is dropped (null); `dropped` runs if it was pending.
   */
  private raise<T>(pending: Map<number, Pending<T>>, signal: AbortSignal, wire: (id: number) => Wire, dropped?: (id: number) => void): Promise<T | null> {
    if (this.closed || signal.aborted) return Promise.resolve(null);
    const id = ++this.seq;
    return new Promise((resolve) => {
      const onAbort = () => {
        if (pending.delete(id)) dropped?.(id);
        resolve(null);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      pending.set(id, {
        resolve: (reply) => {
          signal.removeEventListener('abort', onAbort);
          resolve(reply);
        },
      });
      this.emit(wire(id));
    });
  }

  /** stdin EOF: drop every pending reply (deny), cancel the turn, let the save finish. Nothing is printed after. */
  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.asks.values()) p.resolve(null);
    this.asks.clear();
    for (const p of this.reviews.values()) p.resolve(null);
    this.reviews.clear();
    this.turn?.abort();
    await this.work;
  }
}
