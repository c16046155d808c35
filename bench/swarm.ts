// The overhead of a swarm's candidate trees: 4 candidates on a 10k-file tree, in projections
// against git worktrees — how long until every tree exists (start), the disk they take, and the
// peak memory of the process making them; then what one candidate's own index costs in each.
// Every tree is made through the `CandidateTree` seam (src/swarm/), exactly as `rift swarm` makes
// them.
//
//   node --import tsx bench/swarm.ts [--files N] [--runs N] [--no-write]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Engine } from '../src/services/engine.ts';
import { clearSwarm } from '../src/swarm/clear.ts';
import { ProjectionTrees } from '../src/swarm/projection-tree.ts';
import { candidatesFor } from '../src/swarm/run.ts';
import { repositoryRoot, WorktreeTrees, type CandidateTrees } from '../src/swarm/tree.ts';
import { cpus } from 'node:os';
import { load1, median, seededRandom, timed, writeSection } from './lib.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOC = join(ROOT, 'docs', 'benchmarks.md');
const HEADING = '## Swarm trees (bench/swarm.ts)';
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const SELF = fileURLToPath(import.meta.url);
const CANDIDATES = 4;

/** The kinds of candidate tree compared; each makes trees for a repository at its HEAD. */
const KINDS: Record<string, (repo: string, head: string) => CandidateTrees> = {
  projections: (repo, head) => new ProjectionTrees(repo, head),
  worktrees: (repo, head) => new WorktreeTrees(repo, head),
};

const args = process.argv.slice(2);
const flag = (name: string, dflt: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : dflt);

