import { runAcp } from '../acp/run.ts';
import { AGENT_OPTIONS, agentFlags, parse, UsageError } from './args.ts';

// `rift acp [--model M] [--host URL] [--approve[=false]]`: the Agent Client Protocol over stdio,
// for editors that launch agents (Zed, Neovim, JetBrains, Emacs; docs/acp.md).

const { continue: _continue, resume: _resume, ...SHARED } = AGENT_OPTIONS;
const OPTIONS = {
  ...SHARED,
  'no-approve': { type: 'boolean' },
  'no-index': { type: 'boolean' },
} as const;

export async function runAcpCommand(argv: readonly string[], version: string): Promise<number> {
  const args = argv.map((a) => (a === '--approve=false' ? '--no-approve' : a === '--approve=true' ? '--approve' : a));
  const { values } = parse(args, OPTIONS, 0);
  if (values.approve && values['no-approve']) throw new UsageError('--approve and --approve=false cannot be combined');
  if (values.temp !== undefined && !Number.isFinite(Number(values.temp))) throw new UsageError(`--temp must be a number, got ${values.temp}`);
  const code = await runAcp({
    version,
    flags: agentFlags(values),
    approve: values.approve ? true : values['no-approve'] ? false : undefined,
    noIndex: values['no-index'] === true,
    log: (text) => process.stderr.write(`${text}\n`),
  });
  // Pooled HTTP connections, a watcher or an MCP server's pipes must not keep the editor's child alive.
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  process.exit(code);
}
