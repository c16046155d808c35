import { execFileSync, spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { appendFileSync, copyFileSync, cpSync, existsSync, lstatSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { stopServer } from '../src/mcp/discovery.ts';
import { pidAlive, readLock } from '../src/mcp/lock.ts';

// Small helpers shared by the benchmarks in bench/: timed child processes, a `rift mcp` client,
// percentiles, a seeded PRNG, tree copies and the docs/benchmarks.md section writer.

export const TIME_BIN = '/usr/bin/time';

export interface Timed {
  status: number | null;
  stdout: string;
  stderr: string;
  /** Wall time measured around the spawn (includes process start-up). */
  wallMs: number;
  /** Peak resident set of the measured process in KiB, when /usr/bin/time is available. */
  maxRssKb: number | null;
  cpuS: number | null;
}

/**
 * Runs a command to completion, under GNU time when present so peak RSS is the measured
 * program's own (threads included), not this process's.
 */
export function timed(cmd: string, args: readonly string[], options: SpawnSyncOptions & { timeoutMs: number }): Timed {
  const useTime = existsSync(TIME_BIN);
  const scratch = useTime ? mkdtempSync(join(tmpdir(), 'rift-bench-time-')) : null;
  const report = scratch ? join(scratch, 'time.txt') : '';
  const [file, argv] = useTime ? [TIME_BIN, ['-o', report, '-f', '%M %U %S', cmd, ...args]] : [cmd, [...args]];
  const started = performance.now();
  const r = spawnSync(file, argv, { ...options, timeout: options.timeoutMs, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const wallMs = performance.now() - started;
  let maxRssKb: number | null = null;
  let cpuS: number | null = null;
  if (scratch) {
    // GNU time prefixes "Command exited with non-zero status N" on failure; the numbers are last.
    const last = readFileSync(report, 'utf8').trim().split('\n').pop() ?? '';
    const [rss, user, sys] = last.split(' ').map(Number);
    if (Number.isFinite(rss)) maxRssKb = rss;
    if (Number.isFinite(user) && Number.isFinite(sys)) cpuS = user + sys;
    rmSync(scratch, { recursive: true, force: true });
  }
  if (r.error) throw new Error(`${cmd} failed to run: ${r.error.message}`);
  return { status: r.status, stdout: String(r.stdout), stderr: String(r.stderr), wallMs, maxRssKb, cpuS };
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export function median(values: readonly number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}

/** mulberry32: a tiny deterministic PRNG so sampled inputs are the same on every run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Copies `src` to `dst`, skipping any entry for which `skip(relativePath, name)` is true. */
export function copyTree(src: string, dst: string, skip: (rel: string, name: string) => boolean): void {
  cpSync(src, dst, {
    recursive: true,
    verbatimSymlinks: true,
    filter: (from) => {
      if (from === src) return true;
      const rel = from.slice(src.length + 1);
      return !skip(rel, rel.slice(rel.lastIndexOf('/') + 1));
    },
  });
}

/** Calls `visit` with every regular file below `dir` (symlinks not followed, `.rift/` skipped). */
export function forEachFile(dir: string, visit: (path: string, name: string) => void): void {
  const stack = [dir];
  while (stack.length > 0) {
    const d = stack.pop()!;
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        if (e.name !== '.rift') stack.push(p);
      } else if (e.isFile()) visit(p, e.name);
    }
  }
}

/** Regular files and their total bytes below `dir` (symlinks not followed, `.rift/` skipped). */
export function treeSize(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  forEachFile(dir, (p) => {
    files++;
    bytes += lstatSync(p).size;
  });
  return { files, bytes };
}

/**
 * Replaces the `## heading` section of a markdown file (up to the next `## ` heading) with
 * `body`, appending it when absent; other sections stay as they are.
 */
export function writeSection(file: string, heading: string, body: string): void {
  const title = '# Benchmarks\n\nEach benchmark in `bench/` compares rift with a peer tool on the same input in the same run.\n';
  const text = existsSync(file) ? readFileSync(file, 'utf8') : title;
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.trim() === heading);
  const section = `${heading}\n\n${body.trimEnd()}\n`;
  let out: string;
  if (start < 0) {
    out = `${text.trimEnd()}\n\n${section}`;
  } else {
    let end = lines.findIndex((l, i) => i > start && /^## /.test(l));
    if (end < 0) end = lines.length;
    const before = lines.slice(0, start).join('\n').trimEnd();
    const after = lines.slice(end).join('\n').trim();
    out = `${before}\n\n${section}${after ? `\n${after}\n` : ''}`;
  }
  writeFileSync(file, out);
}

export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return 'n/a';
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 10) return `${ms.toFixed(0)} ms`;
  return `${ms.toFixed(1)} ms`;
}

export function fmtMb(kb: number | null): string {
  return kb === null ? 'n/a' : `${(kb / 1024).toFixed(0)} MB`;
}

export interface RiftClient {
  client: Client;
  /** A tool call's structured result. */
  call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/**
 * Starts `rift mcp` on `dir` over stdio (from source, through tsx), the way agents run it, and
 * connects a client: by default the proxy to the workspace's shared server, with `standalone` a
 * server of its own. A call waits up to `callTimeoutMs` (engine-backed changes can be slow).
 */
export async function connectRift(dir: string, opts: { standalone?: boolean; callTimeoutMs?: number } = {}): Promise<RiftClient> {
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', tsx, fileURLToPath(new URL('../src/cli/entry.ts', import.meta.url)), 'mcp', ...(opts.standalone ? ['--standalone'] : [])],
    cwd: dir,
    env: { ...(process.env as Record<string, string>), RIFT_HOME: mkdtempSync(join(tmpdir(), 'rift-home-')), RIFT_LOG: 'warn' },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'bench', version: '0' });
  await client.connect(transport);
  const timeout = opts.callTimeoutMs ?? 300_000;
  return {
    client,
    call: async (name, args) => (await client.callTool({ name, arguments: args }, undefined, { timeout })).structuredContent as Record<string, unknown>,
    close: () => client.close(),
  };
}

