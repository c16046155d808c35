import { runTui } from '../tui/run.ts';
import { agentFlags, approveArgs, parse, SESSION_OPTIONS, sessionFlags } from './args.ts';

// `rift [--model M] [--host URL] [--continue | --resume FILE] [--approve[=false]]`: the
// terminal UI (docs/tui.md).

export async function runTuiCommand(argv: readonly string[], version: string): Promise<number> {
  const { values } = parse(approveArgs(argv), SESSION_OPTIONS, 0);
  const code = await runTui({ ...agentFlags(values), ...sessionFlags(values) }, version);
  // Pooled HTTP connections or the index watcher must not keep the terminal waiting.
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  process.exit(code);
}
