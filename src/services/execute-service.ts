import { lstatSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { capabilityUnavailable, invalidField, limitExceeded, RiftError } from '../core/errors.ts';
import { EXECUTE_DRAIN_BYTES_MAX } from '../core/limits.ts';
import { projectPathViolation } from '../core/path.ts';
import type { ConfigLoader } from '../config/loader.ts';
import type { ExecutionConfig } from '../config/workspace-config.ts';
import { scrubbedEnvironment } from '../process/environment.ts';
import { findOnPath } from '../process/programs.ts';
import { runBounded, type Captured, type RunOutcome } from '../process/run.ts';
import { probeSandbox, realPath, sandboxArgv } from '../process/sandbox.ts';
import { refreshExecutionCopy } from '../workspace/exec-copy.ts';
import { STATE_DIR } from '../workspace/state-dir.ts';
import { sourcePolicy } from '../workspace/visibility.ts';
import { riftDiagnostic } from '../change/refusal.ts';
import type { Diagnostic } from '../protocol/change.ts';
import type { CapturedText, ExecuteInput, ExecuteResult } from '../protocol/execute.ts';
import { ExecLocks } from './exec-locks.ts';

// `execute` (spec "Execution"; reference A.8, F.16): a block of code run in the targeted tree's
// execution copy (workspace/exec-copy.ts), refreshed first. The language must be named exactly
// by `[execution].allow` and served by a runtime on PATH; the code is bounded by max_code, the
// run by max_timeout (the whole process group is killed) and each captured stream by
// max_output; at most max_concurrent evaluations run across every rift process on the
// workspace. The run starts with a scrubbed environment and, where bubblewrap works, inside the
// OS sandbox with the network off and only the execution copy writable; the result says which.

/** A tree an evaluation can target: its id names the execution copy `.rift/exec/<id>/`. */
export interface ExecutionTree {
  id: string;
  /** Canonical absolute root of the tree's files. */
  root: string;
}

/** Resolves the request's `projection` to the tree to run against. */
export type TreeResolver = (projection: string | undefined) => ExecutionTree;


interface Runtime {
  program: string;
  /** The program's arguments that run `source`. */
  args: (source: string) => string[];
}

/** The runtimes rift knows, by the language name `[execution].allow` and the request use. */
const RUNTIMES: Readonly<Record<string, Runtime>> = {
  javascript: { program: 'node', args: (s) => ['-e', s] },
  python: { program: 'python3', args: (s) => ['-c', s] },
  bash: { program: 'bash', args: (s) => ['-c', s] },
  sh: { program: 'sh', args: (s) => ['-c', s] },
};

export const EXECUTION_LANGUAGES = Object.keys(RUNTIMES);

/** The language's runtime program, or `capability_unavailable` saying what is missing. */
function runtimeFor(language: string, execution: ExecutionConfig): { runtime: Runtime; program: string } {
  if (!execution.allow.includes(language)) {
    throw capabilityUnavailable(`execute ${language}`, [['requires', `[execution].allow naming "${language}"`]], true);
  }
  const runtime = Object.hasOwn(RUNTIMES, language) ? RUNTIMES[language] : undefined;
  if (!runtime) throw capabilityUnavailable(`execute ${language}`, [['requires', `a runtime rift runs: one of ${EXECUTION_LANGUAGES.join(', ')}`]]);
  const program = findOnPath(runtime.program);
  if (!program) throw capabilityUnavailable(`execute ${language}`, [['runtime', runtime.program], ['requires', `${runtime.program} on the server's PATH`]], true);
  return { runtime, program };
}

/** The working directory inside the copy: a real directory reached without a symlink. */
function workingDirectory(copy: string, wd: string): string {
  let abs = copy;
  for (const segment of wd === '' ? [] : wd.split('/')) {
    abs = join(abs, segment);
    let st;
    try {
      st = lstatSync(abs);
    } catch {
      throw invalidField('block.working_directory', 'not a directory in the execution copy');
    }
    if (st.isSymbolicLink()) {
      throw new RiftError('permission_denied', [['field', 'block.working_directory'], ['path', wd], ['violation', 'symlink component in the execution copy']], { phase: 'read' });
    }
    if (!st.isDirectory()) throw invalidField('block.working_directory', 'not a directory in the execution copy');
  }
  return abs;
}

function capturedText(c: Captured): CapturedText {
  // Streaming decode holds back a character the cut split, so text never ends in U+FFFD for it.
  const text = new TextDecoder('utf-8').decode(c.kept, { stream: c.total > c.kept.length });
  return { text, captured_bytes: Buffer.byteLength(text), total_bytes: c.total, truncated: c.total > c.kept.length, digest: c.sha256.slice(0, 8) };
}

function outcomeDiagnostics(o: RunOutcome, execution: ExecutionConfig): Diagnostic[] {
  if (o.kind === 'timed_out') {
    return [riftDiagnostic('error', 'rift.execute.timed_out', `the evaluation ran past [execution].max_timeout (${execution.max_timeout} ms); its process group was killed`)];
  }
  if (o.kind === 'signalled') {
    const drained = o.stdout.total >= EXECUTE_DRAIN_BYTES_MAX || o.stderr.total >= EXECUTE_DRAIN_BYTES_MAX;
    return drained
      ? [riftDiagnostic('error', 'rift.execute.output_drained', `the evaluation wrote more than ${EXECUTE_DRAIN_BYTES_MAX} bytes to one stream; its process group was killed`)]
      : [riftDiagnostic('error', 'rift.execute.signalled', `the evaluation was killed by ${o.signal}`)];
  }
  return [];
}

export class ExecuteService {
  private readonly locks: ExecLocks;

  constructor(
    private readonly root: string,
    private readonly config: ConfigLoader,
    private readonly resolveTree: TreeResolver,
  ) {
    this.locks = new ExecLocks(root);
  }

  async execute(input: ExecuteInput): Promise<ExecuteResult> {
    const config = this.config.current().config;
    const tree = this.resolveTree(input.projection);
    const execution = config.execution;
    const wd = input.block.working_directory ?? '';
    if (wd !== '') {
      const violation = projectPathViolation(wd);
      if (violation) throw invalidField('block.working_directory', violation);
    }
    const size = Buffer.byteLength(input.block.source, 'utf8');
    if (size > execution.max_code) throw limitExceeded('execution.max_code', execution.max_code, size, [], true);
    const { runtime, program } = runtimeFor(input.language, execution);
    const release = this.locks.takeSlot(execution.max_concurrent);
    try {
      const execDir = join(this.root, STATE_DIR, 'exec');
      const refreshed = await this.locks.withCopy(tree.id, () =>
        refreshExecutionCopy(this.root, tree.root, join(execDir, tree.id), join(execDir, `${tree.id}.manifest.json`), sourcePolicy(config)),
      );
      const copy = realPath(refreshed.dir);
      const cwd = workingDirectory(copy, wd);
      const probe = probeSandbox();
      const argv = [program, ...runtime.args(input.block.source)];
      const run = probe.available ? sandboxArgv(probe.binary!, { writable: [copy], protected: [], network: false, cwd }, argv) : argv;
      const outcome = await runBounded(run[0], run.slice(1), {
        cwd,
        env: scrubbedEnvironment(),
        timeoutMs: execution.max_timeout,
        keepBytes: execution.max_output,
        drainBytes: EXECUTE_DRAIN_BYTES_MAX,
      });
      if (outcome.kind === 'unlaunchable') {
        throw capabilityUnavailable(`execute ${input.language}`, [['runtime', runtime.program], ['launch', outcome.reason]], true);
      }
      const exitCode = outcome.kind === 'exited' ? outcome.code : null;
      return {
        snapshot: { tree_revision: refreshed.treeRevision },
        language: input.language,
        result: {
          status: exitCode === 0 ? 'completed' : 'failed',
          exit_code: exitCode,
          stdout: capturedText(outcome.stdout),
          stderr: capturedText(outcome.stderr),
          diagnostics: outcomeDiagnostics(outcome, execution),
        },
        budget: { timeout_ms: execution.max_timeout, output_bytes: execution.max_output },
        sandbox: probe.available ? { kind: 'bubblewrap' } : { kind: 'none', reason: probe.reason },
      };
    } finally {
      release();
    }
  }

  /** Deletes tree `id`'s execution copy and manifest (its projection is gone), under the copy's lock. */
  async discard(id: string): Promise<void> {
    const execDir = join(this.root, STATE_DIR, 'exec');
    await this.locks.withCopy(id, async () => {
      rmSync(join(execDir, id), { recursive: true, force: true });
      rmSync(join(execDir, `${id}.manifest.json`), { force: true });
    });
  }

  close(): void {
    this.locks.close();
  }
}
