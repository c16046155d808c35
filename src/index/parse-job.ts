import { createHash } from 'node:crypto';
import type { Declaration, LanguageId } from '../syntax/types.ts';
import { log } from '../core/log.ts';
import { lineCount, lineNumberFromStarts, lineStarts } from '../core/lines.ts';
import { readSourceFileSync } from '../workspace/read.ts';
import { SyntaxLimitError } from '../syntax/runtime.ts';
import type { FileRelations } from '../syntax/relations/types.ts';
import { extractFileFacts } from '../syntax/relations/extract.ts';
import { declarationChunks, declarationDoc, indexText, nameKey } from './text.ts';

// One unit of indexing work: read a visible file, admit it (bounded, UTF-8, no NUL),
// hash it, parse it when a syntax provider claims it, and prepare every row the store
// writes for it. Runs in a worker thread for large batches and on the main thread for small
// ones, so the main thread only writes: what crosses back is rows of primitives, never the
// file's bytes (the store keeps digests and spans; bytes are re-read from the workspace).

export interface ParseItem {
  path: string;
  /** The syntax language that claims the path, or null when none does. */
  language: LanguageId | null;
  /** Whether the file joins the full-text index. */
  keepContent: boolean;
  /** Whether the binding provider wants the file's relation facts. */
  relations: boolean;
}

/**
 * One declaration as the store writes it: name, qualified name, their lowercase forms, kind,
 * node kind, facets (comma-joined), visibility, container, span, item span, 1-based line and the
 * key of the lowercase qualified name (`nameKey`).
 */
export type SymbolInput = [
  name: string, qname: string, qlower: string, nlower: string, kind: string, nodeKind: string, facets: string,
  visibility: string | null, container: string | null, spanStart: number, spanEnd: number, itemStart: number, itemEnd: number,
  line: number, qkey: number,
];

export interface TextInput {
  /** Full-text input of each declaration's name, aligned with the symbols. */
  names: string[];
  /** Full-text input of each declaration's documentation (`declarationDoc`), aligned with the symbols. */
  docs: string[];
  /**
   * Line-aligned chunks of the file, each the text of one declaration (nested ones cut out) or
   * of the code between declarations: the file's text is indexed once, and a declaration's
   * own text is the chunks it owns. `owner` indexes the symbols (null: no declaration).
   */
  chunks: Array<{ start: number; end: number; line: number; text: string; key: string; owner: number | null }>;
}

/**
 * A short digest of full-text input: a re-indexed file keeps the rows (and full-text entries)
 * of chunks and declarations whose input did not change, so an edit rewrites only what moved.
 */
function textKey(...parts: string[]): string {
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
      /** The read's stamp of the file's state (see `readSourceFileSync`), or null (racy, or not read from the workspace). */
      stamp: string | null;
      language: LanguageId | null;
      /** Line count of the bytes. */
      lines: number;
      /** Declarations as rows, in source order; null when no provider parsed the file. */
      symbols: SymbolInput[] | null;
      /** Why a file its language claims has no declarations (`parse_time`, `syntax_nodes`, `syntax_depth`, `parse_error`), else null. */
      unparsed: string | null;
      /** Relation facts, when the item asked for them and the file parsed. */
      relations: FileRelations | null;
      /** Full-text input; null leaves the file out of the full-text tier. */
      text: TextInput | null;
    }
  | { path: string; ok: false; reason: string };

const utf8 = new TextDecoder('utf-8');

function symbolInputs(bytes: Uint8Array, declarations: readonly Declaration[]): SymbolInput[] {
  const starts = lineStarts(bytes);
  return declarations.map((d) => [
    d.name, d.qualifiedName, d.qualifiedName.toLowerCase(), d.name.toLowerCase(), d.kind, d.nodeKind ?? d.kind, d.facets.join(','),
    d.visibility, d.container, d.span.start, d.span.end, d.itemSpan.start, d.itemSpan.end,
    lineNumberFromStarts(starts, d.span.start), nameKey(d.qualifiedName.toLowerCase()),
  ]);
}

function textInput(bytes: Uint8Array, declarations: readonly Declaration[] | null): TextInput {
  const chunks = [];
  for (const c of declarationChunks(bytes, declarations ?? [])) {
    const raw = utf8.decode(bytes.subarray(c.start, c.end));
    // Blank runs between declarations carry no words: no row, no full-text entry.
    if (raw.trim() === '') continue;
    const text = indexText(raw);
    chunks.push({ ...c, text, key: textKey(text) });
  }
  return {
    names: (declarations ?? []).map((d) => indexText(d.qualifiedName)),
    docs: (declarations ?? []).map((d) => declarationDoc(bytes, d.span, d.itemSpan)),
    chunks,
  };
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
  return parseBytes(item, read.bytes, read.sha256, read.mtimeMs, read.stamp);
}

/** The rows of admitted bytes (bounded, UTF-8, no NUL), wherever they were read from. */
export function parseBytes(item: ParseItem, bytes: Uint8Array, sha256: string, mtimeMs: number, stamp: string | null = null): ParseOutcome & { ok: true } {
  let declarations: Declaration[] | null = null;
  let unparsed: string | null = null;
  let relations: FileRelations | null = null;
  const language = item.language;
  if (language) {
    try {
      ({ declarations, relations } = extractFileFacts(language, bytes, item.relations));
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
    stamp,
    language,
    lines: lineCount(bytes),
    symbols: declarations ? symbolInputs(bytes, declarations) : null,
    unparsed,
    relations,
    text: keep ? textInput(bytes, declarations) : null,
  };
}

/**
 * An outcome from rows the store already holds for the same bytes (`Store.blobRows`): the
 * declarations as stored, the chunk text recomputed from the bytes (no parse).
 */
export function outcomeFromRows(
  item: ParseItem,
  bytes: Uint8Array,
  sha256: string,
  rows: { lines: number; symbols: SymbolInput[]; chunks: Array<{ start: number; end: number; line: number; key: string; owner: number | null }> },
): ParseOutcome & { ok: true } {
  const chunks = rows.chunks.map((c) => ({ ...c, text: indexText(utf8.decode(bytes.subarray(c.start, c.end))) }));
  return {
    path: item.path,
    ok: true,
    sha256,
    size: bytes.byteLength,
    mtimeMs: 0,
    stamp: null,
    language: item.language,
    lines: rows.lines,
    unparsed: null,
    symbols: rows.symbols,
    relations: null,
    text: {
      names: rows.symbols.map((r) => indexText(r[1])),
      docs: rows.symbols.map((r) => declarationDoc(bytes, { start: r[9], end: r[10] }, { start: r[11], end: r[12] })),
      chunks,
    },
  };
}
