// The serve benchmark: `rift --serve` start-up and event throughput against the scripted model
// server (127.0.0.1 only), beside the same stream read straight off the model server.
//
//   npx tsx bench/serve.ts [--no-write] [--runs N]
//
// 1. Spawn → ready: wall time from spawn() of `node --import tsx src/cli/entry.ts --serve` until
//    the `ready` line is read, N runs each with the code index (default) and with --no-index;
//    a bare `node --import tsx -e 0` spawn is the floor.
// 2. Throughput: one turn whose reply streams 20,000 content deltas; events/s from `prompt`
//    written to `done` read, beside a plain HTTP client reading the same NDJSON stream.
// Writes the `## Serve (bench/serve.ts)` section of docs/benchmarks.md unless --no-write.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ScriptedModelServer, ollamaReply } from '../test/support/model-server.ts';
import { buildInstalled, fmtMs, percentile, writeSection } from './lib.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOC = join(ROOT, 'docs', 'benchmarks.md');
const HEADING = '## Serve (bench/serve.ts)';
const ENTRY = join(ROOT, 'src', 'cli', 'entry.ts');
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const DELTAS = 20_000;

const args = process.argv.slice(2);
const write = !args.includes('--no-write');
const runs = Number(args[args.indexOf('--runs') + 1]) || 10;

let compiledEntry = '';

function startServe(extra: string[], cwd: string, home: string, compiled = false) {
  const t0 = performance.now();
  const argv = compiled ? [compiledEntry, '--serve', ...extra] : ['--import', TSX, ENTRY, '--serve', ...extra];
  const child = spawn(process.execPath, argv, {
    cwd,
    env: { PATH: process.env.PATH, HOME: home, RIFT_HOME: home, RIFT_LOG: 'error' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let buf = '';
  const listeners: Array<(ev: Record<string, unknown>, at: number) => void> = [];
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d: string) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const ev = JSON.parse(buf.slice(0, nl)) as Record<string, unknown>;
      buf = buf.slice(nl + 1);
      const at = performance.now();
      for (const l of listeners) l(ev, at);
    }
  });
  const until = (name: string, timeoutMs = 30_000) =>
    new Promise<{ at: number; count: number }>((resolve, reject) => {
      let count = 0;
      const timer = setTimeout(() => reject(new Error(`no ${name} within ${timeoutMs} ms`)), timeoutMs);
      listeners.push((ev, at) => {
        count++;
        if (ev.event === name) {
          clearTimeout(timer);
          resolve({ at, count });
        }
      });
    });
  return { child, t0, until, send: (o: unknown) => child.stdin.write(`${JSON.stringify(o)}\n`) };
}

async function spawnFloor(): Promise<number> {
  const t0 = performance.now();
  await new Promise((r) => spawn(process.execPath, ['--import', TSX, '-e', '0'], { stdio: 'ignore' }).on('close', r));
  return performance.now() - t0;
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p90: percentile(s, 90), min: s[0] };
};

