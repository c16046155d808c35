#!/usr/bin/env node
// A small reference client for `rift --serve` (docs/serve.md), for trying the protocol by hand.
//
//   node scripts/serve-client.mjs [--raw] [--review] [rift --serve flags: --model M --host URL --continue …]
//
// Type a prompt and press Enter. Commands: /cancel /undo /sessions /models /model NAME
// /approve on|off /quit. While a question is pending, the next line answers it (a number picks
// a choice). With --review, edits arrive as edit_review and are decided with y/n. --raw prints
// every event line as received.

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

const send = (o) => child.stdin.write(`${JSON.stringify(o)}\n`);
const say = (s) => process.stdout.write(s);
/** What the next typed line answers: an ask, an edit review, or nothing (a prompt). */
let pending = null;
let inContent = false;
const endContent = () => {
  if (inContent) say('\n');
  inContent = false;
};

const events = createInterface({ input: child.stdout });
events.on('line', (line) => {
  if (raw) say(`← ${line}\n`);
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
      say(`→ ${ev.name} ${typeof ev.args === 'string' ? ev.args : JSON.stringify(ev.args)}\n`);
      break;
    case 'tool_result':
      say(`${ev.ok ? '✓' : '✗'} ${ev.name} ${ev.preview}\n`);
      break;
    case 'edit_diff':
      say(`${ev.path} (+${ev.added} -${ev.removed})\n${ev.diff.map((l) => `  ${l}`).join('\n')}\n`);
      break;
    case 'plan':
      say(`${ev.items.map((it) => `  [${it.done ? 'x' : ' '}] ${it.text}`).join('\n')}\n`);
      break;
    case 'ask':
      endContent();
      pending = { kind: 'ask', ...ev };
      say(`? ${ev.question}\n${ev.detail.map((d) => `  ${d}`).join('\n')}${ev.detail.length ? '\n' : ''}`);
      ev.choices.forEach((c, i) => say(`  ${i + 1}) ${c}\n`));
      break;
    case 'edit_review':
      endContent();
      pending = { kind: 'review', ...ev };
      say(`review #${ev.id}: ${ev.tool} ${ev.path}\n`);
      for (const s of ev.segments) {
        if (s.same) say(`  … ${s.lines.length} unchanged line(s)\n`);
        else say(`${s.old.map((l) => `  -${l}`).join('\n')}${s.old.length ? '\n' : ''}${s.new.map((l) => `  +${l}`).join('\n')}${s.new.length ? '\n' : ''}`);
      }
      say('apply? (y/n) ');
      break;
    case 'edit_review_closed':
      if (pending?.id === ev.id) pending = null;
      say(`(review #${ev.id} closed)\n`);
      break;
    case 'done': {
      endContent();
      const s = ev.stats;
      say(`[${s.iterations} iterations · ${s.prompt_tokens} prompt tok · ${s.output_tokens} out tok · ${s.tokens_per_sec.toFixed(1)} tok/s · ${s.duration_ms} ms]\n`);
      break;
    }
    case 'context':
      break;
    case 'warning':
      endContent();
      say(`warning: ${ev.text}\n`);
      break;
    default:
      if (!raw) say(`${JSON.stringify(ev)}\n`);
  }
});

const input = createInterface({ input: process.stdin });
input.on('line', (line) => {
  const t = line.trim();
  if (pending?.kind === 'ask') {
    const n = Number(t);
    const text = Number.isInteger(n) && n >= 1 && n <= pending.choices.length ? pending.choices[n - 1] : t;
    send({ cmd: 'answer', id: pending.id, text });
    pending = null;
    return;
  }
  if (pending?.kind === 'review') {
    send({ cmd: 'edit_decision', id: pending.id, apply: /^y/i.test(t) });
    pending = null;
    return;
  }
  if (t === '/quit') return child.stdin.end();
  if (t === '/cancel') return send({ cmd: 'cancel' });
  if (t === '/undo') return send({ cmd: 'undo' });
  if (t === '/sessions') return send({ cmd: 'list_sessions' });
  if (t === '/models') return send({ cmd: 'list_models' });
  if (t.startsWith('/model ')) return send({ cmd: 'set_model', model: t.slice(7).trim() });
  if (t.startsWith('/approve ')) return send({ cmd: 'set_approval', approve: t.endsWith('on') });
  if (t !== '') send({ cmd: 'prompt', text: t });
});
input.on('close', () => child.stdin.end());
child.on('close', (code) => process.exit(code ?? 0));
