// The search benchmark: rift's `search` beside ripgrep on the Python standard library
// (without site-packages), in the same run, plus the relevance set of bench/relevance.ts.
//
//   npx tsx bench/search.ts [--no-write] [--keep]
//
// 1. Copies the stdlib to a temp dir, builds rift's index there in-process (cold) and reports
//    the index size after a WAL checkpoint against the bytes of the files rift indexed.
// 2. Relevance: every query of bench/relevance.ts through `search` (limit 10), over the whole
//    tree and over the relevance test's subset (indexed separately): MRR@10,
//    recall@10, and the queries whose answer is not in the top 10 with rift's top 3.
// 3. Latency: 200 literal queries drawn with a seeded PRNG from lines of the indexed files
//    (single identifiers and 2–3 word phrases), each answered by `search` (limit 20,
//    in-process) and by `rg --hidden -g '!.git' -g '!.rift' -F -- QUERY DIR` (spawned; wall),
//    each tool in its own pass, then interleaved (rg, then search) as a separate row.
// Writes the `## Search (bench/search.ts)` section of docs/benchmarks.md (unless --no-write)
// and prints it. Needs ripgrep: `apt-get update && apt-get install -y ripgrep`.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setLogLevel } from '../src/core/log.ts';
import { Engine } from '../src/services/engine.ts';
import { copyTree, fmtMs, percentile, seededRandom, treeSize, writeSection } from './lib.ts';
import { RELEVANCE_SET, TEST_SUBSET, answerIndexed, copyRelevanceSubset, label, metrics, pythonStdlib, runRelevance, type Metrics, type RelevanceQuery, type Scored } from './relevance.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOC = join(ROOT, 'docs', 'benchmarks.md');
const HEADING = '## Search (bench/search.ts)';

const WRITE = !process.argv.includes('--no-write');
const KEEP = process.argv.includes('--keep');
const SEED = 0x5ea4c;
const LATENCY_QUERIES = 200;
const WARMUP_QUERIES = 10;
const SEARCH_LIMIT = 20;
const RELEVANCE_K = 10;
const RG_TIMEOUT_MS = 30_000;
/** Bounds the sampler: attempts to draw one more distinct query before giving up. */
const SAMPLE_ATTEMPTS_MAX = 100_000;
const TARGET = { mrr: 0.6 };

// ---------------------------------------------------------------------------------------------

