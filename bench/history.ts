// Revision reads and symbol history on a real repository with a long history, measured in one
// run:
//   1. get_symbol at a revision: the first read (the commit's tree indexed, sharing the working
//      tree's parses for identical bytes) and the same read repeated (p50/p95);
//   2. 20 consecutive first-parent revisions read one after the other: revision 1 against
//      revisions 2–20 together (each starts from the previous snapshot and applies its diff);
//   3. a 500-revision history walk of a top-level function and of a method, each beside
//      `git log -L :<func>:<file>` over the same first-parent range, with where the walk spent
//      its time (the log, blob reads, parses) from its `history.walk` log event.
// Writes the "Revision reads and history" section of docs/benchmarks.md.
//
// The repositories (each measured in turn, one table each): mypy (~13,700 commits) at its mirror,
// or the clones named by HISTORY_REPO (comma-separated). Without mypy, generate one by replaying
// changes onto the Python standard library's real files (bench/history-repo.ts: inspect.py's
// history):
//
//   npx tsx bench/history-repo.ts /tmp/history-repo
//   HISTORY_REPO=/tmp/history-repo,/work/.mirror/python+mypy/repo npx tsx bench/history.ts
//   npx tsx bench/history.ts            # mypy at its mirror

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { addLogSink, type LogFields } from '../src/core/log.ts';
import { Engine } from '../src/services/engine.ts';
import { HISTORY_FILE, HISTORY_FUNCTION, HISTORY_METHOD } from './history-repo.ts';
import { fmtMs, percentile, writeSection } from './lib.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const REPOS = (process.env.HISTORY_REPO ?? process.env.MYPY ?? '/work/.mirror/python+mypy/repo').split(',');

/** A declaration whose history is walked: its qualified name, its file, and git's funcname regex for it. */
interface Walked {
  label: string;
  name: string;
  file: string;
  header: string;
}

/** What is walked in each repository, found by the file it holds. */
const CASES: Record<string, { repository: string; function: Walked; method: Walked }> = {
  'mypy/build.py': {
    repository: 'mypy',
    function: { label: 'top-level function', name: 'build', file: 'mypy/build.py', header: '^def build(' },
    method: { label: 'method', name: 'State.parse_file', file: 'mypy/build.py', header: '^    def parse_file(' },
  },
  [HISTORY_FILE]: {
    repository: 'the Python standard library with a replayed history (bench/history-repo.ts)',
    function: { label: 'top-level function', name: HISTORY_FUNCTION, file: HISTORY_FILE, header: `^def ${HISTORY_FUNCTION}(` },
    method: { label: 'method', name: HISTORY_METHOD, file: HISTORY_FILE, header: `^    def ${HISTORY_METHOD.split('.').pop()}(` },
  },
};
const REPEATS = 50;
const WALK = 500;
/** Fresh engines each walk is measured in (the median is reported), and runs of `git log -L`. */
const ROUNDS = 3;

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 }).trim();

async function timedMs<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t = performance.now();
  const value = await fn();
  return { ms: performance.now() - t, value };
}

/** One history walk through the read service, with where it spent its time (its `history.walk` event). */
async function walkOnce(engine: Engine, w: Walked): Promise<{ ms: number; kinds: string; spent: string }> {
  const events: LogFields[] = [];
  const remove = addLogSink((e) => {
    if (e.target === 'history.walk') events.push(e.fields);
  });
  const walk = await timedMs(() => engine.read.getSymbol({ name: w.name, include: ['history'], limit: 1 }));
  remove();
  const hit = walk.value.hits[0];
  if (hit?.path !== w.file || hit.symbol.name !== w.name) throw new Error(`expected ${w.file}:${w.name}, got ${hit?.path}:${hit?.symbol.name}`);
  const versions = hit.history!.versions;
  const kinds = new Map<string, number>();
  for (const v of versions) kinds.set(v.kind, (kinds.get(v.kind) ?? 0) + 1);
  const s = events[0] ?? {};
  return {
    ms: walk.ms,
    kinds: `${versions.length} versions: ${[...kinds].map(([k, n]) => `${n} ${k}`).join(', ')}`,
    spent: `log ${fmtMs(Number(s.log_ms))}, ${s.fetched} blobs read in ${fmtMs(Number(s.fetch_ms))}, ${s.parsed} parsed (${s.alone} of them a part alone, ${s.nested} of those its own lines) in ${fmtMs(Number(s.parse_ms))}`,
  };
}