async function main(): Promise<void> {
  const server = await ScriptedModelServer.start();
  const cwd = mkdtempSync(join(tmpdir(), 'rift-bench-serve-'));
  const home = mkdtempSync(join(tmpdir(), 'rift-bench-home-'));
  try {
    const built = buildInstalled();
    compiledEntry = built.entry;
    const floor: number[] = [];
    const ready: Record<string, number[]> = { index: [], 'no-index': [], compiled: [], 'compiled-no-index': [] };
    for (let i = 0; i < runs; i++) {
      floor.push(await spawnFloor());
      for (const mode of ['index', 'no-index', 'compiled', 'compiled-no-index'] as const) {
        const s = startServe(['--host', server.url, '--model', 'test-model', ...(mode.endsWith('no-index') ? ['--no-index'] : [])], cwd, home, mode.startsWith('compiled'));
        const r = await s.until('ready');
        ready[mode].push(r.at - s.t0);
        s.child.stdin.end();
        await new Promise((res) => s.child.on('close', res));
      }
    }

    const pieces = Array.from({ length: DELTAS }, (_, i) => `w${i} `);
    server.script(ollamaReply({ content: pieces, evalCount: DELTAS }));
    const s = startServe(['--host', server.url, '--model', 'test-model', '--no-index'], cwd, home);
    await s.until('context');
    const doneP = s.until('done', 120_000);
    const t0 = performance.now();
    s.send({ cmd: 'prompt', text: 'write a long answer' });
    const done = await doneP;
    const serveMs = done.at - t0;
    s.child.stdin.end();
    await new Promise((res) => s.child.on('close', res));

    server.script(ollamaReply({ content: pieces, evalCount: DELTAS }));
    const d0 = performance.now();
    const res = await fetch(`${server.url}/api/chat`, { method: 'POST', body: JSON.stringify({ model: 'test-model', messages: [], stream: true }) });
    const text = await res.text();
    const directMs = performance.now() - d0;
    const directLines = text.split('\n').filter((l) => l !== '').length;

    const f = stats(floor);
    const a = stats(ready.index);
    const b = stats(ready['no-index']);
    const c = stats(ready.compiled);
    const e = stats(ready['compiled-no-index']);
    rmSync(built.dir, { recursive: true, force: true });
    const body = [
      `Machine: ${cpus()[0]?.model ?? 'unknown'} × ${cpus().length}, Node ${process.version}. ${runs} runs each; the model server is the scripted one on 127.0.0.1.`,
      '',
      '| Spawn → `ready` | p50 | p90 | min |',
      '|---|---|---|---|',
      `| \`rift --serve\` from source via tsx (code index opened) | ${fmtMs(a.p50)} | ${fmtMs(a.p90)} | ${fmtMs(a.min)} |`,
      `| from source via tsx, \`--no-index\` | ${fmtMs(b.p50)} | ${fmtMs(b.p90)} | ${fmtMs(b.min)} |`,
      `| compiled (\`dist/\`, as \`bin/rift.js\` runs when installed) | ${fmtMs(c.p50)} | ${fmtMs(c.p90)} | ${fmtMs(c.min)} |`,
      `| compiled, \`--no-index\` | ${fmtMs(e.p50)} | ${fmtMs(e.p90)} | ${fmtMs(e.min)} |`,
      `| floor: \`node --import tsx -e 0\` to exit | ${fmtMs(f.p50)} | ${fmtMs(f.p90)} | ${fmtMs(f.min)} |`,
      '',
      `Target: under 400 ms to \`ready\`. The time includes Node start, tsx compiling the sources, the preflight \`/api/show\` call and the session file reservation.`,
      '',
      '| Streamed reply of 20,000 deltas | wall | events/s |',
      '|---|---|---|',
      `| \`rift --serve\`: \`prompt\` written → \`done\` read (${done.count} events) | ${fmtMs(serveMs)} | ${Math.round(done.count / (serveMs / 1000)).toLocaleString('en-US')} |`,
      `| direct: HTTP client reading the same NDJSON stream (${directLines} lines) | ${fmtMs(directMs)} | ${Math.round(directLines / (directMs / 1000)).toLocaleString('en-US')} |`,
      '',
      '### How it is measured',
      '',
      'Spawn → `ready` is wall time from `spawn()` to the `ready` line arriving on the parent\'s stdout, with stdin held open, then EOF and wait for exit between runs. Throughput sends one `prompt` whose scripted reply streams 20,000 `content` deltas back to back and counts every stdout event up to `done`; the direct row reads the same scripted stream with `fetch` and counts lines.',
    ].join('\n');
    process.stdout.write(`${HEADING}\n\n${body}\n`);
    if (write) writeSection(DOC, HEADING, body);
  } finally {
    await server.close();
    rmSync(cwd, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  }
}

await main();
