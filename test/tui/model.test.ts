import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diffSegments } from '../../src/agent/policy/diff.ts';
import { COMMANDS, complete, parseInput } from '../../src/tui/commands.ts';
import { FrameScheduler, type Clock } from '../../src/tui/frames.ts';
import { Questions } from '../../src/tui/questions.ts';
import { assemble, ReviewModel } from '../../src/tui/review.ts';
import { clean, toMarkdown, Transcript } from '../../src/tui/transcript.ts';
import { liveBudget, liveRows, tailRows, type ViewState } from '../../src/tui/view.ts';
import { zeroStats } from '../../src/agent/base/types.ts';

// The TUI's plain modules: slash commands, review reassembly, the transcript model, the live
// rows and their height bound, frame coalescing, and the question queue.

test('commands: parse, // escapes a slash, /skill: stays whole, unknown names are reported', () => {
  assert.deepEqual(parseInput('fix it'), { kind: 'prompt', text: 'fix it' });
  assert.deepEqual(parseInput('//etc/hosts is odd'), { kind: 'prompt', text: '/etc/hosts is odd' });
  const m = parseInput('  /model  small-model ');
  assert.equal(m.kind, 'command');
  assert.equal(m.kind === 'command' && m.command.name, 'model');
  assert.equal(m.kind === 'command' && m.args, 'small-model');
  assert.deepEqual(parseInput('/skill:review src/a.ts'), { kind: 'skill', text: '/skill:review src/a.ts' });
  assert.deepEqual(parseInput('/frobnicate now'), { kind: 'unknown', name: 'frobnicate' });
  for (const name of ['model', 'clear', 'compact', 'sessions', 'resume', 'skills', 'skill:', 'plan', 'undo', 'diff', 'approve', 'yolo', 'tools', 'init', 'export', 'help']) {
    assert.ok(COMMANDS.some((c) => c.name === name), `/${name} exists`);
  }
});

test('completion: command names, skills after /skill:, models after /model, on/off after /approve', () => {
  const ctx = { skills: [{ name: 'review', description: 'review a diff' }, { name: 'release', description: 'cut a release' }], models: ['test-model', 'small-model', 'openai/gpt'] };
  assert.deepEqual(complete('/re', ctx)!.items.map((i) => i.label), ['/resume [n|path]']);
  assert.deepEqual(complete('/s', ctx)!.items.map((i) => i.label), ['/sessions', '/skills', '/skill:review', '/skill:release', '/swarm [--models a,b] [--judge M] <task>']);
  const sk = complete('/skill:re', ctx)!;
  assert.deepEqual(sk.items.map((i) => i.value), ['/skill:review ', '/skill:release ']);
  assert.equal(sk.items[0].hint, 'review a diff');
  assert.equal(complete('/skill:review fix', ctx), null, 'no completion once the task is being typed');
  const mo = complete('/model sm', ctx)!;
  assert.equal(mo.from, 7);
  assert.deepEqual(mo.items.map((i) => i.value), ['small-model']);
  assert.deepEqual(complete('/approve o', ctx)!.items.map((i) => i.value), ['on', 'off']);
  assert.equal(complete('/help', ctx), null, 'a complete command offers nothing more');
  assert.equal(complete('hello /x', ctx), null);
  assert.equal(complete('/model a\nb', ctx), null);
  assert.equal(complete('/model', ctx)!.items[0].value, '/model ', 'a command with arguments completes with a space');
});

