import type { AgentConfig } from '../base/config.ts';
import { runCommand, stripAnsi, withEnv, type CommandEnv } from '../base/tasks.ts';
import type { TrustStore } from './trust.ts';
import type { AgentEvent, EventSink } from '../base/types.ts';

// Post-edit hooks (reference B.13): after each successful write, edit, replace_symbol or patch,
// every command runs `sh -c` in the project (stdin closed, its own process group, so a timeout
// or cancel kills the whole tree). A failure is appended to the tool result, so the model sees
// the broken check in the same step that broke it. One live list is shared by the agent, its
// sub-agents and the front end, so trust granted mid-session reaches the next edit.

export const HOOK_TIMEOUT_MS = 120_000;
/** Characters of a failed hook's output quoted in the tool result (its first ones: compilers report the root error first). */
export const HOOK_OUTPUT_CHARS_MAX = 4000;
/** Bytes of a hook's output kept while it runs; the rest is discarded (only the first 4000 chars are shown). */
const HOOK_OUTPUT_BYTES_KEPT = 64 * 1024;

/** What a hook run needs from the tool call: where, when to stop, and where its info lines go. */
export interface HookRunContext {
  cwd: string;
  signal: AbortSignal;
  emit: EventSink;
  /** Environment changes for the hook's shell (an isolated sub-agent's). */
  commandEnv?: CommandEnv;
}

interface HookOutcome {
  ok: boolean;
  /** The `exit N` text: the status, a signal name, `timeout` or `error`. */
  exit: string;
  output: string;
}

export class PostEditHooks {
  private readonly list: string[] = [];

  constructor(
    commands: Iterable<string> = [],
    /** Per hook; a timeout counts as a failure reported as `exit timeout`. */
    readonly timeoutMs: number = HOOK_TIMEOUT_MS,
  ) {
    for (const c of commands) this.add(c);
  }

  /**
   * The config's hooks (B.13, C.1): the user's always; a project hook once the project file is
   * trusted, or when its exact command string is in the trust store. Skipped ones are reported
   * through `note` (stderr).
   */
  static fromConfig(config: Pick<AgentConfig, 'postEditHooks' | 'projectTrusted'>, trust: TrustStore, note: (text: string) => void): PostEditHooks {
    const hooks = new PostEditHooks(config.postEditHooks.user);
    for (const command of config.postEditHooks.project) {
      if (config.projectTrusted || trust.has(command)) hooks.add(command);
      else note(`project post_edit hook skipped (not trusted): ${command} — add the exact command to ${trust.path} to run it`);
    }
    return hooks;
  }

  /** Adds a command once; an agent already running sees it at its next edit. */
  add(command: string): void {
    if (command.trim() !== '' && !this.list.includes(command)) this.list.push(command);
  }

  get commands(): readonly string[] {
    return [...this.list];
  }

  /**
   * Runs every hook after an applied edit of `path` (as the tool call named it), emitting
   * `info "hook ✓|✗ <cmd>"` per hook. Returns the report to append to the tool result: '' when
   * all passed, else one FAILED block per failing hook and the closing sentence. Cancel kills
   * the running hook and throws; the edit itself stays applied.
   */
  async afterEdit(ctx: HookRunContext, path: string): Promise<string> {
    let report = '';
    for (const command of this.commands) {
      const r = await runHook(command, ctx, this.timeoutMs);
      ctx.emit({ event: 'info', text: `hook ${r.ok ? '✓' : '✗'} ${command}` });
      if (!r.ok) report += `\n\n[post-edit hook FAILED (exit ${r.exit}): ${command}]\n${quote(r.output)}`;
    }
    if (report === '') return '';
    return `${report}\nThe edit to ${path} is applied, but the checks above now fail — fix them before moving on.`;
  }
}

/** A sub-agent's hook lines go to the session as they are (reference A.6), not as `subagent` lines. */
export function isHookInfo(e: AgentEvent): boolean {
  return e.event === 'info' && /^hook [✓✗] /.test(e.text);
}

/** At most HOOK_OUTPUT_CHARS_MAX characters, a cut marked inside that budget (never silent). */
export function quote(output: string): string {
  const text = stripAnsi(output).trimEnd();
  if (text === '') return '(no output)';
  const chars = [...text];
  if (chars.length <= HOOK_OUTPUT_CHARS_MAX) return text;
  const marker = `\n[hook output truncated at ${HOOK_OUTPUT_CHARS_MAX} chars]`;
  return chars.slice(0, HOOK_OUTPUT_CHARS_MAX - marker.length).join('') + marker;
}

async function runHook(command: string, ctx: HookRunContext, timeoutMs: number): Promise<HookOutcome> {
  const r = await runCommand(withEnv(['sh', '-c', command], ctx.commandEnv), { cwd: ctx.cwd, signal: ctx.signal, timeoutMs, keepBytes: HOOK_OUTPUT_BYTES_KEPT });
  if (r.startError !== undefined) return { ok: false, exit: 'error', output: `could not start the shell: ${r.startError}` };
  if (r.timedOut) {
    const note = `[killed after ${timeoutMs / 1000}s with its whole process tree]`;
    return { ok: false, exit: 'timeout', output: r.output.trim() === '' ? note : `${r.output.trimEnd()}\n${note}` };
  }
  return { ok: r.code === 0, exit: r.code !== null ? String(r.code) : (r.signal ?? 'unknown'), output: r.output };
}
