// The language-engine benchmark: renames and file moves through `rift mcp` on real code, each
// checked by the project's own type checker afterwards, beside the textual peer (a whole-word
// replace across the tree for renames, a plain `git mv` for moves) on the same cases.
//
//   npx tsx bench/engine.ts [--quick]
//
// TypeScript: ajv's sources (`node_modules/ajv/lib`, 100+ files) with tsc --noEmit, 50 renames
// and 20 moves. Python: the standard library's asyncio package copied as `aio/`, checked with
// the pyright CLI, 30 renames and 20 moves (each also checked by importing every module with
// python3). rift's cases run one after the other on one tree (a case whose
// check fails is reverted before the next); each peer case starts from the original tree.
// --quick: fewer cases; prints without touching the doc. --only=typescript|python: one half.
// Writes the `## Language engines (bench/engine.ts)` section of docs/benchmarks.md.

import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Engine } from '../src/services/engine.ts';
import { connectRift, fmtMs, percentile, seededRandom, sleep, writeSection } from './lib.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOC = join(ROOT, 'docs', 'benchmarks.md');
const HEADING = '## Language engines (bench/engine.ts)';
const QUICK = process.argv.includes('--quick');
/** `--only=typescript` or `--only=python` runs one half and prints its rows without touching the doc. */
const ONLY = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length) ?? null;
const TS_RENAMES = QUICK ? 6 : 50;
const TS_MOVES = QUICK ? 3 : 20;
const PY_RENAMES = QUICK ? 4 : 30;
const PY_MOVES = QUICK ? 3 : 20;
const require = createRequire(import.meta.url);
const TSC = join(dirname(require.resolve('typescript/package.json')), 'lib', 'tsc.js');
const PYRIGHT = join(dirname(require.resolve('pyright/package.json')), 'index.js');

interface Case {
  symbol: string;
  name: string;
  path: string;
}

interface Outcome {
  ok: boolean;
  ms: number;
  detail: string;
}

function git(dir: string, ...args: string[]): string {
  const r = spawnSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@localhost', '-c', 'core.autocrlf=false', ...args], { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

function commitAll(dir: string, message: string): void {
  git(dir, 'add', '-A');
  if (git(dir, 'status', '--porcelain').trim() !== '') git(dir, 'commit', '-qm', message);
}

function resetHard(dir: string): void {
  git(dir, 'reset', '-q', '--hard');
  git(dir, 'clean', '-qfd', '-e', '.rift');
}

/** tsc --noEmit over the project: true when it reports no error. */
function tscPasses(dir: string): { ok: boolean; out: string } {
  const r = spawnSync(process.execPath, [TSC, '-p', dir, '--incremental', '--tsBuildInfoFile', join(dir, '.rift', 'bench.tsbuildinfo')], { encoding: 'utf8' });
  return { ok: r.status === 0, out: (r.stdout + r.stderr).trim().split('\n').slice(0, 3).join(' | ') };
}

/** pyright's error count over the project. */
function pyrightErrors(dir: string): number {
  const r = spawnSync(process.execPath, [PYRIGHT, '--outputjson', '-p', dir], { cwd: dir, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return (JSON.parse(r.stdout) as { summary: { errorCount: number } }).summary.errorCount;
}

/** Imports every module of the tree with python3 (Windows-only modules and `__main__` aside). */
function importsAll(dir: string): { ok: boolean; out: string } {
  const modules = listFiles(dir, '.py')
    .filter((p) => !/(__main__|windows_\w+)\.py$/.test(p))
    .map((p) => p.slice(0, -3).replace(/\/__init__$/, '').split('/').join('.'));
  const r = spawnSync('python3', ['-B', '-c', 'import importlib, sys\nfor m in sys.argv[1:]: importlib.import_module(m)', ...modules], { cwd: dir, encoding: 'utf8' });
  return { ok: r.status === 0, out: r.stderr.trim().split('\n').slice(-1)[0] ?? '' };
}

function listFiles(dir: string, ext: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'node_modules' && e.name !== '.rift' && e.name !== '.git') walk(p);
      } else if (e.name.endsWith(ext)) out.push(relative(dir, p));
    }
  };
  walk(dir);
  return out.sort();
}

