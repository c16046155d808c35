import { lstatSync, readFileSync, realpathSync, type Stats } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { limitExceeded } from '../core/errors.ts';
import { underFloor } from '../core/path.ts';
import type { ChangeWarning } from '../protocol/change.ts';
import { targetIsFile, unsupported, type Address } from './refusal.ts';

// Resolving a write target (reference F.10 rules 107–108): the path must pass `[source]`; a
// symlink publishes beside its resolved file when that file stays inside the workspace and
// passes the same policy; escaping, broken or cyclic links refuse `unsupported`; a deletion
// removes the link itself; anything but a regular file at the target refuses `target_is_file`.

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

function lstatOrNull(abs: string): Stats | null {
  try {
    return lstatSync(abs);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw e;
  }
}

/** Project path of a real absolute path, or null when it lies outside the root. */
function insideRoot(root: string, real: string): string | null {
  if (real === root) return '';
  if (!real.startsWith(root + sep)) return null;
  return relative(root, real).split(sep).join('/');
}

export function resolveTarget(policy: TargetPolicy, path: string, use: TargetUse, addresses: Address[] = []): Target {
  const { root } = policy;
  if (underFloor(path) || !policy.isVisible(path)) outsidePolicy(path);
  let effective = path;
  let warning: ChangeWarning | null = null;

  // A symlinked directory above the target: the write lands below its real directory.
  const slash = path.lastIndexOf('/');
  if (slash > 0) {
    const segments = path.slice(0, slash).split('/');
    for (let i = 1; i <= segments.length; i++) {
      const dir = segments.slice(0, i).join('/');
      const st = lstatOrNull(join(root, dir));
      if (st === null) break; // created later, parents included
      if (st.isSymbolicLink()) {
        const resolvedDir = resolveLink(root, dir, path);
        effective = resolvedDir === '' ? path.slice(slash + 1) : `${resolvedDir}/${path.slice(slash + 1)}`;
        if (underFloor(effective) || !policy.isVisible(effective)) {
          throw unsupported(`path ${path} resolves through a symlink to ${effective}, which lies outside the workspace's [source] policy`);
        }
        break;
      }
      if (!st.isDirectory()) throw targetIsFile(addresses, dir);
    }
  }

  const abs = join(root, effective);
  const st = lstatOrNull(abs);
  if (st === null) return { path, target: effective, bytes: null, mode: null, link: false, warning: linkWarning(path, effective) };
  if (st.isSymbolicLink()) {
    if (use === 'delete') return { path, target: effective, bytes: null, mode: null, link: true, warning: linkWarning(path, effective) };
    const resolved = resolveLink(root, effective, path);
    if (underFloor(resolved) || !policy.isVisible(resolved)) {
      throw unsupported(`path ${path} is a symlink to ${resolved}, which lies outside the workspace's [source] policy`);
    }
    const rst = lstatSync(join(root, resolved));
    if (!rst.isFile()) throw targetIsFile(addresses, path);
    effective = resolved;
    warning = linkWarning(path, effective);
    return { path, target: effective, bytes: readBounded(join(root, effective), rst, policy.maxFileBytes), mode: rst.mode & 0o7777, link: false, warning };
  }
  if (!st.isFile()) throw targetIsFile(addresses, path);
  return { path, target: effective, bytes: readBounded(abs, st, policy.maxFileBytes), mode: st.mode & 0o7777, link: false, warning: linkWarning(path, effective) };
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

function readBounded(abs: string, st: Stats, max: number): Buffer {
  if (st.size > max) throw limitExceeded('source.max_file_bytes', max, st.size, [], true);
  return readFileSync(abs);
}
