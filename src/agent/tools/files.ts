import { extname } from 'node:path';
import { PARTIAL_NOTE } from '../policy/approval.ts';
import { appliedDiff } from '../policy/diff.ts';
import { ToolError, optBool, optInt, stringArg, type Tool } from '../base/tool.ts';
import type { ProjectFile } from '../session/undo.ts';
import { projectFile, type ToolContext } from './context.ts';
import { engineReport } from './diagnostics.ts';
import { lineNumberFromStarts, lineStarts, splitLines } from '../../core/lines.ts';
import { FILE_BYTES_MAX } from '../../core/limits.ts';
import { WriteRefused } from '../../services/workspace-files.ts';
import { extractDeclarations } from '../../syntax/declarations.ts';
import { isSyntaxReady } from '../../syntax/runtime.ts';
import type { LanguageId } from '../../syntax/types.ts';
import { decodeText, encodeText, looksBinary, type DecodedText, type TextEncoding } from '../../workspace/encoding.ts';

// read, write and edit (reference B.2) on project files: bounded reads that never follow a link
// out, each file decoded in its own encoding and written back in it, so bytes the edit did not
// touch stay as they were, and atomic publication. Errors are written so the model can fix the
// call in one step: closest names, closest lines, whitespace diagnosis.

export const READ_LINES_MAX = 2000;
export const READ_LINE_CHARS_MAX = 2000;
export const READ_BYTES_MAX = 50_000;
export const OUTLINE_LINES_MIN = 500;

const OUTLINE_LANGUAGES: Record<string, LanguageId> = {
  '.rs': 'rust', '.py': 'python', '.js': 'javascript', '.jsx': 'javascript', '.ts': 'typescript', '.tsx': 'tsx', '.go': 'go',
};

/** Similarity of two strings by shared character bigrams (Dice coefficient). */
export function bigramSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  if (a.length < 2 || b.length < 2) return 0;
  const grams = new Map<string, number>();
  for (let i = 0; i < a.length - 1; i++) {
    const g = a.slice(i, i + 2);
    grams.set(g, (grams.get(g) ?? 0) + 1);
  }
  let shared = 0;
  for (let i = 0; i < b.length - 1; i++) {
    const g = b.slice(i, i + 2);
    const n = grams.get(g) ?? 0;
    if (n > 0) {
      shared++;
      grams.set(g, n - 1);
    }
  }
  return (2 * shared) / (a.length - 1 + (b.length - 1));
}

function missingFile(f: ProjectFile, path: string): ToolError {
  const slash = f.path.lastIndexOf('/');
  const dir = slash < 0 ? '' : f.path.slice(0, slash);
  let names: string[] = [];
  try {
    names = f.files.list(dir).map((e) => e.name);
  } catch {
    // the directory itself is missing: no suggestions
  }
  const want = f.path.slice(slash + 1).toLowerCase();
  const similar = names
    .map((n) => ({ n, s: bigramSimilarity(n.toLowerCase(), want) }))
    .filter((x) => x.s > 0.4)
    .sort((a, b) => b.s - a.s)
    .slice(0, 5)
    .map((x) => (dir === '' ? x.n : `${dir}/${x.n}`));
  return new ToolError(similar.length > 0 ? `${path} does not exist. Did you mean: ${similar.join(', ')}?` : `${path} does not exist. Use ls or glob to find the right path.`);
}

function checkReadDeny(ctx: ToolContext, tool: string, abs: string): void {
  const rule = ctx.approval.rules.denied(tool, abs);
  if (rule) throw new ToolError(`reading ${abs} is blocked by permission rule '${rule}'`);
}

/** A deny rule covering a write or edit, in the words the approval gate uses for it. */
function checkEditDeny(ctx: ToolContext, kind: 'write' | 'edit', abs: string): void {
  const v = ctx.approval.rules.verdict(kind, abs);
  if (v.kind === 'deny') throw new ToolError(`this ${kind} was blocked by permission rule '${v.rule}'`);
}

