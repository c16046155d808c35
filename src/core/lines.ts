// Byte-exact line utilities: the one place rift finds lines, offsets, line numbers and endings.
// Each function takes bytes (`Uint8Array`, offsets are UTF-8 byte offsets) or a string (offsets
// are code units; a latin1 string of a file's bytes gives byte offsets). Nothing here drops `\r`
// or the final newline.

/** Bytes, or a string whose code units stand for them. */
export type Text = Uint8Array | string;

const LF = 0x0a;
const CR = 0x0d;

function codeAt(t: Text, i: number): number {
  return typeof t === 'string' ? t.charCodeAt(i) : t[i];
}

function indexOfLf(t: Text, from: number): number {
  return typeof t === 'string' ? t.indexOf('\n', from) : t.indexOf(LF, from);
}

/** Offset of the start of the line holding `offset` (0 on the first line). */
export function lineStartAt(t: Text, offset: number): number {
  // `lastIndexOf(x, -1)` searches from the end, so offset 0 must not reach it.
  if (offset <= 0) return 0;
  const from = Math.min(offset, t.length) - 1;
  return (typeof t === 'string' ? t.lastIndexOf('\n', from) : t.lastIndexOf(LF, from)) + 1;
}

/** Offset just past the line ending of the line holding `offset` (or the end of the text). */
export function nextLineStart(t: Text, offset: number): number {
  const nl = indexOfLf(t, offset);
  return nl < 0 ? t.length : nl + 1;
}

/** Offset of the `\n` ending the line holding `offset` (the text's length on a last line without one). */
export function lineBreakAt(t: Text, offset: number): number {
  const nl = indexOfLf(t, offset);
  return nl < 0 ? t.length : nl;
}

/** Offset where the content of the line holding `offset` ends: before its `\n` or `\r\n`. */
export function lineContentEnd(t: Text, offset: number): number {
  let end = indexOfLf(t, offset);
  if (end < 0) end = t.length;
  if (end > offset && codeAt(t, end - 1) === CR) end--;
  return end;
}

/** The line holding `offset`: where it starts and where its content ends (ending excluded). */
export function lineAt(t: Text, offset: number): { start: number; end: number } {
  const start = lineStartAt(t, offset);
  return { start, end: lineContentEnd(t, start) };
}

/** Line breaks (`\n`) in `[from, to)`. */
export function countBreaks(t: Text, from = 0, to = t.length): number {
  // indexOf runs natively: the indexer counts the breaks of every chunk of every file.
  const within = typeof t === 'string' ? t : t.subarray(from, to);
  const [lo, hi] = typeof t === 'string' ? [from, to] : [0, to - from];
  let n = 0;
  for (let i = indexOfLf(within, lo); i >= 0 && i < hi; i = indexOfLf(within, i + 1)) n++;
  return n;
}

/** Offsets at which each line starts (line 1 starts at 0). */
export function lineStarts(t: Text): number[] {
  const starts = [0];
  for (let i = indexOfLf(t, 0); i >= 0; i = indexOfLf(t, i + 1)) starts.push(i + 1);
  return starts;
}

/** 1-based line number of an offset. */
export function lineNumberAt(t: Text, offset: number): number {
  return countBreaks(t, 0, Math.min(offset, t.length)) + 1;
}

/** 1-based line number from precomputed line starts (binary search). */
export function lineNumberFromStarts(starts: readonly number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

/** Offset of the start of 1-based line `line`, or null when the text has no such line. */
export function offsetOfLine(t: Text, line: number): number | null {
  if (!Number.isInteger(line) || line < 1) return null;
  let start = 0;
  for (let n = 1; n < line; n++) {
    const nl = indexOfLf(t, start);
    if (nl < 0) return null;
    start = nl + 1;
  }
  // A final newline ends the last line; it does not open another one.
  if (line > 1 && start === t.length) return null;
  return start;
}

/** Number of lines as an editor counts them: a final line without newline counts. */
export function lineCount(t: Text): number {
  if (t.length === 0) return 0;
  const n = countBreaks(t);
  return codeAt(t, t.length - 1) === LF ? n : n + 1;
}

export type LineEnding = 'lf' | 'crlf' | 'none';

/** Splits into lines keeping each line's own ending bytes; joining them gives the text back. */
export function splitLinesKeepEnds(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
    out.push(text.slice(start, nl + 1));
    start = nl + 1;
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}

/** Lines without their endings (`\n` or `\r\n`); a final newline opens no empty last line. */
export function splitLines(text: string): string[] {
  return splitLinesKeepEnds(text).map((l) => splitEnding(l).text);
}

/** A line's content and its ending: `\n`, `\r\n`, or '' for a last line without one. */
export function splitEnding(line: string): { text: string; eol: '' | '\n' | '\r\n' } {
  if (line.endsWith('\r\n')) return { text: line.slice(0, -2), eol: '\r\n' };
  if (line.endsWith('\n')) return { text: line.slice(0, -1), eol: '\n' };
  return { text: line, eol: '' };
}

export function lineEndingOf(line: string): LineEnding {
  if (line.endsWith('\r\n')) return 'crlf';
  if (line.endsWith('\n')) return 'lf';
  return 'none';
}

/** Cuts a string to at most `max` UTF-8 bytes without splitting a character. */
export function cutUtf8(value: string, max: number): string {
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length <= max) return value;
  let end = max;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}

