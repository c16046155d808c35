import { relative, isAbsolute } from 'node:path';
import type { AgentEvent, PlanItem, TurnStats } from '../agent/base/types.ts';

// The transcript model: engine events in, finished lines out. A finished line never changes,
// so the view writes it once above the live region (Ink's <Static>) and never draws it again;
// only the unfinished parts — the streaming line, thinking, the running tool, the plan, the
// sub-agent and task panes — stay live. A reply's lines are finished as soon as their newline
// arrives, which keeps the live region a few rows tall however long the reply grows.

export type Style =
  | 'user' | 'reply' | 'code' | 'heading' | 'thinking' | 'ok' | 'fail' | 'add' | 'del' | 'meta'
  | 'info' | 'warn' | 'dim' | 'agent' | 'blank';

export interface Line {
  id: number;
  text: string;
  style: Style;
}

export interface AgentPane {
  tag: string;
  model: string;
  label: string;
  last: string;
}

export interface Live {
  /** Thinking of the current call, shown collapsed: its line count and latest line. */
  thinking: { lines: number; last: string } | null;
  /** The reply's unfinished line. */
  partial: string;
  tool: { name: string; summary: string } | null;
  plan: readonly PlanItem[];
  agents: readonly AgentPane[];
  tasks: ReadonlyArray<{ id: number; label: string }>;
  iteration: number;
  context: { used: number; limit: number } | null;
}

/** Characters of a tool result preview kept in the transcript. */
const PREVIEW_CHARS = 160;
/** Tools whose result preview is worth a line even on success (command output, reports). */
const PREVIEWED = new Set(['bash', 'task', 'agent', 'ask_user', 'skill', 'fetch']);

/**
 * Text from the model or a tool is shown, never obeyed: an escape sequence in a reply must not
 * clear the screen or move the cursor. ESC becomes a visible ␛, other control characters go,
 * a tab becomes spaces (a live row's width must be what it looks like).
 */
export function clean(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\t/g, '    ').replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g, (c) => (c === '\x1b' ? '␛' : ''));
}

export function argsSummary(args: Record<string, unknown>): string {
  for (const k of ['path', 'pattern', 'command', 'query', 'symbol', 'name', 'url', 'fact']) {
    const v = args[k];
    if (typeof v === 'string') return oneLine(v, 100);
  }
  const json = JSON.stringify(args);
  return json === '{}' ? '' : oneLine(json, 100);
}

