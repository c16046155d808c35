// The ranking benchmark (issue 17): `search` against plain BM25 on three relevance sets over two
// codebases, each set split into the part ranking was tuned on and a held-out part.
//
//   npx tsx bench/ranking.ts [--no-write] [--stdlib DIR] [--tslib DIR] [--werkzeug DIR] [--misses]
//                            [--no-baseline] [--skip-stdlib] [--skip-semantic]
//
// Sets: `stdlib-1` (RELEVANCE_SET of bench/relevance.ts, seen by earlier ranking work; no
// held-out part), `stdlib-2`, `tslib` and `werkzeug` (bench/relevance-sets.ts, every third
// query held out; werkzeug was never tuned on, held-out part or not).
// Trees: the Python standard library without site-packages and bytecode, and TypeScript's
// `lib.*.d.ts` from node_modules, each copied to a temp dir and indexed cold (or, with --stdlib
// / --tslib, an existing copy reused and brought up to date); with --werkzeug, a checkout of
// github.com/pallets/werkzeug (the whole repository), indexed in place (its `.rift/` is kept).
// Baseline: plain BM25 (k1 1.2, b 0.75) over every declaration's name and its own text (the
// lines of its span outside nested declarations: signature, docstring, body), tokens lowercased
// and camelCase split as rift's index splits them, no stop words, no stemming, no field weights.
// Writes the `## Ranking (bench/ranking.ts)` section of docs/benchmarks.md unless --no-write.

import { mkdtempSync, rmSync, cpSync, readdirSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setLogLevel } from '../src/core/log.ts';
import { Engine } from '../src/services/engine.ts';
import { declarationChunks, wordTokens } from '../src/index/text.ts';
import { copyTree, fmtMs, percentile, writeSection } from './lib.ts';
import { RELEVANCE_SET, answerIndexed, firstRelevantRank, label, metrics, pythonStdlib, runRelevance, type Ranked, type RelevanceQuery, type Scored } from './relevance.ts';
import { STDLIB2_SET, TSLIB_SET, WERKZEUG_SET, type HeldQuery } from './relevance-sets.ts';
import { ScriptedModelServer } from '../test/support/model-server.ts';
import { writeFileSync, appendFileSync } from 'node:fs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOC = join(ROOT, 'docs', 'benchmarks.md');
const HEADING = '## Ranking (bench/ranking.ts)';
const K = 10;
const TARGET = { prose: 0.6, overall: 0.7 };

const arg = (name: string): string | undefined => {
  const at = process.argv.indexOf(name);
  return at < 0 ? undefined : process.argv[at + 1];
};
const WRITE = !process.argv.includes('--no-write');
const MISSES = process.argv.includes('--misses');
/** Tuning runs skip the baseline (its columns then read 0). */
const BASELINE = !process.argv.includes('--no-baseline');

// ---------------------------------------------------------------------------------------------
// Plain BM25 over declarations

interface Bm25 {
  docs: Ranked[];
  lengths: Float64Array;
  postings: Map<string, Array<[doc: number, tf: number]>>;
  avgLength: number;
}

const utf8 = new TextDecoder('utf-8');

function buildBm25(engine: Engine): Bm25 {
  if (!BASELINE) return { docs: [], lengths: new Float64Array(), postings: new Map(), avgLength: 1 };
  const store = engine.indexer.store;
  const docs: Ranked[] = [];
  const lengths: number[] = [];
  const postings = new Map<string, Array<[number, number]>>();
  for (const f of store.files()) {
    const symbols = store.symbolsOfFile(f.path);
    if (symbols.length === 0) continue;
    const bytes = store.indexedBytes(f.path);
    if (!bytes) continue;
    const own = symbols.map((s) => [s.name]);
    for (const c of declarationChunks(bytes, symbols.map((s) => ({ span: { start: s.span_start, end: s.span_end } })))) {
      if (c.owner !== null) own[c.owner].push(utf8.decode(bytes.subarray(c.start, c.end)));
    }
    symbols.forEach((s, i) => {
      const doc = docs.length;
      docs.push({ path: f.path, name: s.qname });
      const tf = new Map<string, number>();
      let n = 0;
      for (const t of wordTokens(own[i].join('\n'))) {
        tf.set(t, (tf.get(t) ?? 0) + 1);
        n++;
      }
      lengths.push(n);
      for (const [t, c] of tf) {
        let list = postings.get(t);
        if (!list) postings.set(t, (list = []));
        list.push([doc, c]);
      }
    });
  }
  const total = lengths.reduce((a, b) => a + b, 0);
  return { docs, lengths: Float64Array.from(lengths), postings, avgLength: total / Math.max(1, lengths.length) };
}

