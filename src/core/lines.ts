// Byte-exact line utilities. Offsets are UTF-8 byte offsets; nothing here drops `\r`
// or the final newline.

/** Byte offsets at which each line starts (line 1 starts at 0). */
export function lineStarts(bytes: Uint8Array): number[] {
  const starts = [0];
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0x0a) starts.push(i + 1);
  return starts;
}

/** 1-based line number of a byte offset. */
export function lineNumberAt(bytes: Uint8Array, offset: number): number {
  let line = 1;
  const end = Math.min(offset, bytes.length);
  for (let i = 0; i < end; i++) if (bytes[i] === 0x0a) line++;
  return line;
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

/** Number of lines as an editor counts them: a final line without newline counts. */
export function lineCount(bytes: Uint8Array): number {
  if (bytes.length === 0) return 0;
  let n = 0;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0x0a) n++;
  return bytes[bytes.length - 1] === 0x0a ? n : n + 1;
}

export type LineEnding = 'lf' | 'crlf' | 'none';

/** Splits into lines keeping each line's own ending bytes. */
export function splitLinesKeepEnds(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      out.push(text.slice(start, i + 1));
      start = i + 1;
    }
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
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
