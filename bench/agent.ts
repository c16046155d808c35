// The agent engine's own costs, measured against the scripted model server on 127.0.0.1:
// (1) the first request's prompt size — system prompt plus tool schemas — in o200k tokens with
// every built-in tool; (2) the engine's overhead per iteration: from the end of the model's
// stream to the arrival of the next request, with instant tools.
//
//   npx tsx bench/agent.ts [--iterations N] [--no-write]
import { execSync, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { Agent } from '../src/agent/loop/agent.ts';
import { Approval } from '../src/agent/policy/approval.ts';
import { DETACHED_GATE } from '../src/agent/policy/gate.ts';
import { PermissionRules } from '../src/agent/policy/permissions.ts';
import { systemPrompt } from '../src/agent/loop/prompt.ts';
import { buildRoute } from '../src/agent/providers/routing.ts';
import type { ChangeService } from '../src/services/change-service.ts';
import type { ReadService } from '../src/services/read-service.ts';
import type { SearchService } from '../src/services/search-service.ts';
import { ScriptedModelServer, ollamaReply } from '../test/support/model-server.ts';
import { tempDir, TEST_HTTP } from '../test/support/agent-harness.ts';
import { percentile, writeSection } from './lib.ts';

const args = process.argv.slice(2);
const iterations = Number(args[args.indexOf('--iterations') + 1]) || 300;
const WARMUP = 20;
const PROMPT_TOKENS_TARGET = 2000;
const OVERHEAD_P95_TARGET_MS = 5;

function agentFor(server: ScriptedModelServer, cwd: string, maxIterations: number): Agent {
  const approval = new Approval(false, new PermissionRules({ allow: [], ask: [], deny: [] }, cwd), cwd);
  return new Agent({
    cwd,
    route: buildRoute('test-model', { host: server.url, providers: {} }, {}, TEST_HTTP),
    numCtx: 1_000_000,
    think: false,
    temperature: 0.2,
    maxIterations,
    approval,
    gate: DETACHED_GATE,
    systemPrompt: systemPrompt(cwd),
    // Stand-in services: only the schemas matter here, so the code tools are counted too.
    code: { read: {} as ReadService, search: {} as SearchService, change: {} as ChangeService },
    sessionPath: null,
  });
}

async function promptSize(server: ScriptedModelServer, cwd: string) {
  server.script(ollamaReply({ content: 'ok' }));
  const agent = agentFor(server, cwd, 5);
  await agent.runTurn('hello', () => {});
  const body = server.chatRequests().at(-1)!.body as { messages: Array<{ content: string }>; tools: unknown[] };
  const system = countTokens(body.messages[0].content);
  const tools = countTokens(JSON.stringify(body.tools));
  return { system, tools, total: system + tools, toolCount: body.tools.length };
}

/**
 * The scripted server runs in its own process for this measure, as a real model server would,
 * so its work does not queue on the engine's event loop. Timestamps are absolute
 * (timeOrigin + now) so the two processes share one clock.
 */
async function overhead(cwd: string) {
  const n = iterations + WARMUP;
  const child = spawn(process.execPath, ['--import', 'tsx', new URL(import.meta.url).pathname, '--child-server', String(n)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const url = JSON.parse((await lines.next()).value as string).url as string;
  const remote = { url } as ScriptedModelServer;
  const agent = agentFor(remote, cwd, n + 2);
  // The in-process share: from the provider's chat() resolving to the next chat() call.
  const provider = agent.route.provider;
  const chat = provider.chat.bind(provider);
  const calls: number[] = [];
  const returns: number[] = [];
  provider.chat = async (req, onDelta, signal) => {
    calls.push(performance.timeOrigin + performance.now());
    const out = await chat(req, onDelta, signal);
    returns.push(performance.timeOrigin + performance.now());
    return out;
  };
  await agent.runTurn('go', () => {});
  child.stdin!.end();
  const reqs = JSON.parse((await lines.next()).value as string) as Array<{ receivedAt: number; finishedAt: number }>;
  const wire: number[] = [];
  const engine: number[] = [];
  for (let i = WARMUP; i + 1 < reqs.length; i++) {
    wire.push(reqs[i + 1].receivedAt - reqs[i].finishedAt);
    engine.push(calls[i + 1] - returns[i]);
  }
  const stats = (xs: number[]) => {
    xs.sort((a, b) => a - b);
    return { p50: percentile(xs, 50), p95: percentile(xs, 95), max: xs[xs.length - 1] };
  };
  return { samples: wire.length, wire: stats(wire), engine: stats(engine) };
}

/** Child mode: serve n instant plan calls then an answer; print the request timestamps at stdin EOF. */
async function childServer(n: number): Promise<void> {
  const server = await ScriptedModelServer.start();
  for (let i = 0; i < n; i++) server.script(ollamaReply({ toolCalls: [{ name: 'plan', arguments: { set: [`step ${i}`] } }] }));
  server.script(ollamaReply({ content: 'done' }));
  process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
  process.stdin.resume();
  await new Promise((r) => process.stdin.once('end', r));
  const abs = (t: number) => performance.timeOrigin + t;
  process.stdout.write(`${JSON.stringify(server.chatRequests().map((r) => ({ receivedAt: abs(r.receivedAt), finishedAt: abs(r.finishedAt ?? 0) })))}\n`);
  await server.close();
}

if (args.includes('--child-server')) {
  await childServer(Number(args[args.indexOf('--child-server') + 1]));
  process.exit(0);
}

const server = await ScriptedModelServer.start();
const cwd = tempDir('rift-bench-agent-');
const load0 = loadavg()[0];
try {
  const size = await promptSize(server, cwd);
  const o = await overhead(cwd);
  const load1 = loadavg()[0];
  let rev = 'unknown';
  try {
    rev = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
    if (execSync('git status --porcelain', { encoding: 'utf8' }).trim()) rev += ' with uncommitted changes';
  } catch {
    // not a checkout
  }
  const ms = (v: number) => `${v.toFixed(2)} ms`;
  const body = `Run ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')} with \`npx tsx bench/agent.ts\`: ${cpus().length} cores, Node ${process.version}, rift at \`${rev}\`. Load average (1 min) ${load0.toFixed(2)} at the start, ${load1.toFixed(2)} at the end. Model: the scripted model server on 127.0.0.1 (test/support/model-server.ts); tokens counted with \`gpt-tokenizer\` (o200k_base).

| measure | value |
|---|---:|
| first request: system prompt | ${size.system} tokens |
| first request: tool schemas (${size.toolCount} tools, code tools included) | ${size.tools} tokens |
| first request: system prompt + tool schemas | ${size.total} tokens |
| overhead per iteration on the wire, p50 / p95 / max (${o.samples} iterations after ${WARMUP} warm-up; last byte of the reply → next request received) | ${ms(o.wire.p50)} / ${ms(o.wire.p95)} / ${ms(o.wire.max)} |
| of which in the engine, p50 / p95 / max (reply parsed → next request started) | ${ms(o.engine.p50)} / ${ms(o.engine.p95)} / ${ms(o.engine.max)} |

| target | result |
|---|---:|
| first-request prompt ≤ ${PROMPT_TOKENS_TARGET} tokens | ${size.total} ${size.total <= PROMPT_TOKENS_TARGET ? 'pass' : '**fail**'} |
| overhead p95 < ${OVERHEAD_P95_TARGET_MS} ms, in the engine | ${ms(o.engine.p95)} ${o.engine.p95 < OVERHEAD_P95_TARGET_MS ? 'pass' : '**fail**'} |
| overhead p95 < ${OVERHEAD_P95_TARGET_MS} ms, on the wire (loopback HTTP included) | ${ms(o.wire.p95)} ${o.wire.p95 < OVERHEAD_P95_TARGET_MS ? 'pass' : '**fail**'} |

The overhead interval starts when the scripted server has written the reply's last byte and ends when the next request's body has fully arrived, so it covers the engine's parsing, tool dispatch (\`plan\`, instant), history growth, the budget check and the HTTP round trip on loopback (Node's \`fetch\` on a pooled keep-alive connection to the scripted server running in its own process). The engine row is the part the loop itself spends. The machine is shared (see the load average), so the p95 and max include scheduling delays. Nothing here compares with a peer tool: the measures are the engine's own costs.
`;
  process.stdout.write(`${body}\n`);
  if (!args.includes('--no-write')) writeSection(new URL('../docs/benchmarks.md', import.meta.url).pathname, '## Agent (bench/agent.ts)', body);
} finally {
  await server.close();
  rmSync(cwd, { recursive: true, force: true });
}
