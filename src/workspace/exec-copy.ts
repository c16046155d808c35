import { randomBytes } from 'node:crypto';
import { closeSync, constants, copyFileSync, fstatSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync, type Stats } from 'node:fs';
import { sha256Hex, treeRevision } from '../core/digest.ts';
import { storageFailure } from '../core/errors.ts';
import { DirHandle, LOCATE, OpenError, openInside, readBounded } from './safe-open.ts';
import { ensureStateDir } from './state-dir.ts';
import { walkVisible } from './walk.ts';
import type { SourcePolicy } from './visibility.ts';

// The execution copy of a tree (spec "Execution"; reference F.16 rules 168–169): a directory
// under `.rift/exec/` that persists between evaluations, refreshed before each one so that every
// visible file of the tree is there with the tree's bytes. A refresh copies what changed on
// either side since the last one (copy-on-write where the filesystem clones), deletes the files
// that left the tree, and keeps what only the copy created (node_modules/, build output).
// Nothing is ever written back to the tree.
//
// The tree is read the way the index reads it: the visibility policy (never `.git/` or `.rift/`),
// no symlink followed, each file opened with O_NOFOLLOW and verified where it was found, then
// cloned through its descriptor. In the copy, whatever the evaluated code left (a symlink, a file
// where the tree has a directory) is replaced, never written through: every write names its entry
// relative to an opened, verified directory.

/** What the last refresh recorded of one file: its stat in the tree and in the copy, and its digest. */
interface Entry {
  /** size:mtimeMs of the tree's file when copied (what the walk reports). */
  source: string;
  /** size:mtimeMs:ino of the copy's file as written. */
  copy: string;
  sha256: string;
}

interface Manifest {
  version: 2;
  files: Record<string, Entry>;
}

export interface CopyRefresh {
  /** Absolute path of the execution copy. */
  dir: string;
  /** Tree revision (core/digest.ts `treeRevision`) of the files the copy now holds from the tree. */
  treeRevision: string;
  copied: number;
  removed: number;
}

const sourceStamp = (st: { size: number; mtimeMs: number }): string => `${st.size}:${st.mtimeMs}`;
const copyStamp = (st: Stats): string => `${st.size}:${st.mtimeMs}:${st.ino}`;

