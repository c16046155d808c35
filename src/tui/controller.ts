import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { Agent } from '../agent/loop/agent.ts';
import type { TrustOutcome } from '../agent/loop/assembly.ts';
import { TRUST_CHOICES, trustAnswered, type TrustRequest } from '../agent/extensions/project-trust.ts';
import { historyMessages, openSession } from '../agent/loop/setup.ts';
import type { Approval } from '../agent/policy/approval.ts';
import { previewDiff } from '../agent/policy/diff.ts';
import type { AgentConfig } from '../agent/base/config.ts';
import type { AgentEvent } from '../agent/base/types.ts';
import { discoverModels } from '../agent/providers/discovery.ts';
import { Session, type SessionItem } from '../agent/session/session.ts';
import { expandSkill, type Skill } from '../agent/extensions/skills.ts';
import { decodeText, looksBinary } from '../workspace/encoding.ts';
import { DIFF_LINES_SHOWN_MAX, SESSIONS_SHOWN_MAX } from '../core/limits.ts';
import { projectPathViolation } from '../core/path.ts';
import { COMMANDS, complete, parseInput, type Completion, type SlashCommand } from './commands.ts';
import { Editor } from './editor.ts';
import type { KeyEvent } from './keys.ts';
import { type Questions } from './questions.ts';
import { toMarkdown, Transcript, type Line } from './transcript.ts';
import { liveRows, type Menu, type Row } from './view.ts';
import { judge } from '../swarm/judge.ts';
import { merge } from '../swarm/merge.ts';
import { candidatesFor, DEFAULT_SWARM_MODELS, runSwarm, summaryTable } from '../swarm/run.ts';
import { SwarmRefusal } from '../swarm/tree.ts';

// The TUI's behaviour without a terminal: keys and engine events in, transcript lines and live
// rows out. It runs turns and slash commands against the same agent `-p` and `--serve` drive;
// the Ink layer only draws what `frame()` returns.

/** What the controller needs from the agent assembly (AgentAssembly provides it). */
export interface Engine {
  agent: Agent;
  approval: Approval;
  config: AgentConfig;
  skills: readonly Skill[];
  /** What the repository waits to be trusted with (project config, rift.toml hooks, plugins), in order. */
  trustRequests: readonly TrustRequest[];
  trust(req: TrustRequest): Promise<TrustOutcome>;
}

export interface ControllerOptions {
  engine: Engine;
  questions: Questions;
  cwd: string;
  version: string;
  /** Why the model cannot serve a turn yet (preflight failed); /model can fix it. */
  unusable: string | null;
  /** Prior conversation to replay (a resumed session). */
  history: ReturnType<typeof historyMessages>;
  requestFrame: () => void;
  /** Everything is settled (turn ended, session saved): the front end may exit. */
  quit: () => void;
  env?: NodeJS.ProcessEnv;
  /** Where the prompt history persists across sessions; undefined keeps it in memory. */
  historyFile?: string;
}

/** How long the first Ctrl-C waits for the second. */
export const QUIT_WINDOW_MS = 2000;

export const INIT_PROMPT = `Write an AGENTS.md at the repository root for coding agents working in this repository.
Explore first with your tools (repo_map, outline, read, ls, glob; package manifests, build and CI files, README, existing docs), then write the file with the write tool (if AGENTS.md exists, read it and improve it instead of starting over).
Cover, briefly and only with facts you verified in the files: what the project is; how to install, build, lint and test (exact commands); the layout (main folders and what lives where); code conventions visible in the code; and anything an agent must not do. Keep it under 120 lines.`;

const KEYS_HELP = [
  'Enter sends · Alt+Enter, Ctrl-J or a trailing \\ adds a line · paste keeps newlines',
  'Up/Down: history (on the first/last line) · Tab completes a command · // starts a prompt with /',
  'Esc cancels the running turn (in a question: denies it) · Ctrl-C twice (or /exit) quits',
  'Ctrl-T shows or collapses thinking · the transcript scrolls with your terminal (it never jumps)',
];

