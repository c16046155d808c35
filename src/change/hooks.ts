import { join } from 'node:path';
import { GlobSet } from '../core/glob.ts';
import { cutUtf8 } from '../core/lines.ts';
import { HOOK_DRAIN_BYTES_MAX, HOOK_QUOTE_BYTES_MAX } from '../core/limits.ts';
import type { HookConfig } from '../config/workspace-config.ts';
import type { Diagnostic, GuaranteeEvidence } from '../protocol/change.ts';
import { riftDiagnostic } from './refusal.ts';
import { runBounded, type Captured, type RunOutcome } from '../process/run.ts';

// `[[hooks]]` after a change lands (reference E.2 hook runtime, F.14): each hook starts
// directly (no shell, process/run.ts) in the tree root + working_directory, stdin closed,
// environment layered over rift's own, killed (with its process group) at timeout_ms; each
// stream keeps its first output_limit_bytes and reports its full size. Hooks never roll a
// change back.

export type HookOutcome = RunOutcome;

/** The changed paths that select a hook, byte-ordered; empty when it does not run. */
export function hookPaths(hook: HookConfig, changed: readonly string[]): string[] {
  const include = new GlobSet(hook.include);
  const exclude = new GlobSet(hook.exclude);
  return changed.filter((p) => (include.empty || include.matches(p)) && !exclude.matches(p));
}

/** Runs one hook; `tag` joins its environment (the change journal finds hooks a dead change left by it). */
export function runHook(root: string, hook: HookConfig, paths: readonly string[], tag: Record<string, string> = {}): Promise<HookOutcome> {
  const args = hook.changed_paths === 'append' ? [...hook.arguments, ...paths] : [...hook.arguments];
  return runBounded(hook.program, args, {
    cwd: hook.working_directory === '' ? root : join(root, hook.working_directory),
    env: { ...process.env, ...hook.environment, ...tag },
    timeoutMs: hook.timeout_ms,
    keepBytes: hook.output_limit_bytes,
    drainBytes: HOOK_DRAIN_BYTES_MAX,
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
