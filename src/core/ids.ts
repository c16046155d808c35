import { createHash, randomBytes } from 'node:crypto';
import { ID_LENGTH_MAX } from './limits.ts';
import { projectPathViolation } from './path.ts';

// Identity formats (reference C). Paths inside ids are percent-encoded: unreserved
// ASCII and `. _ ~ ! $ & ' ( ) * + , ; = : / -` stay; every other byte is %XX uppercase.
// `@` is encoded too (decisions.md), so a NodeId's `@start-end` suffix is unambiguous.

const SAFE = new Set<number>();
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~!$&'()*+,;=:/-") SAFE.add(c.charCodeAt(0));

export function encodeIdPath(value: string): string {
  const bytes = Buffer.from(value, 'utf8');
  let out = '';
  for (const b of bytes) {
    if (SAFE.has(b)) out += String.fromCharCode(b);
    else out += '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

/** Decodes a percent-encoded id segment; null when malformed or non-canonical. */
export function decodeIdPath(value: string): string | null {
  const bytes: number[] = [];
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x25) {
      const hex = value.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return null;
      const b = parseInt(hex, 16);
      if (SAFE.has(b)) return null; // an escaped safe byte is not canonical
      bytes.push(b);
      i += 2;
    } else if (SAFE.has(c)) {
      bytes.push(c);
    } else {
      return null;
    }
  }
  const buf = Buffer.from(bytes);
  const text = buf.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(buf)) return null;
  return text;
}

const LANG = /^[A-Za-z][A-Za-z0-9._-]*(?::[A-Za-z][A-Za-z0-9._-]*)?$/;

export interface SymbolAddress {
  language: string;
  path: string;
  qualifiedName: string;
}

export function symbolId(language: string, path: string, qualifiedName: string): string {
  return `rift://symbol/${language}/${encodeIdPath(path)}/${encodeIdPath(qualifiedName)}`;
}

/** Parses a SymbolId: split at the last `/`, percent-decode both halves, validate the path. */
export function parseSymbolId(id: string): SymbolAddress | null {
  if (id.length > ID_LENGTH_MAX || !id.startsWith('rift://symbol/')) return null;
  const rest = id.slice('rift://symbol/'.length);
  const slash = rest.indexOf('/');
  if (slash < 0) return null;
  const language = rest.slice(0, slash);
  if (!LANG.test(language)) return null;
  const tail = rest.slice(slash + 1);
  const last = tail.lastIndexOf('/');
  if (last <= 0 || last === tail.length - 1) return null;
  const path = decodeIdPath(tail.slice(0, last));
  const qualifiedName = decodeIdPath(tail.slice(last + 1));
  if (path === null || qualifiedName === null || projectPathViolation(path) !== null) return null;
  return { language, path, qualifiedName };
}

export interface NodeAddress {
  language: string;
  path: string;
  start: number;
  end: number;
  witness: string;
}

export function nodeId(language: string, path: string, start: number, end: number, witness: string): string {
  return `rift://node/${language}/${encodeIdPath(path).replace(/@/g, '%40')}@${start}-${end}#${witness}`;
}

export function parseNodeId(id: string): NodeAddress | null {
  if (id.length > ID_LENGTH_MAX || !id.startsWith('rift://node/')) return null;
  const m = /^rift:\/\/node\/([^/]+)\/(.+)@(\d+)-(\d+)#([0-9a-f]{8})$/.exec(id);
  if (!m) return null;
  const [, language, encPath, s, e, witness] = m;
  if (!LANG.test(language) || encPath.includes('@')) return null;
  const path = decodeIdPath(encPath);
  if (path === null || projectPathViolation(path) !== null) return null;
  const start = Number(s);
  const end = Number(e);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start > end) return null;
  return { language, path, start, end, witness };
}

export function fileId(path: string): string {
  return `rift://file/${encodeIdPath(path)}`;
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

function base32(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** Deterministic ChangeId: `chg_` + base32 of the first 16 bytes of SHA-256 over `path \0 text` per file. */
export function changeId(files: ReadonlyArray<{ path: string; text: Uint8Array | string }>): string {
  const h = createHash('sha256');
  for (const f of files) {
    h.update(f.path, 'utf8');
    h.update(Buffer.from([0]));
    h.update(f.text);
  }
  return 'chg_' + base32(h.digest().subarray(0, 16));
}

/** A fresh ProjectionId: `prj_` + base32 of 16 random bytes (reference A.7). */
export function projectionId(): string {
  return 'prj_' + base32(randomBytes(16));
}
