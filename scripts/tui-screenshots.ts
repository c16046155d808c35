// Screenshots of the terminal UI for docs/tui.md: rift runs in tmux against the scripted model
// server (127.0.0.1), a scene is typed in, `capture-pane -e` gives the screen with its colours,
// the ANSI becomes an HTML page, and headless Chromium (Debian's `chromium`) renders it to PNG.
//
//   node --import tsx scripts/tui-screenshots.ts     (writes docs/img/tui-80x24.png, tui-200x50.png)

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ScriptedModelServer, ollamaReply } from '../test/support/model-server.ts';
import { Pane } from '../test/tui/tmux.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'docs', 'img');
const CHROMIUM = '/usr/bin/chromium';
const FONT_PX = 14;
const LINE_PX = 17;
const CELL_PX = 8.43;

const STATS = `def mean(xs):
    return sum(xs) / (len(xs) - 1)


def spread(xs):
    return max(xs) - min(xs)


def describe(xs):
    return {"mean": mean(xs), "spread": spread(xs)}
`;

const PALETTE = ['#1e1e1e', '#f44747', '#6a9955', '#d7ba7d', '#569cd6', '#c586c0', '#4ec9b0', '#d4d4d4'];
const BRIGHT = ['#808080', '#f14c4c', '#23d18b', '#f5f543', '#3b8eea', '#d670d6', '#29b8db', '#ffffff'];
const FG = '#d4d4d4';
const BG = '#1e1e1e';

