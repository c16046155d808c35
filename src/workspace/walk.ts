import { lstatSync, readdirSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { limitExceeded } from '../core/errors.ts';
import { WORKSPACE_DEPTH_MAX } from '../core/limits.ts';
import { Visibility, holdsGitignore, type SourcePolicy } from './visibility.ts';

// The walk of the working tree: every visible regular file with its size and mtime.
// Never follows symlinks, skips FIFOs/sockets/devices, prunes invisible directories before
// reading them, and bounds depth, per-file size and file count (reference F.2 rules 20–21).

export interface FileEntry {
  path: string;
  size: number;
  mtimeMs: number;
}

export type SkipReason = 'symlink' | 'not_regular' | 'too_large' | 'depth' | 'path_too_long' | 'non_nfc' | 'nfc_collision';

export interface SkippedEntry {
  path: string;
  reason: SkipReason;
}

export interface WalkResult {
  /** Sorted by path in byte (UTF-8 / code point) order. */
  files: FileEntry[];
  /** Visible entries that were not taken, sorted by path. */
  skipped: SkippedEntry[];
}

/**
 * Order two project paths as their UTF-8 bytes compare. UTF-16 code-unit order (what `<`
 * does) differs from code point order only between surrogates and U+E000..U+FFFF.
 */
export function compareProjectPaths(a: string, b: string): number {
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      if (x >= 0xd800 && y >= 0xd800) return fixup(x) - fixup(y);
      return x - y;
    }
  }
  return a.length - b.length;
}

function fixup(c: number): number {
  return c >= 0xe000 ? c - 0x800 : c + 0x2000;
}

/** Where `path` is, or would be, among `items` in project path order (`compareProjectPaths`). */
export function pathPlace<T>(items: readonly T[], path: string, pathOf: (item: T) => string): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareProjectPaths(pathOf(items[mid]), path) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const SURROGATE = /[\uD800-\uDFFF]/;

/** Sort entries by path in byte order; plain code-unit order when no path has a surrogate. */
function sortByPath<T extends { path: string }>(entries: T[]): void {
  if (entries.some((e) => SURROGATE.test(e.path))) entries.sort((a, b) => compareProjectPaths(a.path, b.path));
  else entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

interface DirJob {
  rel: string;
  depth: number;
}

/** A path the operating system cannot open at all (longer than PATH_MAX): left out, with that reason. */
function isTooLong(e: unknown): boolean {
  return (e as NodeJS.ErrnoException | null)?.code === 'ENAMETOOLONG';
}

function isVanished(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES' || code === 'EPERM' || code === 'ELOOP';
}

/** How long the walk may hold the event loop before it yields. */
const SLICE_MS = 8;
const CHECK_EVERY = 64;

/**
 * The walk runs synchronously — directory listings, visibility and an `lstat` per file for its
 * size and mtime — in slices that yield to the event loop every few milliseconds. Measured here,
 * a promise per `lstat` cost 3–4× a synchronous one, and listing directories through the thread
 * pool (16 at a time) cost more than it overlapped: at 32 stdlib copies (78,400 files, 5,570
 * directories, all in the kernel's cache) ~580 ms of wall and ~750 ms of CPU, against ~510 ms and
 * ~520 ms listing them on this thread — the pool's threads and this one share two cores.
 */
export async function walkWorkspace(root: string, visibility: Visibility, policy: SourcePolicy, under = ''): Promise<WalkResult> {
  return walk(root, visibility, policy, under, false);
}

/**
 * The visibility policy and the walk of the whole tree in one pass: each directory's
 * `.gitignore` is read when the walk reaches the directory, before any of its entries is
 * judged, so the result is `Visibility.load` then `walkWorkspace` without listing every
 * directory twice (at 32 stdlib copies, 5,570 directories: ~80 ms of a warm start).
 */
export async function walkVisible(root: string, policy: SourcePolicy): Promise<{ visibility: Visibility; walk: WalkResult }> {
  const visibility = Visibility.unread(root, policy);
  return { visibility, walk: await walk(root, visibility, policy, '', policy.respectGitignore) };
}

async function walk(root: string, visibility: Visibility, policy: SourcePolicy, under: string, readGitignores: boolean): Promise<WalkResult> {
  const files: FileEntry[] = [];
  const skipped: SkippedEntry[] = [];
  let visibleFiles = 0;
  let sliceStart = performance.now();

  const statFile = (path: string): void => {
    visibleFiles++;
    // Past the limit only the count matters (it is the limit's evidence): no more stats.
    if (visibleFiles > policy.maxFiles) return;
    let st;
    try {
      st = lstatSync(join(root, path));
    } catch (e) {
      if (isVanished(e) || isTooLong(e)) {
        visibleFiles--;
        if (isTooLong(e)) skipped.push({ path, reason: 'path_too_long' });
        return;
      }
      throw e;
    }
    if (st.isSymbolicLink()) skipped.push({ path, reason: 'symlink' });
    else if (st.isDirectory()) visibleFiles--; // replaced mid-walk; the watcher reports it
    else if (!st.isFile()) skipped.push({ path, reason: 'not_regular' });
    else if (st.size > policy.maxFileBytes) skipped.push({ path, reason: 'too_large' });
    else files.push({ path, size: st.size, mtimeMs: st.mtimeMs });
  };

  const visit = async (job: DirJob, queue: DirJob[]): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = readdirSync(job.rel === '' ? root : join(root, job.rel), { withFileTypes: true });
    } catch (e) {
      if (job.rel !== '' && isVanished(e)) return; // removed or unreadable mid-walk
      if (job.rel !== '' && isTooLong(e)) {
        skipped.push({ path: job.rel, reason: 'path_too_long' });
        return;
      }
      throw e;
    }
    if (readGitignores && holdsGitignore(entries)) await visibility.readGitignoreIn(root, job.rel);
    for (let i = 0; i < entries.length; i++) {
      if (i % CHECK_EVERY === CHECK_EVERY - 1 && performance.now() - sliceStart > SLICE_MS) {
        await new Promise<void>((r) => setImmediate(r));
        sliceStart = performance.now();
      }
      const d = entries[i];
      const path = job.rel === '' ? d.name : `${job.rel}/${d.name}`;
      // A name that is not valid UTF-8 decodes lossily and cannot be reopened: drop it.
      if (d.name.includes('\uFFFD') && lstatSync(join(root, path), { throwIfNoEntry: false }) === undefined) continue;
      if (d.isDirectory()) {
        if (!visibility.isVisible(path, true)) continue;
        if (job.depth + 1 > WORKSPACE_DEPTH_MAX) skipped.push({ path, reason: 'depth' });
        else queue.push({ rel: path, depth: job.depth + 1 });
        continue;
      }
      if (!visibility.isVisible(path, false)) continue;
      if (d.isSymbolicLink()) skipped.push({ path, reason: 'symlink' });
      else if (d.isFile()) statFile(path);
      else skipped.push({ path, reason: 'not_regular' });
    }
    if (performance.now() - sliceStart > SLICE_MS) {
      await new Promise<void>((r) => setImmediate(r));
      sliceStart = performance.now();
    }
  };

  // A walk below a visible directory `under` is the part of the whole walk that lies there.
  const queue: DirJob[] = [{ rel: under, depth: under === '' ? 0 : under.split('/').length }];
  while (queue.length > 0) await visit(queue.pop()!, queue);

  if (visibleFiles > policy.maxFiles) throw limitExceeded('source.max_files', policy.maxFiles, visibleFiles, [], true);
  const addressable = dropUnaddressable(files, skipped);
  sortByPath(addressable);
  sortByPath(skipped);
  return { files: addressable, skipped };
}

