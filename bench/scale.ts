// The scale benchmark: rift on 1, 8 and 32 byte-distinct copies of the Python standard library
// (≈ 2,450 / 19,600 / 78,000 files), beside `ctags -R` and `rg` on the same trees in the same run.
//
//   npx tsx bench/scale.ts [--sizes 1,8,32] [--keep] [--no-write] [--no-build]
//   npx tsx bench/scale.ts --reads DIR   (the read figures alone, on a tree a --keep run left)
//
// Per size: cold `rift index` (wall, CPU, peak RSS of the process, which holds every thread rift
// starts), store bytes ÷ tree bytes, warm start, a branch switch touching 5 % of the files,
// then in-process get_symbol / search (literal and prose sets) / edit-visibility percentiles,
// and ripgrep over the same literal queries. Writes `## Scale (bench/scale.ts)` in
// docs/benchmarks.md. Needs ripgrep (`apt-get install -y ripgrep`) and ≈ 3.4 GB free for 32×;
// each tree is deleted before the next is built.

import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setLogLevel } from '../src/core/log.ts';
import { Engine } from '../src/services/engine.ts';
import {
  ctagsBinary, distinctCopies, fmtMb, forEachFile, fmtMs, load1, median, percentile, pythonStdlibRoot, riftIndexRun, seededRandom, skipStdlibNoise, sleep,
  storeBytes, timed, treeSize, writeSection, type Timed,
} from './lib.ts';
import { RELEVANCE_SET } from './relevance.ts';
import { sampleQueries } from './search.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RIFT_BIN = join(ROOT, 'bin', 'rift.js');
const DOC = join(ROOT, 'docs', 'benchmarks.md');
const HEADING = '## Scale (bench/scale.ts)';

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
};
const SIZES = (arg('--sizes') ?? '1,8,32').split(',').map(Number);
const KEEP = process.argv.includes('--keep');
const WRITE = !process.argv.includes('--no-write');
const SEED = 0x5ca1e;
const NAMES = 500;
const LITERAL_QUERIES = 100;
const PROBES = 20;
const SWITCH_SHARE = 0.05;
const RG_TIMEOUT_MS = 120_000;
/** One cold `rift index` may take this long before the run gives up on it (the target is 10 minutes). */
const COLD_TIMEOUT_MS = 7_200_000;
const TARGET = { coldMs: 600_000, warmMs: 1000, getSymbolP95: 5, searchP95: 100, rgShare: 0.2, visibilityP95: 100, storeRatio: 0.5, rssMb: 250 };

interface SizeResult {
  copies: number;
  files: number;
  bytes: number;
  ctags: Timed;
  cold: Timed;
  coldStats: Record<string, number>;
  store: number;
  warm: number[];
  switched: { files: number; run: Timed; reparsed: number };
  getSymbol: number[];
  literal: number[];
  prose: number[];
  rg: number[];
  visibility: number[];
  visibilityTimeouts: number;
  load: [number, number];
}

function ripgrepOrExit(): string {
  const r = spawnSync('rg', ['--version'], { encoding: 'utf8' });
  if (r.status !== 0) {
    process.stderr.write('ripgrep (`rg`) is required: apt-get update && apt-get install -y ripgrep\n');
    process.exit(2);
  }
  return r.stdout.split('\n')[0];
}

/** `.py` files of the tree, in a fixed order. */
function pythonFiles(dir: string): string[] {
  const out: string[] = [];
  forEachFile(dir, (p, name) => {
    if (name.endsWith('.py')) out.push(p);
  });
  return out.sort();
}

