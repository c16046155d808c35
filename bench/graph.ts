// The relationship graph, measured against language servers in the same run:
//   1. `calls` precision and recall against typescript-language-server's call hierarchy
//      (callHierarchy/outgoingCalls) on TypeORM (src/ and its unit, core and benchmark tests);
//   2. the same against pyright's call hierarchy on mypy (mypy/ and mypyc/; pyright reads the
//      standard library through its own typeshed stubs, so the stdlib cannot be the input);
//   3. traversal latency (depth 1 and 3, both directions) on the stdlib's ≥ 50k declarations,
//      beside the language server's own latency for one outgoing-calls request;
//   4. what building the graph adds to a cold index (provider enabled vs disabled).
// Writes the "Relationship graph" section of docs/benchmarks.md.
//
//   npx tsx bench/graph.ts                 # TYPEORM= / MYPY=<git dir or checkout> override the sources
//   GRAPH_SAMPLE=400 npx tsx bench/graph.ts

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Engine } from '../src/services/engine.ts';
import { SYMBOL_COLUMNS, SYMBOL_FROM, type SymbolRow } from '../src/index/store.ts';
import { copyTree, fmtMs, percentile, seededRandom, writeSection } from './lib.ts';
import { LspClient, TextIndex, type Position } from './lsp-client.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SAMPLE = Number(process.env.GRAPH_SAMPLE ?? 600);
/** `ts` or `py` runs one agreement alone and leaves docs/benchmarks.md as it is (for iterating). */
const ONLY = process.env.GRAPH_ONLY;
const TYPEORM = process.env.TYPEORM ?? '/work/.mirror/typeorm+typeorm/repo';
const TYPEORM_DIRS = ['src', 'test/unit', 'test/core', 'test/utils', 'test/benchmark'];
const MYPY = process.env.MYPY ?? '/work/.mirror/python+mypy/repo';
const MYPY_DIRS = ['mypy', 'mypyc'];

interface Item {
  name: string;
  kind: number;
  uri: string;
  range: { start: Position; end: Position };
  selectionRange: { start: Position; end: Position };
}

interface Agreement {
  callers: number;
  rift: number;
  server: number;
  serverMappable: number;
  both: number;
  riftResolution: number;
  bothResolution: number;
  riftHeuristic: number;
  bothHeuristic: number;
  unmatched: Map<string, number>;
  extra: Map<string, number>;
  serverMs: number[];
  /** Per caller, what only one side reported (written to GRAPH_DEBUG when set). */
  examples: Array<{ caller: string; riftOnly: string[]; serverOnly: string[] }>;
}

function bump(m: Map<string, number>, k: string): void {
  m.set(k, (m.get(k) ?? 0) + 1);
}

/** A declaration's identity for comparison: overload suffixes dropped, a constructor standing for its class. */
function key(path: string, qname: string): string {
  const q = qname.replace(/~\d+$/, '').replace(/\.(constructor|__init__)$/, '');
  return `${path}\0${q}`;
}

function pythonStdlib(): string {
  const r = spawnSync('python3', ['-c', 'import sysconfig;print(sysconfig.get_paths()["stdlib"])'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`python3 failed: ${r.stderr}`);
  return r.stdout.trim();
}

/** `dirs` of the repository at `source` (a git directory or a checkout), extracted at HEAD into a temp directory. */
function gitTree(source: string, dirs: readonly string[], name: string): { dir: string; revision: string } | null {
  if (!existsSync(source)) return null;
  const dir = mkdtempSync(join(tmpdir(), `rift-bench-${name}-`));
  const gitDir = existsSync(join(source, 'HEAD')) ? source : join(source, '.git');
  const revision = execFileSync('git', ['--git-dir', gitDir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  const archive = spawnSync('git', ['--git-dir', gitDir, 'archive', 'HEAD', ...dirs], { maxBuffer: 1 << 30 });
  if (archive.status !== 0) throw new Error(`git archive failed: ${archive.stderr}`);
  execFileSync('tar', ['-x', '-C', dir], { input: archive.stdout });
  return { dir, revision };
}

function typeormTree(): { dir: string; revision: string } | null {
  const tree = gitTree(TYPEORM, TYPEORM_DIRS, 'typeorm');
  if (tree === null) return null;
  const { dir, revision } = tree;
  // TypeORM's own options, without the `extends` of a package the tree does not install.
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { target: 'es2022', module: 'commonjs', moduleResolution: 'node', experimentalDecorators: true, strict: false, skipLibCheck: true, noEmit: true }, include: ['src', 'test'] }),
  );
  return { dir, revision };
}

