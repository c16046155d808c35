// The shared-server benchmark: 8 agents (MCP clients) on one tree, each through its own
// `rift mcp --standalone` (an index, a watcher and parse workers per agent) against 8
// `rift mcp` proxies sharing one `rift server`, in the same run on the same tree.
//
//   npx tsx bench/server.ts [--no-write] [--clients N] [--tree DIR]
//
// Tree: a copy of the Python standard library (or --tree). For each mode, from a cold `.rift/`:
//   1. start N clients at once; time until every one has its first `get_symbol` answer;
//   2. a workload: each client runs 20 `get_symbol` and 20 `search` calls;
//   3. an external edit of one file, and the time until every client sees it;
//   then the summed resident memory (peak sampled every 100 ms, and at the end) and the CPU
//   time (user + system, /proc/<pid>/stat) of every rift process the mode started.
// Runs the compiled program (tsconfig.build.json), as an installed rift does.
// Writes the `## Shared server (bench/server.ts)` section of docs/benchmarks.md unless --no-write.

import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { buildInstalled, copyTree, sleep, writeSection } from './lib.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOC = join(ROOT, 'docs', 'benchmarks.md');
const HEADING = '## Shared server (bench/server.ts)';

const args = process.argv.slice(2);
const write = !args.includes('--no-write');
const flag = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const clients = Number(flag('--clients') ?? 8);
const CALLS = 20;

/** Resident KiB and CPU seconds of one process (threads included), or null when it is gone. */
function sample(pid: number): { rssKb: number; cpuS: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime + stime
    return { rssKb: rss, cpuS: ticks / 100 };
  } catch {
    return null;
  }
}

function serverPid(tree: string): number | null {
  const lock = join(tree, '.rift', 'server.json');
  return existsSync(lock) ? (JSON.parse(readFileSync(lock, 'utf8')) as { pid: number }).pid : null;
}

interface ModeResult {
  mode: string;
  failures: number;
  failureKinds: string[];
  processes: number;
  firstAnswerMs: number;
  workloadMs: number;
  editSeenMs: number;
  peakRssMb: number;
  endRssMb: number;
  cpuS: number;
}

async function runMode(entry: string, tree: string, standalone: boolean): Promise<ModeResult> {
  rmSync(join(tree, '.rift'), { recursive: true, force: true });
  const home = mkdtempSync(join(tmpdir(), 'rift-bench-home-'));
  const started = performance.now();
  const conns = await Promise.all(
    Array.from({ length: clients }, async (_, i) => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [entry, 'mcp', ...(standalone ? ['--standalone'] : [])],
        cwd: tree,
        env: { PATH: process.env.PATH ?? '', HOME: home, RIFT_HOME: home, RIFT_LOG: 'error' },
        stderr: 'ignore',
      });
      const client = new Client({ name: `bench-${i}`, version: '0' });
      await client.connect(transport);
      return { client, transport };
    }),
  );
  const pids = () => [...conns.map((c) => c.transport.pid!), ...(standalone ? [] : [serverPid(tree)].filter((p): p is number => p !== null))];
  let peakKb = 0;
  const sampler = setInterval(() => {
    const kb = pids().reduce((sum, p) => sum + (sample(p)?.rssKb ?? 0), 0);
    peakKb = Math.max(peakKb, kb);
  }, 100);

  // A failed call is counted and tried again: several standalone servers on one cold tree
  // contend for the one store file, which a user meets as errors.
  let failures = 0;
  const kinds = new Map<string, number>();
  const call = async (c: Client, name: string, a: Record<string, unknown>) => {
    for (;;) {
      try {
        return await c.callTool({ name, arguments: a });
      } catch (e) {
        failures++;
        const err = e as { data?: { code?: string; message?: string }; message: string };
        const kind = err.data?.code ? `${err.data.code}: ${(err.data.message ?? '').slice(0, 80)}` : err.message.slice(0, 80);
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
        if (failures > 10_000) throw e;
        await sleep(50);
      }
    }
  };
  await Promise.all(conns.map((c) => call(c.client, 'get_symbol', { name: 'ArgumentParser' })));
  const firstAnswerMs = performance.now() - started;

  const names = ['ArgumentParser', 'urlopen', 'JSONDecoder', 'Thread', 'Path', 'dataclass', 'OrderedDict', 'Popen', 'Logger', 'TarFile'];
  const queries = ['parse command line arguments', 'open a url', 'decode json', 'rotate log files', 'temporary directory', 'sqlite cursor', 'zip archive', 'http server', 'base64 encode', 'csv reader'];
  const w0 = performance.now();
  await Promise.all(
    conns.map(async (c) => {
      for (let k = 0; k < CALLS; k++) {
        await call(c.client, 'get_symbol', { name: names[k % names.length] });
        await call(c.client, 'search', { query: queries[k % queries.length], limit: 10 });
      }
    }),
  );
  const workloadMs = performance.now() - w0;

  const marker = `rift_bench_marker_${Date.now().toString(36)}`;
  const e0 = performance.now();
  appendFileSync(join(tree, 'glob.py'), `\n\ndef ${marker}():\n    return 1\n`);
  await Promise.all(
    conns.map(async (c) => {
      for (;;) {
        const r = (await call(c.client, 'get_symbol', { name: marker })).structuredContent as { hits: unknown[]; warnings: unknown[] };
        if (r.hits.length === 1 && r.warnings.length === 0) return;
        await sleep(10);
      }
    }),
  );
  const editSeenMs = performance.now() - e0;

  clearInterval(sampler);
  const end = pids().map(sample).filter((s): s is NonNullable<typeof s> => s !== null);
  const endKb = end.reduce((s, x) => s + x.rssKb, 0);
  const cpuS = end.reduce((s, x) => s + x.cpuS, 0);
  const processes = end.length;
  await Promise.all(conns.map((c) => c.client.close()));
  if (!standalone) spawnSync(process.execPath, [entry, 'server', '--stop', '--workspace', tree], { stdio: 'ignore' });
  // Undo the edit so the next mode starts from the same tree.
  const text = readFileSync(join(tree, 'glob.py'), 'utf8');
  writeFileSync(join(tree, 'glob.py'), text.slice(0, text.indexOf(`\n\ndef ${marker}`)));
  rmSync(home, { recursive: true, force: true });
  return {
    mode: standalone ? `${clients} × rift mcp --standalone` : `${clients} × rift mcp + 1 rift server`,
    failures,
    failureKinds: [...kinds].map(([k, n]) => `${n} × ${k}`),
    processes,
    firstAnswerMs,
    workloadMs,
    editSeenMs,
    peakRssMb: Math.max(peakKb, endKb) / 1024,
    endRssMb: endKb / 1024,
    cpuS,
  };
}

