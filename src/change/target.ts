import { accessSync, closeSync, constants, fstatSync, lstatSync, readdirSync, realpathSync, statSync, type Stats } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { limitExceeded, storageFailure } from '../core/errors.ts';
import { underFloor } from '../core/path.ts';
import type { ChangeWarning } from '../protocol/change.ts';
import { OpenError, descriptorPath, openInside, readBounded } from '../workspace/safe-open.ts';
import { notWritable, sourceChanged, targetExists, targetIsFile, unsupported, type Address } from './refusal.ts';

// Resolving a write target (reference F.10 rules 107–108): the path must pass `[source]`; a
// symlink publishes beside its resolved file when that file stays inside the workspace and
// passes the same policy; escaping, broken or cyclic links refuse `unsupported`; a deletion
// removes the link itself; anything but a regular file at the target refuses `target_is_file`.
// Directories resolve one segment at a time, so every segment after a symlinked directory is
// kept. A file whose mode forbids writing refuses `writable`, and a name that would sit beside
// its own NFC/NFD twin refuses `target_exists`. Bytes are read through a verified descriptor.

export interface TargetPolicy {
  /** Canonical (real) workspace root. */
  root: string;
  isVisible(path: string): boolean;
  maxFileBytes: number;
}

export interface Target {
  /** The project path the request addressed. */
  path: string;
  /** The project path whose bytes change (differs from `path` through a symlink). */
  target: string;
  /** Current bytes of `target`; null when it does not exist (or is a link being deleted). */
  bytes: Buffer | null;
  /** Permission bits to keep on rewrite. */
  mode: number | null;
  /** A deletion of a symlink: the link itself goes, not its target. */
  link: boolean;
  warning: ChangeWarning | null;
}

export type TargetUse = 'write' | 'delete';

function outsidePolicy(path: string): never {
  throw unsupported(`path ${path} lies outside the workspace's [source] policy (rift.toml [source] include/exclude, .gitignore, or the .git/.rift floor); only visible paths can be written`);
}

function lstatOrNull(root: string, path: string): Stats | null {
  try {
    return lstatSync(join(root, path));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw storageFailure(path, e);
  }
}

/** Project path of a real absolute path, or null when it lies outside the root. */
function insideRoot(root: string, real: string): string | null {
  if (real === root) return '';
  if (!real.startsWith(root + sep)) return null;
  return relative(root, real).split(sep).join('/');
}

const joinPath = (dir: string, name: string) => (dir === '' ? name : `${dir}/${name}`);

/**
 * Refuses a name that does not exist but whose NFC form an existing entry of `dir` shares
 * (F.2 rule 24): creating it would put two spellings of one name side by side.
 */
function refuseTwin(root: string, dir: string, name: string, addressed: string, addresses: Address[]): void {
  let entries: string[];
  try {
    entries = readdirSync(join(root, dir));
  } catch {
    return; // the directory is created too, so it has no entries to collide with
  }
  if (entries.some((e) => e !== name && e.normalize('NFC') === name)) throw targetExists(addresses, [addressed], false);
}