/** A file's bytes as it is now: null when it does not exist; a ToolError when it cannot be used. */
function currentBytes(f: ProjectFile, path: string): Uint8Array | null {
  const kind = f.files.kind(f.path);
  if (kind === 'dir') throw new ToolError(`${path} is a directory; give a file path (ls lists a directory)`);
  const r = f.files.read(f.path, FILE_BYTES_MAX);
  if (r.ok) return r.bytes;
  if (r.reason === 'missing') return null;
  if (r.reason === 'too_large') throw new ToolError(`${path} is larger than ${FILE_BYTES_MAX} bytes, more than the file tools load; use grep, or bash (head, sed -n) for a part`);
  throw new ToolError(`${path} cannot be read (${r.reason.replace('_', ' ')})`);
}

function outline(language: LanguageId, bytes: Uint8Array, lines: readonly string[]): string | null {
  if (!isSyntaxReady()) return null;
  let decls;
  try {
    decls = extractDeclarations(language, bytes).declarations;
  } catch {
    return null;
  }
  if (decls.length === 0) return null;
  const starts = lineStarts(bytes);
  return decls
    .map((d) => {
      const ln = lineNumberFromStarts(starts, d.itemSpan.start) - 1;
      const depth = d.container ? d.qualifiedName.split(/::|\./).length - 1 : 0;
      return `${String(ln + 1).padStart(5)}\t${'  '.repeat(depth)}${(lines[ln] ?? '').trim().slice(0, 200)}`;
    })
    .join('\n');
}

export const readTool: Tool<ToolContext> = {
  name: 'read',
  description: 'Read a text file with line numbers. Use offset/limit for ranges of large files.',
  parameters: {
    type: 'object',
    required: ['path'],
    properties: {
      path: { type: 'string' },
      offset: { type: 'integer', description: '1-based first line' },
      limit: { type: 'integer', description: 'lines, max 2000' },
    },
  },
  async run(args, ctx) {
    const path = stringArg(args, 'path', 'read');
    const offset = optInt(args, 'offset', 'read');
    const limitArg = optInt(args, 'limit', 'read');
    const f = projectFile(ctx, path, (abs) => checkReadDeny(ctx, 'read', abs));
    checkReadDeny(ctx, 'read', f.abs);
    if (f.files.kind(f.path) === 'dir') throw new ToolError(`${path} is a directory; use ls to list it`);
    const bytes = currentBytes(f, path);
    if (bytes === null) throw missingFile(f, path);
    if (looksBinary(bytes)) throw new ToolError(`${path} appears to be a binary file`);
    const decoded = decodeText(bytes);
    const { encoding } = decoded;
    // An editor's buffer (ACP) wins over the disk for a file it holds open.
    const text = (await ctx.editorFiles?.read?.(f.abs, ctx.signal)) ?? decoded.text;
    if (text.length === 0) return '(empty file)\n';
    const lines = splitLines(text);
    const total = lines.length;

    // Declarations are found in UTF-8 bytes; another encoding gets the plain listing.
    const language = encoding.startsWith('utf-8') ? OUTLINE_LANGUAGES[extname(f.path)] : undefined;
    if (offset === undefined && limitArg === undefined && language && total > OUTLINE_LINES_MIN) {
      const o = outline(language, bytes, lines);
      if (o) return `${path} has ${total} lines — showing its outline (line numbers on the left). Re-read with offset/limit for the exact ranges you need.\n${o}\n`;
    }

    const start = Math.max(1, offset ?? 1);
    if (start > total) throw new ToolError(`offset ${start} is past the end of the file (${total} lines)`);
    const limit = Math.min(Math.max(1, limitArg ?? READ_LINES_MAX), READ_LINES_MAX);
    let out = '';
    let last = start - 1;
    for (let i = start - 1; i < Math.min(total, start - 1 + limit); i++) {
      let line = lines[i];
      if (line.length > READ_LINE_CHARS_MAX) line = line.slice(0, READ_LINE_CHARS_MAX);
      const piece = `${String(i + 1).padStart(5)}\t${line}\n`;
      if (Buffer.byteLength(out) + Buffer.byteLength(piece) > READ_BYTES_MAX) {
        out += `[truncated at ${READ_BYTES_MAX} bytes; use offset/limit to read more]\n`;
        break;
      }
      out += piece;
      last = i + 1;
    }
    if (last < total) out += `[showing lines ${start}-${last} of ${total}; continue with offset=${last + 1}]\n`;
    return out;
  },
};