function bm25Search(index: Bm25, query: string): Ranked[] {
  const k1 = 1.2;
  const b = 0.75;
  const n = index.docs.length;
  const scores = new Map<number, number>();
  for (const t of new Set(wordTokens(query))) {
    const list = index.postings.get(t);
    if (!list) continue;
    const idf = Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5));
    for (const [doc, tf] of list) {
      const norm = tf * (k1 + 1) / (tf + k1 * (1 - b + b * index.lengths[doc] / index.avgLength));
      scores.set(doc, (scores.get(doc) ?? 0) + idf * norm);
    }
  }
  return [...scores].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, K).map(([doc]) => index.docs[doc]);
}

// ---------------------------------------------------------------------------------------------

interface SetRun {
  name: string;
  tree: string;
  queries: Array<RelevanceQuery & { held?: boolean }>;
  rift: Scored[];
  bm25: Scored[];
  dropped: RelevanceQuery[];
}

async function runSet(engine: Engine, bm25: Bm25, name: string, tree: string, set: ReadonlyArray<RelevanceQuery & { held?: boolean }>): Promise<SetRun> {
  const kept = set.filter((q) => answerIndexed(engine, q));
  const dropped = set.filter((q) => !kept.includes(q));
  const rift = await runRelevance(engine, kept, K);
  const bm = kept.map((query) => {
    const started = performance.now();
    const top = bm25Search(bm25, query.query);
    return { query, top, rank: firstRelevantRank(query, top), ms: performance.now() - started };
  });
  return { name, tree, queries: kept, rift, bm25: bm, dropped };
}

const fixed = (x: number) => x.toFixed(3);
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

function rows(run: SetRun): string[] {
  const parts: Array<[string, (q: RelevanceQuery & { held?: boolean }) => boolean]> = [['all', () => true]];
  if (run.queries.some((q) => q.held)) parts.push(['tuning', (q) => !q.held], ['held-out', (q) => q.held === true]);
  const out: string[] = [];
  for (const [part, keep] of parts) {
    const r = metrics(run.rift.filter((s) => keep(s.query)));
    const b = metrics(run.bm25.filter((s) => keep(s.query)));
    out.push(
      `| ${run.name} | ${part} | ${r.queries} (${r.byKind.prose.queries} / ${r.byKind.identifier.queries}) | ` +
        `**${fixed(r.mrr)}** / ${pct(r.recall)} | ${fixed(r.byKind.prose.mrr)} / ${pct(r.byKind.prose.recall)} | ${fixed(r.byKind.identifier.mrr)} / ${pct(r.byKind.identifier.recall)} | ` +
        `${fixed(b.mrr)} / ${pct(b.recall)} | ${fixed(b.byKind.prose.mrr)} | ${fixed(b.byKind.identifier.mrr)} |`,
    );
  }
  return out;
}