export class Controller {
  readonly transcript: Transcript;
  readonly editor: Editor;
  private busy = false;
  private turn: AbortController | null = null;
  private working: Promise<void> = Promise.resolve();
  private completionChoice = 0;
  private completionDismissed: string | null = null;
  private menu: (Menu & { pick: (i: number | null) => void }) | null = null;
  private models: string[] = [];
  private unusable: string | null;
  private quitArmed: ReturnType<typeof setTimeout> | null = null;
  private quitting = false;
  private spinner = 0;
  private spin: ReturnType<typeof setInterval> | null = null;
  private readonly env: NodeJS.ProcessEnv;
  /** The running `/swarm`'s candidates, by name, in start order. */
  private swarmPanel: Map<string, { name: string; status: string; last: string }> | null = null;

  constructor(private readonly o: ControllerOptions) {
    this.env = o.env ?? process.env;
    this.transcript = new Transcript(o.cwd);
    this.editor = new Editor(loadHistory(o.historyFile));
    this.unusable = o.unusable;
    const sink = (e: AgentEvent) => this.event(e);
    // Background tasks and sub-agents report between turns too.
    o.engine.agent.tasks.setSink(sink);
  }

  get running(): boolean {
    return this.busy;
  }

  private get agent(): Agent {
    return this.o.engine.agent;
  }

  /** The opening lines, the replayed conversation, and the plugin trust questions (A.7). */
  start(): void {
    const a = this.agent;
    const t = this.transcript;
    t.note(`rift ${this.o.version} · ${a.route.address} · ${this.o.cwd}`, 'heading');
    t.note(`session ${a.sessionPath ?? '(not saved)'} · /help lists commands · Ctrl-C twice quits`, 'dim');
    if (this.o.history.length > 0) {
      t.note(`── resumed conversation (${this.o.history.filter((m) => m.role === 'user').length} prompts)`, 'dim');
      t.history(this.o.history);
      t.note('── end of resumed conversation', 'dim');
    }
    if (this.unusable) t.apply({ event: 'warning', text: this.unusable });
    this.event({ event: 'context', ...a.contextUsage() });
    for (const r of this.o.engine.trustRequests) {
      if (!this.o.engine.approval.approve) {
        t.note(r.skippedNote);
        continue;
      }
      void this.o.questions.ask({ question: r.question, detail: r.detail, choices: [...TRUST_CHOICES] }, new AbortController().signal).then((answer) => {
        if (!trustAnswered(answer)) {
          t.note(`skipped: ${r.question.split(' — ')[0]} — it stays off this session`, 'dim');
          return this.o.requestFrame();
        }
        // A trusted project config may switch the model: it waits for a running turn, like serve's.
        if (r.subject.kind === 'project-config') this.work(() => this.applyTrust(r));
        else void this.applyTrust(r);
      });
    }
    // Models for `/model <Tab>`; a slow or absent server only delays completion.
    void discoverModels(this.o.engine.config, a.route.address, this.env).then((m) => (this.models = m));
    this.o.requestFrame();
  }

  private async applyTrust(r: TrustRequest): Promise<void> {
    const out = await this.o.engine.trust(r);
    if (out.persistError) this.warn(`could not persist ${r.subject.kind === 'plugin' ? 'plugin' : 'trust'} approval: ${out.persistError}`);
    this.info(out.info);
    if (out.approve !== undefined) this.info(out.approve ? 'approval on — edits and commands ask first' : 'auto-approve on — edits and commands apply without asking');
    if (out.modelError) this.warn(`model switch failed: ${out.modelError}`);
    if (out.model) {
      this.unusable = null;
      this.info(`model → ${out.model.address} (num_ctx ${out.model.numCtx})${out.model.note ? ` ${out.model.note}` : ''}`);
      this.event({ event: 'context', ...this.agent.contextUsage() });
    }
  }

  private event(e: AgentEvent): void {
    this.transcript.apply(e);
    this.o.requestFrame();
  }

  private warn(text: string): void {
    this.transcript.apply({ event: 'warning', text });
    this.o.requestFrame();
  }

  private info(text: string): void {
    this.transcript.note(text, 'info');
    this.o.requestFrame();
  }

