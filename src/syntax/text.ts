// The text a parser sees, and the mapping from its indices back to UTF-8 byte offsets.
//
// web-tree-sitter parses JS strings and reports UTF-16 code-unit indices; rift speaks UTF-8
// byte offsets. Pure-ASCII input (the common case) maps one to one; anything else gets a
// table from code-unit index to byte offset, built once per parse.

import { isAscii } from 'node:buffer';
import type { ByteRange } from './types.ts';

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export class SourceText {
  readonly bytes: Uint8Array;
  readonly ascii: boolean;
  private decoded: string | null = null;
  /** Code-unit index → byte offset (length text.length + 1); null until needed, and for ascii. */
  private table: Uint32Array | null = null;

  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
    this.ascii = isAscii(bytes);
  }

  /**
   * What the parser reads: the decoded bytes, with a leading BOM turned into a space. Decoded on
   * first use (a history walk holds many versions it never parses); bytes that are not UTF-8
   * throw here.
   */
  get text(): string {
    if (this.decoded === null) {
      let text = decoder.decode(this.bytes);
      // A BOM is one code unit and three bytes; a space keeps both index spaces aligned
      // while sparing grammars that do not treat U+FEFF as whitespace.
      if (text.charCodeAt(0) === 0xfeff) text = ' ' + text.slice(1);
      this.decoded = text;
    }
    return this.decoded;
  }

  private get offsets(): Uint32Array | null {
    if (this.ascii) return null;
    this.table ??= buildOffsets(this.bytes, this.text.length);
    return this.table;
  }

  /** Byte offset of a code-unit index. */
  toByte(unit: number): number {
    return this.offsets === null ? unit : this.offsets[unit];
  }

  /** Code-unit index of the character holding `byte` (a byte inside a character maps to its start). */
  toUnit(byte: number): number {
    const o = this.offsets;
    if (o === null) return byte;
    let lo = 0;
    let hi = o.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (o[mid] <= byte) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  range(startUnit: number, endUnit: number): ByteRange {
    return { start: this.toByte(startUnit), end: this.toByte(endUnit) };
  }
}

function buildOffsets(bytes: Uint8Array, units: number): Uint32Array {
  const out = new Uint32Array(units + 1);
  let u = 0;
  let b = 0;
  const n = bytes.length;
  while (b < n) {
    const c = bytes[b];
    out[u++] = b;
    if (c < 0x80) b += 1;
    else if (c < 0xe0) b += 2;
    else if (c < 0xf0) b += 3;
    else {
      // A supplementary character is two code units; the low surrogate maps mid-character
      // so the table stays strictly increasing (no node boundary ever lands there).
      out[u++] = b + 2;
      b += 4;
    }
  }
  out[u] = n;
  return out;
}
