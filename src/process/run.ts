import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';

// One bounded run of a program: started directly (no shell) in its own process group with stdin
// closed, killed with its whole group at the timeout, each stream keeping its first `keepBytes`
// while counting (and hashing) all of it up to `drainBytes`, past which the group is killed too.
// `[[hooks]]` (change/hooks.ts) and `execute` (services/execute-service.ts) run through it.

export interface Captured {
  /** The first `keepBytes` of the stream. */
  kept: Buffer;
  /** Bytes the stream carried in all. */
  total: number;
  /** SHA-256 (hex) of every byte the stream carried. */
  sha256: string;
}

export type RunOutcome =
  | { kind: 'exited'; code: number; stdout: Captured; stderr: Captured }
  | { kind: 'signalled'; signal: string; stdout: Captured; stderr: Captured }
  | { kind: 'timed_out'; stdout: Captured; stderr: Captured }
  | { kind: 'unlaunchable'; reason: string };

export interface RunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** Bytes of each stream kept. */
  keepBytes: number;
  /** Bytes of one stream after which the run is killed (its count stops there). */
  drainBytes: number;
}

function capture(keep: number, drain: number) {
  const chunks: Buffer[] = [];
  const hash = createHash('sha256');
  let kept = 0;
  let total = 0;
  return {
    push(chunk: Buffer) {
      total += chunk.length;
      hash.update(chunk);
      if (kept < keep) {
        const part = chunk.subarray(0, keep - kept);
        chunks.push(part);
        kept += part.length;
      }
    },
    get drained() {
      return total >= drain;
    },
    result(): Captured {
      return { kept: Buffer.concat(chunks), total, sha256: hash.copy().digest('hex') };
    },
  };
}

export function runBounded(program: string, args: readonly string[], o: RunOptions): Promise<RunOutcome> {
  return new Promise((resolve) => {
    const out = capture(o.keepBytes, o.drainBytes);
    const err = capture(o.keepBytes, o.drainBytes);
    let settled = false;
    let timedOut = false;
    const finish = (r: RunOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(program, args, {
        cwd: o.cwd,
        env: o.env,
        stdio: ['ignore', 'pipe', 'pipe'],
        shell: false,
        detached: true, // its own process group, so a timeout kills what it started too
      });
    } catch (e) {
      resolve({ kind: 'unlaunchable', reason: (e as NodeJS.ErrnoException).code ?? (e as Error).message });
      return;
    }
    const kill = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
      // Do not wait for pipes a surviving grandchild may hold open.
      finish({ kind: 'timed_out', stdout: out.result(), stderr: err.result() });
    }, o.timeoutMs);
    child.stdout!.on('data', (c: Buffer) => {
      out.push(c);
      if (out.drained) kill();
    });
    child.stderr!.on('data', (c: Buffer) => {
      err.push(c);
      if (err.drained) kill();
    });
    child.on('error', (e: NodeJS.ErrnoException) => finish({ kind: 'unlaunchable', reason: e.code ?? e.message }));
    child.on('close', (code, signal) => {
      if (timedOut) return;
      if (code !== null) finish({ kind: 'exited', code, stdout: out.result(), stderr: err.result() });
      else finish({ kind: 'signalled', signal: signal ?? 'unknown', stdout: out.result(), stderr: err.result() });
    });
  });
}
