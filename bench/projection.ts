// Projection creation: time and disk use of `projection_create` on a 10,000-file tree, side by
// side with `cp -r` and `git worktree add` of the same tree in the same run.
//
//   npx tsx bench/projection.ts [--no-write] [--files N] [--runs N]
//
// The tree: N Python files (default 10,000) of 20–80 lines in 3-level directories, committed to
// a git repository (for the worktree). rift opens the workspace in this process, builds its
// index, and then creates (and removes) projections through `ProjectionService`, timing each
// creation; cp -r and git worktree add copy the same tree. Disk use is `du -sk` of each copy
// (a reflink-capable filesystem shares blocks that du still counts; see `df` below). The
// first read in a fresh projection (its own index build) is timed separately.
// Writes the `## Projections (bench/projection.ts)` section of docs/benchmarks.md unless --no-write.

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Engine } from '../src/services/engine.ts';
import { fmtMs, median, seededRandom, writeSection } from './lib.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOC = join(ROOT, 'docs', 'benchmarks.md');
const HEADING = '## Projections (bench/projection.ts)';
const args = process.argv.slice(2);
const write = !args.includes('--no-write');
const flag = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const FILES = Number(flag('--files') ?? 10_000);
const RUNS = Number(flag('--runs') ?? 3);

function makeTree(dir: string): number {
  const rnd = seededRandom(16);
  let bytes = 0;
  for (let i = 0; i < FILES; i++) {
    const path = join(dir, `pkg${i % 10}`, `mod${Math.floor(i / 10) % 10}`, `sub${Math.floor(i / 100) % 10}`, `f${i}.py`);
    mkdirSync(join(path, '..'), { recursive: true });
    let text = `"""Module ${i}."""\n\n`;
    const lines = 20 + Math.floor(rnd() * 60);
    for (let k = 0; k < lines; k += 4) text += `def fn_${i}_${k}(x):\n    y = x * ${k}\n    return y + ${i}\n\n`;
    writeFileSync(path, text);
    bytes += Buffer.byteLength(text);
  }
  return bytes;
}

const du = (dir: string) => Number(execFileSync('du', ['-sk', dir]).toString().split('\t')[0]);
const git = (cwd: string, ...a: string[]) => execFileSync('git', a, { cwd, stdio: ['ignore', 'ignore', 'inherit'] });

function timeMs(work: () => void): number {
  const t = performance.now();
  work();
  return performance.now() - t;
}

const base = mkdtempSync(join(tmpdir(), 'rift-bench-projection-'));
const tree = join(base, 'tree');
mkdirSync(tree);
const bytes = makeTree(tree);
git(tree, 'init', '-q');
git(tree, 'add', '-A');
git(tree, '-c', 'user.name=bench', '-c', 'user.email=bench@localhost', 'commit', '-qm', 'tree');
const fsType = execFileSync('df', ['-T', tree]).toString().trim().split('\n')[1].split(/\s+/)[1];

const engine = await Engine.open(tree, { watch: false });
await engine.build();

const rift: number[] = [];
let riftKb = 0;
let indexKb = 0;
let firstReadMs = 0;
for (let r = 0; r < RUNS; r++) {
  const t = performance.now();
  const p = await engine.projections.create('bench');
  rift.push(performance.now() - t);
  if (r === 0) {
    indexKb = du(join(p.path, '.rift'));
    riftKb = du(p.path) - indexKb;
    const q = performance.now();
    await engine.projections.read(p.id, null, (e) => e.read.getSymbol({ name: 'fn_1_0' }));
    firstReadMs = performance.now() - q;
  }
  await engine.projections.remove(p.id);
}
await engine.close();

const cp: number[] = [];
let cpKb = 0;
for (let r = 0; r < RUNS; r++) {
  const dest = join(base, `cp-${r}`);
  cp.push(timeMs(() => execFileSync('cp', ['-r', tree, dest])));
  if (r === 0) cpKb = du(dest) - du(join(dest, '.git')) - du(join(dest, '.rift'));
  rmSync(dest, { recursive: true, force: true });
}

const wt: number[] = [];
let wtKb = 0;
for (let r = 0; r < RUNS; r++) {
  const dest = join(base, `wt-${r}`);
  wt.push(timeMs(() => git(tree, 'worktree', 'add', '-q', '--detach', dest)));
  if (r === 0) wtKb = du(dest);
  git(tree, 'worktree', 'remove', '--force', dest);
}
rmSync(base, { recursive: true, force: true });

const mb = (kb: number) => `${(kb / 1024).toFixed(1)} MB`;
const body = `${FILES.toLocaleString('en-US')} Python files (${(bytes / 1024 / 1024).toFixed(1)} MB of source) on ${fsType}; median of ${RUNS} runs each, in one run on the same tree.
\`cp -r\` copies the tree with its \`.git\` and \`.rift\` (its disk use below counts the source files only).

| copy | create (median) | disk use |
|---|---|---|
| \`projection_create\` | ${fmtMs(median(rift))} | ${mb(riftKb)} |
| \`cp -r\` | ${fmtMs(median(cp))} | ${mb(cpKb)} |
| \`git worktree add\` | ${fmtMs(median(wt))} | ${mb(wtKb)} |

A projection's own index starts as a copy of the workspace's, restamped for the copies (${mb(indexKb)} more, in its \`.rift/\`), so its first read parses nothing: ${fmtMs(firstReadMs)} for the first \`get_symbol\` in a fresh projection.
${fsType === 'ext4' ? 'ext4 has no reflinks, so `COPYFILE_FICLONE` falls back to a full copy here; on btrfs or XFS with reflinks the copies share blocks until written.' : ''}
A projection copies the visible files only (what rift indexes), hashing each copy for the manifest; \`git worktree add\` checks out every tracked file.
`;
console.log(body);
if (write) writeSection(DOC, HEADING, body);
