import { judge } from '../swarm/judge.ts';
import { merge } from '../swarm/merge.ts';
import { candidatesFor, DEFAULT_SWARM_MODELS, runSwarm, summaryTable, type SwarmEvent } from '../swarm/run.ts';
import { SwarmRefusal, type TreeKind } from '../swarm/tree.ts';
import { parse, UsageError } from './args.ts';

// `rift swarm "<task>"` and `rift merge <name>` (docs/swarm.md, reference B.14).

export const SWARM_HELP = `rift swarm "<task>" [--models a,b,…] [--explore] [--judge MODEL] [--trees KIND] [--host URL] [--no-tui]

Runs the task with every model at once, each in its own copy of the repository at HEAD (a
projection under .rift/projections/, or a detached git worktree under .rift/worktrees/), and
saves each candidate's change as .rift/patches/<name>.patch (with a diffstat). The workspace is
untouched until \`rift merge <name>\`.

  --models a,b,…   candidate models (default ${DEFAULT_SWARM_MODELS.join(',')}); provider/model reaches
                   another provider
  --explore        add a temperature-0.8 copy <name>-hot of each candidate
  --judge MODEL    a model picks the best patch: prints JUDGE: winner=<name|none> and its reason
  --trees KIND     projection or worktree (default: projections when the workspace is at HEAD
                   and a projection holds all of it, worktrees otherwise)
  --host URL       the model server for every candidate (default: the configured host)
  --no-tui         plain progress lines (also when stdout is not a terminal)

Needs a git repository with a commit. A test command in backquotes in the task (\`npm test\`)
is run in each candidate's tree. Ctrl-C stops every candidate and removes their trees.
`;

export const MERGE_HELP = `rift merge <name> [--cleanup]

Applies candidate <name>'s change to the workspace. A candidate that ran in a projection is
published from it: a file the workspace changed since the swarm started refuses, even where
the edits do not overlap. Otherwise its saved patch (.rift/patches/<name>.patch) is applied
with \`git apply --3way\` semantics. A conflict refuses and changes nothing.

  --cleanup        afterwards remove every candidate tree and saved patch
`;

const SWARM_OPTIONS = {
  models: { type: 'string' },
  explore: { type: 'boolean' },
  judge: { type: 'string' },
  trees: { type: 'string' },
  host: { type: 'string' },
  'no-tui': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function runSwarmCommand(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(SWARM_HELP);
    return 0;
  }
  const { values, positionals } = parse(argv, SWARM_OPTIONS, 1);
  const task = positionals[0];
  if (task.trim() === '') throw new UsageError('rift swarm needs a non-empty task');
  const models = values.models === undefined ? DEFAULT_SWARM_MODELS : values.models.split(',').map((m) => m.trim()).filter(Boolean);
  if (models.length === 0) throw new UsageError('--models names no model');
  if (values.judge !== undefined && values.judge.trim() === '') throw new UsageError('--judge needs a model');
  if (values.trees !== undefined && values.trees !== 'projection' && values.trees !== 'worktree') throw new UsageError(`--trees is projection or worktree, not '${values.trees}'`);
  const out = (s: string) => process.stdout.write(s);
  const ctl = new AbortController();
  const onSigint = () => {
    process.stderr.write('rift swarm: cancelling every candidate…\n');
    ctl.abort();
  };
  process.on('SIGINT', onSigint);
  try {
    const candidates = candidatesFor(models, values.explore === true);
    const live = process.stdout.isTTY === true && values['no-tui'] !== true;
    const trees = values.trees as TreeKind | undefined;
    let where = '';
    const show = live ? livePanel(candidates.map((c) => c.name), out) : plainProgress(out);
    const run = await runSwarm({ cwd: process.cwd(), task, candidates, host: values.host, signal: ctl.signal, trees }, (e) => {
      if (e.kind === 'trees') where = treesLine(e.trees, e.reason);
      show(e);
    });
    if (run.cancelled) {
      process.stderr.write('rift swarm: cancelled; every candidate tree was removed\n');
      return 130;
    }
    out(`\n${live ? `${where}\n` : ''}${summaryTable(run.results)}\n`);
    for (const r of run.results) {
      if (r.detail) out(`${r.name}: ${r.detail}\n`);
      if (r.patch) out(`${r.name}: ${r.patch}\n${r.diffstat.replace(/^/gm, '  ')}\n`);
    }
    if (values.judge) {
      const v = await judge({ cwd: process.cwd(), repo: run.repo, task, model: values.judge, host: values.host, signal: ctl.signal }, run.results);
      out(v.winner === null ? `JUDGE: ${v.reason}\n` : `JUDGE: winner=${v.winner}\n${v.reason}\n`);
      if (v.winner && v.winner !== 'none') out(`apply it with: rift merge ${v.winner}\n`);
    } else if (run.results.some((r) => r.patch)) out('apply one with: rift merge <name>\n');
    return run.results.some((r) => r.status === 'done') ? 0 : 1;
  } catch (e) {
    if (e instanceof SwarmRefusal) {
      process.stderr.write(`rift swarm: ${e.message}\n`);
      return 1;
    }
    throw e;
  } finally {
    process.off('SIGINT', onSigint);
  }
}