// Child modes, each in a process of its own so its peak memory is its own:
//   --child KIND REPO   make the candidates' trees, print the time it took;
//   --index KIND REPO   make one tree, then build its index as the candidate's `rift -p` does
//                       on start, print how long that took and how many files it parsed;
//   --warm REPO         build the workspace's own index (a projection seeds from it).
if (args[0] === '--child' || args[0] === '--index') {
  const [mode, kind, repo] = args;
  const { head } = await repositoryRoot(repo);
  const trees = KINDS[kind](repo, head);
  if (mode === '--child') {
    const specs = candidatesFor(['m1', 'm2', 'm3', 'm4'].slice(0, CANDIDATES), false);
    const started = performance.now();
    for (const [i, s] of specs.entries()) await trees.create(i + 1, s.name);
    await trees.close();
    process.stdout.write(JSON.stringify({ startMs: performance.now() - started }));
  } else {
    const tree = await trees.create(1, 'm1');
    await trees.close();
    const started = performance.now();
    const engine = await Engine.open(tree.root, { watch: false });
    const stats = await engine.build();
    await engine.close();
    const ms = performance.now() - started;
    process.stdout.write(JSON.stringify({ ms, parsed: stats.reparsed, files: stats.files, storeKb: Math.round(statSync(join(tree.root, '.rift', 'rift.db')).size / 1024) }));
  }
  process.exit(0);
}
if (args[0] === '--warm') {
  const engine = await Engine.open(args[1], { watch: false });
  const started = performance.now();
  await engine.build();
  const ms = performance.now() - started;
  await engine.close();
  process.stdout.write(JSON.stringify({ ms }));
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

const duKb = (dir: string) => (existsSync(dir) ? Number(execFileSync('du', ['-sk', dir], { encoding: 'utf8' }).split('\t')[0]) : 0);
/** What the swarm can add to: rift's state folder and the repository's. */
const stateKb = (repo: string) => duKb(join(repo, '.rift')) + duKb(join(repo, '.git'));
const child = (...a: string[]) => {
  const t = timed(process.execPath, ['--import', TSX, SELF, ...a], { timeoutMs: 1_800_000 });
  if (t.status !== 0) throw new Error(`${a.join(' ')} failed: ${t.stderr}`);
  return { ...t, out: JSON.parse(t.stdout) as Record<string, number> };
};

const loadStart = load1();
const repo = fixture();
try {
  const source = duKb(repo) - duKb(join(repo, '.git'));
  // The workspace's first index (once per workspace, kept in .rift/rift.db), then a warm one:
  // what every swarm in projections pays before its first projection.
  const cold = child('--warm', repo).out.ms;
  const warm = child('--warm', repo).out.ms;
  const storeKb = Math.round(statSync(join(repo, '.rift', 'rift.db')).size / 1024);
  const results: Record<string, { startMs: number; cpuS: number | null; diskKb: number; rssKb: number | null; index: Record<string, number> }> = {};
  for (const kind of Object.keys(KINDS)) {
    const starts: number[] = [];
    const disks: number[] = [];
    const rss: number[] = [];
    const cpu: number[] = [];
    for (let r = 0; r < runs; r++) {
      await clearSwarm(repo);
      const before = stateKb(repo);
      const t = child('--child', kind, repo);
      starts.push(t.out.startMs);
      disks.push(stateKb(repo) - before);
      if (t.maxRssKb !== null) rss.push(t.maxRssKb);
      if (t.cpuS !== null) cpu.push(t.cpuS);
    }
    await clearSwarm(repo);
    const index = child('--index', kind, repo).out;
    await clearSwarm(repo);
    results[kind] = { startMs: median(starts), cpuS: cpu.length ? median(cpu) : null, diskKb: median(disks), rssKb: rss.length ? median(rss) : null, index };
  }
  const kinds = Object.keys(results);
  const mib = (kb: number) => `${(kb / 1024).toFixed(1)} MiB`;
  const row = (label: string, cell: (k: string) => string) => `| ${label} | ${kinds.map(cell).join(' | ')} |`;
  const rows = [
    `| | ${kinds.join(' | ')} |`,
    `|---|${kinds.map(() => '---:').join('|')}|`,
    row(`start: all ${CANDIDATES} trees made`, (k) => `${(results[k].startMs / 1000).toFixed(2)} s`),
    row('CPU time of the process making them (user + system, git included)', (k) => (results[k].cpuS === null ? 'n/a' : `${results[k].cpuS!.toFixed(2)} s`)),
    row('disk: the trees, their records and indexes', (k) => mib(results[k].diskKb)),
    row(`disk per tree, against the ${mib(source)} source`, (k) => `${((results[k].diskKb / CANDIDATES / source) * 100).toFixed(0)} %`),
    row('peak memory of the process making them (git included)', (k) => (results[k].rssKb === null ? 'n/a' : `${(results[k].rssKb / 1024).toFixed(0)} MiB`)),
    row("one candidate's index current in its tree (what its `rift -p` builds on start)", (k) => `${(results[k].index.ms / 1000).toFixed(2)} s`),
    row('files that build parsed', (k) => String(results[k].index.parsed)),
    row("that candidate's index on disk", (k) => mib(results[k].index.storeKb)),
  ];
  const body = [
    `${CANDIDATES} candidates on a ${files}-file tree (${mib(source)} of source, one commit), median of ${runs} runs, made through the \`CandidateTree\` seam exactly as \`rift swarm\` makes them (one after another). Start is the time until every tree exists, before any candidate process starts; memory is the peak resident set of the process making the trees (GNU time, children included); disk is what \`.rift/\` and \`.git/\` grew by. Filesystem: the temp folder's (${fsType(repo)}). Machine: ${cpus()[0]?.model ?? 'unknown'} × ${cpus().length}, Node ${process.version}, load average ${loadStart.toFixed(1)} at the start and ${load1().toFixed(1)} at the end: on a shared machine the wall times move with the load, the CPU times much less.`,
    '',
    `- A **worktree** is a full checkout: the source's size again per candidate, plus an index file in \`.git/worktrees/\`. Its candidate's \`rift -p\` then indexes its tree from scratch, every candidate at once.`,
    `- A **projection** copies every visible file (a copy-on-write clone on btrfs, XFS or APFS; a full copy on ext4 and tmpfs) and starts its own index as a copy of the workspace's (${mib(storeKb)} here), restamped, so its candidate parses nothing. The swarm first brings the workspace's index up to date: ${(warm / 1000).toFixed(2)} s here when it is current (included in start), ${(cold / 1000).toFixed(2)} s the first time a workspace is indexed at all (not included: once per workspace, and \`rift index\` or a running \`rift server\` has usually done it). Each projection also records its base tree through a private git index (\`.rift/patches/<name>.index\`).`,
    '',
    ...rows,
  ].join('\n');
  process.stdout.write(`${body}\n`);
  if (write) writeSection(DOC, HEADING, body);
} finally {
  rmSync(repo, { recursive: true, force: true });
}

function fsType(dir: string): string {
  try {
    return execFileSync('df', ['--output=fstype', dir], { encoding: 'utf8' }).trim().split('\n').at(-1) ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