async function live(dir: string): Promise<ReadFigures> {
  const engine = await Engine.open(dir, { watch: true });
  try {
    await engine.build();
    const random = seededRandom(SEED);
    const names = (engine.indexer.store.prepared('bench.scale.names', `SELECT name FROM symbols WHERE id % 97 = 0 ORDER BY id`).all() as Array<{ name: string }>).map((r) => r.name);
    const getSymbol: number[] = [];
    for (let i = 0; i < NAMES + 20 && names.length > 0; i++) {
      const name = names[Math.floor(random() * names.length)];
      const t = performance.now();
      await engine.read.getSymbol({ name, include: ['source'] });
      if (i >= 20) getSymbol.push(performance.now() - t); // the first 20 warm the caches
    }
    const literals = sampleQueries(engine, LITERAL_QUERIES, SEED).map((q) => q.query);
    const timeSearch = async (query: string) => {
      const t = performance.now();
      await engine.search.search({ query, limit: 20 });
      return performance.now() - t;
    };
    for (const q of literals.slice(0, 10)) await timeSearch(q);
    const literal: number[] = [];
    for (const q of literals) literal.push(await timeSearch(q));
    const prose: number[] = [];
    for (const q of RELEVANCE_SET.filter((r) => r.kind === 'prose')) prose.push(await timeSearch(q.query));
    const rg: number[] = [];
    for (const q of literals) {
      const t = performance.now();
      // stdout piped and drained: ripgrep stops at the first match when it is /dev/null.
      spawnSync('rg', ['--hidden', '-g', '!.git', '-g', '!.rift', '-F', '--', q, dir], { stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 1 << 30, timeout: RG_TIMEOUT_MS });
      rg.push(performance.now() - t);
    }
    // Edit visibility: a new function appended to one file, polled until get_symbol sees it.
    const file = join(dir, 'copy-0', 'argparse.py');
    const visibility: number[] = [];
    let visibilityTimeouts = 0;
    const run = Date.now().toString(36);
    for (let i = 0; i < PROBES; i++) {
      // Unique per run: a tree kept from an earlier run (--reads) already declares that run's probes.
      const name = `scale_probe_${run}_${i}`;
      const t0 = performance.now();
      appendFileSync(file, `\ndef ${name}(): pass\n`);
      let seen = false;
      while (performance.now() - t0 < 5000) {
        if ((await engine.read.getSymbol({ name, include: [] })).hits.length > 0) {
          seen = true;
          break;
        }
        await sleep(2);
      }
      if (seen) visibility.push(performance.now() - t0);
      else visibilityTimeouts++;
      await engine.indexer.settle();
    }
    return { getSymbol, literal, prose, rg, visibility, visibilityTimeouts };
  } finally {
    await engine.close();
  }
}

async function benchSize(copies: number, stdlib: string, scratch: string): Promise<SizeResult> {
  const log = (m: string) => process.stderr.write(`[${copies}×] ${m} (load ${load1().toFixed(1)})\n`);
  const loadStart = load1();
  const dir = join(scratch, `scale-${copies}`);
  distinctCopies(stdlib, dir, copies, skipStdlibNoise);
  const size = treeSize(dir);
  log(`tree: ${size.files} files, ${(size.bytes / 1e6).toFixed(0)} MB`);
  const tags = join(scratch, 'tags.json');
  rmSync(tags, { force: true });
  const ctags = timed(ctagsBinary(), ['--output-format=json', '-f', tags, '-R', dir], { timeoutMs: 1_800_000 });
  rmSync(tags, { force: true });
  log(`ctags -R ${fmtMs(ctags.wallMs)}`);
  const cold = riftIndexRun(RIFT_BIN, dir, COLD_TIMEOUT_MS);
  const store = storeBytes(dir);
  log(`rift cold ${fmtMs(cold.t.wallMs)}, ${cold.t.cpuS} CPU-s, ${fmtMb(cold.t.maxRssKb)}, store ${(store / 1e6).toFixed(1)} MB`);
  const warm = [0, 1, 2].map(() => riftIndexRun(RIFT_BIN, dir).t.wallMs);
  log(`warm ${warm.map(fmtMs).join(', ')}`);
  // A branch switch: 5 % of the Python files change bytes.
  const random = seededRandom(SEED + copies);
  const py = pythonFiles(dir);
  const chosen = new Set<string>();
  while (chosen.size < Math.round(py.length * SWITCH_SHARE)) chosen.add(py[Math.floor(random() * py.length)]);
  for (const f of chosen) appendFileSync(f, '\n# switched branch\n');
  const sw = riftIndexRun(RIFT_BIN, dir);
  log(`switch (${chosen.size} files) ${fmtMs(sw.t.wallMs)}, re-parsed ${sw.stats.reparsed}`);
  const lv = await live(dir);
  // Logged as well as tabled: a run that ends early keeps every size it finished.
  log(
    `get_symbol p95 ${fmtMs(p95(lv.getSymbol))}; search p95 literal ${fmtMs(p95(lv.literal))}, prose ${fmtMs(p95(lv.prose))}; ` +
      `rg p95 ${fmtMs(p95(lv.rg))}; edit visible p95 ${lv.visibility.length > 0 ? fmtMs(p95(lv.visibility)) : 'n/a'} (${lv.visibilityTimeouts} timed out)`,
  );
  if (!KEEP) rmSync(dir, { recursive: true, force: true });
  return {
    copies, files: size.files, bytes: size.bytes, ctags, cold: cold.t, coldStats: cold.stats, store, warm,
    switched: { files: chosen.size, run: sw.t, reparsed: sw.stats.reparsed }, ...lv, load: [loadStart, load1()],
  };
}

