import { closeSync, fstatSync, readSync, realpathSync, type Stats } from 'node:fs';
import { open, realpath, type FileHandle } from 'node:fs/promises';
import { isUtf8 } from 'node:buffer';
import { join } from 'node:path';
import { sha256Hex } from '../core/digest.ts';
import { underFloor } from '../core/path.ts';
import { OpenError, READ_FLAGS, isAt, openInside, readBounded } from './safe-open.ts';

// Reading one source file safely: never through a symlink (final or intermediate component,
// checked on the opened descriptor, so a directory swapped mid-read is caught), never blocking
// on a FIFO, never more than the byte bound, and only UTF-8 without NUL (reference F.2 rules
// 20–22: such files are left out of the index, not fatal).

export type ReadFailure = 'missing' | 'too_large' | 'not_utf8' | 'nul_byte' | 'symlink' | 'not_regular' | 'unreadable';

export type ReadOutcome =
  | {
      ok: true;
      bytes: Uint8Array;
      /** full hex, internal only */
      sha256: string;
      mtimeMs: number;
      /** Inode, size and nanosecond mtime and ctime, equal before and after the read (see `readSpanSync`). */
      stamp: string | null;
    }
  | { ok: false; reason: ReadFailure };

/** A bounded read of any bytes (no text classification). */
export type BytesOutcome =
  | { ok: true; bytes: Uint8Array; mtimeMs: number; stamp: string | null }
  | { ok: false; reason: Exclude<ReadFailure, 'not_utf8' | 'nul_byte'> };

/**
 * A change this recent may share its timestamps with the next one: the kernel stamps files from a
 * clock that advances once per tick (up to 10 ms), and some filesystems keep whole seconds.
 */
const RACY_NS = 50_000_000n;
const RACY_WHOLE_SECOND_NS = 2_000_000_000n;

/**
 * What identifies one state of a file's bytes: any write or replacement changes it. Null while
 * the last change is too recent to tell apart from a next one within the same clock tick (a
 * write of the same size then leaves every field as it was), as git treats "racy" entries.
 */