export function resolveTarget(policy: TargetPolicy, path: string, use: TargetUse, addresses: Address[] = []): Target {
  const { root } = policy;
  if (underFloor(path) || !policy.isVisible(path)) outsidePolicy(path);

  // Directories one segment at a time: a symlinked one continues below its real directory,
  // later segments kept; a missing one means the rest is created.
  const segments = path.split('/');
  const name = segments.pop()!;
  let dir = '';
  let missing = false;
  for (let i = 0; i < segments.length; i++) {
    const next = joinPath(dir, segments[i]);
    const st = missing ? null : lstatOrNull(root, next);
    if (st === null) {
      if (!missing) refuseTwin(root, dir, segments[i], path, addresses);
      missing = true;
      dir = next;
    } else if (st.isSymbolicLink()) {
      dir = resolveLink(root, next, path);
      if (!isDirectory(root, dir)) throw targetIsFile(addresses, segments.slice(0, i + 1).join('/'));
    } else if (st.isDirectory()) dir = next;
    else throw targetIsFile(addresses, segments.slice(0, i + 1).join('/'));
  }
  let effective = joinPath(dir, name);
  if (effective !== path && (underFloor(effective) || !policy.isVisible(effective))) {
    throw unsupported(`path ${path} resolves through a symlink to ${effective}, which lies outside the workspace's [source] policy`);
  }

  const st = missing ? null : lstatOrNull(root, effective);
  if (st === null) {
    if (!missing) refuseTwin(root, dir, name, path, addresses);
    return { path, target: effective, bytes: null, mode: null, link: false, warning: linkWarning(path, effective) };
  }
  if (st.isSymbolicLink()) {
    if (use === 'delete') return { path, target: effective, bytes: null, mode: null, link: true, warning: linkWarning(path, effective) };
    const resolved = resolveLink(root, effective, path);
    if (underFloor(resolved) || !policy.isVisible(resolved)) {
      throw unsupported(`path ${path} is a symlink to ${resolved}, which lies outside the workspace's [source] policy`);
    }
    effective = resolved;
  }
  const file = readTarget(policy, effective, path, addresses);
  return { path, target: effective, bytes: file.bytes, mode: file.mode, link: false, warning: linkWarning(path, effective) };
}

function isDirectory(root: string, path: string): boolean {
  try {
    return statSync(join(root, path)).isDirectory();
  } catch {
    return false;
  }
}

/** The regular file at `target` (symlinks resolved), through a verified descriptor. */
function readTarget(policy: TargetPolicy, target: string, addressed: string, addresses: Address[]): { bytes: Buffer; mode: number } {
  let fd: number;
  try {
    fd = openInside(policy.root, target);
  } catch (e) {
    if (!(e instanceof OpenError)) throw e;
    // The tree changed between the lstat and the open (a file swapped for a link or removed).
    if (e.reason === 'missing' || e.reason === 'symlink') throw sourceChanged(addresses, [addressed], 'a regular file', e.reason === 'missing' ? 'absent' : 'symlink');
    if (e.reason === 'not_regular') throw targetIsFile(addresses, addressed);
    throw storageFailure(target, e);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw targetIsFile(addresses, addressed);
    if (!writable(descriptorPath(fd, join(policy.root, target)), st)) throw notWritable(addresses, addressed, st.mode);
    const bytes = readBounded(fd, st.size, policy.maxFileBytes);
    if (bytes === null) throw limitExceeded('source.max_file_bytes', policy.maxFileBytes, Math.max(st.size, policy.maxFileBytes + 1));
    return { bytes, mode: st.mode & 0o7777 };
  } finally {
    closeSync(fd);
  }
}

/**
 * Whether the file's mode lets its owner write it and this process may: publication replaces
 * files by rename, which the directory alone would allow, so the mode is checked here.
 * `at` names the opened file itself, so a path swapped meanwhile cannot answer instead.
 */
function writable(at: string, st: Stats): boolean {
  if ((st.mode & 0o200) === 0) return false;
  try {
    accessSync(at, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function linkWarning(path: string, resolved: string): ChangeWarning | null {
  if (path === resolved) return null;
  return {
    kind: 'rift.symlink.resolved',
    message: `${path} is a symlink; the change was written to ${resolved} and the link kept`,
    path,
    resolved,
  };
}

/** The project path a symlink resolves to; `unsupported` when broken, cyclic or escaping. */
function resolveLink(root: string, linkPath: string, addressed: string): string {
  let real: string;
  try {
    real = realpathSync.native(join(root, linkPath));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw unsupported(`path ${addressed} goes through a symlink cycle at ${linkPath}; rift writes only through links that resolve`);
    throw unsupported(`path ${addressed} goes through a broken symlink at ${linkPath}; rift writes only through links that resolve`);
  }
  const inside = insideRoot(root, real);
  if (inside === null) throw unsupported(`path ${addressed} is a symlink resolving outside the workspace; rift writes only inside the workspace root`);
  return inside;
}
