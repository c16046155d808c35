import { isAbsolute, relative } from 'node:path';
import { LIVE_ROWS_MAX, STREAM_TAIL_ROWS_MAX } from '../core/limits.ts';
import type { Completion } from './commands.ts';
import type { Question } from './questions.ts';
import { clean, type Live, type Style } from './transcript.ts';

// The live region as rows: a pure function of the state and the terminal size. Every row is
// one terminal line (the view truncates, never wraps), and the rows never reach the screen's
// height — Ink falls back to clearing the screen and redrawing the whole transcript when its
// live output fills the terminal, which is exactly the flicker and lost scroll position this
// UI must avoid. Rows are allotted in priority order: status, input, the question on screen,
// completion, then activity (tool, thinking, the reply's unfinished paragraph, plan, panes).

export type RowStyle = Style | 'status' | 'select' | 'frame' | 'cursor' | 'hint';

export interface Segment {
  text: string;
  style?: RowStyle;
}

export type Row = Segment[];

export interface Menu {
  title: string;
  items: ReadonlyArray<{ label: string; hint?: string }>;
  choice: number;
}

export interface ViewState {
  live: Live;
  /** Editor lines and the cursor position. */
  input: { lines: string[]; line: number; col: number; placeholder: string };
  completion: (Completion & { choice: number }) | null;
  question: Question | undefined;
  /** Questions waiting behind the one on screen. */
  queued: number;
  menu: Menu | null;
  status: { model: string; approve: boolean; busy: boolean; spinner: number; hint: string; urgent: string };
  /** The workspace, so paths inside it show relative. */
  cwd: string;
  /** A running `/swarm`: one column per candidate. */
  swarm?: ReadonlyArray<{ name: string; status: string; last: string }> | null;
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/** Rows a multi-line prompt shows at most; the rest scrolls with the cursor. */
export const INPUT_ROWS_MAX = 6;
const COMPLETION_ROWS_MAX = 6;
const PLAN_ROWS_MAX = 6;
const PANE_ROWS_MAX = 4;

/** Rows the live region may use on a terminal `rows` tall: strictly fewer than the screen. */
export function liveBudget(rows: number): number {
  return Math.max(3, Math.min(LIVE_ROWS_MAX, rows - 1));
}

/** The last `max` rows of `text` cut at `cols` code points (the unfinished paragraph of a reply). */
export function tailRows(text: string, cols: number, max: number): string[] {
  const cps = [...text];
  const width = Math.max(1, cols);
  const rows: string[] = [];
  for (let i = 0; i < cps.length; i += width) rows.push(cps.slice(i, i + width).join(''));
  return rows.slice(-max);
}

function shortPath(p: string, cwd: string): string {
  const r = relative(cwd, p);
  return r === '' || r.startsWith('..') || isAbsolute(r) ? p : r;
}

export function gauge(used: number, limit: number, cells = 10): string {
  const frac = limit > 0 ? Math.min(1, used / limit) : 0;
  const full = Math.round(frac * cells);
  return `${'█'.repeat(full)}${'░'.repeat(cells - full)} ${Math.round(frac * 100)}%`;
}

function kilo(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

function statusRow(s: ViewState): Row {
  const ctx = s.live.context;
  const parts: Segment[] = [{ text: ` ${s.status.model} `, style: 'status' }, { text: ' ' }];
  // An urgent hint comes first, so a narrow terminal never truncates it away.
  if (s.status.urgent) parts.push({ text: s.status.urgent, style: 'warn' }, { text: ' · ', style: 'dim' });
  parts.push({ text: s.status.approve ? 'approval on' : 'auto-approve', style: s.status.approve ? 'dim' : 'warn' });
  if (ctx) parts.push({ text: ' · ctx ', style: 'dim' }, { text: gauge(ctx.used, ctx.limit), style: ctx.used / ctx.limit > 0.8 ? 'warn' : 'meta' }, { text: ` ${kilo(ctx.used)}/${kilo(ctx.limit)}`, style: 'dim' });
  if (s.status.busy) {
    const it = s.live.iteration > 0 ? ` step ${s.live.iteration}` : '';
    parts.push({ text: ` · ${SPINNER[s.status.spinner % SPINNER.length]}${it}`, style: 'meta' });
  }
  if (s.status.hint) parts.push({ text: ` · ${s.status.hint}`, style: 'hint' });
  return parts;
}

/** The prompt rows with the cursor drawn as an inverse cell; a tall prompt shows a window around the cursor. */
function inputRows(s: ViewState, max: number): Row[] {
  const { lines, line, col, placeholder } = s.input;
  const empty = lines.length === 1 && lines[0] === '';
  if (empty) return [[{ text: '› ', style: 'user' }, { text: ' ', style: 'cursor' }, { text: placeholder, style: 'dim' }]];
  const first = Math.max(0, Math.min(line - max + 1, lines.length - max));
  const rows: Row[] = [];
  for (let i = Math.max(0, first); i < lines.length && rows.length < max; i++) {
    const prefix: Segment = { text: i === 0 ? '› ' : '  ', style: 'user' };
    const l = lines[i];
    if (i !== line) {
      rows.push([prefix, { text: l }]);
      continue;
    }
    const cps = [...l.slice(0, col)];
    const at = [...l.slice(col)];
    rows.push([prefix, { text: cps.join('') }, { text: at[0] ?? ' ', style: 'cursor' }, { text: at.slice(1).join('') }]);
  }
  return rows;
}

function windowed<T>(items: readonly T[], choice: number, max: number): { start: number; shown: T[] } {
  const start = Math.max(0, Math.min(choice - max + 1, items.length - max));
  return { start: Math.max(0, start), shown: items.slice(Math.max(0, start), Math.max(0, start) + max) };
}

function choiceRows(items: ReadonlyArray<{ label: string; hint?: string }>, choice: number, max: number, numbered: boolean): Row[] {
  const { start, shown } = windowed(items, choice, max);
  return shown.map((it, k) => {
    const i = start + k;
    const mark = i === choice ? '❯ ' : '  ';
    const label = `${mark}${numbered && i < 9 ? `${i + 1}. ` : ''}${it.label}`;
    const row: Row = [{ text: label, style: i === choice ? 'select' : undefined }];
    if (it.hint) row.push({ text: `  ${it.hint}`, style: 'dim' });
    return row;
  });
}

/** The question on screen (an ask or an edit review) or a menu, in at most `max` rows. */
function questionRows(s: ViewState, max: number, cols: number): Row[] {
  const bar: Segment = { text: '┃ ', style: 'frame' };
  const rows: Row[] = [];
  const q = s.question;
  const more = s.queued > 0 ? ` (+${s.queued} waiting)` : '';
  if (q?.kind === 'ask') {
    const { req } = q;
    const free = req.choices.length === 0;
    const footer = free ? 'type the answer below · enter sends · esc dismisses' : `↑↓ choose · enter confirms · 1-${Math.min(9, req.choices.length)} picks · esc denies`;
    const choicesShown = Math.min(req.choices.length, Math.max(1, max - 3));
    const detailRoom = Math.max(0, max - 2 - choicesShown);
    rows.push([bar, { text: req.question, style: 'heading' }, { text: more, style: 'dim' }]);
    const detail = req.detail.slice(q.scroll, q.scroll + detailRoom);
    const hidden = req.detail.length - detail.length;
    for (let i = 0; i < detail.length; i++) {
      const d = detail[i];
      const last = i === detail.length - 1 && hidden > 0;
      rows.push([bar, { text: last ? `  … ${hidden + 1} more lines (PgUp/PgDn)` : `  ${d}`, style: last ? 'dim' : d.startsWith('+') ? 'add' : d.startsWith('-') ? 'del' : 'meta' }]);
    }
    if (!free) for (const r of choiceRows(req.choices.map((c) => ({ label: c })), q.choice, choicesShown, true)) rows.push([bar, ...r]);
    rows.push([bar, { text: footer, style: 'hint' }]);
    return rows.slice(0, max);
  }
  if (q?.kind === 'review') {
    const r = q.review;
    const n = r.hunks.length;
    const state = n === 0 ? '' : r.accepted[r.current] ? '✓ accept' : '✗ reject';
    rows.push([
      bar,
      { text: `Review ${r.req.tool}: ${shortPath(r.req.path, s.cwd)}`, style: 'heading' },
      { text: n > 0 ? `  hunk ${r.current + 1}/${n} ` : '  ', style: 'dim' },
      { text: state, style: n > 0 && r.accepted[r.current] ? 'ok' : 'fail' },
      { text: `  (${r.acceptedCount}/${n} accepted)${more}`, style: 'dim' },
    ]);
    const room = Math.max(1, max - 2);
    const lines = r.hunkLines();
    const shown = lines.slice(r.scroll, r.scroll + room);
    const below = lines.length - r.scroll - shown.length;
    shown.forEach((l, i) => {
      const last = i === shown.length - 1 && below > 0;
      rows.push([bar, { text: last ? `… ${below + 1} more lines (PgUp/PgDn)` : l.text, style: last ? 'dim' : l.style === 'context' ? 'dim' : l.style }]);
    });
    rows.push([bar, { text: cols >= 100 ? '↑↓ hunk · space toggles · y/n accept/reject · a/r all · enter applies · esc rejects the edit' : '↑↓ hunk · space/y/n · a/r all · enter apply · esc reject', style: 'hint' }]);
    return rows.slice(0, max);
  }
  if (s.menu) {
    rows.push([bar, { text: s.menu.title, style: 'heading' }]);
    if (s.menu.items.length === 0) rows.push([bar, { text: '(nothing to choose)', style: 'dim' }]);
    for (const r of choiceRows(s.menu.items, s.menu.choice, Math.max(1, max - 2), false)) rows.push([bar, ...r]);
    rows.push([bar, { text: '↑↓ choose · enter picks · esc closes', style: 'hint' }]);
    return rows.slice(0, max);
  }
  return rows;
}

function activityRows(live: Live, budget: number, cols: number): Row[] {
  const rows: Row[] = [];
  const room = () => budget - rows.length;
  // Sub-agent and task panes, then the plan, then the streaming parts, closest to the input.
  const panes: Row[] = [
    ...live.agents.map((a) => [{ text: `◆ ${a.tag} `, style: 'agent' as const }, { text: `${a.label} · ${a.model}`, style: 'dim' as const }, { text: a.last ? ` · ${a.last}` : '' }]),
    ...live.tasks.map((t) => [{ text: `⚙ task #${t.id} `, style: 'agent' as const }, { text: t.label, style: 'dim' as const }]),
  ];
  const planRows: Row[] = [];
  if (live.plan.length > 0) {
    const done = live.plan.filter((p) => p.done).length;
    planRows.push([{ text: `☰ plan ${done}/${live.plan.length}`, style: 'meta' }]);
    const next = live.plan.findIndex((p) => !p.done);
    const { shown, start } = windowed(live.plan, Math.max(0, next), PLAN_ROWS_MAX - 1);
    shown.forEach((p, k) => planRows.push([{ text: `  ${p.done ? '☑' : start + k === next ? '▸' : '☐'} ${p.text}`, style: p.done ? 'dim' : start + k === next ? 'heading' : undefined }]));
  }
  const streaming: Row[] = [];
  if (live.thinking) streaming.push([{ text: `∴ thinking · ${live.thinking.lines} line${live.thinking.lines === 1 ? '' : 's'} · `, style: 'thinking' }, { text: live.thinking.last, style: 'dim' }]);
  if (live.partial) for (const t of tailRows(live.partial, cols, STREAM_TAIL_ROWS_MAX)) streaming.push([{ text: t, style: 'reply' }]);
  if (live.tool) streaming.push([{ text: `→ ${live.tool.name} `, style: 'meta' }, { text: live.tool.summary, style: 'dim' }]);

  // Allot from the bottom up: what streams now matters most.
  const take = (src: Row[], cap: number) => src.slice(Math.max(0, src.length - Math.min(cap, room())));
  const s = take(streaming, budget);
  const pl = take(planRows, room() - s.length);
  const pa = take(panes, Math.min(PANE_ROWS_MAX, room() - s.length - pl.length));
  rows.push(...pa, ...pl, ...s);
  return rows;
}

/** Every live row, top to bottom, never more than `liveBudget(size.rows)`. */
export function liveRows(s: ViewState, size: { rows: number; cols: number }): Row[] {
  const budget = liveBudget(size.rows);
  const status = statusRow(s);
  let left = budget - 2; // the status row and the rule above the input
  const input = inputRows(s, Math.max(1, Math.min(INPUT_ROWS_MAX, left - 1)));
  left -= input.length;
  const question = questionRows(s, Math.max(0, left), size.cols);
  left -= question.length;
  let completion: Row[] = [];
  if (s.completion && !s.question && !s.menu) {
    completion = choiceRows(s.completion.items.map((c) => ({ label: c.label, hint: c.hint })), s.completion.choice, Math.min(COMPLETION_ROWS_MAX, left), false);
    left -= completion.length;
  }
  const panel = swarmRows(s.swarm ?? null, Math.max(0, left), size.cols);
  left -= panel.length;
  const activity = [...panel, ...activityRows(s.live, Math.max(0, left), size.cols)];
  const rule: Row = [{ text: '─'.repeat(Math.max(1, size.cols)), style: 'frame' }];
  const rows = [...activity, ...question, ...completion, rule, ...input, status].slice(-budget);
  return rows.map((r) => r.map((seg) => ({ ...seg, text: clean(seg.text) })));
}

/** The `/swarm` candidates side by side: name, status, latest step, one column each. */
function swarmRows(cands: ViewState['swarm'], room: number, cols: number): Row[] {
  if (!cands || cands.length === 0 || room < 3) return [];
  const w = Math.max(8, Math.floor(cols / cands.length));
  const cell = (t: string) => (t.length > w - 1 ? `${t.slice(0, w - 2)}…` : t).padEnd(w);
  const row = (pick: (c: NonNullable<ViewState['swarm']>[number]) => string, style: RowStyle): Row => [{ text: cands.map((c) => cell(pick(c))).join('').trimEnd(), style }];
  return [row((c) => c.name, 'meta'), row((c) => c.status, 'info'), row((c) => c.last, 'dim')];
}
