import { createInterface } from 'node:readline/promises';
import type { TurnResult } from '../agent/loop/agent.ts';
import { AgentAssembly } from '../agent/loop/assembly.ts';
import { DETACHED_GATE, type Gate } from '../agent/policy/gate.ts';
import { appendTrace, traceRecord } from '../agent/loop/trace.ts';
import type { AgentEvent } from '../agent/base/types.ts';
import { AGENT_OPTIONS, agentFlags, parse, UsageError } from './args.ts';
import { VERSION } from './version.ts';

// `rift -p "<prompt>"`: one autonomous turn (reference B.15). Progress goes to stderr, the
// answer to stdout; `--json` prints the event stream as JSON lines instead.

const OPTIONS = {
  ...AGENT_OPTIONS,
  prompt: { type: 'string', short: 'p' },
  json: { type: 'boolean' },
  trace: { type: 'string' },
} as const;


export async function runPrompt(argv: readonly string[]): Promise<number> {
  const { values } = parse(argv, OPTIONS, 0);
  const prompt = values.prompt ?? '';
  if (prompt.trim() === '') throw new UsageError('-p needs a non-empty prompt');
  if (values.continue && values.resume) throw new UsageError('--continue and --resume cannot be combined');
  const cwd = process.cwd();
  const err = (s: string) => process.stderr.write(s);

  // Headless approval is off unless --approve asks for it; then a terminal on stdin answers.
  // Headless never asks to trust: an untrusted project hook or plugin is skipped with a note.
  const approve = values.approve === true;
  const gate: Gate = approve && process.stdin.isTTY ? terminalGate() : DETACHED_GATE;
  const assembly = await AgentAssembly.create({
    cwd,
    version: VERSION,
    flags: agentFlags(values),
    session: { resume: values.resume, continue: values.continue },
    approve,
    gate,
    alwaysTask: true,
    note: (n) => err(`${n}\n`),
  });
  if (assembly.unusable) {
    err(`rift: ${assembly.unusable.message}\n`);
    return 1;
  }
  const { agent, route } = assembly;
  await assembly.openCode(cwd);
  // The one turn runs with every MCP server that could start (a dead one is only a warning).
  await assembly.mcp.ready();

  const ctl = new AbortController();
  const onSigint = () => ctl.abort();
  process.on('SIGINT', onSigint);
  const printer = values.json ? jsonPrinter() : textPrinter();
  let result: TurnResult;
  try {
    result = await agent.runTurn(prompt, printer, ctl.signal);
  } finally {
    process.off('SIGINT', onSigint);
    const killed = await assembly.close();
    if (killed > 0) err(`warning: killed ${killed} background task(s) still running at exit\n`);
  }

  const tracePath = values.trace ?? process.env.RIFT_TRACE;
  if (tracePath) {
    try {
      appendTrace(tracePath, traceRecord({ model: route.address, provider: route.provider.baseUrl, numCtx: agent.numCtx, prompt }, result));
    } catch (e) {
      err(`warning: could not write the trace: ${(e as Error).message}\n`);
    }
  }
  return result.outcome === 'answered' || result.outcome === 'wrapped' ? 0 : 1;
}

function jsonPrinter(): (e: AgentEvent) => void {
  return (e) => process.stdout.write(`${JSON.stringify(e)}\n`);
}

/** Content to stdout as it streams; everything else to stderr, one readable line each. */
function textPrinter(): (e: AgentEvent) => void {
  const err = (s: string) => process.stderr.write(s);
  let recoveries = 0;
  let contentOpen = false;
  let thinkingOpen = false;
  const closeThinking = () => {
    if (thinkingOpen) err('\n');
    thinkingOpen = false;
  };
  return (e) => {
    switch (e.event) {
      case 'thinking':
        thinkingOpen = true;
        err(e.text);
        break;
      case 'content':
        closeThinking();
        contentOpen = true;
        process.stdout.write(e.text);
        break;
      case 'iteration':
        closeThinking();
        break;
      case 'tool_start':
        closeThinking();
        err(`→ ${e.name} ${JSON.stringify(e.args).slice(0, 120)}\n`);
        break;
      case 'tool_result':
        err(`${e.ok ? '✓' : '✗'} ${e.name} ${e.preview.slice(0, 120)}\n`);
        break;
      case 'edit_diff':
        err(`${e.diff.map((l) => `  ${l}`).join('\n')}\n`);
        break;
      case 'plan':
        err(`${e.items.map((it, i) => `  [${it.done ? 'x' : ' '}] ${i + 1}. ${it.text}`).join('\n')}\n`);
        break;
      case 'warning':
        if (e.text.includes('recovered it')) recoveries++;
        err(`warning: ${e.text}\n`);
        break;
      case 'info':
        err(`${e.text}\n`);
        break;
      case 'task_started':
        err(`task #${e.id} started: ${e.label}\n`);
        break;
      case 'task_finished':
        err(`task #${e.id} finished (${e.ok ? 'ok' : 'failed'}): ${e.label}\n`);
        break;
      case 'done': {
        closeThinking();
        if (contentOpen) process.stdout.write('\n');
        const s = e.stats;
        err(`[${s.iterations} iterations, ${s.prompt_tokens} prompt tok, ${s.output_tokens} out tok, ${s.tokens_per_sec.toFixed(1)} tok/s, ${(s.duration_ms / 1000).toFixed(1)}s${recoveries ? `, ${recoveries} recoveries` : ''}]\n`);
        break;
      }
      case 'context':
        break;
    }
  };
}

/** With --approve on a terminal, questions are asked on stderr and answered by number or text. */
function terminalGate(): Gate {
  return {
    interactive: true,
    async ask(req, signal) {
      const rl = createInterface({ input: process.stdin, output: process.stderr });
      try {
        process.stderr.write(`\n${req.question}\n${req.detail.map((d) => `  ${d}`).join('\n')}${req.detail.length ? '\n' : ''}`);
        req.choices.forEach((c, i) => process.stderr.write(`  ${i + 1}) ${c}\n`));
        const answer = (await rl.question('> ', { signal })).trim();
        const n = Number(answer);
        return Number.isInteger(n) && n >= 1 && n <= req.choices.length ? req.choices[n - 1] : answer;
      } catch {
        return null;
      } finally {
        rl.close();
      }
    },
  };
}
