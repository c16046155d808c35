import { closeSync, lstatSync, mkdirSync, openSync, readdirSync, renameSync, unlinkSync, writeFileSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { log } from '../core/log.ts';

// The workspace's own state folder (decisions.md): `<root>/.rift/`, with a `.gitignore` holding
// `*` written the first time rift creates it, so nothing rift keeps is ever committed. It must be
// a real directory of the workspace: a symlink (a cloned repository may carry one) would put every
// write rift makes there (the index, the server lock, staged files) outside the workspace.

export const STATE_DIR = '.rift';

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/** What a non-regular, non-directory entry is, for a log line. */
export function entryKind(st: Stats): string {
  if (st.isSymbolicLink()) return 'a symlink';
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO';
  return st.isFile() ? 'a file' : 'not a regular file';
}

/** `.damaged-<UTC time>`, with `-n` past any set-aside of the same second, so names sort by age. */
function asideSuffix(dir: string, stamp: string): string {
  const base = `.damaged-${stamp}`;
  let last = -1;
  for (const entry of readdirSync(dir)) {
    const at = entry.indexOf(base);
    if (at < 0) continue;
    const rest = entry.slice(at + base.length);
    last = Math.max(last, rest === '' ? 0 : Number(rest.slice(1)) || 0);
  }
  // Zero-padded so that lexical order is age order.
  return last < 0 ? base : `${base}-${String(last + 1).padStart(4, '0')}`;
}

/**
 * Renames the entries `names` (those present) in `dir` out of the way, as `<name>.damaged-<time>`
 * with one suffix for the group; returns the new name of the first.
 */
export function setAside(dir: string, names: readonly string[]): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  const suffix = asideSuffix(dir, stamp);
  let first = '';
  for (const name of names) {
    if (lstatOrNull(join(dir, name)) === null) continue;
    renameSync(join(dir, name), join(dir, name + suffix));
    first ||= name + suffix;
  }
  return first;
}

/** Whether `.rift/` is absent or a real directory (never read through anything else). */
export function stateDirUsable(root: string): boolean {
  const st = lstatOrNull(join(root, STATE_DIR));
  return st === null || st.isDirectory();
}

/**
 * Creates `.rift/` (and its `.gitignore`) when missing, after moving aside anything else in its
 * place (logged); returns its absolute path.
 */
export function ensureStateDir(root: string): string {
  const dir = join(root, STATE_DIR);
  // Several rift processes may start on a fresh tree at once: another one creating `.rift/` (or
  // setting aside what stood there) between this one's look and its own step is no failure.
  for (let attempt = 1; ; attempt++) {
    const st = lstatOrNull(dir);
    if (st?.isDirectory()) break;
    try {
      if (st) {
        const kept = setAside(root, [STATE_DIR]);
        log('warn', 'index.store', 'state directory set aside', { reason: entryKind(st), kept });
      }
      mkdirSync(dir);
      break;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (attempt >= 3 || (code !== 'EEXIST' && code !== 'ENOENT')) throw e;
    }
  }
  const ignore = join(dir, '.gitignore');
  if (lstatOrNull(ignore) === null) writeFileSync(ignore, '*\n');
  return dir;
}

/** Whether rift can create files under `.rift/` (read-only or immutable folders cannot). */
export function stateDirWritable(root: string): boolean {
  try {
    const probe = join(ensureStateDir(root), `.probe-${process.pid}`);
    closeSync(openSync(probe, 'w'));
    unlinkSync(probe);
    return true;
  } catch {
    return false;
  }
}
