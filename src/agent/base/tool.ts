import type { ToolDef } from './types.ts';

// What a tool is to the loop: a schema for the model and a function that returns text or
// throws ToolError. Every error reaches the model as `ERROR: <message>`, never fails the turn.

export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolError';
  }
}

export interface Tool<C> {
  readonly name: string;
  readonly description: string;
  readonly parameters: Record<string, unknown>;
  /** write, edit and bash change the project; the loop tracks whether the turn did. */
  readonly mutating?: boolean;
  run(args: Record<string, unknown>, ctx: C): Promise<string>;
}

export function toolDef<C>(t: Tool<C>): ToolDef {
  return { type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } };
}

/** Argument access with errors the model can act on in one step. */
export function stringArg(args: Record<string, unknown>, key: string, tool: string): string {
  const v = args[key];
  if (typeof v === 'string') return v;
  if (v === undefined || v === null) throw new ToolError(`${tool} needs the '${key}' argument (a string)`);
  throw new ToolError(`${tool}: '${key}' must be a string, got ${Array.isArray(v) ? 'an array' : typeof v}`);
}

export function optString(args: Record<string, unknown>, key: string, tool: string): string | undefined {
  return args[key] === undefined || args[key] === null ? undefined : stringArg(args, key, tool);
}

export function optInt(args: Record<string, unknown>, key: string, tool: string): number | undefined {
  const v = args[key];
  if (v === undefined || v === null) return undefined;
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw new ToolError(`${tool}: '${key}' must be an integer, got ${JSON.stringify(v)}`);
  return n;
}

export function optBool(args: Record<string, unknown>, key: string, tool: string): boolean | undefined {
  const v = args[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === 'false') return v === 'true';
  throw new ToolError(`${tool}: '${key}' must be true or false, got ${JSON.stringify(v)}`);
}
