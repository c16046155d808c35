import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SWARM_CANDIDATES_MAX, SWARM_CANDIDATE_TIMEOUT_MS, SWARM_PATCH_BYTES_MAX, SWARM_TEST_TIMEOUT_MS } from '../core/limits.ts';
import { ensureStateDir } from '../workspace/state-dir.ts';
import { clearSwarm } from './clear.ts';
import { listPaths, ProjectionTrees } from './projection-tree.ts';
import {
  excludeSwarmDirs,
  PATCHES_DIR,
  repositoryRoot,
  saveRecord,
  SwarmRefusal,
  uncommittedPaths,
  WorktreeTrees,
  type CandidateTree,
  type CandidateTrees,
  type TreeKind,
} from './tree.ts';

// `rift swarm` (reference B.14): every candidate is a child `rift -p` process working the same
// task in its own tree, all at once. A child process rather than an in-process loop because the
// agent's whole assembly (configuration, approval rules, bash cwd, sandbox, code index) is bound
// to the directory it starts in, and because a candidate that crashes, loops or hangs can then
// be stopped (its process group killed) without touching the others. Each child runs the
// headless mode (`always_task`) with its own capability preflight and family prompt.
//
// Candidates run in projections of the workspace when they can start there from HEAD exactly,
// in detached git worktrees otherwise (or when asked: `--trees`); docs/swarm.md says when.

/** The reference's default pair (C.6). */
export const DEFAULT_SWARM_MODELS = ['gemma4:26b', 'gemma4:12b'];
/** The temperature of an `--explore` copy. */
export const EXPLORE_TEMPERATURE = 0.8;
/** How long a cancelled candidate gets to exit after SIGTERM before SIGKILL. */
const CANCEL_GRACE_MS = 2_000;

export interface CandidateSpec {
  /** Unique, file-name safe: the patch is `.rift/patches/<name>.patch`. */
  name: string;
  /** A model address (`provider/model` reaches another provider). */
  model: string;
  /** Set for an `--explore` copy; otherwise the configured temperature. */
  temperature?: number;
}

export type CandidateStatus = 'done' | 'preflight_failed' | 'crashed' | 'looped' | 'max_iterations' | 'timed_out' | 'failed' | 'cancelled';

export interface CandidateResult {
  name: string;
  model: string;
  temperature?: number;
  status: CandidateStatus;
  /** Why it ended so, for anything but `done`. */
  detail: string;
  filesChanged: number;
  iterations: number;
  promptTokens: number;
  outputTokens: number;
  durationMs: number;
  /** Whether the task's test command passed in the candidate's tree; null when the task names none or it did not run. */
  tests: boolean | null;
  /** `.rift/patches/<name>.patch` when the candidate changed something. */
  patch: string | null;
  diffstat: string;
}

export type SwarmEvent =
  /** Where the candidates run; `reason` says why not in projections when they run in worktrees unasked. */
  | { kind: 'trees'; trees: TreeKind; reason: string | null }
  | { kind: 'started'; name: string; model: string; tree: string }
  | { kind: 'progress'; name: string; text: string }
  | { kind: 'finished'; result: CandidateResult };

export interface SwarmOptions {
  cwd: string;
  task: string;
  candidates: CandidateSpec[];
  /** `--host`, passed on to every candidate. */
  host?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** The command that runs rift (default: this process's own program and loader flags). */
  rift?: string[];
  /** The kind of tree candidates work in; undefined: projections when they can start from HEAD there, worktrees otherwise. */
  trees?: TreeKind;
}

export interface SwarmRun {
  repo: string;
  trees: TreeKind;
  results: CandidateResult[];
  cancelled: boolean;
}

/** A model address as a file name: anything but letters, digits, `.`, `_` and `-` becomes `-`. */
export function sanitizeModel(model: string): string {
  const s = model.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[-.]+|-+$/g, '');
  return s === '' ? 'model' : s;
}

