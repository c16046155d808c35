import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { AgentFlags } from '../agent/base/config.ts';

// Shared flag parsing: unknown flags and missing values become a usage error.

export class UsageError extends Error {}

/** `positionals`: how many arguments the command takes, or `'some'` for one or more. */
export function parse<T extends NonNullable<ParseArgsConfig['options']>>(argv: readonly string[], options: T, positionals: number | 'some') {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (positionals === 'some') {
    if (parsed.positionals.length === 0) throw new UsageError('expected one or more arguments, got 0');
  } else if (parsed.positionals.length !== positionals) {
    throw new UsageError(`expected ${positionals} argument${positionals === 1 ? '' : 's'}, got ${parsed.positionals.length}`);
  }
  return parsed;
}

export const WORKSPACE = { workspace: { type: 'string', short: 'w' } } as const;

/** A positive whole-number flag value, or undefined when the flag is absent. */
export function intFlag(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--${name} must be a positive integer, got ${v}`);
  return n;
}

export const PAGING = { limit: { type: 'string' }, page: { type: 'string' } } as const;

/** `--limit N` and `--page N` as whole numbers; the service checks their bounds. */
export function pageFlags(values: { limit?: string; page?: string }, defaultLimit: number): { limit: number; page_index: number } {
  const limit = values.limit === undefined ? defaultLimit : Number(values.limit);
  const page = values.page === undefined ? 0 : Number(values.page);
  if (!Number.isInteger(limit) || !Number.isInteger(page) || page < 0) throw new UsageError('--limit and --page take whole numbers');
  return { limit, page_index: page };
}

/** The agent flags `-p` and `--serve` share. */
export const AGENT_OPTIONS = {
  model: { type: 'string', short: 'm' },
  host: { type: 'string' },
  continue: { type: 'boolean', short: 'c' },
  resume: { type: 'string' },
  approve: { type: 'boolean' },
  'num-ctx': { type: 'string' },
  'max-iterations': { type: 'string' },
  temp: { type: 'string' },
} as const;

export function agentFlags(values: { host?: string; model?: string; 'num-ctx'?: string; 'max-iterations'?: string; temp?: string }): AgentFlags {
  return {
    host: values.host,
    model: values.model,
    numCtx: intFlag(values['num-ctx'], 'num-ctx'),
    maxIterations: intFlag(values['max-iterations'], 'max-iterations'),
    temperature: values.temp === undefined ? undefined : Number(values.temp),
  };
}

/** The flags of the long-running front ends (`--serve`, the TUI): agent flags, session, approval mode. */
export const SESSION_OPTIONS = { ...AGENT_OPTIONS, 'no-approve': { type: 'boolean' } } as const;

/** `--approve=false` / `--approve=true` are accepted besides the bare boolean flag. */
export function approveArgs(argv: readonly string[]): string[] {
  return argv.map((a) => (a === '--approve=false' ? '--no-approve' : a === '--approve=true' ? '--approve' : a));
}

/** Checks the session and approval flags; the approval mode is undefined when the config decides. */
export function sessionFlags(values: { continue?: boolean; resume?: string; approve?: boolean; 'no-approve'?: boolean; temp?: string }): {
  continue?: boolean;
  resume?: string;
  approveMode?: boolean;
} {
  if (values.continue && values.resume) throw new UsageError('--continue and --resume cannot be combined');
  if (values.approve && values['no-approve']) throw new UsageError('--approve and --approve=false cannot be combined');
  if (values.temp !== undefined && !Number.isFinite(Number(values.temp))) throw new UsageError(`--temp must be a number, got ${values.temp}`);
  return { continue: values.continue, resume: values.resume, approveMode: values.approve ? true : values['no-approve'] ? false : undefined };
}