/** A file before a write: its bytes (null when absent) and, unless binary, its text and encoding. */
interface Prior {
  bytes: Uint8Array | null;
  decoded: DecodedText | null;
}

/** The file before a change; an editor's buffer (ACP) wins over the disk for a text file it holds. */
async function priorOf(ctx: ToolContext, f: ProjectFile, path: string): Promise<Prior> {
  const bytes = currentBytes(f, path);
  if (bytes === null || looksBinary(bytes)) return { bytes, decoded: null };
  const decoded = decodeText(bytes);
  const buffer = await ctx.editorFiles?.read?.(f.abs, ctx.signal);
  return { bytes, decoded: buffer == null ? decoded : { text: buffer, encoding: decoded.encoding } };
}

/** The bytes of `text` in the file's encoding; a ToolError naming what does not fit. */
function encodeFor(text: string, encoding: TextEncoding, path: string): Buffer {
  const bytes = encodeText(text, encoding);
  if (bytes === null) {
    throw new ToolError(`the new text of ${path} has characters its encoding (${encoding}) cannot hold; keep to characters the file can store, or convert the file first (bash: iconv)`);
  }
  return bytes;
}

/**
 * Gate, journal, publish. The text is encoded in the file's own encoding (UTF-8 for a new or
 * binary file), and published only if the file still holds the bytes read before the gate.
 */
async function applyChange(ctx: ToolContext, kind: 'write' | 'edit', f: ProjectFile, prior: Prior, proposed: string): Promise<{ note: string; content: string }> {
  const encoding = prior.decoded?.encoding ?? 'utf-8';
  encodeFor(proposed, encoding, f.path);
  const old = prior.bytes === null ? '' : (prior.decoded?.text ?? null);
  const auth = await ctx.approval.authorizeEdit(ctx.gate, { kind, absPath: f.abs, old, proposed }, ctx.signal);
  if (ctx.signal.aborted) throw new ToolError('cancelled by user');
  const bytes = encodeFor(auth.content, encoding, f.path);
  ctx.journal.record(f, prior.bytes);
  if (ctx.editorFiles?.write) {
    // The editor writes its buffer (and the file) itself: it saves in the file's encoding.
    await ctx.editorFiles.write(f.abs, auth.content, ctx.signal);
  } else {
    try {
      await f.files.write(f.path, prior.bytes, bytes);
    } catch (e) {
      if (e instanceof WriteRefused) throw new ToolError(e.message);
      throw e;
    }
  }
  if (old !== null) ctx.lastDiff = appliedDiff(f.abs, old, auth.content);
  return { note: auth.partial ? PARTIAL_NOTE : '', content: auth.content };
}

export const writeTool: Tool<ToolContext> = {
  name: 'write',
  description: 'Create or overwrite a file with the full content given.',
  mutating: true,
  parameters: { type: 'object', required: ['path', 'content'], properties: { path: { type: 'string' }, content: { type: 'string' } } },
  async run(args, ctx) {
    const path = stringArg(args, 'path', 'write');
    const content = stringArg(args, 'content', 'write');
    const f = projectFile(ctx, path, (abs) => checkEditDeny(ctx, 'write', abs));
    const prior = await priorOf(ctx, f, path);
    const { note } = await applyChange(ctx, 'write', f, prior, content);
    const hooks = (await ctx.hooks?.afterEdit(ctx, path)) ?? '';
    return `Wrote ${Buffer.byteLength(content)} bytes to ${f.abs}${note}${await engineReport(ctx, f.abs)}${hooks}`;
  },
};

