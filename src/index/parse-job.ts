import { createHash } from 'node:crypto';
import type { Declaration, LanguageId } from '../syntax/types.ts';
import { log } from '../core/log.ts';
import { readSourceFileSync } from '../workspace/read.ts';
import { extractDeclarations } from '../syntax/declarations.ts';
import { SyntaxLimitError } from '../syntax/runtime.ts';
import { chunkLines, indexText, DECLARATION_TEXT_MAX } from './text.ts';

// One unit of indexing work: read a visible file, admit it (bounded, UTF-8, no NUL),
// hash it, parse it when a syntax provider claims it, and prepare its full-text input.
// Runs in a worker thread for large batches and on the main thread for small ones, so
// the main thread only writes.

export interface ParseItem {
  path: string;
  /** The syntax language that claims the path, or null when none does. */
  language: LanguageId | null;
  /** Whether the file's bytes join the store and the full-text index. */
  keepContent: boolean;
}

export interface TextInput {
  /** Line-aligned chunks of the file with their full-text input and its key. */
  chunks: Array<{ start: number; end: number; line: number; text: string; key: string }>;
  /** Full-text input per declaration, aligned with `declarations`: [name text, source text, key]. */
  declarations: Array<[string, string, string]>;
}

/**
 * A short digest of full-text input: a re-indexed file keeps the rows (and full-text entries)
 * of chunks and declarations whose input did not change, so an edit rewrites only what moved.
 */
export function textKey(...parts: string[]): string {
  const h = createHash('sha1');
  for (const p of parts) h.update(p).update('\0');
  return h.digest('base64url').slice(0, 16);
}

export type ParseOutcome =
  | {
      path: string;
      ok: true;
      sha256: string;
      size: number;
      mtimeMs: number;
      language: LanguageId | null;
      bytes: Uint8Array | null;
      declarations: Declaration[] | null;
      /** Why a file its language claims has no declarations (`parse_time`, `syntax_nodes`, `syntax_depth`, `parse_error`), else null. */
      unparsed: string | null;
      text: TextInput | null;
    }
  | { path: string; ok: false; reason: string };

const utf8 = new TextDecoder('utf-8');

export function textInput(bytes: Uint8Array, declarations: readonly Declaration[] | null): TextInput {
  const chunks = chunkLines(bytes).map((c) => {
    const text = indexText(utf8.decode(bytes.subarray(c.start, c.end)));
    return { ...c, text, key: textKey(text) };
  });
  const decls: Array<[string, string, string]> = (declarations ?? []).map((d, i, all) => {
    const name = indexText(d.qualifiedName);
    const body = indexText(ownText(bytes, d, all, i));
    return [name, body, textKey(d.qualifiedName, name, body)];
  });
  return { chunks, declarations: decls };
}

/**
 * A declaration's own text: its span without the spans of declarations nested in it, so
 * a class is indexed by its head, docs and fields, and each method by itself (nested
 * code is indexed once, not once per enclosing declaration). At most DECLARATION_TEXT_MAX bytes.
 */
function ownText(bytes: Uint8Array, d: Declaration, all: readonly Declaration[], index: number): string {
  let out = '';
  let at = d.span.start;
  let budget = DECLARATION_TEXT_MAX;
  // Declarations come in source order, so nested ones follow their container.
  for (let j = index + 1; j < all.length && budget > 0; j++) {
    const inner = all[j].span;
    if (inner.start >= d.span.end) break;
    if (inner.start < at) continue; // inside a nested declaration already cut out
    const piece = bytes.subarray(at, Math.min(inner.start, at + budget));
    out += utf8.decode(piece) + '\n';
    budget -= piece.length;
    at = Math.max(at, inner.end);
  }
  if (budget > 0 && at < d.span.end) out += utf8.decode(bytes.subarray(at, Math.min(d.span.end, at + budget)));
  return out;
}

export function runParseItem(root: string, maxFileBytes: number, item: ParseItem): ParseOutcome {
  let read: ReturnType<typeof readSourceFileSync>;
  try {
    read = readSourceFileSync(root, item.path, maxFileBytes);
  } catch (e) {
    // An error the reader does not classify (EINVAL from a device, say) leaves this one file out.
    log('warn', 'index.read', 'file left out: unclassified read error', { path: item.path, error: (e as NodeJS.ErrnoException).code ?? 'unknown' });
    return { path: item.path, ok: false, reason: 'unreadable' };
  }
  if (!read.ok) return { path: item.path, ok: false, reason: read.reason };
  const { bytes, sha256, mtimeMs } = read;
  let declarations: Declaration[] | null = null;
  let unparsed: string | null = null;
  const language = item.language;
  if (language) {
    try {
      declarations = extractDeclarations(language, bytes).declarations;
    } catch (e) {
      // A file the parser cannot bound (too many nodes, too deep, too slow) stays searchable as
      // text; it keeps its language, so a warm start knows it was already tried, and the reason.
      unparsed = !(e instanceof SyntaxLimitError) ? 'parse_error' : e.limit === 'time' ? 'parse_time' : `syntax_${e.limit}`;
    }
  }
  const keep = item.keepContent || declarations !== null;
  return {
    path: item.path,
    ok: true,
    sha256,
    size: bytes.byteLength,
    mtimeMs,
    language,
    bytes: keep ? bytes : null,
    declarations,
    unparsed,
    text: keep ? textInput(bytes, declarations) : null,
  };
}