  /** Lines finished since the last frame and the live rows for a terminal of `size`. */
  frame(size: { rows: number; cols: number }): { lines: Line[]; rows: Row[] } {
    const q = this.o.questions.head;
    const c = this.completion();
    const { line, col } = this.editor.position();
    const freeAsk = q?.kind === 'ask' && q.req.choices.length === 0;
    return {
      lines: this.transcript.take(),
      rows: liveRows(
        {
          live: this.transcript.live(),
          input: { lines: this.editor.lines(), line, col, placeholder: freeAsk ? 'your answer' : this.busy ? '' : 'ask rift, or / for commands' },
          completion: c ? { ...c, choice: Math.min(this.completionChoice, c.items.length - 1) } : null,
          question: q,
          queued: Math.max(0, this.o.questions.size - 1),
          menu: this.menu,
          status: {
            model: this.agent.route.address,
            approve: this.o.engine.approval.approve,
            busy: this.busy,
            spinner: this.spinner,
            hint: this.busy ? 'esc cancels' : '',
            urgent: this.quitArmed ? 'press Ctrl-C again to quit' : '',
          },
          cwd: this.o.cwd,
          swarm: this.swarmPanel ? [...this.swarmPanel.values()] : null,
        },
        size,
      ),
    };
  }

  private completion(): Completion | null {
    if (this.o.questions.head || this.menu || this.completionDismissed === this.editor.text) return null;
    return complete(this.editor.text, { skills: this.o.engine.skills, models: this.models });
  }

  // ── keys ──────────────────────────────────────────────────────────────

  key(ev: KeyEvent): void {
    if (this.quitting) return;
    if (ev.kind === 'key' && ev.name === 'ctrl-c') return this.ctrlC();
    if (ev.kind === 'key' && ev.name === 'ctrl-t') {
      this.transcript.toggleThinking();
      return this.o.requestFrame();
    }
    const q = this.o.questions.head;
    if (q?.kind === 'review') return this.reviewKey(ev);
    if (q?.kind === 'ask' && q.req.choices.length > 0) return this.askKey(ev);
    if (this.menu) return this.menuKey(ev);
    this.editorKey(ev, q?.kind === 'ask');
  }

  private ctrlC(): void {
    if (this.quitArmed) return void this.shutdown();
    if (this.busy) this.cancel();
    else if (!this.editor.empty) this.editor.clear();
    this.quitArmed = setTimeout(() => {
      this.quitArmed = null;
      this.o.requestFrame();
    }, QUIT_WINDOW_MS);
    this.o.requestFrame();
  }

  /** Esc or Ctrl-C mid-turn: the turn's questions close as denied, the loop ends with `turn cancelled`. */
  private cancel(): void {
    this.turn?.abort();
  }

  private askKey(ev: KeyEvent): void {
    const q = this.o.questions.head;
    if (q?.kind !== 'ask') return;
    const n = q.req.choices.length;
    if (ev.kind === 'text' && /^[1-9]$/.test(ev.text) && Number(ev.text) <= n) return this.o.questions.answerAsk(q.req.choices[Number(ev.text) - 1]);
    if (ev.kind !== 'key') return;
    switch (ev.name) {
      case 'up':
        q.choice = (q.choice + n - 1) % n;
        break;
      case 'down':
      case 'tab':
        q.choice = (q.choice + 1) % n;
        break;
      case 'pageup':
        q.scroll = Math.max(0, q.scroll - 5);
        break;
      case 'pagedown':
        q.scroll = Math.min(Math.max(0, q.req.detail.length - 1), q.scroll + 5);
        break;
      case 'enter':
        return this.o.questions.answerAsk(q.req.choices[q.choice]);
      case 'escape':
        return this.o.questions.answerAsk(null);
      default:
        return;
    }
    this.o.requestFrame();
  }