test('review: reassembly is the proposal when all hunks are accepted, the old file when none, mixed per hunk', () => {
  const old = 'a\nb\nc\nd\ne\n';
  const proposed = 'a\nB\nc\nd\nE\n';
  const segments = diffSegments(old, proposed);
  assert.equal(assemble(segments, [true, true]), proposed);
  assert.equal(assemble(segments, [false, false]), old);
  assert.equal(assemble(segments, [false, true]), 'a\nb\nc\nd\nE\n');
  const r = new ReviewModel({ tool: 'write', path: '/w/f.txt', old, new: proposed, segments });
  assert.deepEqual(r.hunks, [1, 3]);
  assert.deepEqual(r.decision(), { apply: true }, 'everything accepted applies the proposal verbatim');
  r.mark(false);
  assert.equal(r.current, 1);
  assert.deepEqual(r.decision(), { apply: true, content: 'a\nb\nc\nd\nE\n' });
  r.toggle();
  assert.deepEqual(r.decision(), { apply: false }, 'nothing accepted rejects the edit');
  r.setAll(true);
  r.move(-5);
  assert.equal(r.current, 0);
  assert.deepEqual(r.hunkLines().map((l) => l.text), ['@@ line 2 @@', ' a', '-b', '+B', ' c', ' d']);
  r.move(1);
  assert.deepEqual(r.hunkLines().map((l) => l.text), ['@@ line 5 @@', ' c', ' d', '-e', '+E', ' ']);
  const insertion = new ReviewModel({ tool: 'edit', path: '/w/g', old: 'x\nz', new: 'x\ny\nz', segments: diffSegments('x\nz', 'x\ny\nz') });
  assert.deepEqual(insertion.hunkLines().map((l) => l.style), ['meta', 'context', 'add', 'context']);
  const big = new ReviewModel({ tool: 'write', path: '/w/h', old: '', new: Array.from({ length: 50 }, (_, i) => `l${i}`).join('\n'), segments: diffSegments('', Array.from({ length: 50 }, (_, i) => `l${i}`).join('\n')) });
  big.scrollBy(100, 10);
  assert.equal(big.scroll, big.hunkLines().length - 10, 'scrolling stops at the hunk end');
});

test('transcript: reply lines finish at their newline, thinking collapses, tools and diffs are one-liners', () => {
  const t = new Transcript('/w');
  t.user('do it');
  t.apply({ event: 'iteration', n: 1 });
  t.apply({ event: 'thinking', text: 'first thought\nsecond' });
  assert.deepEqual(t.live().thinking, { lines: 2, last: 'second' });
  t.apply({ event: 'content', text: 'Hello wor' });
  assert.equal(t.live().thinking, null);
  assert.equal(t.live().partial, 'Hello wor');
  t.apply({ event: 'content', text: 'ld\n# Title\n```ts\nconst x = 1;\n```\ntail' });
  t.apply({ event: 'tool_start', name: 'edit', args: { path: 'src/a.ts', old_string: 'x', new_string: 'y' } });
  assert.deepEqual(t.live().tool, { name: 'edit', summary: 'src/a.ts' });
  t.apply({ event: 'tool_result', name: 'edit', ok: true, preview: 'Edited src/a.ts (1 replacement)' });
  t.apply({ event: 'edit_diff', path: '/w/src/a.ts', added: 1, removed: 1, diff: ['@@ line 2 @@', '-x', '+y'] });
  t.apply({ event: 'tool_start', name: 'bash', args: { command: 'npm test' } });
  t.apply({ event: 'tool_result', name: 'bash', ok: false, preview: 'ERROR: exit 1' });
  t.apply({ event: 'warning', text: 'careful\nsecond line' });
  t.apply({ event: 'done', stats: { ...zeroStats(), iterations: 2, prompt_tokens: 1200, output_tokens: 34, tokens_per_sec: 12.5, duration_ms: 2100 } });
  const lines = t.take();
  assert.deepEqual(lines.map((l) => [l.style, l.text]), [
    ['user', '› do it'],
    ['thinking', '∴ thought · 2 lines (Ctrl-T shows thinking)'],
    ['reply', 'Hello world'],
    ['heading', '# Title'],
    ['code', '```ts'],
    ['code', 'const x = 1;'],
    ['code', '```'],
    ['reply', 'tail'],
    ['ok', '✓ edit src/a.ts'],
    ['meta', '  ± src/a.ts (+1 −1)'],
    ['meta', '    @@ line 2 @@'],
    ['del', '    -x'],
    ['add', '    +y'],
    ['fail', '✗ bash npm test — ERROR: exit 1'],
    ['warn', '! careful'],
    ['warn', '  second line'],
    ['dim', '─ 2 iterations · 1,200 prompt tok · 34 out · 12.5 tok/s · 2.1 s'],
  ]);
  assert.deepEqual(t.take(), [], 'a line is handed out once');
  assert.equal(new Set(lines.map((l) => l.id)).size, lines.length);
  t.toggleThinking();
  assert.deepEqual(t.take().map((l) => l.text), ['∴ thinking shown in full (Ctrl-T collapses it)', '  first thought', '  second']);
  t.apply({ event: 'thinking', text: 'now in full' });
  t.apply({ event: 'done', stats: zeroStats() });
  assert.deepEqual(t.take().map((l) => l.text).slice(0, 1), ['  now in full']);
});