function render(runs: SetRun[], meta: string[]): string {
  const lines = [
    ...meta,
    '',
    '`search` (lexical and identifier tiers, no semantic tier) against plain BM25 over declarations. MRR@10 / recall@10; queries (prose / identifier).',
    '',
    '| set | part | queries | `search` all | `search` prose | `search` identifier | BM25 all | BM25 prose | BM25 identifier |',
    '|---|---|---|---|---|---|---|---|---|',
    ...runs.flatMap(rows),
    '',
    `Targets (lexical tier alone, every set): prose MRR@10 ≥ ${TARGET.prose}, overall ≥ ${TARGET.overall}.`,
    '',
    '| set | prose ≥ 0.6 | overall ≥ 0.7 |',
    '|---|---|---|',
    ...runs.map((run) => {
      const m = metrics(run.rift);
      const mark = (ok: boolean) => (ok ? 'pass' : '**fail**');
      return `| ${run.name} | ${fixed(m.byKind.prose.mrr)} ${mark(m.byKind.prose.mrr >= TARGET.prose)} | ${fixed(m.mrr)} ${mark(m.mrr >= TARGET.overall)} |`;
    }),
  ];
  for (const run of runs) {
    const misses = run.rift.filter((s) => s.rank !== 1);
    if (misses.length === 0) continue;
    lines.push('', `${run.name}: answers not ranked first (rank, query → \`search\`'s top 3${run.queries.some((q) => q.held) ? '; H = held out' : ''}):`, '');
    for (const s of misses) {
      const held = (s.query as HeldQuery).held ? ' H' : '';
      lines.push(`- ${s.rank === 0 ? '—' : s.rank}${held} "${s.query.query}" → ${s.top.slice(0, 3).map(label).join(', ')}`);
    }
    if (run.dropped.length > 0) lines.push('', `${run.name}: not scored (answer absent from this tree): ${run.dropped.map((q) => `"${q.query}"`).join(', ')}.`);
  }
  const ms = runs.flatMap((r) => r.rift.map((s) => s.ms)).sort((a, b) => a - b);
  lines.push('', `\`search\` latency over these queries (limit 10, in-process): p50 ${fmtMs(percentile(ms, 50))}, p95 ${fmtMs(percentile(ms, 95))}.`);
  return lines.join('\n');
}

/**
 * The semantic tier's own cost, measured against the scripted model server (toy 8-dimension
 * vectors, answered at once): preparing every declaration of the TypeScript lib tree, then the
 * re-embedding one edited file causes. No real embedding model is reachable on this machine, so
 * this is rift's side alone (texts, digests, HTTP, SQLite), not a model's throughput.
 */
