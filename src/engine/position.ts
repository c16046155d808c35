// Translation between rift's UTF-8 byte offsets and LSP positions (line, character), where
// `character` counts in the encoding the engine negotiated: UTF-16 code units by default,
// or UTF-8 bytes. Lines end at `\n`, `\r\n` or a lone `\r`, as the LSP specification says.

export type PositionEncoding = 'utf-8' | 'utf-16';

export interface LspPosition {
  line: number;
  character: number;
}

export interface LspRange {
  start: LspPosition;
  end: LspPosition;
}

/** Line starts of one document's bytes, for repeated conversions. */
export class LineIndex {
  private readonly starts: number[];

  constructor(
    private readonly bytes: Uint8Array,
    private readonly encoding: PositionEncoding,
  ) {
    const starts = [0];
    for (let i = 0; i < bytes.length; i++) {
      if (bytes[i] === 0x0a) starts.push(i + 1);
      else if (bytes[i] === 0x0d && bytes[i + 1] !== 0x0a) starts.push(i + 1);
    }
    this.starts = starts;
  }

  /** Byte offset just before the line break of `line` (or the end of the text). */
  private lineEnd(line: number): number {
    let end = line + 1 < this.starts.length ? this.starts[line + 1] : this.bytes.length;
    if (end > this.starts[line] && this.bytes[end - 1] === 0x0a) end--;
    if (end > this.starts[line] && this.bytes[end - 1] === 0x0d) end--;
    return end;
  }

  position(offset: number): LspPosition {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    const start = this.starts[lo];
    if (this.encoding === 'utf-8') return { line: lo, character: offset - start };
    let units = 0;
    for (let i = start; i < offset; ) {
      const b = this.bytes[i];
      const width = b < 0x80 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
      units += width === 4 ? 2 : 1;
      i += width;
    }
    return { line: lo, character: units };
  }

  /**
   * Byte offset of a position. A character past the line's end clamps to it and a line past the
   * last one to the end of the text, as the specification asks; null when the position splits a
   * character, which only a stale or foreign view of the file produces.
   */
  offset(p: LspPosition): number | null {
    if (p.line >= this.starts.length) return this.bytes.length;
    const start = this.starts[p.line];
    const end = this.lineEnd(p.line);
    if (this.encoding === 'utf-8') {
      const at = Math.min(start + p.character, end);
      return at < this.bytes.length && (this.bytes[at] & 0xc0) === 0x80 ? null : at;
    }
    let units = 0;
    let i = start;
    while (i < end && units < p.character) {
      const b = this.bytes[i];
      const width = b < 0x80 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
      units += width === 4 ? 2 : 1;
      i += width;
    }
    return units > p.character ? null : Math.min(i, end);
  }
}