async function indexTree(dir: string, binding: boolean): Promise<{ engine: Engine; elapsedMs: number; dbBytes: number; symbols: number }> {
  progress(`indexing ${dir} with the binding provider ${binding ? 'enabled' : 'disabled'}`);
  rmSync(join(dir, '.rift'), { recursive: true, force: true });
  writeFileSync(join(dir, 'rift.toml'), `[providers.binding]\nenabled = ${binding}\n`);
  const engine = await Engine.open(dir, { watch: false });
  const stats = await engine.build();
  engine.indexer.store.checkpoint();
  return { engine, elapsedMs: stats.elapsedMs, dbBytes: statSync(join(dir, '.rift', 'rift.db')).size, symbols: stats.symbols };
}

/** The callables to compare, a seeded sample of those under `dirs`. */
function callers(engine: Engine, dirs: readonly string[], language: string): SymbolRow[] {
  const rows = engine.indexer.store
    .prepared(
      'bench.graph.callables',
      `SELECT ${SYMBOL_COLUMNS} FROM ${SYMBOL_FROM} WHERE s.kind IN ('function', 'method') AND b.language = ? ORDER BY f.path, s.span_start`,
    )
    .all(language) as SymbolRow[];
  const inScope = rows.filter((r) => dirs.some((d) => r.path.startsWith(d + '/')) && !r.path.endsWith('.d.ts'));
  const random = seededRandom(20261203);
  const shuffled = inScope.map((r) => ({ r, k: random() })).sort((a, b) => a.k - b.k).map((x) => x.r);
  return shuffled.slice(0, SAMPLE).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.span_start - b.span_start));
}

/** Rift's outgoing calls / constructs of a declaration, by target identity and derivation. */
function riftCalls(engine: Engine, row: SymbolRow): Map<string, string> {
  const graph = engine.indexer.graph.store;
  const node = graph.findNode(row.path, row.qname);
  const out = new Map<string, string>();
  if (node === null) return out;
  for (const e of graph.outgoing(node)) {
    if (e.kind !== 'calls' && e.kind !== 'constructs') continue;
    const n = graph.nodeById(e.dst)!;
    const k = key(n.path, n.qname);
    if (!out.has(k) || e.derivation === 'resolution') out.set(k, e.derivation);
  }
  return out;
}

/** The name's position inside a declaration's own node (the first whole-word occurrence). */
function namePosition(text: TextIndex, row: SymbolRow): Position | null {
  const item = text.bytes.subarray(row.item_start, row.item_end).toString('utf8');
  const m = new RegExp(`(^|[^A-Za-z0-9_$])(${row.name.replace(/[$]/g, '\\$')})(?![A-Za-z0-9_$])`).exec(item);
  if (m === null) return null;
  const at = row.item_start + Buffer.byteLength(item.slice(0, m.index + m[1].length), 'utf8');
  return text.positionAt(at);
}

function progress(message: string): void {
  process.stderr.write(`[graph bench] ${new Date().toISOString().slice(11, 19)} ${message}\n`);
}

