// The concurrency benchmark (issue 10): N = 1, 2, 4, 8 processes change one tree at once —
// inserts beside one shared anchor and read-modify-write increments of one counter — as N
// standalone `rift mcp` servers (the tree lock serializes them), beside a single process serving
// the same N callers, beside N `rift mcp` proxies to one shared server, and beside the peer: N
// shell loops running `git apply` on the same increments, with and without `flock(1)` around each.
// Reports throughput, per-request latency, retries, and lost updates (must be 0 for rift).
//
//   npx tsx bench/concurrency.ts [--quick]
//
// --quick: fewer changes; prints without touching the doc.
// Writes the `## Concurrency (bench/concurrency.ts)` section of docs/benchmarks.md and prints it.

import { spawn, spawnSync } from 'node:child_process';
import { cpus, loadavg, tmpdir } from 'node:os';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectRift, fmtMs, percentile, writeSection, type RiftClient } from './lib.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOC = join(ROOT, 'docs', 'benchmarks.md');
const HEADING = '## Concurrency (bench/concurrency.ts)';
const QUICK = process.argv.includes('--quick');
const WRITERS = [1, 2, 4, 8];
/** Changes each writer applies: half inserts beside the shared anchor, half counter increments. */
const PER_WRITER = QUICK ? 10 : 40;
const OTHER_FILES = 300;
const ATTEMPTS = 1000;

const ANCHOR = 'rift://symbol/python/shared.py/anchor';

function makeTree(dir: string): void {
  writeFileSync(join(dir, 'shared.py'), 'def anchor():\n    pass\n');
  writeFileSync(join(dir, 'counter.txt'), 'count = 0\n');
  for (let i = 0; i < OTHER_FILES; i++) {
    mkdirSync(join(dir, `pkg${i % 10}`), { recursive: true });
    writeFileSync(join(dir, `pkg${i % 10}`, `mod${i}.py`), `def f${i}(a):\n    return a + ${i}\n`);
  }
}

interface Caller {
  call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
}

async function startServer(dir: string, standalone: boolean): Promise<RiftClient> {
  const rift = await connectRift(dir, { standalone });
  // The first read waits for the index build, so timing starts on a ready server.
  await rift.call('get_symbol', { name: 'anchor', include: [] });
  return rift;
}

interface Tally {
  latencies: number[];
  retries: number;
  inserts: number;
  increments: number;
}

/** One writer's work: alternate inserts and increments, retrying a change that met a stale state. */
async function write(dir: string, caller: Caller, tag: string, tally: Tally): Promise<void> {
  for (let k = 0; k < PER_WRITER; k++) {
    for (let attempt = 1; ; attempt++) {
      if (attempt > ATTEMPTS) throw new Error(`${tag}: change ${k} never applied`);
      const started = performance.now();
      let r: Record<string, unknown>;
      if (k % 2 === 0) {
        r = await caller.call('insert_symbol', { anchor: ANCHOR, position: 'after', body: `def ${tag}_${k}():\n    pass` });
      } else {
        const n = Number(/count = (\d+)/.exec(readFileSync(join(dir, 'counter.txt'), 'utf8'))![1]);
        r = await caller.call('patch', { patch: `--- a/counter.txt\n+++ b/counter.txt\n@@ -1 +1 @@\n-count = ${n}\n+count = ${n + 1}\n` });
      }
      tally.latencies.push(performance.now() - started);
      if (r.status === 'applied') {
        if (k % 2 === 0) tally.inserts++;
        else tally.increments++;
        break;
      }
      if (r.status !== 'refused' || r.reason !== 'unmet_precondition') throw new Error(`${tag}: ${JSON.stringify(r)}`);
      tally.retries++;
    }
  }
}

interface Row {
  label: string;
  processes: number;
  callers: number;
  applied: number;
  wallMs: number;
  latencies: number[];
  retries: number;
  lost: number;
}

function lostOn(dir: string, tally: Tally, tags: string[]): number {
  const text = readFileSync(join(dir, 'shared.py'), 'utf8');
  let onDisk = 0;
  for (const tag of tags) for (let k = 0; k < PER_WRITER; k += 2) if (text.includes(`def ${tag}_${k}():`)) onDisk++;
  const count = Number(/count = (\d+)/.exec(readFileSync(join(dir, 'counter.txt'), 'utf8'))![1]);
  return tally.inserts - onDisk + (tally.increments - count);
}

/**
 * `clients` `rift mcp` processes (each its own server when `standalone`, else proxies to the
 * workspace's one shared server), `callers` writers spread over them, all on one fresh tree.
 */