/** The candidates for `models` (unique names), with a temperature-0.8 `<name>-hot` copy of each under `explore`. */
export function candidatesFor(models: readonly string[], explore: boolean): CandidateSpec[] {
  const out: CandidateSpec[] = [];
  const taken = new Set<string>();
  const unique = (base: string) => {
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base}-${n}`;
    taken.add(name);
    return name;
  };
  for (const model of models) out.push({ name: unique(sanitizeModel(model)), model });
  if (explore) for (const c of [...out]) out.push({ name: unique(`${c.name}-hot`), model: c.model, temperature: EXPLORE_TEMPERATURE });
  if (out.length > SWARM_CANDIDATES_MAX) throw new SwarmRefusal(`${out.length} candidates asked for; a swarm runs at most ${SWARM_CANDIDATES_MAX} — name fewer with --models`);
  return out;
}

/** The task's test command: the first backquoted span that mentions `test` (`pytest -q`, `npm test`). */
export function testCommand(task: string): string | null {
  for (const m of task.matchAll(/`([^`\n]+)`/g)) if (/test/i.test(m[1])) return m[1].trim();
  return null;
}

/** Runs every candidate at once; resolves when all have ended (or, cancelled, when all are stopped and their trees removed). */
export async function runSwarm(o: SwarmOptions, onEvent: (e: SwarmEvent) => void): Promise<SwarmRun> {
  const { root: repo, head } = await repositoryRoot(o.cwd);
  ensureStateDir(repo);
  await excludeSwarmDirs(repo);
  await clearSwarm(repo);
  const patchesDir = join(repo, PATCHES_DIR);
  mkdirSync(patchesDir, { recursive: true });
  const made: CandidateTree[] = [];
  const children = new Set<ChildProcess>();
  let cancelled = o.signal?.aborted === true;
  const onAbort = () => {
    cancelled = true;
    for (const c of children) stop(c);
  };
  o.signal?.addEventListener('abort', onAbort);
  let trees: CandidateTrees | null = null;
  const removeAll = async () => {
    await Promise.all(made.splice(0).map((t) => t.remove()));
    rmSync(patchesDir, { recursive: true, force: true });
  };
  try {
    let kind: TreeKind = o.trees ?? 'projection';
    let reason: string | null = null;
    if (kind === 'projection') {
      const dirty = await uncommittedPaths(repo);
      if (dirty.length > 0) {
        reason = `the workspace has uncommitted changes (${listPaths(dirty)}), and candidates start from HEAD`;
        if (o.trees === 'projection') throw new SwarmRefusal(`${reason} while a projection copies the workspace as it is — commit or stash them, or run with --trees worktree`);
        kind = 'worktree';
      }
    }
    // Trees are made one after another (git serializes its worktree records; projections share
    // one index build), then all candidates run at once.
    const make = async (k: TreeKind) => {
      trees = k === 'projection' ? new ProjectionTrees(repo, head, o.signal) : new WorktreeTrees(repo, head);
      for (const [i, spec] of o.candidates.entries()) {
        if (cancelled) break;
        let tree: CandidateTree;
        try {
          tree = await trees.create(i + 1, spec.name);
        } catch (e) {
          if (cancelled) break;
          throw e;
        }
        made.push(tree);
        saveRecord(repo, tree.record);
      }
      await trees.close();
    };
    try {
      await make(kind);
    } catch (e) {
      // Unasked, a projection that cannot start from HEAD (or cannot be made) gives way to worktrees.
      if (kind !== 'projection' || o.trees === 'projection' || !(e instanceof Error)) throw e;
      const failed = trees as CandidateTrees | null;
      await removeAll();
      await failed?.close();
      mkdirSync(patchesDir, { recursive: true });
      kind = 'worktree';
      reason = e.message;
      await make(kind);
    }
    onEvent({ kind: 'trees', trees: kind, reason });
    const results = await Promise.all(
      o.candidates.map(async (spec, i) => {
        const tree = made[i];
        if (cancelled || !tree) return cancelledResult(spec);
        onEvent({ kind: 'started', name: spec.name, model: spec.model, tree: tree.root });
        const result = await runCandidate(o, spec, tree, patchesDir, children, () => cancelled, (text) => onEvent({ kind: 'progress', name: spec.name, text }));
        onEvent({ kind: 'finished', result });
        return result;
      }),
    );
    if (cancelled) await removeAll();
    return { repo, trees: kind, results, cancelled };
  } catch (e) {
    for (const c of children) stop(c);
    await removeAll();
    throw e;
  } finally {
    await (trees as CandidateTrees | null)?.close();
    o.signal?.removeEventListener('abort', onAbort);
  }
}