function xterm256(n: number): string {
  if (n < 8) return PALETTE[n];
  if (n < 16) return BRIGHT[n - 8];
  if (n >= 232) {
    const v = 8 + (n - 232) * 10;
    return `rgb(${v},${v},${v})`;
  }
  const c = n - 16;
  const f = (x: number) => (x === 0 ? 0 : 55 + x * 40);
  return `rgb(${f(Math.floor(c / 36))},${f(Math.floor(c / 6) % 6)},${f(c % 6)})`;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** `capture-pane -e` output (SGR escapes only) as HTML spans. */
export function ansiToHtml(ansi: string): string {
  let fg: string | null = null;
  let bg: string | null = null;
  let bold = false;
  let dim = false;
  let italic = false;
  let inverse = false;
  let out = '';
  for (const part of ansi.split(/(\x1b\[[0-9;]*m)/)) {
    const m = /^\x1b\[([0-9;]*)m$/.exec(part);
    if (!m) {
      if (part === '') continue;
      let f = fg ?? FG;
      let b = bg ?? BG;
      if (inverse) [f, b] = [b, f];
      const style = [`color:${f}`, b !== BG ? `background:${b}` : '', bold ? 'font-weight:bold' : '', dim ? 'opacity:0.6' : '', italic ? 'font-style:italic' : ''].filter(Boolean).join(';');
      out += `<span style="${style}">${esc(part)}</span>`;
      continue;
    }
    const codes = m[1] === '' ? [0] : m[1].split(';').map(Number);
    for (let i = 0; i < codes.length; i++) {
      const c = codes[i];
      if (c === 0) [fg, bg, bold, dim, italic, inverse] = [null, null, false, false, false, false];
      else if (c === 1) bold = true;
      else if (c === 2) dim = true;
      else if (c === 3) italic = true;
      else if (c === 7) inverse = true;
      else if (c === 22) [bold, dim] = [false, false];
      else if (c === 23) italic = false;
      else if (c === 27) inverse = false;
      else if (c >= 30 && c <= 37) fg = PALETTE[c - 30];
      else if (c === 39) fg = null;
      else if (c >= 40 && c <= 47) bg = PALETTE[c - 40];
      else if (c === 49) bg = null;
      else if (c >= 90 && c <= 97) fg = BRIGHT[c - 90];
      else if (c >= 100 && c <= 107) bg = BRIGHT[c - 100];
      else if ((c === 38 || c === 48) && codes[i + 1] === 5) {
        const col = xterm256(codes[i + 2]);
        if (c === 38) fg = col;
        else bg = col;
        i += 2;
      } else if ((c === 38 || c === 48) && codes[i + 1] === 2) {
        const col = `rgb(${codes[i + 2]},${codes[i + 3]},${codes[i + 4]})`;
        if (c === 38) fg = col;
        else bg = col;
        i += 4;
      }
    }
  }
  return out;
}

function page(html: string, cols: number, rows: number): string {
  return `<!doctype html><meta charset="utf-8"><style>
html,body{margin:0;background:${BG}}
pre{margin:0;padding:12px;font:${FONT_PX}px/${LINE_PX}px "DejaVu Sans Mono",monospace;color:${FG};width:${Math.ceil(cols * CELL_PX)}px;height:${rows * LINE_PX}px;overflow:hidden}
</style><pre>${html}</pre>`;
}

function screenshot(ansi: string, cols: number, rows: number, file: string): void {
  const dir = mkdtempSync(join(tmpdir(), 'rift-shot-'));
  const html = join(dir, 'screen.html');
  writeFileSync(html, page(ansiToHtml(ansi), cols, rows));
  const width = Math.ceil(cols * CELL_PX) + 24;
  const height = rows * LINE_PX + 24;
  execFileSync(CHROMIUM, [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--hide-scrollbars', `--user-data-dir=${join(dir, 'profile')}`,
    `--window-size=${width},${height}`, `--screenshot=${file}`, `file://${html}`,
  ], { stdio: 'ignore', timeout: 120_000 });
  rmSync(dir, { recursive: true, force: true });
}

/** One scene: a turn with thinking, a plan, a read, and an edit waiting in review. */
async function scene(server: ScriptedModelServer, cols: number, rows: number): Promise<string> {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'stats-')));
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'rift-home-')));
  writeFileSync(join(cwd, 'stats.py'), STATS);
  server.script(
    ollamaReply({
      thinking: ['The mean divides by len - 1, which is the sample-variance denominator.\n', 'Plan: read, fix, verify.'],
      content: "I'll look at stats.py first.",
      toolCalls: [{ name: 'plan', arguments: { set: ['Read stats.py', 'Fix the mean denominator', 'Run the checks'] } }],
    }),
    ollamaReply({ toolCalls: [{ name: 'read', arguments: { path: 'stats.py' } }] }),
    ollamaReply({ toolCalls: [{ name: 'plan', arguments: { done: 1 } }] }),
    ollamaReply({
      content: 'The mean divides by `len(xs) - 1`; it should divide by `len(xs)`. I will also name the result keys consistently.',
      toolCalls: [{ name: 'write', arguments: { path: 'stats.py', content: STATS.replace('(len(xs) - 1)', 'len(xs)').replace('"spread": spread(xs)', '"range": spread(xs)') } }],
    }),
  );
  const pane = await Pane.open({ cwd, home, args: ['--host', server.url, '--model', 'qwen3-coder:30b'], cols, rows });
  try {
    await pane.waitFor('ask rift, or / for commands');
    await pane.type('the mean in stats.py is wrong for [2, 4, 6]; fix it');
    await pane.keys('Enter');
    await pane.waitFor('hunk 1/2');
    return await pane.screen(true);
  } finally {
    await pane.close();
    rmSync(cwd, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  }
}

const server = await ScriptedModelServer.start({ 'qwen3-coder:30b': { capabilities: ['completion', 'tools', 'thinking'], contextLength: 32768 } });
try {
  mkdirSync(OUT, { recursive: true });
  for (const [cols, rows] of [[80, 24], [200, 50]]) {
    const ansi = await scene(server, cols, rows);
    const file = join(OUT, `tui-${cols}x${rows}.png`);
    screenshot(ansi, cols, rows, file);
    process.stdout.write(`wrote ${file}\n`);
    server.clear();
  }
} finally {
  await server.close();
}