test('transcript: plan, sub-agents and tasks live in panes; their milestones reach the transcript', () => {
  const t = new Transcript('/w');
  t.apply({ event: 'plan', items: [{ text: 'read', done: false }, { text: 'fix', done: false }] });
  t.apply({ event: 'plan', items: [{ text: 'read', done: true }, { text: 'fix', done: false }] });
  t.apply({ event: 'subagent_started', tag: 'agent 1', model: 'm', label: 'look around' });
  t.apply({ event: 'subagent', tag: 'agent 1', text: '→ read a.ts', warn: false });
  assert.deepEqual(t.live().agents, [{ tag: 'agent 1', model: 'm', label: 'look around', last: '→ read a.ts' }]);
  t.apply({ event: 'subagent', tag: 'agent 1', text: '! stuck', warn: true });
  t.apply({ event: 'task_started', id: 1, label: 'npm test' });
  assert.deepEqual(t.live().tasks, [{ id: 1, label: 'npm test' }]);
  t.apply({ event: 'subagent_finished', tag: 'agent 1', steps: 3 });
  t.apply({ event: 'task_finished', id: 1, label: 'npm test', ok: true, preview: 'all green' });
  t.apply({ event: 'context', used: 10, limit: 100 });
  assert.deepEqual(t.live().agents, []);
  assert.deepEqual(t.live().tasks, []);
  assert.deepEqual(t.live().plan, [{ text: 'read', done: true }, { text: 'fix', done: false }]);
  assert.deepEqual(t.live().context, { used: 10, limit: 100 });
  assert.deepEqual(t.take().map((l) => l.text), [
    '☰ plan (0/2 done)', '  ☐ 1. read', '  ☐ 2. fix', '☑ step 1 done: read',
    '◆ agent 1 started: look around (m)', '◆ agent 1 ! stuck', '⚙ task #1 started: npm test',
    '◆ agent 1 finished (3 steps)', '⚙ task #1 finished: npm test — all green',
  ]);
});

test('transcript: escape sequences from the model are shown, never obeyed', () => {
  assert.equal(clean('a\x1b[2Jb\x07c\rd\te\x9bf'), 'a␛[2Jbcd    ef');
  const t = new Transcript('/w');
  t.apply({ event: 'content', text: 'safe \x1b]0;title\x07 text\npartial \x1b[H' });
  assert.equal(t.take()[0].text, 'safe ␛]0;title text');
  assert.equal(t.live().partial, 'partial ␛[H');
  const rows = liveRows(baseState({ live: { ...baseState().live, tool: { name: 'bash', summary: 'echo \x1b[31mred' } } }), { rows: 24, cols: 80 });
  assert.ok(rows.flat().every((seg) => !seg.text.includes('\x1b')), 'no raw escape reaches a live row');
});

test('transcript: a resumed history replays prompts and replies; /export writes Markdown', () => {
  const t = new Transcript('/w');
  t.history([{ role: 'user', text: 'q1' }, { role: 'assistant', text: 'a1\n```\ncode\n```' }]);
  t.apply({ event: 'info', text: 'note' });
  const md = toMarkdown(t.lines, 'rift transcript — s');
  assert.equal(md, '# rift transcript — s\n\n**›** q1\n\na1\n```\ncode\n```\n```text\nnote\n```\n');
});

const baseState = (over: Partial<ViewState> = {}): ViewState => ({
  live: { thinking: null, partial: '', tool: null, plan: [], agents: [], tasks: [], iteration: 0, context: { used: 500, limit: 1000 } },
  input: { lines: [''], line: 0, col: 0, placeholder: 'ask' },
  completion: null,
  question: undefined,
  queued: 0,
  menu: null,
  status: { model: 'm', approve: true, busy: false, spinner: 0, hint: '', urgent: '' },
  cwd: '/w',
  ...over,
});
const text = (rows: ReturnType<typeof liveRows>) => rows.map((r) => r.map((s) => s.text).join(''));

