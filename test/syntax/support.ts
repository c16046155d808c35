// Shared helpers for the syntax tests (not a test file itself).
import assert from 'node:assert/strict';
import { extractDeclarations } from '../../src/syntax/declarations.ts';
import type { Declaration, LanguageId } from '../../src/syntax/types.ts';

export interface Seen extends Declaration {
  /** bytes[span] as text. */
  text: string;
  /** bytes[itemSpan] as text. */
  item: string;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function utf8(source: string): Uint8Array {
  return encoder.encode(source);
}

export function slice(bytes: Uint8Array, start: number, end: number): string {
  return decoder.decode(bytes.subarray(start, end));
}

export function declare(language: LanguageId, source: string): Seen[] {
  const bytes = utf8(source);
  const { declarations, hasErrors } = extractDeclarations(language, bytes);
  assert.equal(hasErrors, false, `fixture parses without errors (${language})`);
  return declarations.map((d) => ({
    ...d,
    text: slice(bytes, d.span.start, d.span.end),
    item: slice(bytes, d.itemSpan.start, d.itemSpan.end),
  }));
}

export function get(decls: Seen[], qualifiedName: string): Seen {
  const found = decls.find((d) => d.qualifiedName === qualifiedName);
  assert.ok(found, `declaration ${qualifiedName} in [${decls.map((d) => d.qualifiedName).join(', ')}]`);
  return found;
}

/** name → [kind, visibility, facets] for a compact whole-table assertion. */
export function table(decls: Seen[]): Record<string, [string, string | null, string]> {
  const out: Record<string, [string, string | null, string]> = {};
  for (const d of decls) out[d.qualifiedName] = [d.kind, d.visibility, d.facets.join(',')];
  return out;
}