async function semanticOverhead(tsLib: string): Promise<string> {
  const server = await ScriptedModelServer.start();
  const dir = mkdtempSync(join(tmpdir(), 'rift-bench-semantic-'));
  try {
    for (const name of readdirSync(tsLib)) if (/^lib\..*\.d\.ts$/.test(name)) cpSync(join(tsLib, name), join(dir, name));
    writeFileSync(join(dir, 'rift.toml'), `[search.semantic]\nenabled = true\nmodel = "toy"\nurl = "${server.url}"\n`);
    const engine = await Engine.open(dir, { watch: false });
    try {
      const t0 = performance.now();
      await engine.build();
      const built = performance.now() - t0;
      await engine.semantic.idle();
      const prepared = performance.now() - t0 - built;
      const texts = server.embeddedTexts().length;
      const requests = server.requests.length;
      appendFileSync(join(dir, 'lib.es2023.array.d.ts'), '\ninterface Array<T> {\n  /** Added by the benchmark. */\n  benchmarkAdded(): T;\n}\n');
      const t1 = performance.now();
      await engine.indexer.refresh(['lib.es2023.array.d.ts']);
      await engine.semantic.idle();
      const again = performance.now() - t1;
      const reembedded = server.embeddedTexts().length - texts;
      const ms = [] as number[];
      for (const q of TSLIB_SET) {
        const started = performance.now();
        await engine.search.search({ query: q.query, limit: K });
        ms.push(performance.now() - started);
      }
      ms.sort((a, b) => a - b);
      return [
        'Semantic tier overhead (scripted model server on 127.0.0.1, toy 8-dimension vectors answered at once; no real embedding model is reachable here — no server, and for the in-process `onnx` provider no weights: Hugging Face is unreachable and no npm package carries a model — so no relevance with the semantic tier is reported):',
        '',
        '| measure | value |',
        '|---|---|',
        `| TypeScript lib tree: cold index build | ${fmtMs(built)} |`,
        `| then preparing every declaration (${texts} texts in ${requests} requests of ≤ 32) | ${fmtMs(prepared)} (${Math.round(texts / (prepared / 1000))} declarations/s) |`,
        `| one edited file (one declaration added): refresh + re-embedding | ${fmtMs(again)}, ${reembedded} text(s) embedded |`,
        `| \`search\` with the semantic lane (the tslib queries, one query embedding each): p50 / p95 | ${fmtMs(percentile(ms, 50))} / ${fmtMs(percentile(ms, 95))} |`,
      ].join('\n');
    } finally {
      await engine.close();
    }
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function openTree(given: string | undefined, fill: (dir: string) => void): Promise<{ engine: Engine; dir: string; temp: boolean; buildMs: number }> {
  const dir = given ?? mkdtempSync(join(tmpdir(), 'rift-bench-ranking-'));
  if (!given) fill(dir);
  const started = performance.now();
  const engine = await Engine.open(dir, { watch: false });
  await engine.build();
  return { engine, dir, temp: !given, buildMs: performance.now() - started };
}

async function main(): Promise<void> {
  setLogLevel('warn');
  const found = pythonStdlib();
  if ('error' in found) {
    console.error(`python3 is required to locate the Python standard library: ${found.error}`);
    process.exit(2);
  }
  const tsLib = join(ROOT, 'node_modules', 'typescript', 'lib');
  const load0 = loadavg()[0];
  const runs: SetRun[] = [];
  const trees: string[] = [];
  const SKIP_STDLIB = process.argv.includes('--skip-stdlib');
  if (!SKIP_STDLIB) {
  const py = await openTree(arg('--stdlib'), (dir) => copyTree(found.root, dir, (rel, name) => rel === 'site-packages' || name === '__pycache__'));
  try {
    const counts = py.engine.indexer.store.counts();
    trees.push(`Python ${found.root} (${counts.files} files, ${counts.symbols} declarations)`);
    console.error('stdlib: BM25 baseline …');
    const bm = buildBm25(py.engine);
    console.error('stdlib: sets …');
    runs.push(await runSet(py.engine, bm, 'stdlib-1 (seen)', 'stdlib', RELEVANCE_SET));
    runs.push(await runSet(py.engine, bm, 'stdlib-2', 'stdlib', STDLIB2_SET));
  } finally {
    await py.engine.close();
    if (py.temp) rmSync(py.dir, { recursive: true, force: true });
  }
  }
  const ts = await openTree(arg('--tslib'), (dir) => {
    for (const name of readdirSync(tsLib)) if (/^lib\..*\.d\.ts$/.test(name)) cpSync(join(tsLib, name), join(dir, name));
  });
  try {
    const counts = ts.engine.indexer.store.counts();
    trees.push(`TypeScript lib.*.d.ts (${counts.files} files, ${counts.symbols} declarations)`);
    runs.push(await runSet(ts.engine, buildBm25(ts.engine), 'tslib', 'tslib', TSLIB_SET));
  } finally {
    await ts.engine.close();
    if (ts.temp) rmSync(ts.dir, { recursive: true, force: true });
  }
  const werkzeug = arg('--werkzeug');
  if (werkzeug) {
    const wz = await openTree(werkzeug, () => {});
    try {
      const counts = wz.engine.indexer.store.counts();
      trees.push(`werkzeug ${werkzeug.split('/').at(-1)} (${counts.files} files, ${counts.symbols} declarations)`);
      runs.push(await runSet(wz.engine, buildBm25(wz.engine), 'werkzeug (never tuned on)', 'werkzeug', WERKZEUG_SET));
    } finally {
      await wz.engine.close();
    }
  }
  const semantic = process.argv.includes('--skip-semantic') ? '' : await semanticOverhead(tsLib);
  const meta = [
    `Run ${new Date().toISOString().slice(0, 10)} on ${cpus()[0]?.model.trim() ?? 'unknown CPU'} (${availableParallelism()} cores, load ${load0.toFixed(1)} at start). Trees: ${trees.join('; ')}.`,
  ];
  const body = semantic === '' ? render(runs, meta) : `${render(runs, meta)}\n\n${semantic}`;
  if (MISSES) for (const r of runs) for (const s of r.rift) console.error(`${r.name}\t${s.rank}\t${s.query.kind}\t${s.query.query}\t${s.top.slice(0, 3).map(label).join(', ')}`);
  console.log(body);
  if (WRITE) writeSection(DOC, HEADING, body);
}

await main();
