import { closeSync, constants, existsSync, fstatSync, lstatSync, mkdirSync, openSync, readSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { join } from 'node:path';

// Opening files and directories below a workspace root without check-then-use races (issue 10).
// A path is opened first and verified after: the descriptor itself says where it is (Linux:
// `/proc/self/fd/<fd>` names the entry the kernel opened, however the path was resolved), so a
// directory swapped for a symlink before or during the open is caught, and one swapped after
// no longer matters — reads go through the descriptor, and writes name their entries relative
// to an opened directory (`/proc/self/fd/<dirfd>/<name>`), which the kernel resolves to that
// very directory, never to whatever the path names by then.
//
// Without /proc (macOS, a container without it) the location is re-resolved after the open
// instead: the path must be its own real path and name the same inode as the descriptor. That
// still refuses every swap that succeeded before the check; writes then fall back to plain
// paths checked just before and after each rename.

const PROC_FD = existsSync('/proc/self/fd');

export const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const CHUNK = 64 * 1024;
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

export type Located = 'kernel' | 'resolved';

/** How this machine verifies a descriptor's location. */
export const LOCATE: Located = PROC_FD ? 'kernel' : 'resolved';

/** True when `fd` is the entry at absolute path `abs` now, reached without any symlink. */
export function isAt(fd: number, abs: string, how: Located = LOCATE): boolean {
  try {
    if (how === 'kernel') return readlinkSync(`/proc/self/fd/${fd}`) === abs;
    if (realpathSync.native(abs) !== abs) return false;
    const a = fstatSync(fd);
    const b = lstatSync(abs);
    return a.dev === b.dev && a.ino === b.ino;
  } catch {
    return false;
  }
}

/** A path naming what descriptor `fd` (opened at `abs`) refers to, for calls that take a path. */
export function descriptorPath(fd: number, abs: string): string {
  return LOCATE === 'kernel' ? `/proc/self/fd/${fd}` : abs;
}

/** Why an open below the root failed, in the terms reads and writes report. */
export type OpenFailure = 'missing' | 'symlink' | 'not_regular' | 'unreadable' | 'too_long';

export class OpenError extends Error {
  constructor(
    readonly reason: OpenFailure,
    readonly code: string,
  ) {
    super(`open failed: ${reason} (${code})`);
    this.name = 'OpenError';
  }
}

function failureOf(e: unknown): OpenError {
  const code = (e as NodeJS.ErrnoException | null)?.code ?? 'error';
  if (code === 'ENOENT' || code === 'ENOTDIR') return new OpenError('missing', code);
  // O_NOFOLLOW on a symlink: ELOOP on Linux and macOS, EMLINK on FreeBSD.
  if (code === 'ELOOP' || code === 'EMLINK') return new OpenError('symlink', code);
  if (code === 'ENXIO' || code === 'EISDIR') return new OpenError('not_regular', code);
  if (code === 'ENAMETOOLONG') return new OpenError('too_long', code);
  if (code === 'EACCES' || code === 'EPERM' || code === 'EIO' || code === 'EBUSY') return new OpenError('unreadable', code);
  throw e;
}

/** A failed directory open: Linux answers ENOTDIR for a symlink (or file) under O_DIRECTORY|O_NOFOLLOW. */
function dirFailureOf(e: unknown, at: string): OpenError {
  if ((e as NodeJS.ErrnoException | null)?.code !== 'ENOTDIR') return failureOf(e);
  try {
    const st = lstatSync(at);
    if (st.isSymbolicLink()) return new OpenError('symlink', 'ELOOP');
    if (!st.isDirectory()) return new OpenError('not_regular', 'ENOTDIR');
  } catch {
    // a component above is not a directory
  }
  return new OpenError('missing', 'ENOTDIR');
}

/**
 * Opens `path` (a `/`-joined project path) below the canonical `root` for reading, never
 * through a symlink and never blocking on a FIFO; throws `OpenError` when it cannot, or when
 * the opened entry is not the one at `root/path`.
 */
export function openInside(root: string, path: string, how: Located = LOCATE): number {
  const abs = join(root, path);
  let fd: number;
  try {
    fd = openSync(abs, READ_FLAGS);
  } catch (e) {
    throw failureOf(e);
  }
  if (!isAt(fd, abs, how)) {
    closeSync(fd);
    throw new OpenError('symlink', 'ELOOP');
  }
  return fd;
}

export type EntryState = { kind: 'absent' } | { kind: 'link' } | { kind: 'other' } | { kind: 'file'; bytes: Buffer | null; mode: number };

/** An opened directory below the root: entries named through it stay inside it. */
export class DirHandle {
  private constructor(
    readonly fd: number,
    /** Absolute path the directory was verified at. */
    readonly abs: string,
    private readonly how: Located,
  ) {}

  /** Opens the directory at absolute `abs` (no symlink on the way) or throws `OpenError`. */
  static open(abs: string, how: Located = LOCATE): DirHandle {
    let fd: number;
    try {
      fd = openSync(abs, DIR_FLAGS);
    } catch (e) {
      throw dirFailureOf(e, abs);
    }
    if (!isAt(fd, abs, how)) {
      closeSync(fd);
      throw new OpenError('symlink', 'ELOOP');
    }
    return new DirHandle(fd, abs, how);
  }

  /** A path naming `name` in this very directory, for any fs call that takes a path. */
  entry(name: string): string {
    return this.how === 'kernel' ? `/proc/self/fd/${this.fd}/${name}` : join(this.abs, name);
  }

  /** Opens the subdirectory `name` through this one (creating it first when asked). */
  child(name: string, create: boolean): DirHandle {
    if (create) {
      try {
        mkdirSync(this.entry(name));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw failureOf(e);
      }
    }
    let fd: number;
    try {
      fd = openSync(this.entry(name), DIR_FLAGS);
    } catch (e) {
      throw dirFailureOf(e, this.entry(name));
    }
    const abs = join(this.abs, name);
    if (!isAt(fd, abs, this.how)) {
      closeSync(fd);
      throw new OpenError('symlink', 'ELOOP');
    }
    return new DirHandle(fd, abs, this.how);
  }

  /** The names in this directory. */
  list(): string[] {
    return readdirSync(this.how === 'kernel' ? `/proc/self/fd/${this.fd}` : this.abs);
  }

  /**
   * What `name` in this directory holds now, never following a link: its bytes (null when more
   * than `max`), a symlink, something else, or nothing.
   */
  look(name: string, max: number): EntryState {
    let fd: number;
    try {
      fd = openSync(this.entry(name), READ_FLAGS);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return { kind: 'absent' };
      if (code === 'ELOOP' || code === 'EMLINK') return { kind: 'link' };
      if (code === 'EISDIR' || code === 'ENXIO') return { kind: 'other' };
      throw e;
    }
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) return { kind: 'other' };
      return { kind: 'file', bytes: readBounded(fd, st.size, max), mode: st.mode & 0o7777 };
    } finally {
      closeSync(fd);
    }
  }

  /** Whether the directory is still where it was opened (nothing renamed or swapped it). */
  stillAt(): boolean {
    return isAt(this.fd, this.abs, this.how);
  }

  close(): void {
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
  }
}

/** One-byte growth probe (synchronous readers only, so never shared across an await). */
const PROBE = Buffer.alloc(1);

/**
 * Reads an opened regular file whole: the `size` its stat stated, then on to EOF should it have
 * grown (or reported no size, as /proc files do), never past `max`; `null` when it holds more.
 * The bytes own their memory (unpooled), exactly sized unless the file grew while read.
 */
export function readBounded(fd: number, size: number, max: number): Buffer | null {
  if (size > max) return null;
  let buf = Buffer.allocUnsafeSlow(size);
  let total = 0;
  for (;;) {
    if (total === buf.length) {
      if (readSync(fd, PROBE, 0, 1, null) === 0) break;
      if (total + 1 > max) return null;
      const next = Buffer.allocUnsafeSlow(Math.min(max, Math.max(buf.length * 2, total + CHUNK)));
      buf.copy(next, 0, 0, total);
      buf = next;
      buf[total++] = PROBE[0];
      continue;
    }
    const n = readSync(fd, buf, total, buf.length - total, null);
    if (n === 0) break;
    total += n;
  }
  return total === buf.length ? buf : buf.subarray(0, total);
}