const sorted = (xs: readonly number[]) => [...xs].sort((a, b) => a - b);
const p95 = (xs: readonly number[]) => percentile(sorted(xs), 95);
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
const mark = (ok: boolean) => (ok ? 'pass' : '**fail**');

type ReadFigures = Pick<SizeResult, 'getSymbol' | 'literal' | 'prose' | 'rg' | 'visibility' | 'visibilityTimeouts'>;

const percentiles = (xs: readonly number[]) => `${fmtMs(percentile(sorted(xs), 50))} / ${fmtMs(p95(xs))}`;

/** The read rows of the table, by label: the full run's and `--reads`'. */
const READ_ROWS: ReadonlyArray<[string, (r: ReadFigures) => string]> = [
  [`get_symbol p50 / p95 (${NAMES} names, source)`, (r) => percentiles(r.getSymbol)],
  [`search p50 / p95, ${LITERAL_QUERIES} literal queries`, (r) => percentiles(r.literal)],
  ['search p50 / p95, prose queries of the relevance set', (r) => percentiles(r.prose)],
  ['rg -F, same literal queries: p50 / p95', (r) => percentiles(r.rg)],
  ['search ÷ rg, total over the literal queries', (r) => `${(sum(r.literal) / sum(r.rg)).toFixed(3)}`],
  [
    `edit visible p50 / p95 (${PROBES} appends)`,
    (r) => `${r.visibility.length > 0 ? percentiles(r.visibility) : 'n/a'}${r.visibilityTimeouts ? `, ${r.visibilityTimeouts} timed out` : ''}`,
  ],
];

function riftCommit(): string {
  return spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
}

