import { RiftError } from '../core/errors.ts';
import { setLogLevel } from '../core/log.ts';
import { UsageError } from './args.ts';
import { VERSION } from './version.ts';
import { DEFAULT_HOST, DEFAULT_MODEL } from '../agent/base/config.ts';

// `rift <command>`: argument parsing and wiring only; each command lives in its own file and
// is loaded only when run, so a command pays for nothing it does not use.

export { VERSION };

/** The command list: `rift --help` prints it, and README.md's Commands block is this text (a test keeps them equal). */
export const USAGE = `rift [--model M] [--host URL] [--continue | --resume PATH] [--approve[=false]]
                                             the terminal UI: chat, review edits, slash commands (docs/tui.md)
rift index [--workspace DIR] [--json] [--skipped]
                                             build or refresh the index in DIR/.rift (--skipped lists files left out)
rift symbol <name> [--source] [--rev REV] [--history] [--limit N] [--page N] [--workspace DIR] [--json]
                                             find declarations by (qualified) name: path:line  kind name
                                             (--rev: as a branch, tag or commit holds them)
rift search <query> [--target symbol|file|all] [--include-path GLOB]… [--exclude-path GLOB]…
            [--rev REV] [--source] [--limit N] [--page N] [--workspace DIR] [--json]
                                             ranked search over names, declarations and text
rift log <symbol> [--rev REV] [--workspace DIR] [--json]
                                             a declaration's history, newest first: introduced,
                                             body/signature/decorators changed, removed
rift nodes <path>:<line>[:<col>] [--workspace DIR] [--json]
rift nodes <path> <byte-offset> [--workspace DIR] [--json]
                                             the syntax nodes containing a position (1-based
                                             line and column, or a UTF-8 byte offset)
rift map [--workspace DIR] [--json]          languages, modules, most referenced symbols,
                                             entry points and docs of the tree
rift callers <symbol> [--depth N] [--facets calls,constructs,…] [--workspace DIR] [--json]
rift callees <symbol> [--depth N] [--facets calls,constructs,…] [--workspace DIR] [--json]
                                             who calls a declaration / what it calls, as a tree
rift path <from> <to> [--depth N] [--facets …] [--incoming] [--workspace DIR] [--json]
                                             the shortest route from one declaration to another
rift mcp [--workspace DIR] [--standalone]    serve MCP over stdio (for agents), through the
                                             workspace's shared server (--standalone: in-process)
rift server [--workspace DIR] [--port N] [--idle-timeout 30m] [--stop]
                                             the workspace's one MCP server over HTTP on 127.0.0.1
rift status [--workspace DIR] [--json]       the running server: clients, index state, memory
rift -p "<prompt>" [--model M] [--host URL] [--json] [--trace FILE]
        [--continue | --resume PATH] [--approve]
                                             run one agent turn headless (docs/agent.md)
rift --serve [--model M] [--host URL] [--continue | --resume PATH] [--approve[=false]]
                                             editor protocol v1: JSON lines over stdio (docs/serve.md)
rift acp [--model M] [--host URL] [--approve[=false]]
                                             the Agent Client Protocol over stdio, for editors
                                             such as Zed and Neovim (docs/acp.md)
rift swarm "<task>" [--models a,b,…] [--explore] [--judge MODEL] [--trees projection|worktree]
           [--host URL] [--no-tui]
                                             several models race on one task, each in its own
                                             projection or git worktree (docs/swarm.md)
rift merge <name> [--cleanup]                land a swarm candidate's change in the workspace
rift projection list [--workspace DIR] [--json]
rift projection remove <id>… [--workspace DIR]
                                             the workspace's projections (isolated copies);
                                             remove deletes them with any unpublished changes
rift trust [--workspace DIR] [--list]        decide on a terminal what this repository may run
                                             or redirect (its .rift.json, rift.toml hooks, plugins)
rift doctor [--workspace DIR] [--json]       the bash sandbox, engines and config sources
rift --help | --version
`;

export const HELP = `rift ${VERSION} — read and change code by meaning

Usage:
${USAGE.replace(/^/gm, '  ').replace(/ +$/, '')}
A <symbol> is a SymbolId (rift://symbol/…) or a name matching one declaration.
The workspace defaults to the current directory (never the filesystem root: name it with
--workspace DIR there). Configuration: rift.toml at the workspace root (see
docs/configuration.md). Tools: docs/mcp.md. Trust boundaries, the sandbox and what a cloned
repository can do: docs/security.md.

rift index counts: files indexed; parsed, those a language provider read declarations from;
re-parsed, those parsed in this run (new or changed since the last); removed, those gone since
the last run; skipped, visible files left out (over [source].max_file_bytes, not UTF-8, a NUL
byte, a link, a non-NFC name). --json adds the tree revision.

Agent (the TUI, -p, --serve): the model is ${DEFAULT_MODEL} on ${DEFAULT_HOST} unless --model/--host,
RIFT_MODEL/RIFT_HOST or the config (~/.config/rift/config.json, .rift.json) name another;
provider/model addresses reach OpenAI-compatible servers (docs/agent.md).
`;

/**
 * The USAGE entries naming `command` (each entry: its `rift …` lines and the description under
 * them), or null for a word USAGE does not name.
 */