function ripgrep(): string {
  const r = spawnSync('rg', ['--version'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    console.error('ripgrep (`rg`) is required for this benchmark and was not found on PATH.');
    console.error('Install it with: apt-get update && apt-get install -y ripgrep   (or: brew install ripgrep, cargo install ripgrep)');
    process.exit(2);
  }
  return r.stdout.split('\n')[0].trim();
}

function stdlibOrExit(): string {
  const found = pythonStdlib();
  if ('error' in found) {
    console.error(`python3 is required to locate the Python standard library: ${found.error}`);
    process.exit(2);
  }
  return found.root;
}

function fileSize(path: string): number {
  return existsSync(path) ? statSync(path).size : 0;
}

// ---------------------------------------------------------------------------------------------
// Query sampling

const utf8 = new TextDecoder('utf-8', { fatal: false });
const IDENT = /[A-Za-z_][A-Za-z0-9_]*/g;
// Two or three words separated by single spaces, as they occur on the line.
const PHRASE = /[A-Za-z][A-Za-z0-9_]*(?: [A-Za-z][A-Za-z0-9_]*){1,2}/g;

export interface LatencyQuery {
  query: string;
  kind: 'identifier' | 'phrase';
}

/** 200 distinct literal queries from lines of the indexed files: half identifiers, half phrases. */
export function sampleQueries(engine: Engine, count: number, seed: number): LatencyQuery[] {
  const store = engine.indexer.store;
  const files = store.files().sort((a, b) => (a.path < b.path ? -1 : 1));
  const rand = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const seen = new Set<string>();
  const out: LatencyQuery[] = [];
  const lineCache = new Map<number, string[]>();
  for (let attempt = 0; attempt < SAMPLE_ATTEMPTS_MAX && out.length < count; attempt++) {
    const f = pick(files);
    let lines = lineCache.get(f.id);
    if (!lines) {
      const bytes = store.indexedBytes(f.path);
      lines = bytes ? utf8.decode(bytes).split('\n') : [];
      lineCache.set(f.id, lines);
    }
    if (lines.length === 0) continue;
    const line = pick(lines);
    const kind: LatencyQuery['kind'] = out.length % 2 === 0 ? 'identifier' : 'phrase';
    const candidates =
      kind === 'identifier'
        ? [...line.matchAll(IDENT)].map((m) => m[0]).filter((w) => w.length >= 4 && w.length <= 40)
        : [...line.matchAll(PHRASE)].map((m) => m[0]).filter((p) => p.length >= 8 && p.length <= 60);
    if (candidates.length === 0) continue;
    const query = pick(candidates);
    if (seen.has(query)) continue;
    seen.add(query);
    out.push({ query, kind });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Measures

interface Latency {
  /** `search` per query, all 200 in a row. */
  rift: number[];
  /** `rg` per query, all 200 in a row. */
  rg: number[];
  /** `search` per query when each runs right after an `rg` process over the tree. */
  riftAfterRg: number[];
  riftEmpty: string[];
  rgEmpty: string[];
}

async function latency(engine: Engine, dir: string, queries: readonly LatencyQuery[], warmup: readonly LatencyQuery[]): Promise<Latency> {
  const rgArgs = (q: string) => ['--hidden', '-g', '!.git', '-g', '!.rift', '-F', '--', q, dir];
  const runRg = (q: string) => {
    const started = performance.now();
    // stdout is piped and drained (ripgrep stops at the first match when stdout is /dev/null).
    const r = spawnSync('rg', rgArgs(q), { encoding: 'buffer', maxBuffer: 1024 * 1024 * 1024, timeout: RG_TIMEOUT_MS, stdio: ['ignore', 'pipe', 'ignore'] });
    const ms = performance.now() - started;
    if (r.error) throw new Error(`rg failed on ${JSON.stringify(q)}: ${r.error.message}`);
    return { ms, matched: r.status === 0 };
  };
  const runSearch = async (q: string) => {
    const started = performance.now();
    const r = await engine.search.search({ query: q, limit: SEARCH_LIMIT });
    return { ms: performance.now() - started, empty: r.results.length === 0 };
  };
  for (const w of warmup) {
    await runSearch(w.query);
    runRg(w.query);
  }
  const out: Latency = { rift: [], rg: [], riftAfterRg: [], riftEmpty: [], rgEmpty: [] };
  // Each tool in its own pass, so neither runs in the other's wake.
  for (const q of queries) {
    const r = await runSearch(q.query);
    out.rift.push(r.ms);
    if (r.empty) out.riftEmpty.push(q.query);
  }
  for (const q of queries) {
    const g = runRg(q.query);
    out.rg.push(g.ms);
    if (!g.matched) out.rgEmpty.push(q.query);
  }
  // Interleaved: ripgrep's pass over the tree right before each search.
  for (const q of queries) {
    runRg(q.query);
    out.riftAfterRg.push((await runSearch(q.query)).ms);
  }
  return out;
}

interface Sizes {
  db: number;
  wal: number;
  sourceFiles: number;
  sourceBytes: number;
  textFiles: number;
  textBytes: number;
  tables: Array<{ name: string; bytes: number }>;
}

function sizes(engine: Engine, dir: string): Sizes {
  const store = engine.indexer.store;
  store.checkpoint();
  const files = store.files();
  const withText = store.prepared('bench.withText', `SELECT count(*) AS n, coalesce(sum(f.size), 0) AS bytes FROM files f WHERE f.blob_id IN (SELECT DISTINCT blob_id FROM chunks)`).get() as {
    n: number;
    bytes: number;
  };
  let tables: Sizes['tables'] = [];
  try {
    // dbstat is compiled into better-sqlite3's SQLite; shadow tables of one FTS table fold into it.
    const rows = store.prepared('bench.tables', `SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name`).all() as Array<{ name: string; bytes: number }>;
    const folded = new Map<string, number>();
    for (const r of rows) {
      const base = r.name.replace(/^sqlite_autoindex_/, '').replace(/_(data|idx|content|docsize|config)$/, '').replace(/_\d+$/, '');
      folded.set(base, (folded.get(base) ?? 0) + r.bytes);
    }
    tables = [...folded].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes);
  } catch {
    tables = [];
  }
  return {
    db: fileSize(join(dir, '.rift', 'rift.db')),
    wal: fileSize(join(dir, '.rift', 'rift.db-wal')),
    sourceFiles: files.length,
    sourceBytes: files.reduce((s, f) => s + f.size, 0),
    textFiles: withText.n,
    textBytes: withText.bytes,
    tables,
  };
}

// ---------------------------------------------------------------------------------------------
// Report

const sorted = (xs: readonly number[]) => [...xs].sort((a, b) => a - b);
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const mark = (ok: boolean) => (ok ? 'pass' : '**fail**');
const fixed = (x: number) => x.toFixed(3);

interface Run {
  stdlib: string;
  rg: string;
  tree: { files: number; bytes: number };
  cold: { wallMs: number; elapsedMs: number; files: number; parsed: number; symbols: number; skipped: number };
  sizes: Sizes;
  relevance: { scored: Scored[]; metrics: Metrics; dropped: RelevanceQuery[]; p50: number; p95: number };
  subset: { files: number; bytes: number; metrics: Metrics };
  latency: Latency;
  queries: LatencyQuery[];
  load: [number, number];
}

function machine(load: [number, number], rg: string): string {
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim() || 'unknown';
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim() !== '';
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  return (
    `Run ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')} with \`npx tsx bench/search.ts\`: ` +
    `${availableParallelism()} cores (${cpu}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Node ${process.version}, ` +
    `${rg}, rift at \`${head}\`${dirty ? ' with uncommitted changes' : ''}. ` +
    `Load average (1 min) ${load[0].toFixed(2)} at the start, ${load[1].toFixed(2)} at the end.`
  );
}

function report(run: Run): string {
  const rift = sorted(run.latency.rift);
  const rg = sorted(run.latency.rg);
  const afterRg = sorted(run.latency.riftAfterRg);
  const r50 = percentile(rift, 50);
  const r95 = percentile(rift, 95);
  const g50 = percentile(rg, 50);
  const g95 = percentile(rg, 95);
  const m = run.relevance.metrics;
  const s = run.sizes;
  const total = s.db + s.wal;
  const idents = run.queries.filter((q) => q.kind === 'identifier').length;
  const lines: string[] = [];
  lines.push(machine(run.load, run.rg), '');
  lines.push('| measure | Python stdlib |', '|---|---:|');
  lines.push(`| tree (without site-packages, \`__pycache__\`): files, size | ${run.tree.files.toLocaleString('en-US')} files, ${mb(run.tree.bytes)} |`);
  lines.push(
    `| rift: files stored / parsed / skipped, declarations | ${run.cold.files} / ${run.cold.parsed} / ${run.cold.skipped}, ${run.cold.symbols.toLocaleString('en-US')} |`,
  );
  lines.push(`| rift: cold index in-process, wall (reported \`elapsedMs\`) | ${fmtMs(run.cold.wallMs)} (${fmtMs(run.cold.elapsedMs)}) |`);
  lines.push(`| source size: files rift stores / of them full-text indexed | ${mb(s.sourceBytes)} (${s.sourceFiles} files) / ${mb(s.textBytes)} (${s.textFiles} files) |`);
  lines.push(`| index size: \`rift.db\` + \`rift.db-wal\` after a checkpoint | ${mb(s.db)} + ${mb(s.wal)} = ${mb(total)} |`);
  lines.push(`| index size / source size (stored files; full-text files) | ${(total / s.sourceBytes).toFixed(2)}× ; ${(total / s.textBytes).toFixed(2)}× |`);
  lines.push(
    `| relevance (${m.queries} queries): MRR@10, recall@10 | ${fixed(m.mrr)}, ${(m.recall * 100).toFixed(1)} % |`,
    `| — prose (${m.byKind.prose.queries}) / identifier (${m.byKind.identifier.queries}): MRR@10 | ${fixed(m.byKind.prose.mrr)} / ${fixed(m.byKind.identifier.mrr)} |`,
    `| — prose / identifier: recall@10 | ${(m.byKind.prose.recall * 100).toFixed(1)} % / ${(m.byKind.identifier.recall * 100).toFixed(1)} % |`,
    `| relevance queries: \`search\` p50 / p95 (limit 10) | ${fmtMs(run.relevance.p50)} / ${fmtMs(run.relevance.p95)} |`,
    `| relevance on the test subset (${run.subset.files} files, ${mb(run.subset.bytes)}; ${run.subset.metrics.queries} queries): MRR@10, recall@10 | ${fixed(run.subset.metrics.mrr)}, ${(run.subset.metrics.recall * 100).toFixed(1)} % |`,
  );
  lines.push(
    `| literal queries (${run.queries.length}: ${idents} identifiers, ${run.queries.length - idents} phrases): \`search\` p50 / p95 | ${fmtMs(r50)} / ${fmtMs(r95)} |`,
    `| same queries: \`rg\` p50 / p95 (process wall) | ${fmtMs(g50)} / ${fmtMs(g95)} |`,
    `| ratio \`search\` / \`rg\`: p50, p95 | ${(r50 / g50).toFixed(2)}×, ${(r95 / g95).toFixed(2)}× |`,
    `| \`search\` max / \`rg\` max | ${fmtMs(rift[rift.length - 1])} / ${fmtMs(rg[rg.length - 1])} |`,
    `| \`search\` p50 / p95 when each query runs right after an \`rg\` over the tree | ${fmtMs(percentile(afterRg, 50))} / ${fmtMs(percentile(afterRg, 95))} |`,
    `| queries with no hit: \`search\` / \`rg\` | ${run.latency.riftEmpty.length} / ${run.latency.rgEmpty.length} |`,
  );
  lines.push('', '| target | result |', '|---|---:|');
  lines.push(`| relevance MRR@10 ≥ ${TARGET.mrr} (full stdlib) | ${fixed(m.mrr)} ${mark(m.mrr >= TARGET.mrr)} |`);
  lines.push(`| relevance MRR@10 ≥ ${TARGET.mrr} (test subset, asserted by \`test/index/relevance.test.ts\`) | ${fixed(run.subset.metrics.mrr)} ${mark(run.subset.metrics.mrr >= TARGET.mrr)} |`);
  lines.push(`| \`search\` p95 below \`rg\` p95 | ${fmtMs(r95)} vs ${fmtMs(g95)} ${mark(r95 < g95)} |`);

  if (s.tables.length > 0) {
    lines.push('', '### Index size by table', '', '| table (FTS shadow tables folded in) | size | share |', '|---|---:|---:|');
    for (const t of s.tables.filter((t) => t.bytes >= 0.005 * s.db)) lines.push(`| \`${t.name}\` | ${mb(t.bytes)} | ${((t.bytes / s.db) * 100).toFixed(1)} % |`);
  }

  const misses = run.relevance.scored.filter((x) => x.rank === 0);
  const low = run.relevance.scored.filter((x) => x.rank > 1);
  lines.push('', '### Relevance: answers not in the top 10', '');
  if (misses.length === 0) lines.push('None.');
  else {
    lines.push('| query | kind | wanted | rift\'s top 3 |', '|---|---|---|---|');
    for (const x of misses) {
      const wanted = x.query.answers.map(label).join(' or ');
      lines.push(`| ${x.query.query} | ${x.query.kind} | \`${wanted}\` | ${x.top.slice(0, 3).map((h) => `\`${label(h)}\``).join(', ') || '(none)'} |`);
    }
  }
  lines.push('', `Answered in the top 10 but not first: ${low.filter((x) => x.rank > 0).map((x) => `"${x.query.query}" (${x.rank})`).join(', ') || 'none'}.`);
  if (run.relevance.dropped.length > 0) {
    lines.push('', `Not scored (answer absent from this Python's stdlib): ${run.relevance.dropped.map((q) => `"${q.query}"`).join(', ')}.`);
  }

  lines.push('', '### How it is measured', '');
  lines.push(
    `- Tree: \`${run.stdlib}\` copied to a temp dir each run, without \`site-packages\` and \`__pycache__\`. rift indexes it with the default configuration.`,
    '- Cold index: `Engine.open(dir, {watch: false})` + `engine.build()` in this process with no `.rift/` (wall around both; the reported figure is `BuildStats.elapsedMs`).',
    '- Index size: `.rift/rift.db` and `.rift/rift.db-wal` after `PRAGMA wal_checkpoint(TRUNCATE)`, against the summed size of the files rift stores, and of those with a full-text entry. The table breakdown reads SQLite\'s `dbstat`.',
    `- Relevance: the ${RELEVANCE_SET.length} queries of \`bench/relevance.ts\` (prose and identifier, each with the declaration or file a developer would want, written from the stdlib rather than from rift's answers) through \`engine.search.search({query, limit: 10})\`. A symbol answer counts when a symbol hit has its path and qualified name; a file answer when any hit is in that file. A query listing interchangeable answers counts its first matching hit. MRR@10 is the mean of 1/rank (0 past 10); recall@10 the share of queries answered in the top 10.`,
    `- Latency: ${LATENCY_QUERIES} distinct literal queries drawn with a seeded PRNG (seed \`0x${SEED.toString(16)}\`) from random lines of random stored files — alternately one identifier (4–40 characters) and a phrase of 2–3 words as it occurs on the line — so every query occurs in the tree. Each is answered by \`engine.search.search({query, limit: ${SEARCH_LIMIT}})\` in-process (timed around the call) and by \`rg --hidden -g '!.git' -g '!.rift' -F -- QUERY DIR\` spawned with stdout piped and drained (wall around the process; \`-g '!.rift'\` keeps ripgrep out of rift's own database), after ${WARMUP_QUERIES} warm-up queries of each: first all ${LATENCY_QUERIES} searches, then all ${LATENCY_QUERIES} ripgrep runs, then the two interleaved (ripgrep, then \`search\`, per query) for the "right after an \`rg\`" row. The passes are separate because a search that runs right after a process has read the whole tree is several times slower on this machine (the last latency row), which an interleaved comparison would charge to rift alone. Percentiles are nearest-rank.`,
    `- Test subset: the ${TEST_SUBSET.length} stdlib entries \`TEST_SUBSET\` of \`bench/relevance.ts\` (every module an answer lives in plus distractors, among them four of the answered modules' tests), without a package's own \`test\`/\`tests\` directory, indexed separately; the relevance test runs exactly this.`,
    '- The machine is shared with other work (see the load average), so every latency carries some of it.',
  );
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  setLogLevel('error');
  const rg = ripgrep();
  const stdlib = stdlibOrExit();
  const load0 = loadavg()[0];
  const dir = mkdtempSync(join(tmpdir(), 'rift-bench-search-'));
  try {
    console.error(`copying ${stdlib} → ${dir}`);
    copyTree(stdlib, dir, (rel, name) => rel === 'site-packages' || name === '__pycache__');
    const tree = treeSize(dir);

    console.error('cold index …');
    const started = performance.now();
    const engine = await Engine.open(dir, { watch: false });
    const stats = await engine.build();
    const wallMs = performance.now() - started;
    console.error(`  ${fmtMs(wallMs)}: ${stats.files} files, ${stats.symbols} declarations`);
    const sz = sizes(engine, dir);

    console.error('relevance …');
    const kept = RELEVANCE_SET.filter((q) => answerIndexed(engine, q));
    const dropped = RELEVANCE_SET.filter((q) => !kept.includes(q));
    const scored = await runRelevance(engine, kept, RELEVANCE_K);
    const relMs = sorted(scored.map((x) => x.ms));

    console.error('relevance on the test subset …');
    const subDir = mkdtempSync(join(tmpdir(), 'rift-bench-relevance-'));
    let subset: Run['subset'];
    try {
      copyRelevanceSubset(dir, subDir);
      const subTree = treeSize(subDir);
      const sub = await Engine.open(subDir, { watch: false });
      await sub.build();
      const subScored = await runRelevance(sub, RELEVANCE_SET.filter((q) => answerIndexed(sub, q)), RELEVANCE_K);
      await sub.close();
      subset = { ...subTree, metrics: metrics(subScored) };
    } finally {
      rmSync(subDir, { recursive: true, force: true });
    }

    console.error('latency …');
    const all = sampleQueries(engine, LATENCY_QUERIES + WARMUP_QUERIES, SEED);
    const warmup = all.slice(LATENCY_QUERIES);
    const queries = all.slice(0, LATENCY_QUERIES);
    if (queries.length < LATENCY_QUERIES) console.error(`  only ${queries.length} distinct queries could be drawn`);
    const lat = await latency(engine, dir, queries, warmup);
    await engine.close();

    const run: Run = {
      stdlib,
      rg,
      tree,
      cold: { wallMs, elapsedMs: stats.elapsedMs, files: stats.files, parsed: stats.parsed, symbols: stats.symbols, skipped: stats.skipped },
      sizes: sz,
      relevance: { scored, metrics: metrics(scored), dropped, p50: percentile(relMs, 50), p95: percentile(relMs, 95) },
      subset,
      latency: lat,
      queries,
      load: [load0, loadavg()[0]],
    };
    const body = report(run);
    console.log(`${HEADING}\n\n${body}`);
    if (lat.riftEmpty.length > 0) console.error(`search returned nothing for: ${lat.riftEmpty.map((q) => JSON.stringify(q)).join(', ')}`);
    if (WRITE) {
      // Read the file afresh and replace only this section: other benchmarks write theirs.
      writeSection(DOC, HEADING, body);
      console.error(`wrote ${HEADING} in docs/benchmarks.md`);
    }
  } finally {
    if (KEEP) console.error(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

// Run only when executed, so scratch tools can import the sampler.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