function countOccurrences(hay: string, needle: string): number {
  let n = 0;
  let i = 0;
  while ((i = hay.indexOf(needle, i)) >= 0) {
    n++;
    i += needle.length;
  }
  return n;
}

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

/** Why old_string did not match, in a sentence the model can act on (B.2 edit). */
export function diagnoseMiss(text: string, oldString: string, path: string): string {
  const needle = squash(oldString);
  if (needle.length > 0 && squash(text).includes(needle)) {
    return `old_string not found in ${path}, but the same text DOES exist with different whitespace/indentation. Re-read those lines and copy them exactly (tabs vs spaces, line breaks).`;
  }
  const first = oldString.split('\n').map((l) => l.trim()).find((l) => l.length > 0) ?? '';
  let best = { line: 0, score: 0, text: '' };
  text.split('\n').forEach((l, i) => {
    const s = bigramSimilarity(l.trim(), first);
    if (s > best.score) best = { line: i + 1, score: s, text: l.trim() };
  });
  if (best.score > 0.5) {
    return `old_string not found in ${path}. Closest match is line ${best.line}: \`${best.text.slice(0, 200)}\`. Read around that line and use its exact text.`;
  }
  return `old_string not found in ${path}. Read the file again and match the text exactly.`;
}

export const editTool: Tool<ToolContext> = {
  name: 'edit',
  description: 'Replace exact text in a file. old_string must match once (or set replace_all).',
  mutating: true,
  parameters: {
    type: 'object',
    required: ['path', 'old_string', 'new_string'],
    properties: {
      path: { type: 'string' },
      old_string: { type: 'string' },
      new_string: { type: 'string' },
      replace_all: { type: 'boolean' },
    },
  },
  async run(args, ctx) {
    const path = stringArg(args, 'path', 'edit');
    let oldString = stringArg(args, 'old_string', 'edit');
    let newString = stringArg(args, 'new_string', 'edit');
    const replaceAll = optBool(args, 'replace_all', 'edit') ?? false;
    if (oldString === '') throw new ToolError('old_string must not be empty');
    if (oldString === newString) throw new ToolError('old_string and new_string are identical');
    const f = projectFile(ctx, path, (abs) => checkEditDeny(ctx, 'edit', abs));
    const prior = await priorOf(ctx, f, path);
    if (prior.bytes === null) throw missingFile(f, path);
    if (prior.decoded === null) throw new ToolError(`${path} appears to be a binary file; edit works on text files only`);
    const text = prior.decoded.text;
    // CRLF reconciliation: match and write in the file's own line endings.
    const fileCrlf = text.includes('\r\n');
    if (fileCrlf && !oldString.includes('\r\n')) {
      oldString = oldString.replace(/\n/g, '\r\n');
      newString = newString.replace(/\r?\n/g, '\r\n');
    } else if (!fileCrlf && oldString.includes('\r\n')) {
      oldString = oldString.replace(/\r\n/g, '\n');
      newString = newString.replace(/\r\n/g, '\n');
    }
    const count = countOccurrences(text, oldString);
    if (count === 0) throw new ToolError(diagnoseMiss(text, oldString, path));
    if (count > 1 && !replaceAll) {
      throw new ToolError(`old_string occurs ${count} times in ${path}; include more surrounding context to make it unique, or set replace_all`);
    }
    const proposed = replaceAll ? text.split(oldString).join(newString) : text.replace(oldString, () => newString);
    const { note } = await applyChange(ctx, 'edit', f, prior, proposed);
    const n = replaceAll ? count : 1;
    const hooks = (await ctx.hooks?.afterEdit(ctx, path)) ?? '';
    return `Edited ${f.abs} (${n} replacement${n === 1 ? '' : 's'})${note}${await engineReport(ctx, f.abs)}${hooks}`;
  },
};
