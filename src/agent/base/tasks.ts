import { spawn, type ChildProcess } from 'node:child_process';
import { stripVTControlCharacters } from 'node:util';
import { ToolError } from './tool.ts';
import type { EventSink } from './types.ts';

// Background bash tasks (reference A.17): at most 8 at once, output capped at 256 KB with the
// front dropped, ids session-wide from 1. A kill is silent (no task_finished).

export const TASKS_RUNNING_MAX = 8;
export const TASK_OUTPUT_BYTES_MAX = 256 * 1024;
export const TASK_STATUS_CHARS_MAX = 20_000;

/** Terminal escape sequences removed: CSI, OSC (hyperlinks, titles; BEL or ST ended), charset and the rest. */
export function stripAnsi(s: string): string {
  return stripVTControlCharacters(s);
}

/** Environment changes for the commands a tool runs: a string sets the variable, null removes it. */
export type CommandEnv = Readonly<Record<string, string | null>>;

/** `argv` started through env(1) with `changes` applied; unchanged when there are none. */
export function withEnv(argv: readonly string[], changes: CommandEnv | undefined): string[] {
  const entries = Object.entries(changes ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (entries.length === 0) return [...argv];
  const unset = entries.flatMap(([k, v]) => (v === null ? ['-u', k] : []));
  const set = entries.flatMap(([k, v]) => (v === null ? [] : [`${k}=${v}`]));
  return ['env', ...unset, ...set, ...argv];
}

interface Task {
  id: number;
  label: string;
  /** A bash task's process; absent for in-process tasks (background sub-agents). */
  child?: ChildProcess;
  abort?: AbortController;
  output: string;
  running: boolean;
  killed: boolean;
  exit: number | null;
}

export class BackgroundTasks {
  private next = 1;
  private readonly tasks = new Map<number, Task>();

  constructor(private emit: EventSink = () => {}) {}

  setSink(emit: EventSink): void {
    this.emit = emit;
  }

  get running(): number {
    return [...this.tasks.values()].filter((t) => t.running).length;
  }

  start(command: string, argv: string[], cwd: string): { id: number; pid: number } {
    if (this.running >= TASKS_RUNNING_MAX) throw new Error(`at most ${TASKS_RUNNING_MAX} background tasks run at once; wait for one to finish or kill one`);
    const child = spawn(argv[0], argv.slice(1), { cwd, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    const task: Task = { id: this.next++, label: command, child, output: '', running: true, killed: false, exit: null };
    this.tasks.set(task.id, task);
    const add = (b: Buffer) => {
      task.output += b.toString('utf8');
      if (task.output.length > TASK_OUTPUT_BYTES_MAX) task.output = task.output.slice(task.output.length - TASK_OUTPUT_BYTES_MAX);
    };
    child.stdout?.on('data', add);
    child.stderr?.on('data', add);
    child.on('error', (e) => add(Buffer.from(String(e))));
    child.on('close', (code) => {
      task.running = false;
      task.exit = code;
      if (!task.killed) {
        const clean = stripAnsi(task.output);
        this.emit({ event: 'task_finished', id: task.id, label: task.label, ok: code === 0, preview: clean.slice(-1000) });
      }
    });
    this.emit({ event: 'task_started', id: task.id, label: command });
    return { id: task.id, pid: child.pid ?? 0 };
  }

  /** An in-process background task (a background sub-agent): same limits, ids and events as bash tasks. */
  startInProcess(label: string, run: (signal: AbortSignal) => Promise<{ ok: boolean; output: string }>): number {
    if (this.running >= TASKS_RUNNING_MAX) throw new Error(`at most ${TASKS_RUNNING_MAX} background tasks run at once; wait for one to finish or kill one`);
    const abort = new AbortController();
    const task: Task = { id: this.next++, label, abort, output: '', running: true, killed: false, exit: null };
    this.tasks.set(task.id, task);
    this.emit({ event: 'task_started', id: task.id, label });
    const finish = (ok: boolean, output: string) => {
      task.running = false;
      task.exit = ok ? 0 : 1;
      task.output = output.length > TASK_OUTPUT_BYTES_MAX ? output.slice(output.length - TASK_OUTPUT_BYTES_MAX) : output;
      if (!task.killed) this.emit({ event: 'task_finished', id: task.id, label, ok, preview: task.output.slice(-1000) });
    };
    run(abort.signal).then((r) => finish(r.ok, r.output), (e: Error) => finish(false, `ERROR: ${e.message}`));
    return task.id;
  }

  list(): string {
    if (this.tasks.size === 0) return 'no background tasks';
    return [...this.tasks.values()].map((t) => `#${t.id} ${this.state(t)}: ${t.label}`).join('\n');
  }

  private state(t: Task): string {
    return t.running ? 'running' : t.killed ? 'killed' : `exited (${t.exit})`;
  }

  /** Status and output, the middle dropped past 20 KB so both the start and the latest lines show. */
  status(id: number): string | null {
    const t = this.tasks.get(id);
    if (!t) return null;
    let out = stripAnsi(t.output);
    if (out.length > TASK_STATUS_CHARS_MAX) {
      const half = TASK_STATUS_CHARS_MAX / 2;
      out = `${out.slice(0, half)}\n... [output truncated: ${TASK_STATUS_CHARS_MAX} of ${out.length} chars shown] ...\n${out.slice(-half)}`;
    }
    return `task #${t.id} ${this.state(t)}: ${t.label}\n${out === '' ? '(no output yet)' : out}`;
  }

  kill(id: number): boolean {
    const t = this.tasks.get(id);
    if (!t || !t.running) return false;
    t.killed = true;
    stop(t);
    return true;
  }

  /** Kills every running task; returns how many were running. */
  killAll(): number {
    let n = 0;
    for (const t of this.tasks.values()) {
      if (t.running) {
        n++;
        t.killed = true;
        stop(t);
      }
    }
    return n;
  }
}

function stop(t: Task): void {
  if (t.child) killGroup(t.child);
  t.abort?.abort();
}

/** Kills the child's whole process group (it was spawned detached, so it leads one). */
export function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}

export interface CommandRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** Set when the process could not start. */
  startError?: string;
  stdout: string;
  stderr: string;
  /** stdout and stderr interleaved as they arrived. */
  output: string;
}

/**
 * Runs argv in its own process group, so a timeout or cancel kills the whole tree; stdin is
 * closed, or carries `input` and then closes. Output past `keepBytes` is dropped. Cancel
 * rejects with `cancelled by user`.
 */
export function runCommand(
  argv: readonly string[],
  opts: { cwd: string; signal: AbortSignal; timeoutMs: number; keepBytes?: number; input?: string },
): Promise<CommandRun> {
  if (opts.signal.aborted) return Promise.reject(new ToolError('cancelled by user'));
  const keep = opts.keepBytes ?? Infinity;
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { cwd: opts.cwd, stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], detached: true });
    if (opts.input !== undefined) {
      child.stdin!.on('error', () => {}); // a command that exits without reading its input
      child.stdin!.end(opts.input);
    }
    const chunks: Array<{ err: boolean; b: Buffer }> = [];
    let kept = 0;
    const add = (err: boolean) => (b: Buffer) => {
      if (kept >= keep) return;
      chunks.push({ err, b });
      kept += b.length;
    };
    child.stdout!.on('data', add(false));
    child.stderr!.on('data', add(true));
    let timedOut = false;
    let cancelled = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, opts.timeoutMs);
    const onAbort = () => {
      cancelled = true;
      killGroup(child);
    };
    opts.signal.addEventListener('abort', onAbort, { once: true });
    const text = (pick: (c: { err: boolean }) => boolean) => Buffer.concat(chunks.filter(pick).map((c) => c.b)).toString('utf8');
    let settled = false;
    const settle = (finish: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal.removeEventListener('abort', onAbort);
      finish();
    };
    child.on('error', (e) => settle(() => resolve({ code: null, signal: null, timedOut: false, startError: e.message, stdout: '', stderr: '', output: '' })));
    child.on('close', (code, sig) =>
      settle(() => {
        if (cancelled) return reject(new ToolError('cancelled by user'));
        resolve({ code, signal: sig, timedOut, stdout: text((c) => !c.err), stderr: text((c) => c.err), output: text(() => true) });
      }),
    );
  });
}