  private reviewKey(ev: KeyEvent): void {
    const q = this.o.questions.head;
    if (q?.kind !== 'review') return;
    const r = q.review;
    if (ev.kind === 'text') {
      switch (ev.text) {
        case ' ':
          r.toggle();
          break;
        case 'y':
          r.mark(true);
          break;
        case 'n':
          r.mark(false);
          break;
        case 'a':
          r.setAll(true);
          break;
        case 'r':
          r.setAll(false);
          break;
        case 'j':
          r.move(1);
          break;
        case 'k':
          r.move(-1);
          break;
        default:
          return;
      }
      return this.o.requestFrame();
    }
    if (ev.kind !== 'key') return;
    switch (ev.name) {
      case 'up':
        r.move(-1);
        break;
      case 'down':
      case 'tab':
        r.move(1);
        break;
      case 'pageup':
        r.scrollBy(-5, 5);
        break;
      case 'pagedown':
        r.scrollBy(5, 5);
        break;
      case 'enter': {
        const d = r.decision();
        const n = r.hunks.length;
        this.transcript.note(
          !d.apply ? `✗ edit rejected in review: ${r.req.path}` : d.content === undefined ? `✓ edit accepted in review: ${r.req.path}` : `◐ edit partly accepted in review: ${r.req.path} (${r.acceptedCount}/${n} hunks)`,
          d.apply ? 'ok' : 'fail',
        );
        return this.o.questions.decide(d);
      }
      case 'escape':
        this.transcript.note(`✗ edit rejected in review: ${r.req.path}`, 'fail');
        return this.o.questions.decide({ apply: false });
      default:
        return;
    }
    this.o.requestFrame();
  }

  private menuKey(ev: KeyEvent): void {
    const m = this.menu!;
    if (ev.kind !== 'key') return;
    const n = m.items.length;
    switch (ev.name) {
      case 'up':
        if (n > 0) m.choice = (m.choice + n - 1) % n;
        break;
      case 'down':
      case 'tab':
        if (n > 0) m.choice = (m.choice + 1) % n;
        break;
      case 'enter':
        this.menu = null;
        m.pick(n > 0 ? m.choice : null);
        break;
      case 'escape':
        this.menu = null;
        m.pick(null);
        break;
      default:
        return;
    }
    this.o.requestFrame();
  }

  private editorKey(ev: KeyEvent, answering: boolean): void {
    const e = this.editor;
    const before = e.text;
    if (ev.kind === 'text' || ev.kind === 'paste') e.insert(ev.text);
    else {
      const c = answering ? null : this.completion();
      switch (ev.name) {
        case 'enter':
          if (c) {
            // Enter completes a partial name; a name typed in full runs as typed.
            const pick = c.items[Math.min(this.completionChoice, c.items.length - 1)];
            if (pick.value.trim() !== e.text.slice(c.from).trim()) {
              this.accept(c, pick.value);
              if (pick.value.endsWith(' ')) break;
            }
          }
          if (e.text.endsWith('\\') && e.cursor === e.text.length) {
            e.backspace();
            e.insert('\n');
            break;
          }
          if (answering) return this.answerFree();
          return this.submit();
        case 'newline':
          e.insert('\n');
          break;
        case 'tab':
          if (c) this.accept(c, c.items[Math.min(this.completionChoice, c.items.length - 1)].value);
          break;
        case 'up':
          if (c) this.completionChoice = (this.completionChoice + c.items.length - 1) % c.items.length;
          else e.up();
          break;
        case 'down':
          if (c) this.completionChoice = (this.completionChoice + 1) % c.items.length;
          else e.down();
          break;
        case 'escape':
          if (answering) return this.o.questions.answerAsk(null);
          if (c) this.completionDismissed = e.text;
          else if (this.busy) this.cancel();
          break;
        case 'backspace':
          e.backspace();
          break;
        case 'delete':
          e.delete();
          break;
        case 'left':
          e.left();
          break;
        case 'right':
          e.right();
          break;
        case 'home':
        case 'ctrl-a':
          e.home();
          break;
        case 'end':
        case 'ctrl-e':
          e.end();
          break;
        case 'word-left':
          e.wordLeft();
          break;
        case 'word-right':
          e.wordRight();
          break;
        case 'delete-word':
          e.deleteWord();
          break;
        case 'ctrl-u':
          e.killToStart();
          break;
        case 'ctrl-k':
          e.killToEnd();
          break;
        case 'ctrl-d':
          if (e.empty && !answering) return void this.shutdown();
          e.delete();
          break;
        default:
          return;
      }
    }
    if (e.text !== before) {
      this.completionChoice = 0;
      this.completionDismissed = null;
    }
    this.o.requestFrame();
  }

  private accept(c: Completion, value: string): void {
    this.editor.set(this.editor.text.slice(0, c.from) + value);
    this.completionChoice = 0;
  }

  private answerFree(): void {
    const text = this.editor.take();
    this.transcript.note(`› ${text}`, 'user');
    this.o.questions.answerAsk(text);
  }

