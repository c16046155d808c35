#!/usr/bin/env node
// The reference client for `rift --serve` (docs/serve.md): a terminal front end small enough to
// read in one sitting, and correct enough to copy.
//
//   node scripts/serve-client.mjs [--raw] [--review] [rift --serve flags: --model M --host URL --continue …]
//
// Type a prompt and press Enter. Commands work at any time, a question pending or not:
// /cancel /undo /sessions /models /model NAME /approve on|off /pending /quit.
//
// Questions (`ask`, and `edit_review` with --review) can be pending several at once — parallel
// sub-agents each ask their own. A plain line answers the oldest; `#<id> <reply>` answers that
// one. An ask takes its text, or a number picking a choice. A review takes `y` (apply the
// proposal), `n` (reject it), or one y/n per changed hunk (`yny`): the accepted hunks are
// reassembled from the review's segments and sent as `content`, the rest stay as they were.
// --raw prints every line both ways: `← event`, `→ command`.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';

const argv = process.argv.slice(2);
const raw = argv.includes('--raw');
const review = argv.includes('--review');
const pass = argv.filter((a) => a !== '--raw' && a !== '--review');
// From a source checkout run the sources (dist/ may be stale); otherwise the installed binary.
const src = fileURLToPath(new URL('../src/cli/entry.ts', import.meta.url));
const cmd = existsSync(src)
  ? ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href, src]
  : [fileURLToPath(new URL('../bin/rift.js', import.meta.url))];
const child = spawn(process.execPath, [...cmd, '--serve', ...pass], { stdio: ['pipe', 'pipe', 'inherit'] });

const say = (s) => process.stdout.write(s);
let inContent = false;
const endContent = () => {
  if (inContent) say('\n');
  inContent = false;
};

const send = (o) => {
  const line = JSON.stringify(o);
  if (raw) {
    endContent();
    say(`→ ${line}\n`);
  }
  child.stdin.write(`${line}\n`);
};

/** Questions awaiting a reply, by id, oldest first (asks and reviews share one id space). */
const pending = new Map();

function showQuestion(q) {
  if (q.event === 'ask') {
    say(`? #${q.id} ${q.question}\n${q.detail.map((d) => `  ${d}\n`).join('')}`);
    q.choices.forEach((c, i) => say(`  ${i + 1}) ${c}\n`));
    return;
  }
  say(`review #${q.id}: ${q.tool} ${q.path}\n`);
  let hunk = 0;
  for (const s of q.segments) {
    if (s.same) say(`  … ${s.lines.length} unchanged line(s)\n`);
    else say(`  hunk ${++hunk}:\n${s.old.map((l) => `  -${l}\n`).join('')}${s.new.map((l) => `  +${l}\n`).join('')}`);
  }
  say(hunk > 1 ? `apply? y, n, or one y/n per hunk (${hunk}) ` : 'apply? (y/n) ');
}