/** The swarm's environment for a candidate's processes: no inherited git redirection, plus what its tree sets. */
function candidateEnv(tree: CandidateTree): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!GIT_LOCATION.includes(k)) env[k] = v;
  return { ...env, ...tree.env };
}

/** Variables that point git at a repository other than the one it finds from its directory. */
const GIT_LOCATION = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_COMMON_DIR', 'GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_CEILING_DIRECTORIES', 'GIT_NAMESPACE'];

function cancelledResult(spec: CandidateSpec): CandidateResult {
  return { ...blank(spec), status: 'cancelled', detail: 'cancelled before it started' };
}

function blank(spec: CandidateSpec): CandidateResult {
  return {
    name: spec.name, model: spec.model, temperature: spec.temperature, status: 'done', detail: '', filesChanged: 0,
    iterations: 0, promptTokens: 0, outputTokens: 0, durationMs: 0, tests: null, patch: null, diffstat: '',
  };
}

/** SIGTERM to the candidate's process group (its bash commands too), SIGKILL after a grace period. */
function stop(child: ChildProcess): void {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const kill = (sig: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, sig);
    } catch {
      // already gone
    }
  };
  kill('SIGTERM');
  setTimeout(() => kill('SIGKILL'), CANCEL_GRACE_MS).unref();
}

interface Trace {
  outcome?: string;
  error?: string;
  iterations?: number;
  prompt_tokens?: number;
  output_tokens?: number;
}