/** The Python standard library of the machine's python3 (the real tree every benchmark uses). */
export function pythonStdlibRoot(): string {
  const r = spawnSync('python3', ['-c', 'import sysconfig;print(sysconfig.get_paths()["stdlib"])'], { encoding: 'utf8', timeout: 10_000 });
  if (r.status !== 0) throw new Error(`python3 failed: ${r.stderr}`);
  return r.stdout.trim();
}

/** site-packages is whatever pip installed, not the stdlib; __pycache__ is build output. */
export const skipStdlibNoise = (rel: string, name: string): boolean => rel === 'site-packages' || name === '__pycache__';

/**
 * `n` copies of `src` under `dst/copy-K/`, each made byte-distinct by a marker line appended to
 * every regular file (so no two copies share a digest and nothing can be shared between them).
 */
export function distinctCopies(src: string, dst: string, n: number, skip: (rel: string, name: string) => boolean): void {
  for (let k = 0; k < n; k++) {
    const dir = join(dst, `copy-${k}`);
    copyTree(src, dir, skip);
    forEachFile(dir, (p) => appendFileSync(p, `\n# rift-bench copy ${k}\n`));
  }
}

/** `rift index --json` on `dir` under GNU time: wall, CPU, peak RSS and the reported stats. */
export function riftIndexRun(riftBin: string, dir: string, timeoutMs = 1_800_000): { t: Timed; stats: Record<string, number> } {
  const env = { ...process.env };
  delete env.RIFT_LOG;
  const t = timed(process.execPath, [riftBin, 'index', '--json', '--workspace', dir], { env, timeoutMs });
  if (t.status !== 0) throw new Error(`rift index failed (${t.status}): ${t.stderr}`);
  return { t, stats: JSON.parse(t.stdout.trim().split('\n').pop() ?? '{}') as Record<string, number> };
}

/** Universal Ctags, or an error naming where it was looked for. */
export function ctagsBinary(): string {
  for (const c of ['/usr/bin/ctags', '/usr/local/bin/ctags']) if (existsSync(c)) return c;
  const r = spawnSync('ctags', ['--version'], { encoding: 'utf8' });
  if (r.status === 0 && /Universal Ctags/.test(r.stdout)) return 'ctags';
  throw new Error('Universal Ctags not found (expected /usr/bin/ctags)');
}

/** Bytes of `.rift/rift.db` plus its WAL, after a checkpoint by the reader. */
export function storeBytes(dir: string): number {
  const db = join(dir, '.rift', 'rift.db');
  let n = 0;
  for (const f of [db, `${db}-wal`]) if (existsSync(f)) n += lstatSync(f).size;
  return n;
}

/** The 1-minute load average, for the line each benchmark prints beside its figures. */
export function load1(): number {
  return loadavg()[0];
}

/**
 * Time from spawning `rift mcp` on a tree without `.rift/` to its first answered `get_symbol`
 * (and that answer's warnings), through the SDK's stdio client as agents run it; the build is
 * then left to finish before the server is closed.
 */
export async function firstAnswer(riftBin: string, dir: string, name: string): Promise<{ ms: number; hits: number; warnings: string[]; connectMs: number }> {
  const env = { ...(process.env as Record<string, string>), RIFT_HOME: mkdtempSync(join(tmpdir(), 'rift-home-')) };
  const started = performance.now();
  const transport = new StdioClientTransport({ command: process.execPath, args: [riftBin, 'mcp', '--workspace', dir], env, stderr: 'ignore' });
  const client = new Client({ name: 'rift-bench', version: '0.0.0' });
  await client.connect(transport);
  const connectMs = performance.now() - started;
  try {
    const r = (await client.callTool({ name: 'get_symbol', arguments: { name } })) as unknown as { structuredContent: { hits: unknown[]; warnings: Array<{ kind: string }> } };
    return { ms: performance.now() - started, hits: r.structuredContent.hits.length, warnings: r.structuredContent.warnings.map((w) => w.kind), connectMs };
  } finally {
    await client.close();
    await stopWorkspaceServer(dir);
  }
}

/**
 * Stops the workspace server `rift mcp` started on `dir` (as `rift server --stop` does) and waits
 * for its process to end: left running, it would go on building (and loading the machine) after
 * the measurement.
 */
export async function stopWorkspaceServer(dir: string): Promise<void> {
  const lock = readLock(dir);
  if (lock === null || lock === 'malformed') return;
  await stopServer(dir, lock);
  while (pidAlive(lock.pid)) await sleep(20);
}

/**
 * The installed form of the program, built apart from the working tree's dist/ (which a running
 * test or edit may rebuild): the sources compiled by tsconfig.build.json and bundled by
 * scripts/bundle.mjs, as `npm ci` builds them and bin/rift.js runs them. `entry` is the file to
 * run with node; remove `dir` when done.
 */
export function buildInstalled(): { entry: string; dir: string } {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const dir = mkdtempSync(join(tmpdir(), 'rift-bench-dist-'));
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', join(dir, 'dist')], { stdio: 'inherit' });
  copyFileSync(join(root, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  execFileSync(process.execPath, [join(root, 'scripts', 'bundle.mjs')], { cwd: dir, stdio: 'inherit' });
  return { entry: join(dir, 'dist', 'bundle', 'entry.js'), dir };
}
