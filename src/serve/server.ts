import type { Agent } from '../agent/loop/agent.ts';
import type { Approval } from '../agent/policy/approval.ts';
import type { AgentConfig } from '../agent/base/config.ts';
import type { AskRequest, Gate, ReviewDecision, ReviewRequest } from '../agent/policy/gate.ts';
import { discoverModels } from '../agent/providers/discovery.ts';
import { Session } from '../agent/session/session.ts';
import { zeroStats, type AgentEvent } from '../agent/base/types.ts';
import { TRUST_CHOICES, trustAnswered, type TrustRequest } from '../agent/extensions/project-trust.ts';
import type { TrustOutcome } from '../agent/loop/assembly.ts';
import { expandSkill, type Skill } from '../agent/extensions/skills.ts';
import { SERVE_LINE_BYTES_MAX } from '../core/limits.ts';
import { COMMANDS, PROTOCOL_VERSION, parseCommand, type Command, type ServeEvent } from '../protocol/serve.ts';

// `rift --serve` (serve-protocol-v1): one command per stdin line in, one JSON event per stdout
// line out. This class owns the protocol state — busy flag, the shared ask/review id counter,
// pending replies — and drives the agent engine; it never touches stdio itself.

export const BUSY_PROMPT = 'turn in progress — cancel it or wait for done';
export const BUSY_UNDO = 'turn in progress — cancel it or wait before undoing';
export const BUSY_MODEL = 'turn in progress — cancel it or wait before switching models';

