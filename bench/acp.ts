// The ACP and MCP-client benchmark, against the scripted model server (127.0.0.1 only):
//
//   npx tsx bench/acp.ts [--no-write] [--runs N]
//
// 1. Spawn → session: wall time from spawn() of `rift acp --no-index` until `session/new` is
//    answered (initialize first), N runs, beside `rift --serve --no-index` spawn → `ready` in the
//    same run (the same assembly behind another wire).
// 2. Throughput: one turn whose reply streams 20,000 content deltas; updates/s from
//    `session/prompt` sent to its answer, beside `rift --serve` events/s on the same reply.
// 3. MCP tool calls: 300 sequential calls of a stdio server's echo tool through the agent's MCP
//    client (the registered `<server>_<tool>`: permission check, call, result rendering), beside
//    the MCP SDK's Client calling the same server directly.
// Writes the `## ACP and MCP client (bench/acp.ts)` section of docs/benchmarks.md unless --no-write.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { client, ndJsonStream } from '@agentclientprotocol/sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpServers } from '../src/agent/extensions/mcp-servers.ts';
import { Sandbox } from '../src/agent/policy/sandbox.ts';
import { ToolRegistry } from '../src/agent/tools/registry.ts';
import { ScriptedModelServer, ollamaReply } from '../test/support/model-server.ts';
import { toolContext } from '../test/support/agent-harness.ts';
import { fmtMs, percentile, writeSection } from './lib.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOC = join(ROOT, 'docs', 'benchmarks.md');
const HEADING = '## ACP and MCP client (bench/acp.ts)';
const ENTRY = join(ROOT, 'src', 'cli', 'entry.ts');
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const FIXTURE = join(ROOT, 'test', 'agent', 'extensions', 'fixtures', 'tool-server.mjs');
const DELTAS = 20_000;
const CALLS = 300;

const args = process.argv.slice(2);
const write = !args.includes('--no-write');
const runs = Number(args[args.indexOf('--runs') + 1]) || 10;

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p90: percentile(s, 90), min: s[0] };
};

function rift(argv: string[], cwd: string, home: string) {
  return spawn(process.execPath, ['--import', TSX, ENTRY, ...argv], { cwd, env: { PATH: process.env.PATH, HOME: home, RIFT_HOME: home, RIFT_LOG: 'error' }, stdio: ['pipe', 'pipe', 'inherit'] });
}

/** `rift acp` with the SDK's client on its stdio; counts updates. */
function acp(cwd: string, home: string) {
  const t0 = performance.now();
  const child = rift(['acp', '--no-index', '--approve=false'], cwd, home);
  let updates = 0;
  const conn = client({ name: 'bench' })
    .onNotification('session/update', () => void updates++)
    .connect(ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>));
  return { child, t0, agent: conn.agent, updates: () => updates, close: async () => (conn.close(), child.stdin.end(), await new Promise((r) => child.on('close', r))) };
}

/** `rift --serve` read as JSON lines; resolves at the first event named `name` and counts events. */
function serve(cwd: string, home: string, host: string) {
  const t0 = performance.now();
  const child = rift(['--serve', '--host', host, '--model', 'test-model', '--no-index', '--approve=false'], cwd, home);
  let buf = '';
  let count = 0;
  const waiters: Array<{ name: string; resolve: (at: number) => void }> = [];
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d: string) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const ev = JSON.parse(buf.slice(0, nl)) as { event: string };
      buf = buf.slice(nl + 1);
      count++;
      const at = performance.now();
      for (const w of waiters.filter((x) => x.name === ev.event)) w.resolve(at);
    }
  });
  const until = (name: string) => new Promise<number>((resolve) => waiters.push({ name, resolve }));
  return { child, t0, until, count: () => count, send: (o: unknown) => child.stdin.write(`${JSON.stringify(o)}\n`), close: async () => (child.stdin.end(), await new Promise((r) => child.on('close', r))) };
}

async function mcpCalls(cwd: string): Promise<{ agent: number[]; direct: number[] }> {
  const registry = new ToolRegistry([]);
  const servers = new McpServers({ cwd, version: 'bench', registry, sandbox: Sandbox.create({ mode: 'off', network: false, writable: [] }, cwd, []), note: () => {} });
  const spec = { name: 'fx', scope: 'user' as const, transport: { kind: 'stdio' as const, command: process.execPath, args: [FIXTURE], env: {} }, sandbox: false };
  const started = await servers.start(spec);
  if (!started.ok) throw new Error(started.text);
  const tool = registry.get('fx_echo')!;
  const ctx = toolContext({ cwd });
  const direct = new Client({ name: 'bench', version: '1' });
  await direct.connect(new StdioClientTransport({ command: process.execPath, args: [FIXTURE], stderr: 'ignore' }));
  const agent: number[] = [];
  const plain: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    let t = performance.now();
    await tool.run({ text: `m${i}` }, ctx);
    agent.push(performance.now() - t);
    t = performance.now();
    await direct.callTool({ name: 'echo', arguments: { text: `m${i}` } });
    plain.push(performance.now() - t);
  }
  await direct.close();
  await servers.close();
  return { agent, direct: plain };
}

