// Soak of the crowd start (issue 10): eight standalone `rift mcp` servers started in the same
// instant on a fresh tree (no `.rift/` yet) — each creates the state folder, the store and its
// schema and builds the index while the others do the same — then two rounds of calls (a read;
// an insert and a read of it back). Repeated ROUNDS times, it counts the servers that failed: did
// not start, failed a call, were not running at the end, or said on stderr that their index was
// kept in memory or set aside as damaged. A soak, not a benchmark: it writes no doc.
//
//   npx tsx bench/crowd-start.ts [rounds=20] [servers=8]

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createRequire } from 'node:module';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROUNDS = Number(process.argv[2] ?? 20);
const SERVERS = Number(process.argv[3] ?? 8);
const CALL_TIMEOUT_MS = 180_000;
/** What a server writes when its index did not end up in the shared store. */
const STORE_TROUBLE = /kept in memory|damaged|set aside|cannot be used/;

const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const entry = fileURLToPath(new URL('../src/cli/entry.ts', import.meta.url));

interface Server {
  client: Client;
  pid: number | null;
  stderr: () => string;
  exited: () => boolean;
}

async function start(dir: string, home: string): Promise<Server> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', tsx, entry, 'mcp', '--standalone'],
    cwd: dir,
    env: { ...(process.env as Record<string, string>), RIFT_HOME: home },
    stderr: 'pipe',
  });
  let stderr = '';
  let exited = false;
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  transport.onclose = () => (exited = true);
  const client = new Client({ name: 'crowd', version: '0' });
  await client.connect(transport, { timeout: CALL_TIMEOUT_MS });
  const onclose = transport.onclose;
  transport.onclose = () => {
    exited = true;
    onclose?.();
  };
  return { client, pid: transport.pid, stderr: () => stderr, exited: () => exited };
}

/**
 * A tool call as a client should send it: `temporarily_unavailable` with `retry: same_request`
 * (the tree lock stayed busy for the whole call budget; nothing was written) is sent again.
 */
async function call(s: Server, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  for (let attempt = 1; ; attempt++) {
    try {
      const r = await s.client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS });
      if (r.isError) throw new Error(`${name} isError: ${JSON.stringify(r.content).slice(0, 300)}`);
      return r.structuredContent as Record<string, unknown>;
    } catch (e) {
      const data = (e as { data?: { code?: string; retry?: string } }).data;
      if (attempt >= 10 || data?.code !== 'temporarily_unavailable' || data.retry !== 'same_request') throw e;
    }
  }
}

function alive(pid: number | null): boolean {
  if (pid === null) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** One crowd start; returns a failure description per failed server. */
async function round(n: number): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'rift-crowd-'));
  const home = mkdtempSync(join(tmpdir(), 'rift-home-'));
  writeFileSync(join(dir, 'list.py'), 'def anchor():\n    pass\n');
  const failures: string[] = [];
  const started = await Promise.allSettled(Array.from({ length: SERVERS }, () => start(dir, home)));
  const servers = started.map((s) => (s.status === 'fulfilled' ? s.value : null));
  const failed = new Map<number, string>();
  started.forEach((s, k) => s.status === 'rejected' && failed.set(k, `did not start: ${(s.reason as Error).message}`));
  const each = async (work: (s: Server, k: number) => Promise<void>) => {
    await Promise.all(
      servers.map(async (s, k) => {
        if (!s || failed.has(k)) return;
        try {
          await work(s, k);
        } catch (e) {
          failed.set(k, (e as Error).message);
        }
      }),
    );
  };
  await each(async (s) => {
    const r = await call(s, 'get_symbol', { name: 'anchor', include: [] });
    if ((r.hits as unknown[]).length !== 1) throw new Error(`round 1 found ${(r.hits as unknown[]).length} anchors`);
  });
  await each(async (s, k) => {
    for (let attempt = 1; ; attempt++) {
      const r = await call(s, 'insert_symbol', { anchor: 'rift://symbol/python/list.py/anchor', position: 'after', body: `def crowd_${k}():\n    pass` });
      if (r.status === 'applied') break;
      if (attempt >= 50) throw new Error(`insert never applied: ${JSON.stringify(r)}`);
    }
    const r = await call(s, 'get_symbol', { name: `crowd_${k}`, include: [] });
    if ((r.hits as unknown[]).length !== 1) throw new Error(`round 2 found ${(r.hits as unknown[]).length} hits of its insert`);
  });
  const text = readFileSync(join(dir, 'list.py'), 'utf8');
  servers.forEach((s, k) => {
    if (!s) return;
    if (!failed.has(k) && text.split(`def crowd_${k}():`).length !== 2) failed.set(k, 'its insert is not on disk exactly once');
    if (s.exited() || !alive(s.pid)) failed.set(k, `${failed.get(k) ?? ''} not running at the end`.trim());
    const trouble = STORE_TROUBLE.exec(s.stderr());
    if (trouble) failed.set(k, `${failed.get(k) ?? ''} stderr: ${trouble[0]}`.trim());
  });
  let damaged: string[];
  try {
    damaged = readdirSync(join(dir, '.rift')).filter((e) => e.includes('damaged'));
  } catch (e) {
    damaged = [`(no .rift/: ${(e as NodeJS.ErrnoException).code})`];
  }
  for (const [k, why] of [...failed].sort((a, b) => a[0] - b[0])) {
    const tail = servers[k]?.stderr().trim().split('\n').slice(-6).join('\n      ') ?? '';
    failures.push(`round ${n} server ${k}: ${why}${tail ? `\n      ${tail}` : ''}`);
  }
  if (damaged.length > 0) failures.push(`round ${n}: set aside ${damaged.join(', ')}`);
  await Promise.all(servers.map((s) => s?.client.close().catch(() => undefined)));
  rmSync(dir, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
  return failures;
}

let failedServers = 0;
const t0 = performance.now();
for (let n = 1; n <= ROUNDS; n++) {
  const started = performance.now();
  const failures = await round(n);
  failedServers += failures.filter((f) => / server \d+:/.test(f)).length;
  console.log(`round ${n}/${ROUNDS}: ${SERVERS - failures.filter((f) => / server \d+:/.test(f)).length}/${SERVERS} servers fine (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  for (const f of failures) console.log(`  ${f}`);
}
console.log(`${failedServers} of ${ROUNDS * SERVERS} servers failed; ${((performance.now() - t0) / 1000).toFixed(0)} s in all`);
process.exitCode = failedServers > 0 ? 1 : 0;