/** Where the candidates run, and why not in projections when that was not asked for. */
function treesLine(trees: TreeKind, reason: string | null): string {
  return trees === 'projection' ? 'candidates run in projections (.rift/projections/)' : `candidates run in git worktrees (.rift/worktrees/)${reason ? `: ${reason}` : ''}`;
}

function plainProgress(out: (s: string) => void): (e: SwarmEvent) => void {
  return (e) => {
    if (e.kind === 'trees') out(`${treesLine(e.trees, e.reason)}\n`);
    else if (e.kind === 'started') out(`[${e.name}] started (${e.model}) in ${e.tree}\n`);
    else if (e.kind === 'progress') out(`[${e.name}] ${e.text}\n`);
    else out(`[${e.result.name}] ${e.result.status}${e.result.detail ? `: ${e.result.detail}` : ''}\n`);
  };
}

/** On a terminal: one column per candidate (name, status, latest step), redrawn in place. */
function livePanel(names: readonly string[], out: (s: string) => void): (e: SwarmEvent) => void {
  const cells = new Map(names.map((n) => [n, { status: 'waiting', last: '' }]));
  let drawn = false;
  const draw = () => {
    const w = Math.max(10, Math.floor((process.stdout.columns || 80) / names.length));
    const cell = (t: string) => (t.length > w - 1 ? `${t.slice(0, w - 2)}…` : t).padEnd(w);
    const rows = [names.map(cell), names.map((n) => cell(cells.get(n)!.status)), names.map((n) => cell(cells.get(n)!.last))];
    out(`${drawn ? '\x1b[3A' : ''}${rows.map((r) => `\x1b[2K${r.join('').trimEnd()}`).join('\n')}\n`);
    drawn = true;
  };
  draw();
  return (e) => {
    if (e.kind === 'trees') return;
    const cellOf = cells.get(e.kind === 'finished' ? e.result.name : e.name);
    if (!cellOf) return;
    if (e.kind === 'started') cellOf.status = 'running';
    else if (e.kind === 'progress') cellOf.last = e.text;
    else {
      cellOf.status = e.result.status;
      cellOf.last = `${e.result.filesChanged} file(s)`;
    }
    draw();
  };
}

export async function runMergeCommand(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(MERGE_HELP);
    return 0;
  }
  const { values, positionals } = parse(argv, { cleanup: { type: 'boolean' } }, 1);
  try {
    const r = await merge(process.cwd(), positionals[0], values.cleanup === true);
    const how = r.via === 'publish' ? `published from projection ${r.projection}` : `applied with git apply --3way semantics${r.note ? ` (${r.note})` : ''}`;
    process.stdout.write(`merged ${positionals[0]}: ${r.files.length} file(s): ${r.files.join(', ')}\n${how}\n${r.cleaned ? 'removed every candidate tree and patch\n' : ''}`);
    return 0;
  } catch (e) {
    if (e instanceof SwarmRefusal) {
      process.stderr.write(`rift merge: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}