async function main(): Promise<void> {
  const given = flag('--tree');
  const stdlib = given ?? (spawnSync('python3', ['-c', 'import sysconfig;print(sysconfig.get_paths()["stdlib"])'], { encoding: 'utf8' }).stdout.trim());
  const what = given ? `a copy of ${given}` : 'a copy of the Python standard library';
  const tree = mkdtempSync(join(tmpdir(), 'rift-bench-tree-'));
  copyTree(stdlib, tree, (_rel, name) => name === '__pycache__' || name === 'site-packages');
  const files = spawnSync('find', [tree, '-type', 'f'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).length;
  const built = buildInstalled();
  const entry = built.entry;
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  const results = [await runMode(entry, tree, true), await runMode(entry, tree, false)];
  rmSync(tree, { recursive: true, force: true });
  rmSync(built.dir, { recursive: true, force: true });
  const [a, b] = results;
  const lines = [
    `${clients} MCP clients on one tree (${what}, ${files} files), each mode from a cold \`.rift/\`, compiled rift, ${cpus().length} cores, load average before the run ${load}. Memory is the sum over every rift process the mode started (peak sampled every 100 ms); CPU is user + system time of those processes.`,
    '',
    '| mode | rift processes | all first answers | workload (20 get_symbol + 20 search per client) | edit seen by all | peak RSS | RSS at end | CPU | failed calls (retried) |',
    '|---|---|---|---|---|---|---|---|---|',
    ...results.map((r) => `| ${r.mode} | ${r.processes} | ${(r.firstAnswerMs / 1000).toFixed(1)} s | ${(r.workloadMs / 1000).toFixed(2)} s | ${r.editSeenMs.toFixed(0)} ms | ${r.peakRssMb.toFixed(0)} MB | ${r.endRssMb.toFixed(0)} MB | ${r.cpuS.toFixed(1)} s | ${r.failures} |`),
    '',
    ...results.flatMap((r) => (r.failureKinds.length > 0 ? [`Failed calls, ${r.mode}: ${r.failureKinds.join('; ')}.`, ''] : [])),
    `Shared server against standalone: ${(b.peakRssMb / a.peakRssMb * 100).toFixed(0)} % of the peak memory, ${(b.cpuS / a.cpuS * 100).toFixed(0)} % of the CPU; first answers ${(b.firstAnswerMs / a.firstAnswerMs).toFixed(2)}× the standalone time.`,
    '',
  ];
  const section = lines.join('\n');
  process.stdout.write(`${section}\n`);
  if (write) writeSection(DOC, HEADING, section);
  rmSync(join(entry, '..', '..', '..'), { recursive: true, force: true });
}

await main();