function stampOf(fd: number): string | null {
  const st = fstatSync(fd, { bigint: true });
  const age = BigInt(Date.now()) * 1_000_000n - st.ctimeNs;
  if (age < (st.ctimeNs % 1_000_000_000n === 0n ? RACY_WHOLE_SECOND_NS : RACY_NS)) return null;
  return `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

/** Whether bytes can be served as source text. A NUL byte is reported before invalid UTF-8. */
export function classifyBytes(bytes: Uint8Array): 'ok' | 'not_utf8' | 'nul_byte' {
  if (bytes.indexOf(0) >= 0) return 'nul_byte';
  return isUtf8(bytes) ? 'ok' : 'not_utf8';
}

const CHUNK = 64 * 1024;

// eslint-disable-next-line no-control-regex
const MALFORMED = /[\u0000-\u001f\u007f\\]|^\/|\/\/|\/$|(?:^|\/)\.\.?(?:\/|$)/;

/** A shape failure, or null when the path may be opened below the root. */
function shapeFailure(path: string): BytesOutcome | null {
  if (path.length === 0 || MALFORMED.test(path)) return { ok: false, reason: 'unreadable' };
  if (underFloor(path)) return { ok: false, reason: 'missing' };
  return null;
}

function errnoOutcome(e: unknown): BytesOutcome {
  const reason = e instanceof OpenError ? e.reason : errnoFailure(e);
  return { ok: false, reason: reason === 'too_long' ? 'unreadable' : reason };
}

function errnoFailure(e: unknown): Exclude<ReadFailure, 'not_utf8' | 'nul_byte'> {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return 'missing';
  if (code === 'ELOOP' || code === 'EMLINK') return 'symlink';
  if (code === 'ENXIO' || code === 'EISDIR') return 'not_regular';
  if (code === 'EACCES' || code === 'EPERM' || code === 'EIO' || code === 'EBUSY' || code === 'ENAMETOOLONG') return 'unreadable';
  throw e;
}

// The real path of each workspace root, resolved once: a stale entry can only make reads
// refuse ('symlink'), never let one escape.
const realRoots = new Map<string, string>();

async function realRootOf(root: string): Promise<string> {
  let r = realRoots.get(root);
  if (r === undefined) {
    r = await realpath(root);
    realRoots.set(root, r);
  }
  return r;
}

function realRootOfSync(root: string): string {
  let r = realRoots.get(root);
  if (r === undefined) {
    r = realpathSync.native(root);
    realRoots.set(root, r);
  }
  return r;
}

function statOutcome(st: Stats, maxFileBytes: number): BytesOutcome | null {
  if (!st.isFile()) return { ok: false, reason: 'not_regular' };
  if (st.size > maxFileBytes) return { ok: false, reason: 'too_large' };
  return null;
}

/** A larger read buffer (the file grew after its stat), never beyond the bound plus one byte. */
function grow(buf: Buffer, maxFileBytes: number): Buffer {
  const next = Buffer.allocUnsafeSlow(Math.min(maxFileBytes + 1, buf.length + Math.max(buf.length, CHUNK, 1)));
  buf.copy(next, 0, 0, buf.length);
  return next;
}

function finish(buf: Buffer, total: number, maxFileBytes: number, mtimeMs: number, stamp: string | null = null): BytesOutcome {
  if (total > maxFileBytes) return { ok: false, reason: 'too_large' };
  // Unpooled memory: the bytes own their ArrayBuffer (exactly, unless the file grew while read).
  return { ok: true, bytes: total === buf.length ? buf : buf.subarray(0, total), mtimeMs, stamp };
}

/** Source text: UTF-8 without NUL, with its digest. */
function asSource(read: BytesOutcome): ReadOutcome {
  if (!read.ok) return read;
  const kind = classifyBytes(read.bytes);
  if (kind !== 'ok') return { ok: false, reason: kind };
  return { ...read, sha256: sha256Hex(read.bytes) };
}

export async function readSourceFile(root: string, path: string, maxFileBytes: number): Promise<ReadOutcome> {
  return asSource(await readBytes(root, path, maxFileBytes));
}

export function readSourceFileSync(root: string, path: string, maxFileBytes: number): ReadOutcome {
  return asSource(readBytesSync(root, path, maxFileBytes));
}

/** The bytes of a project file, whatever they hold, under the same rules as a source read. */
export async function readBytes(root: string, path: string, maxFileBytes: number): Promise<BytesOutcome> {
  const shape = shapeFailure(path);
  if (shape) return shape;
  let fh: FileHandle;
  let abs: string;
  try {
    abs = join(await realRootOf(root), path);
    fh = await open(abs, READ_FLAGS);
  } catch (e) {
    return errnoOutcome(e);
  }
  try {
    if (!isAt(fh.fd, abs)) return { ok: false, reason: 'symlink' };
    const st = await fh.stat();
    const bad = statOutcome(st, maxFileBytes);
    if (bad) return bad;
    // Read exactly the stated size, then probe for growth after the stat: read to EOF, but
    // never past the bound.
    let buf: Buffer = Buffer.allocUnsafeSlow(st.size);
    let total = 0;
    for (;;) {
      if (total === buf.length) {
        if (total > maxFileBytes) break;
        const probe = Buffer.allocUnsafe(1);
        if ((await fh.read(probe, 0, 1, null)).bytesRead === 0) break;
        buf = grow(buf, maxFileBytes);
        buf[total++] = probe[0];
        continue;
      }
      const { bytesRead } = await fh.read(buf, total, buf.length - total, null);
      if (bytesRead === 0) break;
      total += bytesRead;
    }
    return finish(buf, total, maxFileBytes, st.mtimeMs);
  } catch (e) {
    return errnoOutcome(e);
  } finally {
    await fh.close().catch(() => undefined);
  }
}

export function readBytesSync(root: string, path: string, maxFileBytes: number): BytesOutcome {
  const shape = shapeFailure(path);
  if (shape) return shape;
  let fd: number;
  try {
    fd = openInside(realRootOfSync(root), path);
  } catch (e) {
    return errnoOutcome(e);
  }
  try {
    const st = fstatSync(fd);
    const bad = statOutcome(st, maxFileBytes);
    if (bad) return bad;
    const before = stampOf(fd);
    const buf = readBounded(fd, st.size, maxFileBytes);
    if (buf === null) return { ok: false, reason: 'too_large' };
    // A write during the read changes the stamp: such bytes carry none.
    return finish(buf, buf.length, maxFileBytes, st.mtimeMs, stampOf(fd) === before ? before : null);
  } catch (e) {
    return errnoOutcome(e);
  } finally {
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
  }
}

/**
 * Bytes `[start, end)` of a file whose stamp is still `stamp` (a state whose bytes were verified
 * before), read without reading or hashing the rest; null when the file is in another state now
 * (or cannot be opened safely), or the range runs past its end. The stamp is checked on the open
 * descriptor before and after the read, so the bytes come from that one state.
 */
export function readSpanSync(root: string, path: string, start: number, end: number, stamp: string): Uint8Array | null {
  if (shapeFailure(path)) return null;
  let fd: number;
  try {
    fd = openInside(realRootOfSync(root), path);
  } catch {
    return null;
  }
  try {
    if (stampOf(fd) !== stamp) return null;
    const out = Buffer.allocUnsafeSlow(Math.max(0, end - start));
    let total = 0;
    while (total < out.length) {
      const n = readSync(fd, out, total, out.length - total, start + total);
      if (n === 0) return null;
      total += n;
    }
    return stampOf(fd) === stamp ? out : null;
  } catch {
    return null;
  } finally {
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
  }
}
