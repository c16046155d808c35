import { runServe } from '../serve/run.ts';
import { AGENT_OPTIONS, agentFlags, parse, UsageError } from './args.ts';

// `rift --serve [--model M] [--host URL] [--continue | --resume FILE] [--approve[=false]]`:
// the editor protocol over stdio (docs/serve.md).

const OPTIONS = {
  ...AGENT_OPTIONS,
  serve: { type: 'boolean' },
  'no-approve': { type: 'boolean' },
  'no-index': { type: 'boolean' },
} as const;


export async function runServeCommand(argv: readonly string[], version: string): Promise<number> {
  // `--approve=false` / `--approve=true` are accepted besides the bare boolean flag.
  const args = argv.map((a) => (a === '--approve=false' ? '--no-approve' : a === '--approve=true' ? '--approve' : a));
  const { values } = parse(args, OPTIONS, 0);
  if (values.continue && values.resume) throw new UsageError('--continue and --resume cannot be combined');
  if (values.approve && values['no-approve']) throw new UsageError('--approve and --approve=false cannot be combined');
  if (values.temp !== undefined && !Number.isFinite(Number(values.temp))) throw new UsageError(`--temp must be a number, got ${values.temp}`);
  const code = await runServe(
    {
      ...agentFlags(values),
      continue: values.continue,
      resume: values.resume,
      approveMode: values.approve ? true : values['no-approve'] ? false : undefined,
      noIndex: values['no-index'],
    },
    version,
  );
  // Pooled HTTP connections or a watcher must not keep an editor's child alive after EOF.
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  process.exit(code);
}