export function commandUsage(command: string): string | null {
  const entries: string[][] = [];
  let describing = true;
  for (const line of USAGE.split('\n')) {
    if (line.startsWith('rift')) {
      // A `rift` line after a description starts the next entry; one after another `rift` line shares it.
      if (describing) entries.push([]);
      // A description may follow on the same line, after a gap of two spaces or more.
      describing = / {2,}\S/.test(line.trimEnd());
    } else if (/^ {20,}/.test(line)) {
      describing = true;
    }
    if (line.trim() !== '') entries.at(-1)?.push(line);
  }
  const mine = entries.filter((e) => e.some((l) => l.startsWith('rift') && l.split(/\s+/)[1] === command));
  return mine.length === 0 ? null : `${mine.map((e) => e.join('\n')).join('\n')}\n`;
}

/** `-h`/`--help` among a command's own arguments (not after `--`). */
function asksHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((a) => a === '-h' || a === '--help');
}

export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  // `rift index --help`, `rift help index`: that command's usage.
  const asked = command === 'help' ? rest[0] : command !== undefined && !command.startsWith('-') && asksHelp(rest) ? command : undefined;
  // `rift swarm --help` and `rift merge --help` print their commands' fuller help themselves.
  const ownHelp = command === 'swarm' || command === 'merge';
  const usage = asked === undefined || (ownHelp && command === asked) ? null : commandUsage(asked);
  if (command === 'help' && asked !== undefined && usage === null) {
    process.stderr.write(`rift: unknown command '${asked}'\n\n${HELP}`);
    return 2;
  }
  if (usage !== null) {
    process.stdout.write(`Usage:\n${usage.replace(/^(?=.)/gm, '  ')}\nThe workspace defaults to the current directory. Every command: rift --help.\n`);
    return 0;
  }
  // One-shot commands print their own summary; their logs stay quiet unless RIFT_LOG asks.
  if (command !== 'mcp' && command !== 'server' && !process.env.RIFT_LOG) setLogLevel('warn');
  try {
    // Headless agent mode is flags only (`rift --model m -p "..."`), never a command word.
    if (command?.startsWith('-') && argv.some((a) => a === '-p' || a === '--prompt' || a.startsWith('--prompt='))) {
      return await (await import('./prompt-command.ts')).runPrompt(argv);
    }
    if (command?.startsWith('-') && argv.includes('--serve')) {
      return await (await import('./serve-command.ts')).runServeCommand(argv, VERSION);
    }
    // No command word: the terminal UI (`rift`, `rift --model m --continue`).
    if (command === undefined || (command.startsWith('-') && !['-h', '--help', '-V', '--version'].includes(command))) {
      return await (await import('./tui-command.ts')).runTuiCommand(argv, VERSION);
    }
    switch (command) {
      case '-h':
      case '--help':
      case 'help':
        process.stdout.write(HELP);
        return 0;
      case '-V':
      case '--version':
        process.stdout.write(`rift ${VERSION}\n`);
        return 0;
      case 'index':
        return await (await import('./index-command.ts')).runIndex(rest);
      case 'symbol':
        return await (await import('./symbol-command.ts')).runSymbol(rest);
      case 'nodes':
        return await (await import('./nodes-command.ts')).runNodes(rest);
      case 'search':
        return await (await import('./search-command.ts')).runSearch(rest);
      case 'log':
        return await (await import('./log-command.ts')).runLog(rest);
      case 'map':
        return await (await import('./map-command.ts')).runMap(rest);
      case 'callers':
        return await (await import('./callers-command.ts')).runCallers(rest, 'incoming');
      case 'callees':
        return await (await import('./callers-command.ts')).runCallers(rest, 'outgoing');
      case 'path':
        return await (await import('./path-command.ts')).runPath(rest);
      case 'mcp':
        return await (await import('./mcp-command.ts')).runMcp(rest, VERSION);
      case 'server':
        return await (await import('./server-command.ts')).runServerCommand(rest, VERSION);
      case 'status':
        return await (await import('./status-command.ts')).runStatus(rest);
      case 'acp':
        return await (await import('./acp-command.ts')).runAcpCommand(rest, VERSION);
      case 'swarm':
        return await (await import('./swarm-command.ts')).runSwarmCommand(rest);
      case 'merge':
        return await (await import('./swarm-command.ts')).runMergeCommand(rest);
      case 'projection':
        return await (await import('./projection-command.ts')).runProjection(rest);
      case 'trust':
        return await (await import('./trust-command.ts')).runTrust(rest);
      case 'doctor':
        return await (await import('./doctor-command.ts')).runDoctor(rest);
      default:
        process.stderr.write(`rift: unknown command '${command}'\n\n${HELP}`);
        return 2;
    }
  } catch (err) {
    return reportError(err);
  }
}

/** Prints an error a person can act on; exit code 2 for usage, 1 otherwise. */
export function reportError(err: unknown): number {
  if (err instanceof RiftError) {
    process.stderr.write(`rift: ${err.code}: ${err.message}\n`);
    return err.code === 'invalid_request' ? 2 : 1;
  }
  if (err instanceof UsageError) {
    process.stderr.write(`rift: ${err.message}\nRun 'rift --help' for usage.\n`);
    return 2;
  }
  // An unclassified failure prints its message; the stack only when debugging asks for it.
  const debug = process.env.RIFT_LOG === 'debug';
  const text = err instanceof Error ? (debug ? (err.stack ?? err.message) : err.message) : String(err);
  process.stderr.write(`rift: internal_error: ${text}\n${debug ? '' : 'Run with RIFT_LOG=debug for the full trace.\n'}`);
  return 1;
}