async function agreement(engine: Engine, dir: string, server: LspClient, languageId: string, rows: readonly SymbolRow[]): Promise<Agreement> {
  progress(`comparing ${rows.length} ${languageId} callers`);
  const a: Agreement = {
    callers: 0, rift: 0, server: 0, serverMappable: 0, both: 0, riftResolution: 0, bothResolution: 0, riftHeuristic: 0, bothHeuristic: 0,
    unmatched: new Map(), extra: new Map(), serverMs: [], examples: [],
  };
  const texts = new Map<string, TextIndex>();
  const textOf = (path: string) => {
    let t = texts.get(path);
    if (!t) {
      t = new TextIndex(readFileSync(join(dir, path)));
      texts.set(path, t);
    }
    return t;
  };
  const declsOf = new Map<string, SymbolRow[]>();
  const declarationsIn = (path: string) => {
    let d = declsOf.get(path);
    if (!d) {
      d = engine.indexer.store.symbolsOfFile(path);
      declsOf.set(path, d);
    }
    return d;
  };
  let open: string | null = null;
  for (const row of rows) {
    const text = textOf(row.path);
    const uri = pathToFileURL(join(dir, row.path)).href;
    if (open !== row.path) {
      if (open !== null) server.notify('textDocument/didClose', { textDocument: { uri: pathToFileURL(join(dir, open)).href } });
      server.notify('textDocument/didOpen', { textDocument: { uri, languageId, version: 1, text: text.text } });
      open = row.path;
    }
    const position = namePosition(text, row);
    if (position === null) continue;
    if (a.callers % 50 === 0) progress(`${a.callers} / ${rows.length} callers`);
    const started = performance.now();
    const items = await server.request<Item[] | null>('textDocument/prepareCallHierarchy', { textDocument: { uri }, position });
    const item = items?.[0];
    if (!item) continue;
    const calls = (await server.request<Array<{ to: Item }> | null>('callHierarchy/outgoingCalls', { item })) ?? [];
    a.serverMs.push(performance.now() - started);
    a.callers++;
    const theirs = new Set<string>();
    let mappable = 0;
    for (const c of calls) {
      if (!c.to.uri.startsWith('file:')) continue;
      const path = relative(dir, fileURLToPath(c.to.uri));
      if (path.startsWith('..') || path.includes('node_modules') || !existsSync(join(dir, path))) continue;
      const at = textOf(path).offsetAt(c.to.selectionRange.start);
      // The innermost declaration holding the target's name, when it is that declaration.
      const holder = declarationsIn(path)
        .filter((d) => d.item_start <= at && at < d.item_end)
        .sort((x, y) => x.item_end - x.item_start - (y.item_end - y.item_start))[0];
      const named = holder !== undefined && (holder.name === c.to.name || (c.to.name === 'constructor' && holder.qname.endsWith('.constructor')));
      a.server++;
      if (!named) {
        bump(a.unmatched, 'target is not a declaration rift indexes (a local function, an object-literal method, a property)');
        continue;
      }
      const k = key(path, holder.qname);
      if (theirs.has(k)) continue;
      theirs.add(k);
      mappable++;
    }
    a.serverMappable += mappable;
    const ours = riftCalls(engine, row);
    for (const [k, derivation] of ours) {
      a.rift++;
      if (derivation === 'heuristic') a.riftHeuristic++;
      else a.riftResolution++;
      if (theirs.has(k)) {
        a.both++;
        if (derivation === 'heuristic') a.bothHeuristic++;
        else a.bothResolution++;
      } else bump(a.extra, derivation);
    }
    for (const k of theirs) if (!ours.has(k)) bump(a.unmatched, 'missed by rift');
    const riftOnly = [...ours].filter(([k]) => !theirs.has(k)).map(([k, d]) => `${k.replace('\0', ':')} (${d})`);
    const serverOnly = [...theirs].filter((k) => !ours.has(k)).map((k) => k.replace('\0', ':'));
    if (riftOnly.length + serverOnly.length > 0) a.examples.push({ caller: `${row.path}:${row.qname}`, riftOnly, serverOnly });
  }
  if (process.env.GRAPH_DEBUG) writeFileSync(`${process.env.GRAPH_DEBUG}.${languageId}.json`, JSON.stringify(a.examples, null, 1));
  return a;
}