  // ── submission ────────────────────────────────────────────────────────

  private submit(): void {
    const raw = this.editor.text;
    if (raw.trim() === '') return;
    const parsed = parseInput(raw);
    if (this.busy && !(parsed.kind === 'command' && parsed.command.midTurn)) {
      const what = parsed.kind === 'command' ? `/${parsed.command.name} waits for the turn` : 'a turn is running';
      return this.warn(`${what} — wait for it to finish or press Esc to cancel it`);
    }
    this.editor.take();
    saveHistory(this.o.historyFile, this.editor.entries);
    switch (parsed.kind) {
      case 'prompt':
        return this.startTurn(parsed.text, parsed.text);
      case 'skill': {
        const x = expandSkill(parsed.text, this.o.engine.skills);
        if ('unknown' in x) {
          this.transcript.user(parsed.text);
          return this.warn(`unknown skill '${x.unknown}'`);
        }
        return this.startTurn(parsed.text, x.text);
      }
      case 'unknown':
        this.transcript.user(raw.trim());
        return this.warn(`unknown command '/${parsed.name}' — /help lists the commands`);
      case 'command':
        this.transcript.user(raw.trim());
        return this.command(parsed.command, parsed.args);
    }
  }

  /** Runs one turn; `display` is what the transcript shows, `text` what the model gets. */
  private startTurn(display: string, text: string): void {
    this.transcript.user(display);
    if (this.unusable) return this.warn(this.unusable);
    this.work(async (signal) => {
      await this.agent.runTurn(text, (e) => this.event(e), signal);
    });
  }

  /** Serialized engine work (turns, compaction, model switches); Esc aborts it. */
  private work(job: (signal: AbortSignal) => Promise<void>): void {
    this.busy = true;
    const ctl = new AbortController();
    this.turn = ctl;
    this.spin = setInterval(() => {
      this.spinner++;
      this.o.requestFrame();
    }, 120);
    this.o.requestFrame();
    this.working = this.working
      .then(() => job(ctl.signal))
      .catch((e: Error) => this.warn(`internal error: ${e.message}`))
      .finally(() => {
        if (this.spin) clearInterval(this.spin);
        this.spin = null;
        this.turn = null;
        this.busy = false;
        this.o.requestFrame();
      });
  }

  private command(c: SlashCommand, args: string): void {
    switch (c.name) {
      case 'help':
        return this.help();
      case 'model':
        return args ? this.switchModel(args) : this.pickModel();
      case 'approve':
        if (args && !['on', 'off'].includes(args)) return this.warn("/approve takes 'on' or 'off'");
        return this.setApproval(args !== 'off');
      case 'yolo':
        return this.setApproval(false);
      case 'clear':
        return this.clear();
      case 'compact':
        return this.work(async (signal) => {
          await this.agent.compact((e) => this.event(e), signal, 'manual');
          this.event({ event: 'context', ...this.agent.contextUsage() });
        });
      case 'sessions':
        return this.listSessions();
      case 'resume':
        return this.resume(args);
      case 'skills':
        return this.info(
          this.o.engine.skills.length === 0
            ? 'no skills — add .rift/skills/<name>/SKILL.md (or a plugin command); run one with /skill:<name> [task]'
            : ['skills (run with /skill:<name> [task]):', ...this.o.engine.skills.map((s) => `  ${s.name} — ${s.description}`)].join('\n'),
        );
      case 'plan': {
        const plan = this.agent.plan;
        return this.info(plan.length === 0 ? 'no plan yet — the model sets one with its plan tool' : ['plan:', ...plan.map((p, i) => `  ${p.done ? '☑' : '☐'} ${i + 1}. ${p.text}`)].join('\n'));
      }
      case 'undo':
        return this.work(async () => this.event(await this.agent.undo()));
      case 'diff':
        return this.diff();
      case 'tools':
        return this.info(['tools the model can call:', ...this.agent.registry.defs().map((d) => `  ${d.function.name} — ${firstSentence(d.function.description)}`)].join('\n'));
      case 'init':
        this.info('/init: the model explores the repository with its tools and writes AGENTS.md (the write comes to you for review)');
        if (this.unusable) return this.warn(this.unusable);
        return this.work(async (signal) => {
          await this.agent.runTurn(INIT_PROMPT, (e) => this.event(e), signal);
        });
      case 'export':
        return this.exportTranscript(args);
      case 'swarm':
        return this.swarm(args);
      case 'exit':
        return void this.shutdown();
    }
  }