/** `git log -L` over the walk's first-parent range: its time and the commits it names. */
async function logL(dir: string, w: Walked): Promise<{ ms: number; commits: number; range: string }> {
  const touching = git(dir, 'rev-list', '--first-parent', '-n', String(WALK + 1), 'HEAD', '--', w.file).split('\n');
  const range = touching.length > WALK ? `${touching[WALK]}..HEAD` : 'HEAD';
  const peer = await timedMs(async () => git(dir, 'log', '--first-parent', '--format=%H', `-L:${w.header}:${w.file}`, range));
  return { ms: peer.ms, commits: peer.value.split('\n').filter((l) => /^[0-9a-f]{40}$/.test(l)).length, range: String(Math.min(WALK, touching.length)) };
}

/** An engine as a server runs it, its parse workers ready and, when `settled`, done warming their parsers (src/syntax/warm.ts). */
async function servingEngine(dir: string, settled: boolean): Promise<Engine> {
  const warmed: LogFields[] = [];
  const remove = addLogSink((e) => {
    if (e.target === 'parse.warm') warmed.push(e.fields);
  });
  const engine = await Engine.open(dir, { watch: true });
  await engine.read.getSymbol({ name: '__bench_none__', limit: 1, include: [] });
  const workers = engine.indexer.workers()!;
  await Promise.race([workers.ready(), new Promise((r) => setTimeout(r, 10_000).unref())]);
  for (let waited = 0; settled && warmed.length < workers.size && waited < 5_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
  remove();
  return engine;
}

/** One repository measured: its table and the targets' verdicts. */
async function measure(REPO: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'rift-bench-history-'));
  try {
    git(tmpdir(), 'clone', '-q', REPO, dir);
    const held = Object.keys(CASES).find((f) => git(dir, 'ls-files', '--', f) !== '');
    if (!held) throw new Error(`${REPO} holds none of ${Object.keys(CASES).join(', ')}; see this file's header`);
    const { repository, function: func, method } = CASES[held];
    // git log -L ends a function at the next funcname line: Python's driver makes that the next
    // def, as rift's declaration ends, instead of the next unindented line.
    writeFileSync(join(dir, '.git/info/attributes'), '*.py diff=python\n');
    const commits = Number(git(dir, 'rev-list', '--count', 'HEAD'));
    const merges = Number(git(dir, 'rev-list', '--count', '--merges', 'HEAD'));
    const files = git(dir, 'ls-files').split('\n').length;
    const first = git(dir, 'rev-list', '--first-parent', '-n', '41', 'HEAD').split('\n');

    let engine = await Engine.open(dir, { watch: false });
    const build = await timedMs(() => engine.build());
    await engine.close();

    // 1. First and repeated reads of one revision, in a fresh engine (the working-tree index warm on disk).
    engine = await Engine.open(dir, { watch: false });
    const rev = first[20];
    const cold = await timedMs(() => engine.read.getSymbol({ name: func.name, rev, limit: 5 }));
    const repeated: number[] = [];
    for (let i = 0; i < REPEATS; i++) repeated.push((await timedMs(() => engine.read.getSymbol({ name: func.name, rev, limit: 5 }))).ms);
    repeated.sort((a, b) => a - b);
    await engine.close();

    // 2. Twenty consecutive revisions, oldest first, in a fresh engine.
    engine = await Engine.open(dir, { watch: false });
    const consecutive: number[] = [];
    for (let i = 40; i > 20; i--) consecutive.push((await timedMs(() => engine.read.getSymbol({ name: func.name, rev: first[i], limit: 5 }))).ms);
    const rest = consecutive.slice(1).reduce((a, b) => a + b, 0);

    await engine.close();

    // 3. The history walks against git log -L over the same first-parent range, each walk the
    // first of a fresh engine as a server runs it (parse workers ready, the walk's segments
    // parsed there side by side), whose workers have warmed their parsers as a server's do in
    // its first moments (src/syntax/warm.ts); the method's walk comes second in the same engine.
    // Median of ROUNDS rounds on each side. Then one walk at once, before the warm-up.
    // The repository's first walk: no commit-graph in .rift/git yet (the walk starts writing
    // it) and the workers not warmed. The rounds come once the graph is written.
    engine = await servingEngine(dir, false);
    const firstEver = await walkOnce(engine, func);
    await engine.close();
    for (let waited = 0; !existsSync(join(dir, '.rift', 'git', 'info', 'rift-graph-head')) && waited < 120_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
    const runs = new Map<Walked, Array<{ ms: number; kinds: string; spent: string }>>([[func, []], [method, []]]);
    const peers = new Map<Walked, Array<{ ms: number; commits: number; range: string }>>([[func, []], [method, []]]);
    for (let round = 0; round < ROUNDS; round++) {
      engine = await servingEngine(dir, true);
      for (const w of [func, method]) runs.get(w)!.push(await walkOnce(engine, w));
      await engine.close();
      for (const w of [func, method]) peers.get(w)!.push(await logL(dir, w));
    }
    engine = await servingEngine(dir, false);
    const atOnce = await walkOnce(engine, func);
    await engine.close();
    const median = <T extends { ms: number }>(xs: T[]): T => [...xs].sort((a, b) => a.ms - b.ms)[Math.floor(xs.length / 2)];
    const walks = [func, method].map((w) => {
      const mine = median(runs.get(w)!);
      const peer = median(peers.get(w)!);
      const all = (xs: Array<{ ms: number }>) => xs.map((x) => fmtMs(x.ms)).join(', ');
      return `| history of the ${w === func ? 'top-level function' : 'method'} \`${w.name}\` in \`${w.file}\`: ${peer.range} first-parent commits touching the file | ${fmtMs(mine.ms)} (median of ${all(runs.get(w)!)}; ${mine.kinds}; ${mine.spent}) | \`git log -L:${w.header}:${w.file}\` over the same range: ${fmtMs(peer.ms)} (median of ${all(peers.get(w)!)}; ${peer.commits} commits; target ${mine.ms <= peer.ms ? 'met' : 'not met'}) |`;
    });
    walks.push(`| the top-level function's walk at once, its workers ready but not yet warmed (the first moments of a server) | ${fmtMs(atOnce.ms)} (${atOnce.spent}) | |`);
    walks.push(`| the same walk as the repository's first (no commit-graph in \`.rift/git\` yet, workers not warmed) | ${fmtMs(firstEver.ms)} (${firstEver.spent}) | |`);

    const load = loadavg().map((l) => l.toFixed(1)).join(' ');
    const body = `Run: ${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores, load ${load} (the machine is shared).
Repository: ${repository} (${commits} commits, ${merges} of them merges; ${files} files at HEAD), cloned
locally; the working-tree index built first (${fmtMs(build.ms)}), then each part in a fresh engine.
Reads go through the engine's read service (no MCP transport); the walks run in an engine with
parse workers, as a server's do, and their blob-read and parse times add up both segments, which
run side by side. The function's walk is the engine's first (its blob readers start cold, its
workers have parsed nothing but the warm-up samples every serving engine's idle workers parse in
its first moments); the method's, in the same file, comes second. Each is the median of
${ROUNDS} fresh engines, \`git log -L\` the median of ${ROUNDS} runs, after a first walk in the
repository had rift write its commit-graph (\`.rift/git\`, docs/mcp.md "History"); the last rows
are a walk sent before the warm-up, and that first walk. \`git log -L\` runs with \`*.py diff=python\`, so its range ends where the declaration
does. \`bench/history.ts\`.

| measure | rift | peer |
|---|---|---|
| first \`get_symbol\` at a revision (20 commits back; tree indexed, working-tree parses shared) | ${fmtMs(cold.ms)} | |
| the same read repeated, p50 / p95 (${REPEATS} reads) | ${fmtMs(percentile(repeated, 50))} / ${fmtMs(percentile(repeated, 95))} | |
| 20 consecutive revisions: revision 1 | ${fmtMs(consecutive[0])} | |
| 20 consecutive revisions: revisions 2–20 together | ${fmtMs(rest)} (${rest < consecutive[0] ? 'less' : 'more'} than revision 1) | |
${walks.join('\n')}

Targets: a repeated revision read p95 < 20 ms (${percentile(repeated, 95) < 20 ? 'met' : 'not met'}); revisions 2–20
together cheaper than revision 1 (${rest < consecutive[0] ? 'met' : 'not met'}); each history walk no slower than
\`git log -L\` (see its row). Per-revision times for 2–20: ${consecutive.slice(1).map((m) => fmtMs(m)).join(', ')}.`;
    process.stdout.write(body + '\n');
    return body;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const bodies: string[] = [];
  for (const repo of REPOS) bodies.push(await measure(repo));
  writeSection(join(ROOT, 'docs/benchmarks.md'), '## Revision reads and history', bodies.join('\n\n'));
}

await main();
