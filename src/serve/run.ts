import type { AgentFlags } from '../agent/base/config.ts';
import { AgentAssembly } from '../agent/loop/assembly.ts';
import { historyMessages } from '../agent/loop/setup.ts';
import { LineSplitter, type StreamLine } from '../core/lines.ts';
import { SERVE_LINE_BYTES_MAX } from '../core/limits.ts';
import type { ServeEvent } from '../protocol/serve.ts';
import { ServeGate, ServeSession } from './server.ts';

// Wiring for `rift --serve`: config, route and preflight, session, approval, the agent, and
// stdio. Events go to stdout (one JSON line each), diagnostics to stderr. stdin is read from the
// first moment, so EOF during startup ends the process at once; commands that arrive before
// `ready` wait for it.

export interface ServeFlags extends AgentFlags {
  continue?: boolean;
  resume?: string;
  /** undefined: config decides; true/false: --approve / --approve=false. */
  approveMode?: boolean;
  /** Skip the code index (benchmarks). */
  noIndex?: boolean;
}

/** stdin as bounded command lines: each goes to the sink set last; EOF resolves `closed` and aborts `eof`. */
function commandLines(): { closed: Promise<void>; eof: AbortSignal; setSink: (sink: (line: StreamLine) => void) => void } {
  const eof = new AbortController();
  const waiting: StreamLine[] = [];
  let sink: ((line: StreamLine) => void) | null = null;
  const deliver = (lines: StreamLine[]) => {
    for (const l of lines) sink ? sink(l) : waiting.push(l);
  };
  const splitter = new LineSplitter(SERVE_LINE_BYTES_MAX);
  process.stdin.on('data', (chunk: Buffer) => deliver(splitter.push(chunk)));
  const closed = new Promise<void>((resolve) => {
    const done = () => {
      deliver(splitter.end());
      eof.abort();
      resolve();
    };
    process.stdin.once('end', done);
    process.stdin.once('error', done);
  });
  return {
    closed,
    eof: eof.signal,
    setSink: (s) => {
      sink = s;
      for (const l of waiting.splice(0)) s(l);
    },
  };
}

export async function runServe(flags: ServeFlags, version: string): Promise<number> {
  const cwd = process.cwd();
  const err = (s: string) => process.stderr.write(s);

  let stdoutOpen = true;
  process.stdout.on('error', () => {
    stdoutOpen = false;
  });
  const out = (e: ServeEvent) => {
    if (stdoutOpen) process.stdout.write(`${JSON.stringify(e)}\n`);
  };

  const stdin = commandLines();
  let server: ServeSession | undefined;
  const gate = new ServeGate(() => server!);
  const assembly = await AgentAssembly.create({
    cwd,
    version,
    flags,
    session: { resume: flags.resume, continue: flags.continue },
    approve: flags.approveMode,
    gate,
    note: (n) => err(`${n}\n`),
    signal: stdin.eof,
  });
  // The editor went away while the model was being checked: nothing to say, nothing to keep.
  if (stdin.eof.aborted) {
    await assembly.close();
    return 0;
  }
  const { agent, approval, config, skills, trustRequests, session } = assembly;
  const unusable = !assembly.unusable
    ? null
    : assembly.unusable.stage === 'route'
      ? `model '${config.model}' is not usable: ${assembly.unusable.message} — pick another with set_model`
      : `${assembly.unusable.message} — fix the server or model, then send set_model`;
  server = new ServeSession({ agent, approval, config, out, skills, unusable, trustRequests, trust: (r) => assembly.trust(r) });
  // Background tasks report between turns too.
  agent.tasks.setSink(out);
  server.start({ session: session.path, cwd, version, history: historyMessages(session.messages ?? []) });

  // The code index opens after `ready` so an editor is not kept waiting.
  const opening = flags.noIndex ? Promise.resolve() : assembly.openCode(cwd);

  const live = server;
  stdin.setSink((l) => {
    if ('line' in l) live.handleLine(l.line);
    else live.warnOverlong(l.overlong);
  });
  await stdin.closed;
  // Nothing is printed after stdin EOF: not even a background task finishing during shutdown.
  stdoutOpen = false;
  await server.close();
  await opening;
  const killed = await assembly.close();
  if (killed > 0) err(`killed ${killed} background task(s) still running at exit\n`);
  return 0;
}