  /** `/swarm [--models a,b] [--judge M] <task>`: the race of `rift swarm`, live, then the verdict and a merge picker. */
  private swarm(args: string): void {
    const words = args.split(/\s+/).filter(Boolean);
    let models = DEFAULT_SWARM_MODELS;
    let judgeModel: string | undefined;
    while (words[0] === '--models' || words[0] === '--judge') {
      const [flag, value] = words.splice(0, 2);
      if (!value) return this.warn(`/swarm: ${flag} needs a value`);
      if (flag === '--models') models = value.split(',').filter(Boolean);
      else judgeModel = value;
    }
    const task = words.join(' ');
    if (!task) return this.warn('/swarm needs a task: /swarm [--models a,b] [--judge M] <task>');
    this.work(async (signal) => {
      try {
        const candidates = candidatesFor(models, false);
        this.swarmPanel = new Map(candidates.map((c) => [c.name, { name: c.name, status: 'waiting', last: c.model }]));
        this.o.requestFrame();
        const run = await runSwarm({ cwd: this.o.cwd, task, candidates, host: this.o.engine.config.host, signal }, (e) => {
          if (e.kind === 'trees') return this.info(e.trees === 'projection' ? 'candidates run in projections' : `candidates run in git worktrees${e.reason ? `: ${e.reason}` : ''}`);
          const name = e.kind === 'finished' ? e.result.name : e.name;
          const cell = this.swarmPanel?.get(name);
          if (!cell) return;
          if (e.kind === 'started') cell.status = 'running';
          else if (e.kind === 'progress') cell.last = e.text;
          else {
            cell.status = e.result.status;
            cell.last = `${e.result.filesChanged} file(s), ${e.result.iterations} iterations`;
          }
          this.o.requestFrame();
        });
        if (run.cancelled) return this.warn('/swarm cancelled; every candidate tree was removed');
        this.info(summaryTable(run.results));
        for (const r of run.results) if (r.detail) this.info(`${r.name}: ${r.detail}`);
        const withPatch = run.results.filter((r) => r.patch);
        if (judgeModel) {
          const v = await judge({ cwd: this.o.cwd, repo: run.repo, task, model: judgeModel, host: this.o.engine.config.host, signal }, run.results);
          this.info(v.winner === null ? `JUDGE: ${v.reason}` : `JUDGE: winner=${v.winner} — ${v.reason}`);
        }
        if (withPatch.length === 0) return this.info('no candidate changed anything');
        this.openMenu(
          'merge a candidate into the workspace',
          [...withPatch.map((r) => ({ label: r.name, hint: r.diffstat.split('\n').at(-1)?.trim() })), { label: 'none', hint: 'keep the patches in .rift/patches/' }],
          (i) => {
            if (i === null || i >= withPatch.length) return this.info('nothing merged; `rift merge <name>` applies a patch later');
            const name = withPatch[i].name;
            void merge(this.o.cwd, name, false).then(
              (m) => this.info(`merged ${name}: ${m.files.join(', ')} (${m.via === 'publish' ? `published from projection ${m.projection}` : `git apply --3way${m.note ? `: ${m.note}` : ''}`})`),
              (e: Error) => this.warn(e instanceof SwarmRefusal ? e.message : `merge failed: ${e.message}`),
            );
          },
        );
      } catch (e) {
        this.warn(e instanceof SwarmRefusal ? `/swarm: ${e.message}` : `/swarm failed: ${(e as Error).message}`);
      } finally {
        this.swarmPanel = null;
      }
    });
  }

  private help(): void {
    const w = Math.max(...COMMANDS.map((c) => `/${c.name}${c.args ? ` ${c.args}` : ''}`.length));
    this.info(
      [
        'commands:',
        ...COMMANDS.map((c) => `  ${`/${c.name}${c.args ? ` ${c.args}` : ''}`.padEnd(w)}  ${c.summary}`),
        'keys:',
        ...KEYS_HELP.map((k) => `  ${k}`),
      ].join('\n'),
    );
  }