function report(results: SizeResult[], rg: string): string {
  const head = riftCommit();
  const cols = results.map((r) => `${r.copies}×`);
  const row = (label: string, f: (r: SizeResult) => string) => `| ${label} | ${results.map(f).join(' | ')} |`;
  const table = [
    `| measure | ${cols.join(' | ')} |`,
    `|---|${cols.map(() => '---:').join('|')}|`,
    row('load average (1 min) at start / end', (r) => `${r.load[0].toFixed(1)} / ${r.load[1].toFixed(1)}`),
    row('tree: files, bytes', (r) => `${r.files.toLocaleString('en')}, ${(r.bytes / 1e6).toFixed(0)} MB`),
    row('ctags -R: wall, CPU', (r) => `${fmtMs(r.ctags.wallMs)}, ${r.ctags.cpuS?.toFixed(1)} s`),
    row('rift cold: wall, CPU', (r) => `${fmtMs(r.cold.wallMs)}, ${r.cold.cpuS?.toFixed(1)} s`),
    row('rift cold CPU ÷ ctags CPU', (r) => `${((r.cold.cpuS ?? NaN) / (r.ctags.cpuS ?? NaN)).toFixed(1)}×`),
    row('rift peak RSS (one process, all threads)', (r) => fmtMb(r.cold.maxRssKb)),
    row('rift files stored / parsed / symbols', (r) => `${r.coldStats.files.toLocaleString('en')} / ${r.coldStats.parsed.toLocaleString('en')} / ${r.coldStats.symbols.toLocaleString('en')}`),
    row('store `.rift/rift.db` ÷ tree bytes', (r) => `${(r.store / 1e6).toFixed(1)} MB = ${(r.store / r.bytes).toFixed(2)}`),
    row('warm start, median of 3', (r) => fmtMs(median(r.warm))),
    row('branch switch: 5 % of files changed → re-index wall (re-parsed)', (r) => `${fmtMs(r.switched.run.wallMs)} (${r.switched.reparsed.toLocaleString('en')} of ${r.switched.files.toLocaleString('en')})`),
    row('  … ÷ (cold wall × 5 %)', (r) => `${(r.switched.run.wallMs / (r.cold.wallMs * SWITCH_SHARE)).toFixed(2)}`),
    ...READ_ROWS.map(([label, f]) => row(label, f)),
  ];
  const last = results.at(-1)!;
  const targets = [
    `| target (issue 25), at ${last.copies}× | measured | |`,
    '|---|---:|---|',
    `| cold ≤ 10 min | ${fmtMs(last.cold.wallMs)} | ${mark(last.cold.wallMs <= TARGET.coldMs)} |`,
    `| store ≤ 0.5× the tree at every size | ${Math.max(...results.map((r) => r.store / r.bytes)).toFixed(2)} | ${mark(results.every((r) => r.store / r.bytes <= TARGET.storeRatio))} |`,
    `| peak RSS ≤ 250 MB at every size | ${fmtMb(Math.max(...results.map((r) => r.cold.maxRssKb ?? 0)))} | ${mark(results.every((r) => (r.cold.maxRssKb ?? Infinity) / 1024 <= TARGET.rssMb))} |`,
    `| warm start < 1 s | ${fmtMs(median(last.warm))} | ${mark(median(last.warm) < TARGET.warmMs)} |`,
    `| get_symbol p95 < 5 ms | ${fmtMs(p95(last.getSymbol))} | ${mark(p95(last.getSymbol) < TARGET.getSymbolP95)} |`,
    `| search p95 < 100 ms (literal, prose) | ${fmtMs(p95(last.literal))}, ${fmtMs(p95(last.prose))} | ${mark(p95(last.literal) < TARGET.searchP95 && p95(last.prose) < TARGET.searchP95)} |`,
    `| search ≤ 1/5 of rg's time, same literal queries | ${(sum(last.literal) / sum(last.rg)).toFixed(3)} | ${mark(sum(last.literal) / sum(last.rg) <= TARGET.rgShare)} |`,
    `| edit visible p95 < 100 ms | ${fmtMs(p95(last.visibility))} | ${mark(last.visibilityTimeouts === 0 && p95(last.visibility) < TARGET.visibilityP95)} |`,
  ];
  return [
    `Run ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')} with \`npx tsx bench/scale.ts --sizes ${SIZES.join(',')}\`: ${availableParallelism()} cores ` +
      `(${cpus()[0]?.model.trim()}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Node ${process.version}, ${rg}, rift at \`${head}\`. ` +
      'The machine is shared: the load average beside each size says how much other work ran; compare CPU rows, not only wall.',
    '',
    ...table,
    '',
    ...targets,
    '',
    'How: copy K of the stdlib (without site-packages and __pycache__) gets a marker line appended to every file, so no two copies ' +
      'share a digest. Cold and warm are `node bin/rift.js index --json --workspace DIR` under `/usr/bin/time`; the branch switch ' +
      'appends a line to 5 % of the `.py` files (seeded) and runs the same command. The read figures come from an in-process ' +
      '`Engine` with the watcher on, after the cold build: get_symbol over names drawn from the store, search over literal ' +
      'queries drawn from lines of the indexed files (as bench/search.ts) and over the prose queries of the relevance set, and ' +
      '`rg --hidden -g !.git -g !.rift -F` spawned per literal query (stdout drained).',
  ].join('\n');
}

/** `--reads DIR`: the read figures alone, on a tree a kept run (`--keep`) built and indexed; printed, not written. */
async function readsOnly(dir: string, rg: string): Promise<void> {
  const lv = await live(dir);
  const lines = [`Reads on ${dir} (rift at ${riftCommit()}, ${rg}, load ${load1().toFixed(1)}):`, ...READ_ROWS.map(([label, f]) => `| ${label} | ${f(lv)} |`)];
  process.stdout.write(lines.join('\n') + '\n');
}

async function main(): Promise<void> {
  setLogLevel('warn');
  const rg = ripgrepOrExit();
  const reads = arg('--reads');
  if (reads !== undefined) return readsOnly(reads, rg);
  if (!process.argv.includes('--no-build')) {
    process.stderr.write('building dist/ …\n');
    spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' });
  }
  const stdlib = pythonStdlibRoot();
  const scratch = mkdtempSync(join(tmpdir(), 'rift-bench-scale-'));
  const free = statfsSync(scratch);
  process.stderr.write(`scratch ${scratch}: ${((free.bavail * free.bsize) / 2 ** 30).toFixed(1)} GiB free\n`);
  try {
    const results: SizeResult[] = [];
    for (const copies of SIZES) results.push(await benchSize(copies, stdlib, scratch));
    const body = report(results, rg);
    if (WRITE) writeSection(DOC, HEADING, body);
    process.stdout.write(`${HEADING}\n\n${body}\n`);
  } finally {
    if (!KEEP) rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
