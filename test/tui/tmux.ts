import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { RIFT_ARGS } from '../support/rift-process.ts';

// Drives `rift` (the terminal UI) inside a private tmux server: send-keys to type,
// capture-pane to read the screen. Every wait polls the pane with a deadline; none sleeps a
// fixed time, so a loaded machine only makes a test slower, never wrong.

const run = promisify(execFile);

let serial = 0;

export function tmuxAvailable(): boolean {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export interface PaneOptions {
  cwd: string;
  home: string;
  args: string[];
  cols?: number;
  rows?: number;
  env?: Record<string, string>;
}

function quote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export class Pane {
  private constructor(
    private readonly socket: string,
    private readonly target: string,
    private readonly statusFile: string,
  ) {}

  static async open(o: PaneOptions): Promise<Pane> {
    const socket = `rift-tui-test-${process.pid}-${++serial}`;
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: o.home,
      RIFT_HOME: o.home,
      RIFT_LOG: 'error',
      TERM: 'xterm-256color',
      LANG: 'C.UTF-8',
      ...o.env,
    };
    // The exit status goes to a file through a shell that waits for rift: under load tmux can
    // leave its dead child unreaped (a zombie), and then never reports the pane's exit status.
    const statusFile = join(mkdtempSync(join(tmpdir(), 'rift-tui-status-')), 'status');
    const rift = [
      'env', '-i', ...Object.entries(env).map(([k, v]) => quote(`${k}=${v}`)),
      quote(process.execPath), ...RIFT_ARGS.map(quote), ...o.args.map(quote),
    ].join(' ');
    const command = `${rift}; echo $? > ${quote(statusFile)}`;
    const pane = new Pane(socket, 'rift', statusFile);
    // The history limit applies to panes created after it is set: set it first, in the same call.
    await pane.tmux('-f', '/dev/null', 'set-option', '-g', 'history-limit', '20000', ';', 'set-option', '-g', 'remain-on-exit', 'on', ';',
      'new-session', '-d', '-s', 'rift', '-x', String(o.cols ?? 80), '-y', String(o.rows ?? 24), '-c', o.cwd, command);
    return pane;
  }

  private async tmux(...args: string[]): Promise<string> {
    const { stdout } = await run('tmux', ['-u', '-L', this.socket, ...args], { maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  }

  /** Named keys (`Enter`, `Escape`, `C-c`, `Up`, `Space`, …). */
  async keys(...keys: string[]): Promise<void> {
    await this.tmux('send-keys', '-t', this.target, ...keys);
  }

  /** Literal text, as typed. */
  async type(text: string): Promise<void> {
    await this.tmux('send-keys', '-t', this.target, '-l', text);
  }

  /** Text as a bracketed paste, the way a terminal delivers a paste to an app that asked for it. */
  async paste(text: string): Promise<void> {
    await this.tmux('set-buffer', '-b', 'p', text);
    await this.tmux('paste-buffer', '-p', '-d', '-b', 'p', '-t', this.target);
  }

  async screen(escapes = false): Promise<string> {
    return this.tmux('capture-pane', '-p', ...(escapes ? ['-e'] : []), '-t', this.target);
  }

  /** Scrollback and screen, joined where the terminal wrapped a line. */
  async history(): Promise<string> {
    return this.tmux('capture-pane', '-p', '-J', '-S', '-', '-E', '-', '-t', this.target);
  }

  async resize(cols: number, rows: number): Promise<void> {
    await this.tmux('resize-window', '-t', this.target, '-x', String(cols), '-y', String(rows));
  }

  /** Appends every byte the program writes to the pane to `file`, from now on. */
  async record(file: string): Promise<void> {
    await this.tmux('pipe-pane', '-o', '-t', this.target, `cat >> ${quote(file)}`);
  }

  /** rift's exit status once it has exited, else null. */
  async exited(): Promise<number | null> {
    try {
      const text = readFileSync(this.statusFile, 'utf8');
      return text.endsWith('\n') ? Number(text.trim()) : null;
    } catch {
      return null;
    }
  }

  /** Polls until `pred` holds for the screen (or the history); returns that capture. */
  async waitFor(pred: string | RegExp | ((s: string) => boolean), o: { timeoutMs?: number; history?: boolean } = {}): Promise<string> {
    const test = typeof pred === 'string' ? (s: string) => s.includes(pred) : pred instanceof RegExp ? (s: string) => pred.test(s) : pred;
    const deadline = Date.now() + (o.timeoutMs ?? 45_000);
    let last = '';
    for (;;) {
      last = o.history ? await this.history() : await this.screen();
      if (test(last)) return last;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${String(pred)}; the pane shows:\n${last.split('\n').slice(-40).join('\n')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async close(): Promise<void> {
    await this.tmux('kill-server').catch(() => {});
    rmSync(dirname(this.statusFile), { recursive: true, force: true });
  }
}
