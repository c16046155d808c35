import type { z } from 'zod';
import { invalidField } from '../core/errors.ts';

// Turns a schema failure into `invalid_request` naming the field and its violation,
// the way every input failure reaches a caller (reference A.1, D.3).

function fieldName(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out ? `.${String(p)}` : String(p);
  }
  return out || 'arguments';
}

function violation(issue: z.core.$ZodIssue, value: unknown): { field: string; violation: string } {
  const field = fieldName(issue.path);
  if (issue.code === 'unrecognized_keys') return { field: fieldName([...issue.path, issue.keys[0]]), violation: 'unknown_field' };
  // An absent field is `missing` whatever its schema (a union, such as `body`, included).
  if (issue.path.length > 0 && valueAt(value, issue.path) === undefined) return { field, violation: 'missing' };
  switch (issue.code) {
    case 'invalid_type':
      return { field, violation: `wrong_type, expected ${issue.expected}` };
    case 'too_small':
      if (field === 'limit' && Number(issue.minimum) === 1) return { field, violation: 'zero' };
      if (issue.origin === 'string') return { field, violation: 'empty' };
      return { field, violation: `below_minimum ${String(issue.minimum)}` };
    case 'too_big':
      return { field, violation: issue.origin === 'string' ? 'too_long' : `above_maximum ${String(issue.maximum)}` };
    case 'invalid_value':
      return { field, violation: `not_one_of ${issue.values.map((v) => String(v)).join('|')}` };
    case 'invalid_format':
      return { field, violation: 'invalid_format' };
    case 'custom':
      // Refinements say what the value misses in the reference's words.
      return { field, violation: issue.message };
    default:
      return { field, violation: 'invalid' };
  }
}

function valueAt(value: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let cur: unknown = value;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[p];
  }
  return cur;
}

/** Parses request arguments, throwing `invalid_request` for the first failing field. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const issues = [...result.error.issues].sort((a, b) => (a.code === 'unrecognized_keys' ? -1 : 0) - (b.code === 'unrecognized_keys' ? -1 : 0));
  const v = violation(issues[0], value);
  throw invalidField(v.field, v.violation);
}