  /** The same preflight and swap as serve's set_model (A.15), with the same messages. */
  private switchModel(model: string): void {
    this.work(async () => {
      try {
        const note = await this.agent.switchModel(model, this.o.engine.config, this.o.engine.config.numCtxExplicit, this.env);
        this.unusable = null;
        this.info(`model → ${model} (num_ctx ${this.agent.numCtx})${note.trim() ? ` ${note.trim()}` : ''}`);
        this.event({ event: 'context', ...this.agent.contextUsage() });
      } catch (e) {
        this.warn(`model switch failed: ${(e as Error).message}`);
      }
    });
  }

  private pickModel(): void {
    this.info('looking for models…');
    void discoverModels(this.o.engine.config, this.agent.route.address, this.env).then((models) => {
      this.models = models;
      const current = this.agent.route.address;
      this.openMenu(`switch model (now ${current})`, models.map((m) => ({ label: m, hint: m === current ? 'current' : undefined })), (i) => {
        if (i !== null && models[i] !== current) this.switchModel(models[i]);
      });
    });
  }

  private openMenu(title: string, items: Menu['items'], pick: (i: number | null) => void): void {
    this.menu = { title, items, choice: 0, pick };
    this.o.requestFrame();
  }

  private setApproval(on: boolean): void {
    this.o.engine.approval.approve = on;
    if (on) this.info('approval on — edits and commands ask first');
    else this.warn('auto-approve on (yolo) — edits and commands now apply without asking; deny rules still refuse (/approve turns asking back on)');
  }

  private clear(): void {
    const path = Session.reserve(Session.dir(this.env));
    const old = this.agent.sessionPath;
    this.agent.resetConversation(undefined, path);
    this.transcript.note(`── new conversation · session ${path}${old ? ` · the previous one: /resume ${old}` : ''}`, 'dim');
    this.event({ event: 'context', ...this.agent.contextUsage() });
  }

  private sessions(): SessionItem[] {
    return Session.list(Session.dir(this.env)).slice(0, SESSIONS_SHOWN_MAX);
  }

  private listSessions(): void {
    const items = this.sessions();
    if (items.length === 0) return this.info('no saved sessions yet');
    const now = Math.floor(Date.now() / 1000);
    this.info(
      [
        'saved sessions (newest first; /resume <n> continues one):',
        ...items.map((s, i) => `  ${String(i + 1).padStart(2)}. ${s.title} · ${s.turns} prompt${s.turns === 1 ? '' : 's'} · ${age(now - s.saved_at)} · ${s.model}${s.path === this.agent.sessionPath ? ' · (this session)' : ''}`),
      ].join('\n'),
    );
  }

  private resume(arg: string): void {
    const items = this.sessions();
    if (!arg) {
      if (items.length === 0) return this.info('no saved sessions yet');
      const now = Math.floor(Date.now() / 1000);
      return this.openMenu(
        'resume a session',
        items.map((s) => ({ label: s.title, hint: `${s.turns} prompts · ${age(now - s.saved_at)}` })),
        (i) => {
          if (i !== null) this.resumePath(items[i].path);
        },
      );
    }
    if (/^\d+$/.test(arg)) {
      const item = items[Number(arg) - 1];
      if (!item) return this.warn(`no session ${arg} — /sessions lists ${items.length}`);
      return this.resumePath(item.path);
    }
    const path = resolve(this.o.cwd, arg);
    if (!existsSync(path)) return this.warn(`no session file at ${path} — /sessions lists the saved ones`);
    this.resumePath(path);
  }

  private resumePath(path: string): void {
    if (this.busy) return this.warn('/resume waits for the turn — wait for it to finish or press Esc to cancel it');
    const opened = openSession({ resume: path }, Session.dir(this.env));
    for (const n of opened.notes) this.transcript.note(n, n.startsWith('warning') ? 'warn' : 'dim');
    this.agent.resetConversation(opened.messages, opened.path);
    const history = historyMessages(opened.messages ?? []);
    this.transcript.note(`── resumed ${opened.path} (${history.filter((m) => m.role === 'user').length} prompts)`, 'dim');
    this.transcript.history(history);
    this.transcript.note('── end of resumed conversation', 'dim');
    this.event({ event: 'context', ...this.agent.contextUsage() });
  }