function oneLine(s: string, max: number): string {
  const flat = s.replace(/\s*\n\s*/g, ' ⏎ ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function statsLine(s: TurnStats): string {
  const n = (x: number) => x.toLocaleString('en-US');
  return `─ ${s.iterations} iteration${s.iterations === 1 ? '' : 's'} · ${n(s.prompt_tokens)} prompt tok · ${n(s.output_tokens)} out · ${s.tokens_per_sec.toFixed(1)} tok/s · ${(s.duration_ms / 1000).toFixed(1)} s`;
}

export class Transcript {
  readonly lines: Line[] = [];
  private taken = 0;
  private nextId = 1;
  private partial = '';
  private inFence = false;
  private thinking: string | null = null;
  private lastThinking = '';
  /** Thinking is collapsed to one line unless expanded (Ctrl-T). */
  expanded = false;
  private tool: Live['tool'] = null;
  private plan: PlanItem[] = [];
  private readonly agents = new Map<string, AgentPane>();
  private readonly tasks = new Map<number, string>();
  private iteration = 0;
  context: Live['context'] = null;

  constructor(private readonly cwd: string) {}

  private push(text: string, style: Style): void {
    this.lines.push({ id: this.nextId++, text: clean(text), style });
  }

  /** Lines finished since the last call, for the view to write once. */
  take(): Line[] {
    const out = this.lines.slice(this.taken);
    this.taken = this.lines.length;
    return out;
  }

  /** A multi-line note from the UI itself (command output, errors). */
  note(text: string, style: Style = 'info'): void {
    for (const l of text.split('\n')) this.push(l, style);
  }

  user(text: string): void {
    if (this.lines.length > 0) this.push('', 'blank');
    text.split('\n').forEach((l, i) => this.push(`${i === 0 ? '› ' : '  '}${l}`, 'user'));
  }

  /** Replays a resumed conversation: the prompts and final replies (A.2 `history`). */
  history(messages: ReadonlyArray<{ role: 'user' | 'assistant'; text: string }>): void {
    for (const m of messages) {
      if (m.role === 'user') this.user(m.text);
      else {
        this.replyText(m.text.endsWith('\n') ? m.text : `${m.text}\n`);
        this.closeReply();
      }
    }
  }

  live(): Live {
    const t = this.thinking;
    let thinking: Live['thinking'] = null;
    if (t !== null) {
      const ls = t.split('\n').filter((l) => l.trim() !== '');
      thinking = { lines: ls.length, last: clean(ls[ls.length - 1] ?? '') };
    }
    return {
      thinking,
      partial: clean(this.partial),
      tool: this.tool,
      plan: this.plan,
      agents: [...this.agents.values()],
      tasks: [...this.tasks.entries()].map(([id, label]) => ({ id, label })),
      iteration: this.iteration,
      context: this.context,
    };
  }

  /** Ctrl-T: thinking in full from now on (the latest block is shown at once), or collapsed again. */
  toggleThinking(): void {
    this.expanded = !this.expanded;
    if (!this.expanded) {
      this.push('∴ thinking collapsed (Ctrl-T shows it)', 'dim');
      return;
    }
    this.push('∴ thinking shown in full (Ctrl-T collapses it)', 'dim');
    if (this.lastThinking) for (const l of this.lastThinking.split('\n')) this.push(`  ${l}`, 'thinking');
  }

  apply(e: AgentEvent): void {
    switch (e.event) {
      case 'iteration':
        this.closeThinking();
        this.closeReply();
        this.iteration = e.n;
        return;
      case 'thinking':
        this.thinking = (this.thinking ?? '') + e.text;
        return;
      case 'content':
        this.closeThinking();
        this.replyText(e.text);
        return;
      case 'tool_start':
        this.closeThinking();
        this.closeReply();
        // The plan tool's arguments are the plan, shown in full below; its line needs no summary.
        this.tool = { name: e.name, summary: e.name === 'plan' ? '' : argsSummary(e.args) };
        return;
      case 'tool_result': {
        const summary = this.tool?.name === e.name ? this.tool.summary : '';
        this.tool = null;
        const head = `${e.ok ? '✓' : '✗'} ${e.name}${summary ? ` ${summary}` : ''}`;
        const show = !e.ok || PREVIEWED.has(e.name);
        this.push(show && e.preview ? `${head} — ${oneLine(e.preview, PREVIEW_CHARS)}` : head, e.ok ? 'ok' : 'fail');
        return;
      }
      case 'edit_diff':
        this.push(`  ± ${this.rel(e.path)} (+${e.added} −${e.removed})`, 'meta');
        for (const l of e.diff) this.push(`    ${l}`, l.startsWith('+') ? 'add' : l.startsWith('-') ? 'del' : 'meta');
        return;
      case 'plan':
        this.planChanged(e.items);
        return;
      case 'info':
        this.closeReply();
        this.note(e.text, 'info');
        return;
      case 'warning':
        this.closeReply();
        e.text.split('\n').forEach((l, i) => this.push(`${i === 0 ? '! ' : '  '}${l}`, 'warn'));
        return;
      case 'subagent_started':
        this.agents.set(e.tag, { tag: e.tag, model: e.model, label: e.label, last: '' });
        this.push(`◆ ${e.tag} started: ${e.label} (${e.model})`, 'agent');
        return;
      case 'subagent': {
        const a = this.agents.get(e.tag);
        if (a) a.last = e.text;
        if (e.warn) this.push(`◆ ${e.tag} ${e.text}`, 'warn');
        return;
      }
      case 'subagent_finished':
        this.agents.delete(e.tag);
        this.push(`◆ ${e.tag} finished (${e.steps} step${e.steps === 1 ? '' : 's'})`, 'agent');
        return;
      case 'task_started':
        this.tasks.set(e.id, e.label);
        this.push(`⚙ task #${e.id} started: ${e.label}`, 'agent');
        return;
      case 'task_finished':
        this.tasks.delete(e.id);
        this.push(`⚙ task #${e.id} ${e.ok ? 'finished' : 'failed'}: ${e.label}${e.preview ? ` — ${oneLine(e.preview, PREVIEW_CHARS)}` : ''}`, e.ok ? 'ok' : 'fail');
        return;
      case 'done':
        this.closeThinking();
        this.closeReply();
        this.tool = null;
        this.iteration = 0;
        this.push(statsLine(e.stats), 'dim');
        return;
      case 'context':
        this.context = { used: e.used, limit: e.limit };
        return;
    }
  }

  private rel(p: string): string {
    if (!isAbsolute(p)) return p;
    const r = relative(this.cwd, p);
    return r.startsWith('..') || r === '' ? p : r;
  }

  private planChanged(items: PlanItem[]): void {
    const before = this.plan;
    this.plan = items.map((i) => ({ ...i }));
    const sameSteps = before.length === items.length && before.every((b, i) => b.text === items[i].text);
    if (!sameSteps) {
      this.push(`☰ plan (${items.filter((i) => i.done).length}/${items.length} done)`, 'meta');
      items.forEach((it, i) => this.push(`  ${it.done ? '☑' : '☐'} ${i + 1}. ${it.text}`, it.done ? 'dim' : 'meta'));
      return;
    }
    items.forEach((it, i) => {
      if (it.done && !before[i].done) this.push(`☑ step ${i + 1} done: ${it.text}`, 'ok');
    });
  }

  private replyText(text: string): void {
    this.partial += text;
    let nl: number;
    while ((nl = this.partial.indexOf('\n')) >= 0) {
      this.replyLine(this.partial.slice(0, nl));
      this.partial = this.partial.slice(nl + 1);
    }
  }

  private replyLine(raw: string): void {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const fence = line.trimStart().startsWith('```');
    if (fence) this.inFence = !this.inFence;
    const style: Style = fence || this.inFence ? 'code' : /^#{1,6}\s/.test(line) ? 'heading' : line === '' ? 'blank' : 'reply';
    this.push(line, style);
  }

  /** A reply's last line (no newline yet) is finished when the reply ends or a tool starts. */
  private closeReply(): void {
    if (this.partial !== '') this.replyLine(this.partial);
    this.partial = '';
    this.inFence = false;
  }

  private closeThinking(): void {
    if (this.thinking === null) return;
    const t = this.thinking.replace(/^\s+|\s+$/g, '');
    this.thinking = null;
    if (t === '') return;
    this.lastThinking = t;
    const ls = t.split('\n');
    if (this.expanded) for (const l of ls) this.push(`  ${l}`, 'thinking');
    else this.push(`∴ thought · ${ls.length} line${ls.length === 1 ? '' : 's'} (Ctrl-T shows thinking)`, 'thinking');
  }
}

/** The transcript as Markdown (/export): replies as written, everything else in text blocks. */
export function toMarkdown(lines: readonly Line[], title: string): string {
  const out = [`# ${title}`, ''];
  let block: string[] | null = null;
  const closeBlock = () => {
    if (block) out.push('```text', ...block, '```', '');
    block = null;
  };
  for (const l of lines) {
    if (l.style === 'user') {
      closeBlock();
      out.push(l.text.startsWith('› ') ? `**›** ${l.text.slice(2)}` : l.text, '');
    } else if (l.style === 'reply' || l.style === 'code' || l.style === 'heading' || l.style === 'blank') {
      closeBlock();
      out.push(l.text);
    } else (block ??= []).push(l.text);
  }
  closeBlock();
  return `${out.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd()}\n`;
}