export type Out = (e: ServeEvent) => void;

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
  /** What the repository waits to be trusted with (offered at the first hello or prompt). */
  trustRequests?: readonly TrustRequest[];
  /** Applies and persists a `trust` answer (AgentAssembly.trust). */
  trust?: (r: TrustRequest) => Promise<TrustOutcome>;
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

  private emit(e: ServeEvent): void {
    if (!this.closed) this.o.out(e);
  }

  private warn(text: string): void {
    this.emit({ event: 'warning', text });
  }

  /** The startup events: ready, context, then history when resuming a conversation. */
  start(info: { session: string; cwd: string; version: string; history: Array<{ role: 'user' | 'assistant'; text: string }> }): void {
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

  /** A stdin line over the bound was dropped unread. */
  warnOverlong(bytes: number): void {
    if (!this.closed) this.warn(`command line dropped: ${bytes} bytes, over the ${SERVE_LINE_BYTES_MAX}-byte bound; send one JSON command per line`);
  }

  private dispatch(value: unknown): void {
    const parsed = parseCommand(value);
    if (!parsed.ok) return this.warn(parsed.warning);
    const c: Command = parsed.command;
    switch (c.cmd) {
      case 'hello':
        this.editReview = c.edit_review;
        if (c.approve !== undefined) this.o.approval.approve = c.approve;
        this.emit({ event: 'capabilities', protocol_version: PROTOCOL_VERSION, edit_review: this.editReview, approve: this.o.approval.approve });
        return this.offerTrust();
      case 'prompt':
        return this.prompt(c.text);
      case 'answer':
        return this.answer(c.id, c.text);
      case 'edit_decision':
        return this.decide(c.id, !c.apply ? { apply: false } : c.content !== undefined ? { apply: true, content: c.content } : { apply: true });
      case 'cancel':
        return this.cancel();
      case 'undo':
        return this.undo();
      case 'list_sessions':
        return this.emit({ event: 'sessions', items: Session.list(Session.dir(this.o.env)) });
      case 'list_models':
        void this.listModels();
        return;
      case 'set_model':
        return this.setModel(c.model);
      case 'set_approval':
        this.o.approval.approve = c.approve;
        return this.emit({ event: 'approval_changed', approve: c.approve });
    }
  }

  /**
   * Trust asks, once: at the first hello, or at the first prompt when no hello came (A.7) — the
   * project config, then rift.toml hooks, then each project plugin. With auto-approve on, each
   * is an info line instead. A project config changes the model, so applying it waits for the
   * running turn; the others apply at once.
   */
  private offerTrust(): void {
    if (this.trustOffered) return;
    this.trustOffered = true;
    for (const r of this.o.trustRequests ?? []) {
      if (!this.o.approval.approve) {
        this.emit({ event: 'info', text: r.skippedNote });
        continue;
      }
      void this.raiseAsk({ question: r.question, detail: r.detail, choices: [...TRUST_CHOICES] }, new AbortController().signal).then((answer) => {
        if (!trustAnswered(answer) || !this.o.trust) return;
        const apply = () => this.applyTrust(r);
        if (r.subject.kind === 'project-config') this.enqueue(apply);
        else void apply();
      });
    }
  }

  private async applyTrust(r: TrustRequest): Promise<void> {
    const out = await this.o.trust!(r);
    if (out.persistError) this.warn(`could not persist ${r.subject.kind === 'plugin' ? 'plugin' : 'trust'} approval: ${out.persistError}`);
    this.emit({ event: 'info', text: out.info });
    if (out.approve !== undefined) this.emit({ event: 'approval_changed', approve: out.approve });
    if (out.modelError) this.warn(`model switch failed: ${out.modelError}`);
    if (out.model) {
      this.unusable = null;
      this.emit({ event: 'model_changed', model: out.model.address, num_ctx: out.model.numCtx, note: out.model.note });
      this.emit({ event: 'context', ...this.o.agent.contextUsage() });
    }
  }

  private prompt(raw: string): void {
    if (raw.trim() === '') return;
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
    this.emit(e);
  }

  private enqueue(job: () => Promise<void>): void {
    this.work = this.work.then(job).catch((e: Error) => this.warn(`internal error: ${e.message}`));
  }

  private answer(id: number, text: string): void {
    const p = this.asks.get(id);
    if (!p) return;
    this.asks.delete(id);
    p.resolve(text);
  }

  private decide(id: number, decision: ReviewDecision): void {
    const p = this.reviews.get(id);
    if (!p) return;
    this.reviews.delete(id);
    p.resolve(decision);
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
    void this.o.agent.undo().then((e) => this.emit(e));
  }

  private setModel(model: string): void {
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

  /** Every reachable model (A.14); `current` is read after discovery, so a switch during it shows. */
  private async listModels(): Promise<void> {
    const models = await discoverModels(this.o.config, this.o.agent.route.address, this.o.env ?? process.env);
    this.emit({ event: 'models', models, current: this.o.agent.route.address });
  }

  raiseAsk(req: AskRequest, signal: AbortSignal): Promise<string | null> {
    return this.raise(
      this.asks,
      signal,
      (id) => ({ event: 'ask', id, question: req.question, detail: req.detail, choices: req.choices }),
      (id) => this.emit({ event: 'ask_closed', id }),
    );
  }

  raiseReview(req: ReviewRequest, signal: AbortSignal): Promise<ReviewDecision | null | 'unavailable'> {
    // Reviews belong to a turn and close with it. A background sub-agent outlives the turn
    // that launched it, so its edits are approved through a plain ask, which stays answerable.
    if (!this.editReview || signal !== this.turn?.signal) return Promise.resolve('unavailable');
    const wire = (id: number): ServeEvent => ({ event: 'edit_review', id, tool: req.tool, path: req.path, old: req.old, new: req.new, segments: req.segments });
    return this.raise(this.reviews, signal, wire, (id) => this.emit({ event: 'edit_review_closed', id }));
  }

  /**
   * One question on the wire under the next id of the shared counter (asks and reviews are one id
   * space, never reused). After EOF or an abort it is dropped (null); `dropped` runs if it was pending.
   */
  private raise<T>(pending: Map<number, Pending<T>>, signal: AbortSignal, wire: (id: number) => ServeEvent, dropped?: (id: number) => void): Promise<T | null> {
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