  /** What /undo would revert: each file of the most recent turn that changed files, prior → now. */
  private diff(): void {
    const prior = this.agent.journal.peek();
    if (!prior) return this.info('no changes to show (only write/edit tool changes are tracked)');
    const t = this.transcript;
    t.note('changes the next /undo reverts:', 'info');
    for (const [path, bytes] of [...prior.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
      const now = existsSync(path) ? readFileSync(path) : null;
      const rel = relative(this.o.cwd, path);
      const name = rel.startsWith('..') ? path : rel;
      if ((bytes && looksBinary(bytes)) || (now && looksBinary(now))) {
        t.note(`  ± ${name} (binary)`, 'meta');
        continue;
      }
      // Each side in its own encoding, as the file tools read and wrote it.
      const before = bytes ? decodeText(bytes).text : '';
      const after = now ? decodeText(now).text : '';
      const d = previewDiff(before, after, DIFF_LINES_SHOWN_MAX);
      t.note(`  ± ${name}${bytes === null ? ' (new file)' : now === null ? ' (deleted)' : ''}${d.length === 0 ? ' (unchanged now)' : ''}`, 'meta');
      for (const l of d) t.note(`    ${l}`, l.startsWith('+') ? 'add' : l.startsWith('-') ? 'del' : 'meta');
    }
    this.o.requestFrame();
  }

  /** /export [file]: Markdown of the transcript, inside the workspace only. */
  private exportTranscript(arg: string): void {
    const session = this.agent.sessionPath ? basename(this.agent.sessionPath, '.json') : 'session';
    const target = resolve(this.o.cwd, arg || `rift-transcript-${session}.md`);
    const rel = relative(this.o.cwd, target);
    const violation = isAbsolute(rel) || rel.startsWith('..') ? 'outside the workspace' : projectPathViolation(rel);
    if (violation) return this.warn(`cannot export to ${arg}: ${String(violation).replace(/_/g, ' ')}; give a path inside ${this.o.cwd}`);
    try {
      const dir = dirname(target);
      mkdirSync(dir, { recursive: true });
      const real = relative(realpathSync(this.o.cwd), realpathSync(dir));
      if (real.startsWith('..') || isAbsolute(real)) return this.warn(`cannot export to ${arg}: its folder leads outside the workspace; give a path inside ${this.o.cwd}`);
      const lines = this.transcript.lines;
      const tmp = `${target}.${process.pid}.tmp`;
      writeFileSync(tmp, toMarkdown(lines, `rift transcript — ${session}`));
      renameSync(tmp, target);
      this.info(`exported ${lines.length} lines to ${rel}`);
    } catch (e) {
      this.warn(`export failed: ${(e as Error).message}`);
    }
  }

  /** Quit: the running turn is cancelled and saved, pending questions are dropped (deny), then `quit`. */
  async shutdown(): Promise<void> {
    if (this.quitting) return;
    this.quitting = true;
    if (this.quitArmed) clearTimeout(this.quitArmed);
    this.quitArmed = null;
    this.menu = null;
    this.turn?.abort();
    this.o.questions.dropAll();
    await this.working;
    this.o.quit();
  }
}

function firstSentence(s: string): string {
  const m = /^[\s\S]*?[.!?](\s|$)/.exec(s);
  const first = (m ? m[0] : s).trim().replace(/\s+/g, ' ');
  return first.length > 110 ? `${first.slice(0, 109)}…` : first;
}

function age(secs: number): string {
  if (secs < 90) return 'just now';
  if (secs < 5400) return `${Math.round(secs / 60)} min ago`;
  if (secs < 129600) return `${Math.round(secs / 3600)} h ago`;
  return `${Math.round(secs / 86400)} days ago`;
}

function loadHistory(file: string | undefined): string[] {
  if (!file || !existsSync(file)) return [];
  try {
    const v = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

/** The prompt history survives restarts; a failure to save it costs nothing else. */
function saveHistory(file: string | undefined, entries: readonly string[]): void {
  if (!file) return;
  try {
    mkdirSync(dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(entries)}\n`);
    renameSync(tmp, file);
  } catch {
    // history is a convenience
  }
}

export const HISTORY_FILE = (dataDir: string) => join(dataDir, 'input-history.json');