const word = (name: string) => new RegExp(`(?<![\\p{L}\\p{N}_$])${name.replace(/[$]/g, '\\$&')}(?![\\p{L}\\p{N}_$])`, 'gu');

/** Top-level declarations whose name occurs as a word in at least two files, sampled by seed. */
async function pickCases(dir: string, language: string, ext: string, kinds: readonly string[], n: number, seed: number): Promise<Case[]> {
  const engine = await Engine.open(dir, { watch: false });
  try {
    await engine.build();
    const store = engine.indexer.store;
    const texts = new Map(listFiles(dir, ext).map((p) => [p, readFileSync(join(dir, p), 'utf8')]));
    const candidates: Case[] = [];
    const seen = new Set<string>();
    for (const f of store.files()) {
      if (f.language !== language) continue;
      for (const row of store.symbolsOfFile(f.path)) {
        if (row.container !== null || !kinds.includes(row.kind) || row.name.length < 4 || row.qname.includes('~') || row.name.startsWith('__')) continue;
        if (seen.has(row.name)) continue;
        const files = [...texts.values()].filter((t) => word(row.name).test(t)).length;
        if (files < 2) continue;
        seen.add(row.name);
        candidates.push({ symbol: `rift://symbol/${language}/${f.path}/${row.qname}`, name: row.name, path: f.path });
      }
    }
    const rnd = seededRandom(seed);
    for (let i = candidates.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [candidates[i], candidates[j]] = [candidates[j], candidates[i]];
    }
    return candidates.slice(0, n);
  } finally {
    await engine.close();
  }
}

/** Resends a call that failed `retry: same_request` (an engine still loading), as the contract asks a client to. */
async function persist(run: () => Promise<Record<string, unknown>>): Promise<Record<string, unknown>> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (e) {
      const retry = (e as { data?: { retry?: string } }).data?.retry;
      if (retry !== 'same_request' || attempt >= 20) throw e;
      await sleep(2000);
    }
  }
}

/** One rift change, then the checker; a failed case is reverted so the next starts clean. */
async function riftCase(dir: string, run: () => Promise<Record<string, unknown>>, check: () => { ok: boolean; out: string }, label: string): Promise<Outcome> {
  const t0 = performance.now();
  const r = await persist(run);
  const ms = performance.now() - t0;
  if (r.status !== 'applied') {
    resetHard(dir);
    return { ok: false, ms, detail: `${label}: ${r.status} ${JSON.stringify(r.preconditions ?? r.diagnostics ?? '').slice(0, 200)}` };
  }
  const c = check();
  if (c.ok) commitAll(dir, label);
  else {
    resetHard(dir);
    await sleep(300); // the watcher brings the index and the engine back to the reverted bytes
  }
  return { ok: c.ok, ms, detail: c.ok ? '' : `${label}: ${c.out}` };
}

function peerRename(dir: string, files: readonly string[], from: string, to: string): number {
  const t0 = performance.now();
  for (const p of files) {
    const abs = join(dir, p);
    const text = readFileSync(abs, 'utf8');
    const next = text.replace(word(from), to);
    if (next !== text) writeFileSync(abs, next);
  }
  return performance.now() - t0;
}

function summary(label: string, outcomes: readonly Outcome[]): string {
  const ms = outcomes.map((o) => o.ms).sort((a, b) => a - b);
  const ok = outcomes.filter((o) => o.ok).length;
  return `| ${label} | ${ok} / ${outcomes.length} (${((ok / Math.max(1, outcomes.length)) * 100).toFixed(0)} %) | ${fmtMs(percentile(ms, 50))} | ${fmtMs(percentile(ms, 95))} |`;
}

