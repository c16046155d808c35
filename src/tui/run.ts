import { existsSync, statSync } from 'node:fs';
import type { AgentFlags } from '../agent/base/config.ts';
import { userDirs } from '../agent/base/config.ts';
import { AgentAssembly } from '../agent/loop/assembly.ts';
import { historyMessages } from '../agent/loop/setup.ts';
import { Controller, HISTORY_FILE } from './controller.ts';
import { FrameScheduler } from './frames.ts';
import { ESC_WAIT_MS, KeyDecoder, PASTE_OFF, PASTE_ON } from './keys.ts';
import { Questions } from './questions.ts';
import type * as InkApp from './app.tsx';
import type { Frame } from './app.tsx';

// Wiring for `rift` (the terminal UI): the shared agent assembly with the TUI's own gate,
// stdin in raw mode through the key decoder, frames scheduled and drawn by Ink.

export interface TuiFlags extends AgentFlags {
  continue?: boolean;
  resume?: string;
  /** undefined: config decides; true/false: --approve / --approve=false. */
  approveMode?: boolean;
}

export const NOT_A_TERMINAL =
  'rift: the terminal UI needs a terminal on stdin and stdout — run `rift -p "<prompt>"` for one headless turn, or `rift --serve` for an editor';

/**
 * Ink treats a CI environment as a log and never draws its live region; a person who opened
 * the UI in a terminal is not a CI job, so Ink is loaded with those variables out of sight.
 */
async function loadInkApp(): Promise<typeof InkApp> {
  const hidden: Record<string, string> = {};
  for (const k of ['CI', 'CONTINUOUS_INTEGRATION']) {
    if (process.env[k] !== undefined) {
      hidden[k] = process.env[k]!;
      delete process.env[k];
    }
  }
  try {
    return await import('./app.tsx');
  } finally {
    Object.assign(process.env, hidden);
  }
}

export async function runTui(flags: TuiFlags, version: string): Promise<number> {
  const stdin = process.stdin;
  const stdout = process.stdout;
  if (!stdin.isTTY || !stdout.isTTY) {
    process.stderr.write(`${NOT_A_TERMINAL}\n`);
    return 2;
  }
  const cwd = process.cwd();
  const env = process.env;
  let scheduler: FrameScheduler | null = null;
  const questions = new Questions(() => scheduler?.request());
  const notes: string[] = [];
  stdout.write('rift: starting (model check, session)…\n');
  const assembly = await AgentAssembly.create({
    cwd,
    version,
    flags,
    session: { resume: flags.resume, continue: flags.continue },
    approve: flags.approveMode,
    gate: questions,
    note: (n) => notes.push(n),
  });
  const { config, session } = assembly;
  const unusable = !assembly.unusable
    ? null
    : assembly.unusable.stage === 'route'
      ? `model '${config.model}' is not usable: ${assembly.unusable.message} — pick another with /model`
      : `${assembly.unusable.message} — fix the server or model, then switch with /model`;

  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  const controller = new Controller({
    engine: assembly,
    questions,
    cwd,
    version,
    unusable,
    history: historyMessages(session.messages ?? []),
    requestFrame: () => scheduler?.request(),
    quit: () => done(),
    env,
    historyFile: HISTORY_FILE(userDirs(env).data),
  });
  for (const n of notes) controller.transcript.note(n, n.startsWith('warning') ? 'warn' : 'dim');

  const size = () => ({ rows: stdout.rows || 24, cols: stdout.columns || 80 });
  let push: ((f: Frame) => void) | null = null;
  scheduler = new FrameScheduler(() => push?.(controller.frame(size())));
  const { mount } = await loadInkApp();
  const ink = mount({ subscribe: (p) => (push = p), noColor: (env.NO_COLOR ?? '') !== '', stdout });

  const decoder = new KeyDecoder();
  let escTimer: ReturnType<typeof setTimeout> | null = null;
  const onData = (chunk: string) => {
    if (escTimer) clearTimeout(escTimer);
    escTimer = null;
    for (const ev of decoder.feed(chunk)) controller.key(ev);
    if (decoder.pending) {
      escTimer = setTimeout(() => {
        escTimer = null;
        for (const ev of decoder.flush()) controller.key(ev);
      }, ESC_WAIT_MS);
    }
  };
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.on('data', onData);
  stdin.resume();
  stdout.write(PASTE_ON);
  const onResize = () => scheduler?.request();
  stdout.on('resize', onResize);
  const onSignal = () => void controller.shutdown();
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);

  controller.start();
  // The code index opens after the UI is up, so the first frame is not kept waiting.
  const opening = assembly.openCode(cwd);
  await finished;

  scheduler.now();
  scheduler.dispose();
  // The last frame's lines are written when React commits it: let that happen before unmounting.
  await new Promise((r) => setImmediate(r));
  ink.unmount();
  await ink.waitUntilExit().catch(() => {});
  stdout.off('resize', onResize);
  stdin.off('data', onData);
  process.off('SIGTERM', onSignal);
  process.off('SIGHUP', onSignal);
  stdout.write(PASTE_OFF);
  stdin.setRawMode(false);
  stdin.pause();
  await opening;
  const killed = await assembly.close();
  if (killed > 0) process.stderr.write(`killed ${killed} background task(s) still running at exit\n`);
  const saved = assembly.agent.sessionPath;
  if (saved && existsSync(saved) && statSync(saved).size > 0) stdout.write(`session saved: ${saved} — continue it with \`rift --continue\`\n`);
  return 0;
}