function readManifest(path: string): Manifest {
  try {
    const m = JSON.parse(readFileSync(path, 'utf8')) as Manifest;
    if (m && m.version === 2 && typeof m.files === 'object' && m.files !== null) return m;
  } catch {
    // absent or damaged: every file is copied again
  }
  return { version: 2, files: {} };
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/** Opened directories of the copy during one refresh, by project path ('' = the copy's root). */
class CopyDirs {
  private readonly open = new Map<string, DirHandle>();

  constructor(root: DirHandle) {
    this.open.set('', root);
  }

  /** The copy's directory `dir`, created as needed; anything else in the way is removed first. */
  dir(dir: string): DirHandle {
    const known = this.open.get(dir);
    if (known) return known;
    const cut = dir.lastIndexOf('/');
    const parent = this.dir(cut < 0 ? '' : dir.slice(0, cut));
    const name = dir.slice(cut + 1);
    let handle: DirHandle;
    try {
      handle = parent.child(name, true);
    } catch (e) {
      if (!(e instanceof OpenError)) throw e;
      // A symlink or a file the evaluated code put where the tree has a directory.
      rmSync(parent.entry(name), { force: true });
      handle = parent.child(name, true);
    }
    this.open.set(dir, handle);
    return handle;
  }

  /** The directory `dir` if it exists as a real directory now (nothing created). */
  existing(dir: string): DirHandle | null {
    const known = this.open.get(dir);
    if (known) return known;
    const cut = dir.lastIndexOf('/');
    const parent = this.existing(cut < 0 ? '' : dir.slice(0, cut));
    if (!parent) return null;
    try {
      const handle = parent.child(dir.slice(cut + 1), false);
      this.open.set(dir, handle);
      return handle;
    } catch {
      return null;
    }
  }

  close(): void {
    for (const h of this.open.values()) h.close();
  }
}

const split = (path: string): { dir: string; name: string } => {
  const cut = path.lastIndexOf('/');
  return { dir: cut < 0 ? '' : path.slice(0, cut), name: path.slice(cut + 1) };
};

/**
 * Copies tree file `path` (opened without following links) into `dirs`; returns the manifest
 * entry, or null when the file vanished or turned into something else meanwhile.
 */
function copyOne(treeRoot: string, path: string, dirs: CopyDirs, maxFileBytes: number): Entry | null {
  let fd: number;
  try {
    fd = openInside(treeRoot, path);
  } catch (e) {
    if (e instanceof OpenError) return null;
    throw e;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return null;
    const bytes = readBounded(fd, st.size, maxFileBytes);
    if (bytes === null) return null;
    const { dir, name } = split(path);
    const target = dirs.dir(dir);
    const tmp = target.entry(`.rift-exec-${randomBytes(6).toString('hex')}`);
    // Through the descriptor, so the clone is of the very file verified above.
    if (LOCATE === 'kernel') copyFileSync(`/proc/self/fd/${fd}`, tmp, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
    else writeFileSync(tmp, bytes, { flag: 'wx', mode: st.mode & 0o777 });
    const existing = lstatOrNull(target.entry(name));
    if (existing?.isDirectory()) rmSync(target.entry(name), { recursive: true, force: true });
    renameSync(tmp, target.entry(name));
    const copied = lstatSync(target.entry(name));
    return { source: sourceStamp(st), copy: copyStamp(copied), sha256: sha256Hex(bytes) };
  } finally {
    closeSync(fd);
  }
}

/**
 * Brings the execution copy `copyDir` (absolute, below the workspace's `.rift/exec/`) up to the
 * tree at `treeRoot` under `policy`; `manifestPath` keeps what the last refresh copied.
 */
export async function refreshExecutionCopy(workspaceRoot: string, treeRoot: string, copyDir: string, manifestPath: string, policy: SourcePolicy): Promise<CopyRefresh> {
  const { walk } = await walkVisible(treeRoot, policy);
  const manifest = readManifest(manifestPath);
  const next: Record<string, Entry> = Object.create(null) as Record<string, Entry>;
  let copied = 0;
  let removed = 0;
  let root: DirHandle;
  try {
    ensureStateDir(workspaceRoot);
    mkdirSync(copyDir, { recursive: true });
    root = DirHandle.open(copyDir);
  } catch (e) {
    throw storageFailure('.rift/exec', e);
  }
  const dirs = new CopyDirs(root);
  try {
    for (const f of walk.files) {
      const known = Object.hasOwn(manifest.files, f.path) ? manifest.files[f.path] : undefined;
      if (known) {
        const { dir, name } = split(f.path);
        const inCopy = dirs.existing(dir);
        const dst = inCopy ? lstatOrNull(inCopy.entry(name)) : null;
        if (dst && dst.isFile() && sourceStamp(f) === known.source && copyStamp(dst) === known.copy) {
          next[f.path] = known;
          continue;
        }
      }
      const entry = copyOne(treeRoot, f.path, dirs, policy.maxFileBytes);
      if (entry) {
        next[f.path] = entry;
        copied++;
      }
    }
    for (const path of Object.keys(manifest.files)) {
      if (Object.hasOwn(next, path)) continue;
      const { dir, name } = split(path);
      const inCopy = dirs.existing(dir);
      const st = inCopy ? lstatOrNull(inCopy.entry(name)) : null;
      if (inCopy && st && !st.isDirectory()) {
        unlinkSync(inCopy.entry(name));
        removed++;
      }
    }
  } catch (e) {
    throw storageFailure('.rift/exec', e);
  } finally {
    dirs.close();
  }
  // In the walk's byte order (an object's keys would put integer-like names first).
  const held = walk.files.filter((f) => next[f.path] !== undefined);
  if (copied > 0 || removed > 0 || held.length !== Object.keys(manifest.files).length) {
    const tmp = `${manifestPath}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(tmp, JSON.stringify({ version: 2, files: next } satisfies Manifest));
    renameSync(tmp, manifestPath);
  }
  return { dir: copyDir, treeRevision: treeRevision(held.map((f) => ({ path: f.path, sha256: next[f.path].sha256 }))), copied, removed };
}
