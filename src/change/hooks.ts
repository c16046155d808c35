import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { GlobSet } from '../core/glob.ts';
import { cutUtf8 } from '../core/lines.ts';
import { HOOK_DRAIN_BYTES_MAX, HOOK_QUOTE_BYTES_MAX } from '../core/limits.ts';
import type { HookConfig } from '../config/workspace-config.ts';
import type { Diagnostic, GuaranteeEvidence } from '../protocol/change.ts';
import { riftDiagnostic } from './refusal.ts';

// `[[hooks]]` after a change lands (reference E.2 hook runtime, F.14): each hook starts
// directly (no shell) in the tree root + working_directory, stdin closed, environment layered
// over rift's own, killed (with its process group) at timeout_ms; each stream keeps its first
// output_limit_bytes and reports its full size. Hooks never roll a change back.

interface Captured {
  kept: Buffer;
  total: number;
}

export type HookOutcome =
  | { kind: 'exited'; code: number; stdout: Captured; stderr: Captured }
  | { kind: 'signalled'; signal: string; stdout: Captured; stderr: Captured }
  | { kind: 'timed_out'; stdout: Captured; stderr: Captured }
  | { kind: 'unlaunchable'; reason: string };

/** The changed paths that select a hook, byte-ordered; empty when it does not run. */
export function hookPaths(hook: HookConfig, changed: readonly string[]): string[] {
  const include = new GlobSet(hook.include);
  const exclude = new GlobSet(hook.exclude);
  return changed.filter((p) => (include.empty || include.matches(p)) && !exclude.matches(p));
}

function capture(limit: number) {
  const chunks: Buffer[] = [];
  let kept = 0;
  let total = 0;
  return {
    push(chunk: Buffer) {
      total += chunk.length;
      if (kept < limit) {
        const part = chunk.subarray(0, limit - kept);
        chunks.push(part);
        kept += part.length;
      }
    },
    get drained() {
      return total >= HOOK_DRAIN_BYTES_MAX;
    },
    result(): Captured {
      return { kept: Buffer.concat(chunks), total };
    },
  };
}

/** Runs one hook; `tag` joins its environment (the change journal finds hooks a dead change left by it). */
export function runHook(root: string, hook: HookConfig, paths: readonly string[], tag: Record<string, string> = {}): Promise<HookOutcome> {
  const args = hook.changed_paths === 'append' ? [...hook.arguments, ...paths] : [...hook.arguments];
  const cwd = hook.working_directory === '' ? root : join(root, hook.working_directory);
  return new Promise((resolve) => {
    const out = capture(hook.output_limit_bytes);
    const err = capture(hook.output_limit_bytes);
    let settled = false;
    let timedOut = false;
    const finish = (o: HookOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(hook.program, args, {
        cwd,
        env: { ...process.env, ...hook.environment, ...tag },
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
    }, hook.timeout_ms);
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

function quote(name: string, c: Captured): string {
  if (c.total === 0) return '';
  const q = cutUtf8(c.kept.toString('utf8'), HOOK_QUOTE_BYTES_MAX);
  return `; ${name} (${Buffer.byteLength(q)} of ${c.total} bytes): ${q}`;
}

export function hookPassed(o: HookOutcome): boolean {
  return o.kind === 'exited' && o.code === 0;
}

/** The `rift.hook.failed` diagnostic quoting how the hook ended and its capped output. */
export function hookFailure(hook: HookConfig, o: HookOutcome): Diagnostic {
  let how: string;
  switch (o.kind) {
    case 'exited':
      how = `exited ${o.code}`;
      break;
    case 'signalled':
      how = `killed by ${o.signal}`;
      break;
    case 'timed_out':
      how = `killed after ${hook.timeout_ms}ms`;
      break;
    default:
      how = `could not be launched: ${hook.program} (${o.reason})`;
  }
  const streams = o.kind === 'unlaunchable' ? '' : quote('stdout', o.stdout) + quote('stderr', o.stderr);
  return riftDiagnostic('error', 'rift.hook.failed', `hook ${hook.id} did not pass: ${how}${streams}`);
}

/** Evidence a passing validation hook establishes, one per configured guarantee. */
export function hookGuarantees(hook: HookConfig): GuaranteeEvidence[] {
  const scope: GuaranteeEvidence['scope'] = hook.changed_paths === 'append' ? { kind: 'reach', reach: 'request' } : { kind: 'reach', reach: 'project' };
  return hook.guarantees.map((g) => ({ kind: g.kind, scope, hook: hook.id, detail: g.detail }));
}