async function main(): Promise<void> {
  const server = await ScriptedModelServer.start();
  const cwd = mkdtempSync(join(tmpdir(), 'rift-bench-acp-'));
  const home = mkdtempSync(join(tmpdir(), 'rift-bench-home-'));
  writeFileSync(join(home, 'config.json'), JSON.stringify({ host: server.url, model: 'test-model' }));
  const load = loadavg()[0];
  try {
    const toSession: number[] = [];
    const toReady: number[] = [];
    for (let i = 0; i < runs; i++) {
      const a = acp(cwd, home);
      await a.agent.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
      await a.agent.request('session/new', { cwd, mcpServers: [] });
      toSession.push(performance.now() - a.t0);
      await a.close();
      const s = serve(cwd, home, server.url);
      toReady.push((await s.until('ready')) - s.t0);
      await s.close();
    }

    const pieces = Array.from({ length: DELTAS }, (_, i) => `w${i} `);
    server.script(ollamaReply({ content: pieces, evalCount: DELTAS }));
    const a = acp(cwd, home);
    await a.agent.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await a.agent.request('session/new', { cwd, mcpServers: [] });
    const before = a.updates();
    let t0 = performance.now();
    await a.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'tell me a long story' }] });
    const acpMs = performance.now() - t0;
    const acpUpdates = a.updates() - before;
    await a.close();

    server.script(ollamaReply({ content: pieces, evalCount: DELTAS }));
    const s = serve(cwd, home, server.url);
    await s.until('context');
    const start = s.count();
    const done = s.until('done');
    t0 = performance.now();
    s.send({ cmd: 'prompt', text: 'tell me a long story' });
    const serveMs = (await done) - t0;
    const serveEvents = s.count() - start;
    await s.close();

    const calls = await mcpCalls(cwd);
    const x = stats(toSession);
    const y = stats(toReady);
    const m = stats(calls.agent);
    const d = stats(calls.direct);
    const us = (ms: number) => `${Math.round(ms * 1000)} µs`;
    const body = [
      `Machine: ${cpus()[0]?.model ?? 'unknown'} × ${cpus().length}, Node ${process.version}, load average ${load.toFixed(1)} at the start. ${runs} runs each; from source via tsx; the model server is the scripted one on 127.0.0.1.`,
      '',
      '| Start-up | p50 | p90 | min |',
      '|---|---|---|---|',
      `| \`rift acp --no-index\`: spawn → \`initialize\` → \`session/new\` answered | ${fmtMs(x.p50)} | ${fmtMs(x.p90)} | ${fmtMs(x.min)} |`,
      `| \`rift --serve --no-index\`: spawn → \`ready\` | ${fmtMs(y.p50)} | ${fmtMs(y.p90)} | ${fmtMs(y.min)} |`,
      '',
      '| Streamed reply of 20,000 deltas | wall | messages/s |',
      '|---|---|---|',
      `| \`rift acp\`: \`session/prompt\` sent → answered (${acpUpdates} \`session/update\` notifications) | ${fmtMs(acpMs)} | ${Math.round(acpUpdates / (acpMs / 1000)).toLocaleString('en-US')} |`,
      `| \`rift --serve\`: \`prompt\` written → \`done\` read (${serveEvents} events) | ${fmtMs(serveMs)} | ${Math.round(serveEvents / (serveMs / 1000)).toLocaleString('en-US')} |`,
      '',
      `| ${CALLS} sequential MCP tool calls (stdio echo server) | p50 | p90 | min |`,
      '|---|---|---|---|',
      `| the agent's tool \`fx_echo\` (rules, approval, call, rendering) | ${us(m.p50)} | ${us(m.p90)} | ${us(m.min)} |`,
      `| the MCP SDK's \`Client.callTool\` on the same server | ${us(d.p50)} | ${us(d.p90)} | ${us(d.min)} |`,
      '',
      '### How it is measured',
      '',
      'Start-up is wall time from `spawn()` to the answer of `session/new` (ACP, after `initialize`) or to the `ready` line (serve), then EOF and wait for exit between runs; both include the preflight `/api/show` call, and ACP also the model discovery for its model option (`/api/tags`). Throughput sends one prompt whose scripted reply streams 20,000 `content` deltas and counts the messages the front end writes until the turn ends. The MCP rows alternate one call through each path against two processes of the same server.',
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
