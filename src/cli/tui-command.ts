import { runTui } from '../tui/run.ts';
import { AGENT_OPTIONS, agentFlags, parse, UsageError } from './args.ts';

// `rift [--model M] [--host URL] [--continue | --resume FILE] [--approve[=false]]`: the
// terminal UI (docs/tui.md).

const OPTIONS = {
  ...AGENT_OPTIONS,
  'no-approve': { type: 'boolean' },
} as const;

export async function runTuiCommand(argv: readonly string[], version: string): Promise<number> {
  const args = argv.map((a) => (a === '--approve=false' ? '--no-approve' : a === '--approve=true' ? '--approve' : a));
  const { values } = parse(args, OPTIONS, 0);
  if (values.continue && values.resume) throw new UsageError('--continue and --resume cannot be combined');
  if (values.approve && values['no-approve']) throw new UsageError('--approve and --approve=false cannot be combined');
  if (values.temp !== undefined && !Number.isFinite(Number(values.temp))) throw new UsageError(`--temp must be a number, got ${values.temp}`);
  const code = await runTui(
    {
      ...agentFlags(values),
      continue: values.continue,
      resume: values.resume,
      approveMode: values.approve ? true : values['no-approve'] ? false : undefined,
    },
    version,
  );
  // Pooled HTTP connections or the index watcher must not keep the terminal waiting.
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  process.exit(code);
}
