import { runServe } from '../serve/run.ts';
import { agentFlags, approveArgs, parse, SESSION_OPTIONS, sessionFlags } from './args.ts';

// `rift --serve [--model M] [--host URL] [--continue | --resume FILE] [--approve[=false]]`:
// the editor protocol over stdio (docs/serve.md).

const OPTIONS = {
  ...SESSION_OPTIONS,
  serve: { type: 'boolean' },
  'no-index': { type: 'boolean' },
} as const;

export async function runServeCommand(argv: readonly string[], version: string): Promise<number> {
  const { values } = parse(approveArgs(argv), OPTIONS, 0);
  const code = await runServe({ ...agentFlags(values), ...sessionFlags(values), noIndex: values['no-index'] }, version);
  // Pooled HTTP connections or a watcher must not keep an editor's child alive after EOF.
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  process.exit(code);
}