async function runRift(label: string, clients: number, callers: number, standalone: boolean): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), 'rift-bench-conc-'));
  try {
    makeTree(dir);
    const started = await Promise.all(Array.from({ length: clients }, () => startServer(dir, standalone)));
    const tally: Tally = { latencies: [], retries: 0, inserts: 0, increments: 0 };
    const tags = Array.from({ length: callers }, (_, i) => `w${i}`);
    const t0 = performance.now();
    await Promise.all(tags.map((tag, i) => write(dir, started[i % clients], tag, tally)));
    const wallMs = performance.now() - t0;
    await Promise.all(started.map((s) => s.close()));
    return { label, processes: standalone ? clients : clients + 1, callers, applied: tally.inserts + tally.increments, wallMs, latencies: tally.latencies, retries: tally.retries, lost: lostOn(dir, tally, tags) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The peer: `processes` shell loops of `git apply` increments, each step under `flock` when `locked`. */
async function runPeer(processes: number, locked: boolean): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), 'rift-bench-peer-'));
  try {
    makeTree(dir);
    const step = `n=$(sed -n 's/count = //p' counter.txt); printf -- '--- a/counter.txt\\n+++ b/counter.txt\\n@@ -1 +1 @@\\n-count = %s\\n+count = %s\\n' "$n" "$((n+1))" | git apply 2>/dev/null`;
    const body = locked ? 'flock .peer.lock sh -c "$STEP"' : 'sh -c "$STEP"';
    // Each loop retries a refused step like rift's writers do, and says how many of its steps git applied.
    const script = `ok=0; tries=0; while [ $ok -lt ${PER_WRITER} ] && [ $tries -lt ${ATTEMPTS} ]; do tries=$((tries+1)); if ${body}; then ok=$((ok+1)); fi; done; echo "$ok $tries"`;
    const t0 = performance.now();
    const reports = await Promise.all(
      Array.from(
        { length: processes },
        () =>
          new Promise<string>((resolve, reject) => {
            let out = '';
            const p = spawn('sh', ['-c', script], { cwd: dir, env: { ...process.env, STEP: step }, stdio: ['ignore', 'pipe', 'ignore'] });
            p.stdout.on('data', (d: Buffer) => (out += d.toString()));
            p.on('error', reject);
            p.on('exit', () => resolve(out));
          }),
      ),
    );
    const wallMs = performance.now() - t0;
    let applied = 0;
    let tries = 0;
    for (const r of reports) {
      const [ok, t] = r.trim().split(' ').map(Number);
      applied += ok;
      tries += t;
    }
    const count = Number(/count = (\d+)/.exec(readFileSync(join(dir, 'counter.txt'), 'utf8'))![1]);
    return { label: `peer: \`git apply\` loops${locked ? ' under `flock`' : ', no lock'}`, processes, callers: processes, applied, wallMs, latencies: [], retries: tries - applied, lost: applied - count };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  for (const n of WRITERS) {
    rows.push(await runRift(`rift: ${n} standalone server${n > 1 ? 's' : ''}`, n, n, true));
    if (n > 1) rows.push(await runRift(`rift: 1 standalone server, ${n} callers`, 1, n, true));
    rows.push(await runRift(`rift: ${n} \`rift mcp\` prox${n > 1 ? 'ies' : 'y'}, one shared server`, n, n, false));
    rows.push(await runPeer(n, true));
    if (n > 1) rows.push(await runPeer(n, false));
  }
  const rev = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT }).stdout.toString().trim();
  const dirty = spawnSync('git', ['status', '--porcelain'], { cwd: ROOT }).stdout.toString().trim() !== '';
  const table = rows
    .map((r) => {
      const s = [...r.latencies].sort((a, b) => a - b);
      const thr = (r.applied / r.wallMs) * 1000;
      const lat = s.length > 0 ? `${fmtMs(percentile(s, 50))} | ${fmtMs(percentile(s, 95))}` : '— | —';
      const lost = String(r.lost);
      return `| ${r.label} | ${r.processes} | ${r.callers} | ${r.applied} | ${fmtMs(r.wallMs)} | ${thr.toFixed(1)} | ${lat} | ${r.retries} | ${lost} |`;
    })
    .join('\n');
  const lostTotal = rows.filter((r) => r.label.startsWith('rift')).reduce((a, r) => a + r.lost, 0);
  const body = `Run ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')} with \`npx tsx bench/concurrency.ts${QUICK ? ' --quick' : ''}\`: ${cpus().length} cores, Node ${process.version}, rift at \`${rev}\`${dirty ? ' with uncommitted changes' : ''}. Load average (1 min) ${loadavg()[0].toFixed(2)} at the end. Tree: \`shared.py\` (one anchor), \`counter.txt\` and ${OTHER_FILES} other Python files.

Each writer applies ${PER_WRITER} changes to one tree: every other one an \`insert_symbol\` after the one shared anchor, the rest read-modify-write increments of \`count = N\` in \`counter.txt\` by \`patch\` (the writer reads the file, sends \`-count = N\` / \`+count = N+1\`; a patch against a stale read refuses \`unmet_precondition\` and is retried). "N standalone servers" gives each writer a \`rift mcp --standalone\` process of its own: N processes change the tree, serialized by the tree lock (\`.rift/lock.db\`). "1 standalone server, N callers" sends the same N writers' requests concurrently to one process (its in-process lane only). "N \`rift mcp\` proxies" is the default set-up, where every \`rift mcp\` relays to the workspace's one shared \`rift server\` (N + 1 processes, one of them changing the tree). Latency is per request (request to answer, retries counted as requests); throughput counts applied changes over the wall time of the whole run. Lost updates: applied inserts missing from \`shared.py\` plus applied increments missing from the final count.

The peer runs N shell loops of ${PER_WRITER} increments each through \`git apply\` (no index, no MCP, a process per step; a refused step is retried, and its lost updates are steps \`git apply\` accepted that the final count lacks): under \`flock(1)\` each read-modify-write is whole; without it, increments race.

| run | processes | callers | applied | wall | changes/s | p50 | p95 | retries | lost updates |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|
${table}

| target | result |
|---|---:|
| rift lost updates = 0 | ${lostTotal} ${lostTotal === 0 ? 'pass' : '**fail**'} |
`;
  process.stdout.write(`${HEADING}\n\n${body}`);
  if (!QUICK) writeSection(DOC, HEADING, body);
}

await main();
