import { createInterface } from 'node:readline';
import type { AgentFlags } from '../agent/base/config.ts';
import { AgentAssembly } from '../agent/loop/assembly.ts';
import { historyMessages } from '../agent/loop/setup.ts';
import { ServeGate, ServeSession, type Wire } from './server.ts';

// Wiring for `rift --serve`: config, route and preflight, session, approval, the agent, and
// stdio. Events go to stdout (one JSON line each), diagnostics to stderr.

export interface ServeFlags extends AgentFlags {
  continue?: boolean;
  resume?: string;
  /** undefined: config decides; true/false: --approve / --approve=false. */
  approveMode?: boolean;
  /** Skip the code index (benchmarks). */
  noIndex?: boolean;
}

export async function runServe(flags: ServeFlags, version: string): Promise<number> {
  const cwd = process.cwd();
  const err = (s: string) => process.stderr.write(s);

  let stdoutOpen = true;
  process.stdout.on('error', () => {
    stdoutOpen = false;
  });
  const out = (e: Wire) => {
    if (stdoutOpen) process.stdout.write(`${JSON.stringify(e)}\n`);
  };

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
  });
  const { agent, approval, config, skills, trustRequests, session } = assembly;
  const unusable = !assembly.unusable
    ? null
    : assembly.unusable.stage === 'route'
      ? `model '${config.model}' is not usable: ${assembly.unusable.message} — pick another with set_model`
      : `${assembly.unusable.message} — fix the server or model, then send set_model`;
  server = new ServeSession({ agent, approval, config, out, skills, unusable, trustRequests, trust: (r) => assembly.trust(r) });
  // Background tasks report between turns too.
  agent.tasks.setSink((e) => out(e as Wire));
  server.start({ session: session.path, cwd, version, history: historyMessages(session.messages ?? []) });

  // The code index opens after `ready` so an editor is not kept waiting.
  const opening = flags.noIndex ? Promise.resolve() : assembly.openCode(cwd);

  const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
  rl.on('line', (line) => server!.handleLine(line));
  await new Promise<void>((resolve) => rl.once('close', resolve));
  // Nothing is printed after stdin EOF: not even a background task finishing during shutdown.
  stdoutOpen = false;
  await server.close();
  await opening;
  const killed = await assembly.close();
  if (killed > 0) err(`killed ${killed} background task(s) still running at exit\n`);
  return 0;
}