test('view: the live region never reaches the screen height, however much is live', () => {
  const questions = new Questions();
  void questions.ask({ question: 'Allow write: /w/a', detail: Array.from({ length: 200 }, (_, i) => `+line ${i}`), choices: ['allow', 'always allow write this session', "always allow 'Edit(src/**)'", 'deny'] }, new AbortController().signal);
  const huge = baseState({
    live: {
      thinking: { lines: 3, last: 'x' },
      partial: 'word '.repeat(4000),
      tool: { name: 'bash', summary: 'npm test' },
      plan: Array.from({ length: 30 }, (_, i) => ({ text: `step ${i}`, done: i < 10 })),
      agents: Array.from({ length: 4 }, (_, i) => ({ tag: `agent ${i + 1}`, model: 'm', label: 'l', last: '' })),
      tasks: [{ id: 1, label: 'sleep' }],
      iteration: 3,
      context: { used: 900, limit: 1000 },
    },
    input: { lines: Array.from({ length: 40 }, (_, i) => `line ${i}`), line: 39, col: 3, placeholder: '' },
    question: questions.head,
  });
  for (const rows of [5, 10, 24, 50, 120]) {
    const r = liveRows(huge, { rows, cols: 80 });
    assert.ok(r.length <= liveBudget(rows) && r.length < rows, `${r.length} rows on a ${rows}-row terminal`);
    assert.match(text(r).at(-1)!, /^ m /, 'the status line is always the last row');
  }
  const at24 = text(liveRows(huge, { rows: 24, cols: 80 }));
  assert.ok(at24.some((l) => l.includes('Allow write: /w/a')), 'the question keeps its place');
  assert.ok(at24.some((l) => l.includes('❯ 1. allow')));
  assert.ok(at24.some((l) => l.includes('more lines (PgUp/PgDn)')));
  assert.ok(at24.some((l) => l.startsWith('› ') || l.startsWith('  line 39')), 'the input shows the cursor line');
  assert.equal(liveBudget(200), 40, 'a tall terminal still gets a bounded live region');
});

test('view: the streaming paragraph shows its last rows; the status carries model, approval and the context gauge', () => {
  assert.deepEqual(tailRows('abcdefghij', 4, 2), ['efgh', 'ij']);
  assert.deepEqual(tailRows('日本語', 2, 5), ['日本', '語']);
  const rows = text(liveRows(baseState({ live: { ...baseState().live, partial: 'streaming…' }, status: { model: 'qwen', approve: false, busy: true, spinner: 1, hint: 'esc cancels', urgent: 'press Ctrl-C again to quit' } }), { rows: 24, cols: 80 }));
  assert.equal(rows[0], 'streaming…');
  assert.equal(rows.at(-1), ' qwen  press Ctrl-C again to quit · auto-approve · ctx █████░░░░░ 50% 500/1.0k · ⠙ · esc cancels');
});

test('frames: requests coalesce to one flush per interval; a quiet spell flushes at once', () => {
  let now = 0;
  const timers: Array<{ at: number; fn: () => void }> = [];
  const clock: Clock = { now: () => now, setTimeout: (fn, ms) => timers.push({ at: now + ms, fn }), clearTimeout: () => {} };
  let flushes = 0;
  const s = new FrameScheduler(() => flushes++, 33, clock);
  const advance = (ms: number) => {
    now += ms;
    for (const t of timers.splice(0)) if (t.at <= now) t.fn();
      else timers.push(t);
  };
  s.request();
  advance(0);
  assert.equal(flushes, 1, 'the first frame is immediate');
  for (let i = 0; i < 100; i++) s.request();
  advance(10);
  assert.equal(flushes, 1, 'later requests wait for the interval');
  advance(23);
  assert.equal(flushes, 2, 'a hundred requests, one flush');
  s.dispose();
  s.request();
  advance(100);
  assert.equal(flushes, 2);
});

test('questions: FIFO, answered head first; an abort drops a question (null); dropAll denies everything', async () => {
  let changes = 0;
  const q = new Questions(() => changes++);
  const turn = new AbortController();
  const a = q.ask({ question: 'one', detail: [], choices: ['yes', 'no'] }, turn.signal);
  const r = q.review({ tool: 'write', path: '/w/x', old: 'a', new: 'b', segments: diffSegments('a', 'b') }, turn.signal);
  const other = q.ask({ question: 'three', detail: [], choices: [] }, new AbortController().signal);
  assert.equal(q.size, 3);
  assert.equal(q.head?.kind, 'ask');
  q.decide({ apply: true });
  assert.equal(q.size, 3, 'deciding a review does nothing while an ask is on screen');
  q.answerAsk('yes');
  assert.equal(await a, 'yes');
  assert.equal(q.head?.kind, 'review');
  turn.abort();
  assert.equal(await r, null);
  assert.equal(q.size, 1);
  q.dropAll();
  assert.equal(await other, null);
  assert.equal(q.size, 0);
  assert.ok(changes >= 5);
  assert.equal(await q.ask({ question: 'late', detail: [], choices: [] }, turn.signal), null, 'an aborted turn asks nothing');
});