async function typescriptRun(): Promise<{ rows: string[]; failures: string[]; files: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'rift-bench-engine-ts-'));
  const peerDir = mkdtempSync(join(tmpdir(), 'rift-bench-engine-tspeer-'));
  try {
    for (const d of [dir, peerDir]) {
      cpSync(join(dirname(require.resolve('ajv/package.json')), 'lib'), join(d, 'lib'), { recursive: true });
      symlinkSync(join(ROOT, 'node_modules'), join(d, 'node_modules'));
      writeFileSync(
        join(d, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: { strict: true, target: 'es2018', module: 'commonjs', moduleResolution: 'node', resolveJsonModule: true, noEmit: true, skipLibCheck: true, types: ['node'] },
          include: ['lib'],
          // Optional runtime pieces whose packages (re2, require-from-string types) ajv does not install.
          exclude: ['lib/runtime/re2.ts', 'lib/standalone'],
        }),
      );
      writeFileSync(join(d, '.gitignore'), 'node_modules\n.rift\n');
      mkdirSync(join(d, '.rift'), { recursive: true });
      git(d, 'init', '-q');
      commitAll(d, 'original');
    }
    const baseline = tscPasses(dir);
    if (!baseline.ok) throw new Error(`tsc fails before any change: ${baseline.out}`);
    const files = listFiles(dir, '.ts');
    const cases = await pickCases(dir, 'typescript', '.ts', ['function', 'class', 'interface', 'type', 'enum', 'constant', 'variable'], TS_RENAMES, 0x7e57);
    const importers = files.filter((p) => !p.startsWith('lib/standalone') && p !== 'lib/runtime/re2.ts');
    const moves = importers.filter((p) => files.some((q) => q !== p && readFileSync(join(dir, q), 'utf8').includes(`/${basename(p, '.ts')}"`)));
    const rnd = seededRandom(0x30e5);
    const movePicks: string[] = [];
    while (movePicks.length < Math.min(TS_MOVES, moves.length)) {
      const p = moves[Math.floor(rnd() * moves.length)];
      if (!movePicks.includes(p)) movePicks.push(p);
    }

    const rift = await connectRift(dir);
    const renames: Outcome[] = [];
    const failures: string[] = [];
    try {
      await rift.call('get_symbol', { name: 'Ajv', include: [], limit: 1 });
      for (const [k, c] of cases.entries()) {
        const o = await riftCase(dir, () => rift.call('rename_symbol', { symbol: c.symbol, new_name: `${c.name}Renamed` }), () => tscPasses(dir), `rename ${c.name}`);
        renames.push(o);
        if (!o.ok) failures.push(o.detail);
        process.stderr.write(`ts rename ${k + 1}/${cases.length} ${o.ok ? 'ok' : 'FAIL'} ${fmtMs(o.ms)}\n`);
      }
      const moveOutcomes: Outcome[] = [];
      for (const [k, p] of movePicks.entries()) {
        const dest = `lib/moved/${dirname(p).split('/').slice(1).join('_') || 'top'}_${basename(p)}`;
        const o = await riftCase(dir, () => rift.call('move_file', { path: p, destination: dest }), () => tscPasses(dir), `move ${p}`);
        moveOutcomes.push(o);
        if (!o.ok) failures.push(o.detail);
        process.stderr.write(`ts move ${k + 1}/${movePicks.length} ${o.ok ? 'ok' : 'FAIL'} ${fmtMs(o.ms)}\n`);
      }
      // The peers, each case from the original tree.
      const peerRenames: Outcome[] = cases.map((c) => {
        const ms = peerRename(peerDir, files, c.name, `${c.name}Renamed`);
        const ok = tscPasses(peerDir).ok;
        resetHard(peerDir);
        return { ok, ms, detail: '' };
      });
      const peerMoves: Outcome[] = movePicks.map((p) => {
        const dest = `lib/moved/${dirname(p).split('/').slice(1).join('_') || 'top'}_${basename(p)}`;
        const t0 = performance.now();
        mkdirSync(join(peerDir, 'lib/moved'), { recursive: true });
        renameSync(join(peerDir, p), join(peerDir, dest));
        const ms = performance.now() - t0;
        const ok = tscPasses(peerDir).ok;
        resetHard(peerDir);
        return { ok, ms, detail: '' };
      });
      return {
        rows: [
          summary(`rift \`rename_symbol\` (typescript-language-server), then \`tsc --noEmit\``, renames),
          summary('peer: whole-word replace across the tree, then `tsc --noEmit`', peerRenames),
          summary(`rift \`move_file\` (willRenameFiles), then \`tsc --noEmit\``, moveOutcomes),
          summary('peer: `mv` without import updates, then `tsc --noEmit`', peerMoves),
        ],
        failures,
        files: files.length,
      };
    } finally {
      await rift.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(peerDir, { recursive: true, force: true });
  }
}

