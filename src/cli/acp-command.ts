import { runAcp } from '../acp/run.ts';
import { agentFlags, approveArgs, parse, SESSION_OPTIONS, sessionFlags } from './args.ts';

// `rift acp [--model M] [--host URL] [--approve[=false]]`: the Agent Client Protocol over stdio,
// for editors that launch agents (Zed, Neovim, JetBrains, Emacs; docs/acp.md). Sessions are the
// editor's to open and load, so `--continue` / `--resume` have no place here.

const { continue: _continue, resume: _resume, ...SHARED } = SESSION_OPTIONS;
const OPTIONS = { ...SHARED, 'no-index': { type: 'boolean' } } as const;

export async function runAcpCommand(argv: readonly string[], version: string): Promise<number> {
  const { values } = parse(approveArgs(argv), OPTIONS, 0);
  const code = await runAcp({
    version,
    flags: agentFlags(values),
    approve: sessionFlags(values).approveMode,
    noIndex: values['no-index'] === true,
    log: (text) => process.stderr.write(`${text}\n`),
  });
  // Pooled HTTP connections, a watcher or an MCP server's pipes must not keep the editor's child alive.
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  process.exit(code);
}