/** The ending most lines of the text use; LF when it has none. */
export function prevailingEol(s: string): '\n' | '\r\n' {
  let lf = 0;
  let crlf = 0;
  for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) {
    if (i > 0 && s.charCodeAt(i - 1) === CR) crlf++;
    else lf++;
  }
  return crlf > lf ? '\r\n' : '\n';
}

/** Every line ending of `s` (`\n` or `\r\n`) rewritten as `eol`. */
export function withEol(s: string, eol: '\n' | '\r\n'): string {
  return s.replace(/\r?\n/g, eol);
}

/** One line of a stream, or the size of a line dropped for running past the bound. */
export type StreamLine = { line: string } | { overlong: number };

/**
 * Splits a byte stream into UTF-8 lines as chunks arrive: a line ends at `\n` (a `\r` before it
 * is dropped), a final line without one is flushed by `end()`. A line longer than `maxBytes` is
 * never held: its bytes are counted and dropped up to its end, then reported once.
 */
export class LineSplitter {
  private pieces: Uint8Array[] = [];
  private held = 0;
  /** Bytes of the line being dropped, or -1 while the current line fits. */
  private dropping = -1;

  constructor(private readonly maxBytes: number) {}

  push(chunk: Uint8Array): StreamLine[] {
    const out: StreamLine[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(LF); nl >= 0; nl = chunk.indexOf(LF, start)) {
      this.take(chunk.subarray(start, nl));
      out.push(this.finish());
      start = nl + 1;
    }
    this.take(chunk.subarray(start));
    return out;
  }

  /** The last line when the stream ended without a newline; nothing when it ended on one. */
  end(): StreamLine[] {
    return this.held > 0 || this.dropping > 0 ? [this.finish()] : [];
  }

  private take(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (this.dropping >= 0) {
      this.dropping += bytes.length;
      return;
    }
    if (this.held + bytes.length > this.maxBytes) {
      this.dropping = this.held + bytes.length;
      this.pieces = [];
      this.held = 0;
      return;
    }
    // A chunk's bytes may be reused by the stream: keep a copy.
    this.pieces.push(Uint8Array.from(bytes));
    this.held += bytes.length;
  }

  private finish(): StreamLine {
    if (this.dropping >= 0) {
      const overlong = this.dropping;
      this.dropping = -1;
      return { overlong };
    }
    let line = Buffer.concat(this.pieces, this.held).toString('utf8');
    if (line.endsWith('\r')) line = line.slice(0, -1);
    this.pieces = [];
    this.held = 0;
    return { line };
  }
}

/**
 * The byte offset of 1-based `line` and `column` (characters, so a multi-byte character is one
 * column) in UTF-8 bytes, or why there is none. Column 1 past a line's last character is its end.
 */
export function offsetOfPosition(bytes: Uint8Array, line: number, column: number): { offset: number } | { past: 'line' | 'column'; lines: number; columns: number } {
  const start = offsetOfLine(bytes, line);
  if (start === null) return { past: 'line', lines: lineCount(bytes), columns: 0 };
  const end = lineContentEnd(bytes, start);
  const chars = [...Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('utf8')];
  if (!Number.isInteger(column) || column < 1 || column > chars.length + 1) return { past: 'column', lines: lineCount(bytes), columns: chars.length };
  return { offset: start + Buffer.byteLength(chars.slice(0, column - 1).join(''), 'utf8') };
}