async function pythonRun(): Promise<{ rows: string[]; failures: string[]; files: number; baseline: number }> {
  const stdlib = spawnSync('python3', ['-c', 'import asyncio,os;print(os.path.dirname(asyncio.__file__))'], { encoding: 'utf8' }).stdout.trim();
  const dir = mkdtempSync(join(tmpdir(), 'rift-bench-engine-py-'));
  const peerDir = mkdtempSync(join(tmpdir(), 'rift-bench-engine-pypeer-'));
  try {
    for (const d of [dir, peerDir]) {
      cpSync(stdlib, join(d, 'aio'), { recursive: true, filter: (s) => !s.includes('__pycache__') });
      writeFileSync(join(d, 'pyrightconfig.json'), JSON.stringify({ include: ['aio'] }));
      writeFileSync(join(d, '.gitignore'), '.rift\n');
      mkdirSync(join(d, '.rift'), { recursive: true });
      git(d, 'init', '-q');
      commitAll(d, 'original');
    }
    const baseline = pyrightErrors(dir);
    const files = listFiles(dir, '.py');
    const cases = await pickCases(dir, 'python', '.py', ['function', 'class', 'variable', 'constant'], PY_RENAMES, 0x9e7);
    const check = () => {
      const n = pyrightErrors(dir);
      return { ok: n === baseline, out: `pyright reports ${n} errors, ${baseline} before` };
    };
    // Modules some other module imports by name (asyncio imports its own modules relatively).
    const importable = files.filter((p) => !/(__init__|__main__|windows_\w+)\.py$/.test(p));
    const imported = importable.filter((p) => {
      const name = basename(p, '.py');
      const spelled = new RegExp(`^\\s*from \\.${name}\\b|^\\s*from \\. import [^\\n]*\\b${name}\\b`, 'm');
      return files.some((q) => q !== p && spelled.test(readFileSync(join(dir, q), 'utf8')));
    });
    const rnd = seededRandom(0x5e7e);
    const movePicks: string[] = [];
    while (movePicks.length < Math.min(PY_MOVES, imported.length)) {
      const p = imported[Math.floor(rnd() * imported.length)];
      if (!movePicks.includes(p)) movePicks.push(p);
    }
    // Alternately one and two package levels deeper than asyncio's own modules.
    const moveDest = (p: string, k: number) => `aio/moved/${k % 2 === 0 ? '' : 'deep/'}${basename(p)}`;
    const moveCheck = (d: string) => () => {
      const n = pyrightErrors(d);
      const imports = importsAll(d);
      return { ok: n === baseline && imports.ok, out: `pyright reports ${n} errors, ${baseline} before; ${imports.ok ? 'every module imports' : imports.out}` };
    };
    const rift = await connectRift(dir);
    const renames: Outcome[] = [];
    const moves: Outcome[] = [];
    const failures: string[] = [];
    try {
      await rift.call('get_symbol', { name: 'Future', include: [], limit: 1 });
      for (const [k, c] of cases.entries()) {
        const o = await riftCase(dir, () => rift.call('rename_symbol', { symbol: c.symbol, new_name: `${c.name}_renamed` }), check, `rename ${c.name}`);
        renames.push(o);
        if (!o.ok) failures.push(o.detail);
        process.stderr.write(`py rename ${k + 1}/${cases.length} ${o.ok ? 'ok' : 'FAIL'} ${fmtMs(o.ms)}\n`);
      }
      const before = importsAll(dir);
      if (!before.ok) throw new Error(`the modules do not import before the moves: ${before.out}`);
      for (const [k, p] of movePicks.entries()) {
        const o = await riftCase(dir, () => rift.call('move_file', { path: p, destination: moveDest(p, k) }), moveCheck(dir), `move ${p}`);
        moves.push(o);
        if (!o.ok) failures.push(o.detail);
        process.stderr.write(`py move ${k + 1}/${movePicks.length} ${o.ok ? 'ok' : 'FAIL'} ${fmtMs(o.ms)}\n`);
      }
    } finally {
      await rift.close();
    }
    const peer: Outcome[] = cases.map((c) => {
      const ms = peerRename(peerDir, files, c.name, `${c.name}_renamed`);
      const ok = pyrightErrors(peerDir) === baseline;
      resetHard(peerDir);
      return { ok, ms, detail: '' };
    });
    const peerMoves: Outcome[] = movePicks.map((p, k) => {
      const dest = moveDest(p, k);
      const t0 = performance.now();
      mkdirSync(dirname(join(peerDir, dest)), { recursive: true });
      renameSync(join(peerDir, p), join(peerDir, dest));
      const ms = performance.now() - t0;
      const ok = moveCheck(peerDir)().ok;
      resetHard(peerDir);
      return { ok, ms, detail: '' };
    });
    return {
      rows: [
        summary('rift `rename_symbol` (pyright), then pyright: as many errors as before', renames),
        summary('peer: whole-word replace across the tree, then pyright', peer),
        summary('rift `move_file` (imports rewritten from the syntax tree), then pyright and `python3 -c "import …"` of every module', moves),
        summary('peer: `mv` without import updates, then pyright and the imports', peerMoves),
      ],
      failures,
      files: files.length,
      baseline,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(peerDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  if (ONLY !== null) {
    const half = ONLY === 'python' ? await pythonRun() : await typescriptRun();
    process.stdout.write(`${half.rows.join('\n')}\n\n${half.failures.map((f) => `- ${f}`).join('\n')}\nfiles ${half.files}${'baseline' in half ? `, pyright baseline ${half.baseline}` : ''}\n`);
    return;
  }
  const ts = await typescriptRun();
  const py = await pythonRun();
  const rev = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT }).stdout.toString().trim();
  const failures = [...ts.failures, ...py.failures];
  const body = `Run ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')} with \`npx tsx bench/engine.ts${QUICK ? ' --quick' : ''}\`: ${cpus().length} cores, Node ${process.version}, rift at \`${rev}\`. Load average (1 min) ${loadavg()[0].toFixed(2)} at the end.

- **TypeScript**: ajv's own sources (\`node_modules/ajv/lib\`, ${ts.files} files, strict \`tsconfig.json\`; \`tsc --noEmit\` passes before any change), served by \`rift mcp\` over stdio with the zero-config typescript-language-server. ${TS_RENAMES} renames of top-level declarations whose name occurs in at least two files (seeded sample), new name \`<name>Renamed\`; then ${TS_MOVES} moves of imported files into \`lib/moved/\`, a different depth, so importers' and the file's own relative imports change.
- **Python**: the standard library's \`asyncio\` copied as \`aio/\` (${py.files} files), checked with the pyright CLI (${py.baseline} errors before any change, the baseline each case must keep); ${PY_RENAMES} renames, new name \`<name>_renamed\`; then ${PY_MOVES} moves of modules another module imports into \`aio/moved/\` and \`aio/moved/deep/\` (namespace packages, one and two levels deeper), where pyright must report as before and \`python3 -c\` must import every module of the tree (the Windows-only ones and \`__main__\` aside). pyright offers no \`willRenameFiles\`; rift rewrites the imports from the syntax tree.

A case passes when rift applies it and the checker afterwards reports as it did before. A call that fails \`temporarily_unavailable\` (an engine still loading) is resent after 2 s, as the contract asks of a client; its latency counts every attempt. rift's cases run one after another on one tree, as an agent's session would (a failed case is reverted); each peer case starts from the original tree. Latency is the \`rename_symbol\` / \`move_file\` call from request to result, which includes the engine's answer, compiling and witnessing the edits, publication, the index refresh, the surviving-occurrence sweep and the engine diagnostics of every written file.

| measure | passes | p50 | p95 |
|---|---:|---:|---:|
${[...ts.rows, ...py.rows].join('\n')}

${failures.length === 0 ? 'Every rift case passed.' : `Failed rift cases:\n\n${failures.map((f) => `- ${f.replace(/\|/g, '\\|')}`).join('\n')}`}
`;
  process.stdout.write(`${HEADING}\n\n${body}`);
  if (!QUICK) writeSection(DOC, HEADING, body);
}

await main();
