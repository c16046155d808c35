import { parseArgs, type ParseArgsConfig } from 'node:util';

// Shared flag parsing: unknown flags and missing values become a usage error.

export class UsageError extends Error {}

export function parse<T extends NonNullable<ParseArgsConfig['options']>>(argv: readonly string[], options: T, positionals: number) {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (parsed.positionals.length !== positionals) {
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