async function startServer(command: string, args: string[], dir: string, name: string): Promise<LspClient> {
  progress(`starting ${name} language server`);
  const server = new LspClient(command, args, dir);
  const root = pathToFileURL(dir).href;
  await server.request('initialize', {
    processId: process.pid,
    rootUri: root,
    workspaceFolders: [{ uri: root, name }],
    capabilities: { textDocument: { callHierarchy: { dynamicRegistration: false } }, workspace: { configuration: true, workspaceFolders: true } },
    initializationOptions: {},
  });
  server.notify('initialized', {});
  progress(`${name} language server initialized`);
  return server;
}

async function traversalLatency(engine: Engine, server: LspClient, dir: string): Promise<Record<string, number[]>> {
  const graph = engine.indexer.graph.store;
  const seeds = engine.indexer.store
    .prepared(
      'bench.graph.seeds',
      `SELECT n.path, n.qname, f.language FROM graph_nodes n JOIN graph_files f ON f.path = n.path
       WHERE EXISTS (SELECT 1 FROM graph_edges e WHERE e.src = n.id) ORDER BY n.id`,
    )
    .all() as Array<{ path: string; qname: string; language: string }>;
  const random = seededRandom(7);
  const picked = Array.from({ length: 300 }, () => seeds[Math.floor(random() * seeds.length)]);
  const out: Record<string, number[]> = { out1: [], out3: [], in1: [], in3: [], lsp: [] };
  const { symbolId } = await import('../src/core/ids.ts');
  for (const s of picked) {
    const seed = symbolId(s.language, s.path, s.qname);
    for (const [label, direction, depth] of [['out1', 'outgoing', 1], ['out3', 'outgoing', 3], ['in1', 'incoming', 1], ['in3', 'incoming', 3]] as const) {
      const t = performance.now();
      await engine.search.search({ traversal: { seed, direction, depth } });
      out[label].push(performance.now() - t);
    }
  }
  void graph;
  // The peer: one outgoing-calls request (prepare + outgoingCalls) for 100 of the same seeds.
  for (const s of picked.slice(0, 100)) {
    const rows = engine.indexer.store.symbolsOfFile(s.path).filter((r) => r.qname === s.qname);
    if (rows.length === 0) continue;
    const text = new TextIndex(readFileSync(join(dir, s.path)));
    const uri = pathToFileURL(join(dir, s.path)).href;
    server.notify('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text: text.text } });
    const position = namePosition(text, rows[0]);
    if (position !== null) {
      const t = performance.now();
      const items = await server.request<Item[] | null>('textDocument/prepareCallHierarchy', { textDocument: { uri }, position });
      if (items?.[0]) await server.request('callHierarchy/outgoingCalls', { item: items[0] });
      out.lsp.push(performance.now() - t);
    }
    server.notify('textDocument/didClose', { textDocument: { uri } });
  }
  return out;
}

function pct(n: number, d: number): string {
  return d === 0 ? 'n/a' : `${((100 * n) / d).toFixed(1)} %`;
}

function agreementRows(label: string, a: Agreement): string[] {
  return [
    `| ${label}: callers compared | ${a.callers} |`,
    `| ${label}: rift calls edges / matched by the server | ${a.rift} / ${a.both} |`,
    `| ${label}: **precision** (matched / rift edges) | **${pct(a.both, a.rift)}** |`,
    `| ${label}: precision of \`resolution\` edges / of \`heuristic\` edges | ${pct(a.bothResolution, a.riftResolution)} (${a.riftResolution}) / ${pct(a.bothHeuristic, a.riftHeuristic)} (${a.riftHeuristic}) |`,
    `| ${label}: server targets in the workspace / naming a declaration rift indexes | ${a.server} / ${a.serverMappable} |`,
    `| ${label}: **recall** (matched / server targets rift indexes) | **${pct(a.both, a.serverMappable)}** |`,
    `| ${label}: recall over every server target in the workspace | ${pct(a.both, a.server)} |`,
    `| ${label}: server outgoing-calls request p50 / p95 | ${fmtMs(percentile([...a.serverMs].sort((x, y) => x - y), 50))} / ${fmtMs(percentile([...a.serverMs].sort((x, y) => x - y), 95))} |`,
  ];
}

async function main(): Promise<void> {
  const load = loadavg()[0];
  const lines: string[] = [];
  const targets: string[] = [];
  const started = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();

  // 1. TypeScript
  const ts = ONLY === 'py' ? null : typeormTree();
  let tsAgreement: Agreement | null = null;
  let overhead: { on: number; off: number; dbOn: number; dbOff: number; files: number } | null = null;
  if (ts !== null) {
    const off = ONLY === 'ts' ? { elapsedMs: NaN, dbBytes: NaN } : await indexTree(ts.dir, false);
    if ('engine' in off) await off.engine.close();
    const on = await indexTree(ts.dir, true);
    const files = on.engine.indexer.store.counts().parsed;
    overhead = { on: on.elapsedMs, off: off.elapsedMs, dbOn: on.dbBytes, dbOff: off.dbBytes, files };
    const tls = join(ROOT, 'node_modules', '.bin', 'typescript-language-server');
    const server = await startServer(tls, ['--stdio'], ts.dir, 'typeorm');
    tsAgreement = await agreement(on.engine, ts.dir, server, 'typescript', callers(on.engine, ['src', 'test'], 'typescript'));
    await server.close();
    await on.engine.close();
    lines.push(
      `TypeScript input: TypeORM at \`${ts.revision}\` (${TYPEORM_DIRS.join(', ')}): ${files} parsed files; typescript-language-server 5.3.0 with TypeScript 5.9.3.`,
    );
  } else lines.push(`TypeScript input: TypeORM not found at ${TYPEORM} (set TYPEORM); that part was skipped.`);

  if (ONLY === 'ts') {
    if (tsAgreement) process.stdout.write(agreementRows('TypeScript', tsAgreement).join('\n') + '\n');
    return;
  }
  // 2. Python: mypy against pyright
  const mypy = gitTree(MYPY, MYPY_DIRS, 'mypy');
  if (mypy === null) throw new Error(`mypy not found at ${MYPY} (set MYPY)`);
  // mypy's bundled stubs are typeshed, not mypy's own code.
  rmSync(join(mypy.dir, 'mypy', 'typeshed'), { recursive: true, force: true });
  writeFileSync(join(mypy.dir, 'pyrightconfig.json'), JSON.stringify({ include: MYPY_DIRS, typeCheckingMode: 'off' }));
  const mypyOff = ONLY === 'py' ? { elapsedMs: NaN, dbBytes: NaN } : await indexTree(mypy.dir, false);
  if ('engine' in mypyOff) await mypyOff.engine.close();
  const my = await indexTree(mypy.dir, true);
  const myFiles = my.engine.indexer.store.counts().parsed;
  const pyright = await startServer(join(ROOT, 'node_modules', '.bin', 'pyright-langserver'), ['--stdio'], mypy.dir, 'mypy');
  const pyAgreement = await agreement(my.engine, mypy.dir, pyright, 'python', callers(my.engine, MYPY_DIRS, 'python'));
  await pyright.close();
  await my.engine.close();
  if (ONLY === 'py') {
    process.stdout.write(agreementRows('Python', pyAgreement).join('\n') + '\n');
    return;
  }
  lines.push(`Python input: mypy at \`${mypy.revision}\` (${MYPY_DIRS.join(', ')}; its bundled typeshed left out): ${myFiles} parsed files, ${my.symbols.toLocaleString('en-US')} declarations; pyright 1.1.414.`);

  // 3. Traversal latency on the standard library's graph (≥ 50k declarations), beside pyright
  const stdlib = pythonStdlib();
  const pyDir = mkdtempSync(join(tmpdir(), 'rift-bench-stdlib-'));
  mkdirSync(pyDir, { recursive: true });
  copyTree(stdlib, pyDir, (rel, name) => rel === 'site-packages' || name === '__pycache__');
  const pyOff = await indexTree(pyDir, false);
  await pyOff.engine.close();
  const py = await indexTree(pyDir, true);
  const pyFiles = py.engine.indexer.store.counts().parsed;
  const stdPyright = await startServer(join(ROOT, 'node_modules', '.bin', 'pyright-langserver'), ['--stdio'], pyDir, 'stdlib');
  const latency = await traversalLatency(py.engine, stdPyright, pyDir);
  await stdPyright.close();
  await py.engine.close();
  lines.push(`Traversal input: the CPython ${stdlib.split('/').pop()} standard library (site-packages left out): ${pyFiles} parsed files, ${py.symbols.toLocaleString('en-US')} declarations.`);

  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const p = (xs: number[], q: number) => percentile(sorted(xs), q);
  lines.push('');
  lines.push('| measure | value |');
  lines.push('|---|---:|');
  if (tsAgreement) lines.push(...agreementRows('TypeScript', tsAgreement));
  lines.push(...agreementRows('Python', pyAgreement));
  lines.push(`| traversal depth 1 outgoing / incoming: p50, p95 (${py.symbols.toLocaleString('en-US')} declarations, 300 seeds) | ${fmtMs(p(latency.out1, 50))}, ${fmtMs(p(latency.out1, 95))} / ${fmtMs(p(latency.in1, 50))}, ${fmtMs(p(latency.in1, 95))} |`);
  lines.push(`| traversal depth 3 outgoing / incoming: p50, p95 | ${fmtMs(p(latency.out3, 50))}, ${fmtMs(p(latency.out3, 95))} / ${fmtMs(p(latency.in3, 50))}, ${fmtMs(p(latency.in3, 95))} |`);
  lines.push(`| peer: pyright prepare + outgoingCalls, p50 / p95 (100 of the seeds) | ${fmtMs(p(latency.lsp, 50))} / ${fmtMs(p(latency.lsp, 95))} |`);
  if (overhead) {
    lines.push(`| TypeScript cold index: provider disabled / enabled (${overhead.files} files) | ${fmtMs(overhead.off)} / ${fmtMs(overhead.on)} (+${pct(overhead.on - overhead.off, overhead.off)}) |`);
    lines.push(`| TypeScript store size: disabled / enabled | ${(overhead.dbOff / 1048576).toFixed(1)} MB / ${(overhead.dbOn / 1048576).toFixed(1)} MB |`);
  }
  lines.push(`| mypy cold index: provider disabled / enabled (${myFiles} files) | ${fmtMs(mypyOff.elapsedMs)} / ${fmtMs(my.elapsedMs)} (+${pct(my.elapsedMs - mypyOff.elapsedMs, mypyOff.elapsedMs)}) |`);
  lines.push(`| stdlib cold index: provider disabled / enabled (${pyFiles} files) | ${fmtMs(pyOff.elapsedMs)} / ${fmtMs(py.elapsedMs)} (+${pct(py.elapsedMs - pyOff.elapsedMs, pyOff.elapsedMs)}) |`);
  lines.push(`| stdlib store size: disabled / enabled | ${(pyOff.dbBytes / 1048576).toFixed(1)} MB / ${(py.dbBytes / 1048576).toFixed(1)} MB |`);

  const verdict = (ok: boolean) => (ok ? 'pass' : '**fail**');
  targets.push('| target | value | |', '|---|---:|---|');
  if (tsAgreement) {
    const prec = tsAgreement.both / tsAgreement.rift;
    const rec = tsAgreement.both / tsAgreement.serverMappable;
    targets.push(`| TypeScript precision ≥ 0.9 | ${prec.toFixed(3)} | ${verdict(prec >= 0.9)} |`, `| TypeScript recall ≥ 0.8 | ${rec.toFixed(3)} | ${verdict(rec >= 0.8)} |`);
  }
  const pprec = pyAgreement.both / pyAgreement.rift;
  const prec2 = pyAgreement.both / pyAgreement.serverMappable;
  targets.push(`| Python precision ≥ 0.9 | ${pprec.toFixed(3)} | ${verdict(pprec >= 0.9)} |`, `| Python recall ≥ 0.8 | ${prec2.toFixed(3)} | ${verdict(prec2 >= 0.8)} |`);
  const d1 = Math.max(p(latency.out1, 95), p(latency.in1, 95));
  const d3 = Math.max(p(latency.out3, 95), p(latency.in3, 95));
  targets.push(`| traversal depth 1 p95 < 20 ms | ${fmtMs(d1)} | ${verdict(d1 < 20)} |`, `| traversal depth 3 p95 < 100 ms | ${fmtMs(d3)} | ${verdict(d3 < 100)} |`);

  const misses = (label: string, a: Agreement) => {
    const rows = [...a.unmatched].sort((x, y) => y[1] - x[1]).map(([k, n]) => `| ${label} | server target: ${k} | ${n} |`);
    const extra = [...a.extra].sort((x, y) => y[1] - x[1]).map(([k, n]) => `| ${label} | rift edge the server does not report (${k}) | ${n} |`);
    return [...rows, ...extra];
  };

  const body = [
    `Run ${started} with \`npx tsx bench/graph.ts\`: ${cpus().length} cores (${cpus()[0]?.model.split(' ')[0] ?? 'cpu'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Node ${process.version}, rift at \`${head}\`. Load average (1 min) ${load.toFixed(2)} at the start, ${loadavg()[0].toFixed(2)} at the end.`,
    '',
    ...lines,
    '',
    ...targets,
    '',
    '### Disagreements',
    '',
    '| input | what | count |',
    '|---|---|---:|',
    ...(tsAgreement ? misses('TypeScript', tsAgreement) : []),
    ...misses('Python', pyAgreement),
    '',
    '### How it is measured',
    '',
    `- Callers: a seeded sample of up to ${SAMPLE} functions and methods rift indexes under the directories named above. For each, the language server answers \`textDocument/prepareCallHierarchy\` at the declaration's name, then \`callHierarchy/outgoingCalls\`; its targets in the workspace are mapped to the innermost rift declaration holding the target's name position.`,
    "- Rift's answer is the caller's outgoing `calls` and `constructs` edges in the graph. Identities compare with overload suffixes (`~2`) dropped and a constructor (`constructor`, `__init__`) standing for its class, since rift links `new X()` / `X()` to the class.",
    '- Precision = matched / rift edges. Recall = matched / server targets that name a declaration rift indexes; the row below it divides by every server target in the workspace (local functions, object-literal methods and properties rift does not declare count as misses there).',
    '- Traversal: `SearchService.search({traversal})` in process (the MCP stdio hop adds ≈ 0.7 ms), default page of 20, from 300 seeds drawn from declarations with outgoing edges. The peer row times one prepare + outgoingCalls round trip to pyright for 100 of those seeds (depth 1 only: the server has no multi-hop request).',
    '- Index overhead: `Engine.build()` cold (no `.rift/`) with `[providers.binding] enabled = false`, then `true`, in this process; the store size is `rift.db` after a WAL checkpoint.',
  ].join('\n');
  writeSection(join(ROOT, 'docs', 'benchmarks.md'), '## Relationship graph (bench/graph.ts)', body);
  process.stdout.write(body + '\n');
  if (ts) rmSync(ts.dir, { recursive: true, force: true });
  rmSync(mypy.dir, { recursive: true, force: true });
  rmSync(pyDir, { recursive: true, force: true });
}

await main();
