// Revision reads and symbol history on a real repository with a long history (mypy: ~13,700
// commits), measured in one run:
//   1. get_symbol at a revision: the first read (the commit's tree indexed, sharing the working
//      tree's parses for identical bytes) and the same read repeated (p50/p95);
//   2. 20 consecutive first-parent revisions read one after the other: revision 1 against
//      revisions 2–20 together (each starts from the previous snapshot and applies its diff);
//   3. a 500-revision history walk of one function beside `git log -L :<func>:<file>` over the
//      same first-parent range.
// Writes the "Revision reads and history" section of docs/benchmarks.md.
//
//   npx tsx bench/history.ts            # MYPY=<git dir> overrides the repository

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Engine } from '../src/services/engine.ts';
import { fmtMs, percentile, writeSection } from './lib.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MYPY = process.env.MYPY ?? '/work/.mirror/python+mypy/repo';
/** The function whose history is walked, and its file. */
const FUNC = { name: 'build', file: 'mypy/build.py', header: '^def build(' };
const REPEATS = 50;
const WALK = 500;

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 }).trim();

async function timedMs<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t = performance.now();
  const value = await fn();
  return { ms: performance.now() - t, value };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'rift-bench-history-'));
  try {
    git(tmpdir(), 'clone', '-q', MYPY, dir);
    const commits = Number(git(dir, 'rev-list', '--count', 'HEAD'));
    const files = git(dir, 'ls-files').split('\n').length;
    const first = git(dir, 'rev-list', '--first-parent', '-n', '41', 'HEAD').split('\n');

    let engine = await Engine.open(dir, { watch: false });
    const build = await timedMs(() => engine.build());
    await engine.close();

    // 1. First and repeated reads of one revision, in a fresh engine (the working-tree index warm on disk).
    engine = await Engine.open(dir, { watch: false });
    const rev = first[20];
    const cold = await timedMs(() => engine.read.getSymbol({ name: FUNC.name, rev, limit: 5 }));
    const repeated: number[] = [];
    for (let i = 0; i < REPEATS; i++) repeated.push((await timedMs(() => engine.read.getSymbol({ name: FUNC.name, rev, limit: 5 }))).ms);
    repeated.sort((a, b) => a - b);
    await engine.close();

    // 2. Twenty consecutive revisions, oldest first, in a fresh engine.
    engine = await Engine.open(dir, { watch: false });
    const consecutive: number[] = [];
    for (let i = 40; i > 20; i--) consecutive.push((await timedMs(() => engine.read.getSymbol({ name: FUNC.name, rev: first[i], limit: 5 }))).ms);
    const rest = consecutive.slice(1).reduce((a, b) => a + b, 0);

    // 3. The history walk against git log -L over the same first-parent range.
    const touching = git(dir, 'rev-list', '--first-parent', '-n', String(WALK + 1), 'HEAD', '--', FUNC.file).split('\n');
    const walk = await timedMs(() => engine.read.getSymbol({ name: FUNC.name, include: ['history'], limit: 1 }));
    const hit = walk.value.hits[0];
    if (hit.path !== FUNC.file || hit.symbol.name !== FUNC.name) throw new Error(`expected ${FUNC.file}:${FUNC.name}, got ${hit.path}:${hit.symbol.name}`);
    const versions = hit.history!.versions;
    const kinds = new Map<string, number>();
    for (const v of versions) kinds.set(v.kind, (kinds.get(v.kind) ?? 0) + 1);
    const range = touching.length > WALK ? `${touching[WALK]}..HEAD` : 'HEAD';
    const peer = await timedMs(async () => git(dir, 'log', '--first-parent', '--format=%H', `-L:${FUNC.header}:${FUNC.file}`, range));
    const peerCommits = peer.value.split('\n').filter((l) => /^[0-9a-f]{40}$/.test(l)).length;
    await engine.close();

    const load = loadavg().map((l) => l.toFixed(1)).join(' ');
    const body = `Run: ${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores, load ${load} (the machine is shared).
Repository: mypy (${commits} commits, ${files} files at HEAD), cloned locally; the working-tree index
built first (${fmtMs(build.ms)}), then each part in a fresh engine. Reads go through the engine's
read service (no MCP transport). \`bench/history.ts\`.

| measure | rift | peer |
|---|---|---|
| first \`get_symbol\` at a revision (20 commits back; tree indexed, working-tree parses shared) | ${fmtMs(cold.ms)} | |
| the same read repeated, p50 / p95 (${REPEATS} reads) | ${fmtMs(percentile(repeated, 50))} / ${fmtMs(percentile(repeated, 95))} | |
| 20 consecutive revisions: revision 1 | ${fmtMs(consecutive[0])} | |
| 20 consecutive revisions: revisions 2–20 together | ${fmtMs(rest)} (${rest < consecutive[0] ? 'less' : 'more'} than revision 1) | |
| history of \`${FUNC.name}\` in \`${FUNC.file}\`: ${Math.min(WALK, touching.length)} first-parent commits touching the file | ${fmtMs(walk.ms)} (${versions.length} versions: ${[...kinds].map(([k, n]) => `${n} ${k}`).join(', ')}) | \`git log -L:${FUNC.header}:${FUNC.file}\` over the same range: ${fmtMs(peer.ms)} (${peerCommits} commits) |

Targets: a repeated revision read p95 < 20 ms (${percentile(repeated, 95) < 20 ? 'met' : 'not met'}); revisions 2–20
together cheaper than revision 1 (${rest < consecutive[0] ? 'met' : 'not met'}); the history walk no slower than
\`git log -L\` (${walk.ms <= peer.ms ? 'met' : 'not met'}). Per-revision times for 2–20: ${consecutive.slice(1).map((m) => fmtMs(m)).join(', ')}.`;
    process.stdout.write(body + '\n');
    writeSection(join(ROOT, 'docs/benchmarks.md'), '## Revision reads and history', body);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
