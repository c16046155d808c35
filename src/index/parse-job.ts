import type { Declaration, LanguageId } from '../syntax/types.ts';
import { readSourceFileSync } from '../workspace/read.ts';
import { extractDeclarations } from '../syntax/declarations.ts';

// One unit of indexing work: read a visible file, admit it (bounded, UTF-8, no NUL),
// hash it, and parse it when a syntax provider claims it. Runs in a worker thread for
// large batches and on the main thread for small incremental ones.

export interface ParseItem {
  path: string;
  /** The syntax language that claims the path, or null when none does. */
  language: LanguageId | null;
  /** Whether the file's bytes join the store (parsed files and full-text selected files). */
  keepContent: boolean;
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
    }
  | { path: string; ok: false; reason: string };

export function runParseItem(root: string, maxFileBytes: number, item: ParseItem): ParseOutcome {
  const read = readSourceFileSync(root, item.path, maxFileBytes);
  if (!read.ok) return { path: item.path, ok: false, reason: read.reason };
  let declarations: Declaration[] | null = null;
  let language = item.language;
  if (language) {
    try {
      declarations = extractDeclarations(language, read.bytes).declarations;
    } catch {
      // A file the parser cannot bound (too many nodes, too deep) stays searchable as text.
      language = null;
      declarations = null;
    }
  }
  return {
    path: item.path,
    ok: true,
    sha256: read.sha256,
    size: read.bytes.byteLength,
    mtimeMs: read.mtimeMs,
    language,
    bytes: item.keepContent || declarations ? read.bytes : null,
    declarations,
  };
}
