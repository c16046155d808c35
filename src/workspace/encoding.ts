import { isUtf8 } from 'node:buffer';

// Text encodings of files the agent edits, so that what it did not change is written back byte
// for byte. UTF-8 (with or without a byte-order mark) and BOM-marked UTF-16 decode as such; any
// other bytes decode as Latin-1, one character per byte, which round-trips every byte value.

export type TextEncoding = 'utf-8' | 'utf-8-bom' | 'utf-16le' | 'utf-16be' | 'latin1';

export interface DecodedText {
  text: string;
  encoding: TextEncoding;
}

const BINARY_SNIFF_BYTES = 8192;
const UTF8_BOM = [0xef, 0xbb, 0xbf];

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((b, i) => bytes[i] === b);
}

function utf16Encoding(bytes: Uint8Array): 'utf-16le' | 'utf-16be' | null {
  if (bytes.length % 2 !== 0) return null;
  if (startsWith(bytes, [0xff, 0xfe])) return 'utf-16le';
  if (startsWith(bytes, [0xfe, 0xff])) return 'utf-16be';
  return null;
}

/** A NUL byte in the first 8 KiB marks a binary file (reference B.2), unless the file is BOM-marked UTF-16. */
export function looksBinary(bytes: Uint8Array): boolean {
  return utf16Encoding(bytes) === null && bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0);
}

function swapPairs(bytes: Uint8Array): Buffer {
  const out = Buffer.from(bytes);
  out.swap16();
  return out;
}

/** The text of a file's bytes and the encoding that gives exactly those bytes back. */
export function decodeText(bytes: Uint8Array): DecodedText {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const utf16 = utf16Encoding(bytes);
  if (utf16 === 'utf-16le') return { text: buf.subarray(2).toString('utf16le'), encoding: utf16 };
  if (utf16 === 'utf-16be') return { text: swapPairs(buf.subarray(2)).toString('utf16le'), encoding: utf16 };
  if (isUtf8(buf)) {
    return startsWith(bytes, UTF8_BOM) ? { text: buf.subarray(3).toString('utf8'), encoding: 'utf-8-bom' } : { text: buf.toString('utf8'), encoding: 'utf-8' };
  }
  return { text: buf.toString('latin1'), encoding: 'latin1' };
}

/** Whether every character survives the encoding. */
function encodable(text: string, encoding: TextEncoding): boolean {
  // eslint-disable-next-line no-control-regex
  if (encoding === 'latin1') return /^[\u0000-\u00ff]*$/.test(text);
  // A lone surrogate has no UTF-8 or UTF-16 form (in `u` mode a paired one is one code point).
  return !/\p{Cs}/u.test(text);
}

/** The bytes of `text` in `encoding` (its byte-order mark included), or null when a character has no form there. */
export function encodeText(text: string, encoding: TextEncoding): Buffer | null {
  if (!encodable(text, encoding)) return null;
  switch (encoding) {
    case 'utf-8':
      return Buffer.from(text, 'utf8');
    case 'utf-8-bom':
      return Buffer.concat([Buffer.from(UTF8_BOM), Buffer.from(text, 'utf8')]);
    case 'utf-16le':
      return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    case 'utf-16be':
      return Buffer.concat([Buffer.from([0xfe, 0xff]), swapPairs(Buffer.from(text, 'utf16le'))]);
    case 'latin1':
      return Buffer.from(text, 'latin1');
  }
}