async function runCandidate(
  o: SwarmOptions,
  spec: CandidateSpec,
  tree: CandidateTree,
  patchesDir: string,
  children: Set<ChildProcess>,
  isCancelled: () => boolean,
  progress: (text: string) => void,
): Promise<CandidateResult> {
  const result = blank(spec);
  const tracePath = join(patchesDir, `${spec.name}.trace.jsonl`);
  rmSync(tracePath, { force: true });
  const rift = o.rift ?? [process.execPath, ...process.execArgv, process.argv[1]];
  const args = [...rift.slice(1), '-p', o.task, '--json', '--model', spec.model, '--trace', tracePath];
  if (o.host) args.push('--host', o.host);
  if (spec.temperature !== undefined) args.push('--temp', String(spec.temperature));
  const started = performance.now();
  const env = candidateEnv(tree);
  const child = spawn(rift[0], args, { cwd: tree.root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    stop(child);
  }, o.timeoutMs ?? SWARM_CANDIDATE_TIMEOUT_MS);
  let stderr = '';
  let sawIteration = false;
  let pending = '';
  child.stdout!.on('data', (b: Buffer) => {
    pending += b.toString('utf8');
    let nl;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      let e: { event?: string; name?: string; text?: string; stats?: { iterations: number } };
      try {
        e = JSON.parse(line);
      } catch {
        continue;
      }
      if (e.event === 'iteration') {
        sawIteration = true;
        result.iterations++;
        progress(`iteration ${result.iterations}`);
      } else if (e.event === 'tool_start') progress(`→ ${e.name}`);
      else if (e.event === 'warning') progress(`warning: ${e.text}`);
    }
  });
  child.stderr!.on('data', (b: Buffer) => {
    stderr = (stderr + b.toString('utf8')).slice(-8192);
  });
  const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('error', (e) => {
      stderr += e.message;
      resolve({ code: null, signal: null });
    });
    child.on('close', (code, signal) => resolve({ code, signal }));
  });
  clearTimeout(timer);
  children.delete(child);
  result.durationMs = Math.round(performance.now() - started);
  const trace = readTrace(tracePath);
  rmSync(tracePath, { force: true });
  if (trace) {
    result.iterations = trace.iterations ?? result.iterations;
    result.promptTokens = trace.prompt_tokens ?? 0;
    result.outputTokens = trace.output_tokens ?? 0;
  }
  const lastLine = stderr.trim().split('\n').filter((l) => !l.startsWith('warning:')).at(-1) ?? '';
  if (isCancelled()) {
    result.status = 'cancelled';
    result.detail = 'cancelled';
  } else if (timedOut) {
    result.status = 'timed_out';
    result.detail = `stopped after ${Math.round((o.timeoutMs ?? SWARM_CANDIDATE_TIMEOUT_MS) / 1000)} s`;
  } else if (trace?.outcome) {
    const byOutcome: Record<string, CandidateStatus> = { answered: 'done', wrapped: 'done', stuck: 'looped', max_iterations: 'max_iterations', cancelled: 'cancelled', error: 'failed' };
    result.status = byOutcome[trace.outcome] ?? 'failed';
    if (result.status === 'looped') result.detail = 'kept repeating failed or refused tool calls';
    else if (result.status === 'max_iterations') result.detail = 'reached the iteration cap without a final answer';
    else if (result.status === 'failed') result.detail = trace.error ?? trace.outcome;
  } else if (exit.code === 1 && !sawIteration && /^rift: /m.test(stderr)) {
    result.status = 'preflight_failed';
    result.detail = lastLine.replace(/^rift: /, '');
  } else {
    result.status = 'crashed';
    result.detail = `${exit.signal ? `killed by ${exit.signal}` : `exited ${exit.code}`}${lastLine ? `: ${lastLine}` : ''}`;
  }
  if (result.status === 'cancelled') return result;

  const test = testCommand(o.task);
  if (test && result.status === 'done') result.tests = await runTests(test, tree.root, env);
  try {
    const diff = await tree.diff();
    result.filesChanged = diff.filesChanged;
    result.diffstat = diff.diffstat;
    if (diff.patch.length > SWARM_PATCH_BYTES_MAX) {
      result.detail ||= `its patch of ${diff.patch.length} bytes is over the ${SWARM_PATCH_BYTES_MAX}-byte limit; not saved`;
    } else if (diff.patch.length > 0) {
      const rel = join(PATCHES_DIR, `${spec.name}.patch`);
      writeFileSync(join(patchesDir, `${spec.name}.patch`), diff.patch);
      writeFileSync(join(patchesDir, `${spec.name}.diffstat`), `${diff.diffstat}\n`);
      result.patch = rel;
    }
  } catch (e) {
    result.detail ||= `its change could not be read: ${(e as Error).message}`;
  }
  return result;
}

function readTrace(path: string): Trace | null {
  if (!existsSync(path)) return null;
  const last = readFileSync(path, 'utf8').trim().split('\n').at(-1);
  try {
    return last ? (JSON.parse(last) as Trace) : null;
  } catch {
    return null;
  }
}

/** The task's test command in the candidate's tree through `sh -c`; passed when it exits 0 within the limit. */
function runTests(command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', command], { cwd, env, detached: true, stdio: 'ignore' });
    const timer = setTimeout(() => stop(child), SWARM_TEST_TIMEOUT_MS);
    child.on('error', () => resolve(false));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(code === 0);
    });
  });
}

/** The summary table, one row per candidate. */
export function summaryTable(results: readonly CandidateResult[]): string {
  const head = ['candidate', 'status', 'files', 'iters', 'tokens', 'time', 'tests'];
  const rows = results.map((r) => [
    r.name,
    r.status,
    String(r.filesChanged),
    String(r.iterations),
    String(r.promptTokens + r.outputTokens),
    `${(r.durationMs / 1000).toFixed(1)}s`,
    r.tests === null ? '-' : r.tests ? 'passed' : 'failed',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  return [line(head), ...rows.map(line)].join('\n');
}
