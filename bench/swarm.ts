// The overhead of a swarm's candidate trees: 4 candidates on a 10k-file tree — how long until
// every tree exists (start), the disk they take, and the peak memory of the process making
// them. One column per kind of tree, all made through the `CandidateTree` seam
// (src/swarm/tree.ts); projections join as a second column when they land.
//
//   node --import tsx bench/swarm.ts [--files N] [--runs N] [--no-write]
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { candidatesFor } from '../src/swarm/run.ts';
import { clearSwarm, repositoryRoot, WorktreeTrees, type CandidateTrees } from '../src/swarm/tree.ts';
import { median, seededRandom, timed, writeSection } from './lib.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOC = join(ROOT, 'docs', 'benchmarks.md');
const HEADING = '## Swarm trees (bench/swarm.ts)';
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const SELF = fileURLToPath(import.meta.url);
const CANDIDATES = 4;

/** The kinds of candidate tree compared; each makes trees for a repository at its HEAD. */
const KINDS: Record<string, (repo: string, head: string) => CandidateTrees> = {
  worktrees: (repo, head) => new WorktreeTrees(repo, head),
};

const args = process.argv.slice(2);
const flag = (name: string, dflt: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : dflt);

// Child mode: make the candidates' trees for `repo` with one kind, print the time it took.
if (args[0] === '--child') {
  const [, kind, repo] = args;
  const { head } = await repositoryRoot(repo);
  const trees = KINDS[kind](repo, head);
  const specs = candidatesFor(['m1', 'm2', 'm3', 'm4'].slice(0, CANDIDATES), false);
  const started = performance.now();
  for (const [i, s] of specs.entries()) await trees.create(i + 1, s.name);
  process.stdout.write(JSON.stringify({ startMs: performance.now() - started }));
  process.exit(0);
}

const files = flag('--files', 10_000);
const runs = flag('--runs', 3);
const write = !args.includes('--no-write');
const git = (cwd: string, ...a: string[]) => execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@example.test', ...a], { cwd, encoding: 'utf8' }).trim();

/** A repository of `files` small source files in nested folders, one commit. */
function fixture(): string {
  const repo = mkdtempSync(join(tmpdir(), 'rift-bench-swarm-'));
  const rnd = seededRandom(23);
  for (let i = 0; i < files; i++) {
    const path = join(repo, `pkg${i % 40}`, `mod${Math.floor(i / 40) % 25}`, `file${i}.py`);
    mkdirSync(dirname(path), { recursive: true });
    const n = 5 + Math.floor(rnd() * 40);
    writeFileSync(path, Array.from({ length: n }, (_, k) => `def f${i}_${k}(x):\n    return x + ${k}\n`).join('\n'));
  }
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'fixture');
  return repo;
}

const duKb = (dir: string) => Number(execFileSync('du', ['-sk', dir], { encoding: 'utf8' }).split('\t')[0]);

const repo = fixture();
try {
  const source = duKb(repo) - duKb(join(repo, '.git'));
  const rows: string[] = [];
  const results: Record<string, { startMs: number; diskKb: number; rssKb: number | null }> = {};
  for (const kind of Object.keys(KINDS)) {
    const starts: number[] = [];
    const disks: number[] = [];
    const rss: number[] = [];
    for (let r = 0; r < runs; r++) {
      await clearSwarm(repo);
      const gitBefore = duKb(join(repo, '.git'));
      const t = timed(process.execPath, ['--import', TSX, SELF, '--child', kind, repo], { timeoutMs: 600_000 });
      if (t.status !== 0) throw new Error(`${kind} child failed: ${t.stderr}`);
      starts.push(JSON.parse(t.stdout).startMs);
      disks.push(duKb(join(repo, '.rift', 'worktrees')) + duKb(join(repo, '.git')) - gitBefore);
      if (t.maxRssKb !== null) rss.push(t.maxRssKb);
    }
    await clearSwarm(repo);
    results[kind] = { startMs: median(starts), diskKb: median(disks), rssKb: rss.length ? median(rss) : null };
  }
  const kinds = Object.keys(results);
  rows.push(`| | ${kinds.join(' | ')} |`, `|---|${kinds.map(() => '---:').join('|')}|`);
  rows.push(`| start: all ${CANDIDATES} trees made | ${kinds.map((k) => `${(results[k].startMs / 1000).toFixed(2)} s`).join(' | ')} |`);
  rows.push(`| disk: the trees and their git records | ${kinds.map((k) => `${(results[k].diskKb / 1024).toFixed(1)} MiB`).join(' | ')} |`);
  rows.push(`| disk per tree, against the ${(source / 1024).toFixed(1)} MiB source | ${kinds.map((k) => `${((results[k].diskKb / CANDIDATES / source) * 100).toFixed(0)} %`).join(' | ')} |`);
  rows.push(`| peak memory of the process making them (git included) | ${kinds.map((k) => (results[k].rssKb === null ? 'n/a' : `${(results[k].rssKb / 1024).toFixed(0)} MiB`)).join(' | ')} |`);
  const body = [
    `${CANDIDATES} candidates on a ${files}-file tree (${(source / 1024).toFixed(1)} MiB of source, one commit), median of ${runs} runs, made through the \`CandidateTree\` seam exactly as \`rift swarm\` makes them (one after another: git serializes its worktree records). Start is the time until every tree exists, before any candidate process starts; memory is the peak resident set of the process making the trees (GNU time, children included). A worktree is a full checkout: its disk is the source's size again per candidate, plus an index file in \`.git/worktrees/\`. Projections are not on main yet; they join as a second column.`,
    '',
    ...rows,
  ].join('\n');
  process.stdout.write(`${body}\n`);
  if (write) writeSection(DOC, HEADING, body);
} finally {
  rmSync(repo, { recursive: true, force: true });
}