const events = createInterface({ input: child.stdout });
events.on('line', (line) => {
  if (raw) {
    endContent();
    say(`← ${line}\n`);
  }
  let ev;
  try {
    ev = JSON.parse(line);
  } catch {
    say(`(not JSON: ${line})\n`);
    return;
  }
  switch (ev.event) {
    case 'ready':
      say(`rift ${ev.version} · protocol ${ev.protocol_version} · ${ev.model} · num_ctx ${ev.num_ctx} · approve ${ev.approve}\nsession ${ev.session}\n`);
      if (ev.skills?.length) say(`skills: ${ev.skills.map((s) => `/skill:${s.name}`).join(' ')}\n`);
      if (review) send({ cmd: 'hello', edit_review: true });
      break;
    case 'history':
      for (const m of ev.messages) say(`${m.role === 'user' ? '>' : ' '} ${m.text}\n`);
      break;
    case 'content':
      inContent = true;
      say(ev.text);
      break;
    case 'thinking':
      if (!raw) say(`\x1b[2m${ev.text}\x1b[0m`);
      break;
    case 'tool_start':
      endContent();
      // v1 consumers accept `args` as an object or as a JSON string (serve-reference A.4).
      say(`→ ${ev.name} ${typeof ev.args === 'string' ? ev.args : JSON.stringify(ev.args)}\n`);
      break;
    case 'tool_result':
      say(`${ev.ok ? '✓' : '✗'} ${ev.name} ${ev.preview}\n`);
      break;
    case 'edit_diff':
      say(`${ev.path} (+${ev.added} -${ev.removed})\n${ev.diff.map((l) => `  ${l}\n`).join('')}`);
      break;
    case 'plan':
      say(ev.items.map((it) => `  [${it.done ? 'x' : ' '}] ${it.text}\n`).join(''));
      break;
    case 'ask':
    case 'edit_review':
      endContent();
      pending.set(ev.id, ev);
      showQuestion(ev);
      break;
    case 'edit_review_closed':
    case 'ask_closed':
      // The question's turn ended or was cancelled: a late reply would be a no-op.
      if (pending.delete(ev.id)) say(`(#${ev.id} closed)\n`);
      break;
    case 'done': {
      endContent();
      const s = ev.stats;
      say(`[${s.iterations} iterations · ${s.prompt_tokens} prompt tok · ${s.output_tokens} out tok · ${s.tokens_per_sec.toFixed(1)} tok/s · ${s.duration_ms} ms]\n`);
      // Asks of background work (and plugin trust) outlive the turn.
      if (pending.size > 0) say(`(pending: ${[...pending.keys()].map((id) => `#${id}`).join(' ')})\n`);
      break;
    }
    case 'context':
      break;
    case 'warning':
      endContent();
      say(`warning: ${ev.text}\n`);
      break;
    default:
      // Unknown events and fields are ignored by contract; shown here for the curious.
      if (!raw) say(`${JSON.stringify(ev)}\n`);
  }
});

/** The edit_decision for a review reply: all, nothing, or the accepted hunks reassembled. */
function decision(q, reply) {
  const hunks = q.segments.filter((s) => !s.same).length;
  const picks = reply.toLowerCase();
  if (/^y(es)?$/.test(picks)) return { cmd: 'edit_decision', id: q.id, apply: true };
  if (!new RegExp(`^[yn]{${hunks}}$`).test(picks) || !picks.includes('y')) return { cmd: 'edit_decision', id: q.id, apply: false };
  let hunk = 0;
  const lines = q.segments.flatMap((s) => (s.same ? s.lines : picks[hunk++] === 'y' ? s.new : s.old));
  // Segments split the texts on "\n" (A.9), so joining on it rebuilds the file exactly.
  return { cmd: 'edit_decision', id: q.id, apply: true, content: lines.join('\n') };
}

function answer(q, reply) {
  pending.delete(q.id);
  if (q.event === 'edit_review') return send(decision(q, reply));
  const n = Number(reply);
  send({ cmd: 'answer', id: q.id, text: Number.isInteger(n) && n >= 1 && n <= q.choices.length ? q.choices[n - 1] : reply });
}

const COMMANDS = {
  '/quit': () => child.stdin.end(),
  '/cancel': () => send({ cmd: 'cancel' }),
  '/undo': () => send({ cmd: 'undo' }),
  '/sessions': () => send({ cmd: 'list_sessions' }),
  '/models': () => send({ cmd: 'list_models' }),
  '/pending': () => (pending.size === 0 ? say('(nothing pending)\n') : pending.forEach(showQuestion)),
};

const input = createInterface({ input: process.stdin });
input.on('line', (line) => {
  const t = line.trim();
  if (COMMANDS[t]) return COMMANDS[t]();
  if (t.startsWith('/model ')) return send({ cmd: 'set_model', model: t.slice(7).trim() });
  if (t.startsWith('/approve ')) return send({ cmd: 'set_approval', approve: t.endsWith('on') });
  const picked = /^#(\d+)\s+(.*)$/.exec(t);
  if (picked) {
    const q = pending.get(Number(picked[1]));
    return q ? answer(q, picked[2]) : say(`(no pending question #${picked[1]})\n`);
  }
  const oldest = pending.values().next().value;
  if (oldest) {
    answer(oldest, t);
    const next = pending.values().next().value;
    if (next) showQuestion(next);
    return;
  }
  if (t !== '') send({ cmd: 'prompt', text: t });
});
input.on('close', () => child.stdin.end());
child.on('close', (code) => process.exit(code ?? 0));