const NON_ASCII = /\P{ASCII}/u;

/**
 * Project paths are NFC (reference F.2 rule 24). A file whose path on disk is not NFC cannot be
 * named by a request, and two files whose paths share an NFC form cannot be told apart by one:
 * both kinds are left out, as `non_nfc` / `nfc_collision`.
 */
function dropUnaddressable(files: FileEntry[], skipped: SkippedEntry[]): FileEntry[] {
  if (!files.some((f) => NON_ASCII.test(f.path))) return files;
  const byForm = new Map<string, FileEntry[]>();
  for (const f of files) {
    const form = NON_ASCII.test(f.path) ? f.path.normalize('NFC') : f.path;
    const group = byForm.get(form);
    if (group) group.push(f);
    else byForm.set(form, [f]);
  }
  const kept: FileEntry[] = [];
  for (const [form, group] of byForm) {
    if (group.length === 1 && group[0].path === form) kept.push(group[0]);
    else for (const f of group) skipped.push({ path: f.path, reason: group.length > 1 ? 'nfc_collision' : 'non_nfc' });
  }
  return kept;
}

/**
 * Why an NFC project path that is not indexed cannot be addressed, if the reason is its
 * Unicode form: the one entry on disk under that form has a non-NFC name, or several do.
 */
export function nfcConflict(root: string, path: string): 'non_nfc' | 'nfc_collision' | null {
  if (!NON_ASCII.test(path)) return null;
  let dirs = [''];
  let renamed = false;
  for (const segment of path.split('/')) {
    const next: string[] = [];
    for (const dir of dirs) {
      let names: string[];
      try {
        names = readdirSync(dir === '' ? root : join(root, dir));
      } catch {
        continue;
      }
      for (const name of names) {
        if (name.normalize('NFC') !== segment) continue;
        if (name !== segment) renamed = true;
        next.push(dir === '' ? name : `${dir}/${name}`);
      }
    }
    if (next.length === 0) return null;
    dirs = next;
  }
  if (dirs.length > 1) return 'nfc_collision';
  return renamed ? 'non_nfc' : null;
}
