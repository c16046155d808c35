import { chmodSync, mkdirSync, readdirSync, renameSync, rmdirSync, unlinkSync, writeFileSync, lstatSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { digest8 } from '../core/digest.ts';
import { RiftError } from '../core/errors.ts';
import { sourceChanged, type Address } from './refusal.ts';

// Stage every file, then publish by rename; a failure part-way restores what was already
// published (reference F.10 rule 105). Each rename is atomic, so a process killed at any
// point leaves every file wholly old or wholly new. Staged files live under `.rift/stage/`,
// invisible to reads and the watcher, and are swept when the next ChangeService starts.

export interface FileWrite {
  /** Project path written. */
  target: string;
  /** Bytes the resolution used; null when the target must not exist. */
  before: Buffer | null;
  /** Bytes to publish; null deletes the target. */
  after: Buffer | null;
  /** Permission bits for the new file (kept from the old one on rewrite). */
  mode: number | null;
  /** Delete a symlink itself rather than its target. */
  link: boolean;
}

/** The filesystem calls publication makes; tests substitute one to inject a failure. */
export interface PublishFs {
  rename(from: string, to: string): void;
}

const NODE_FS: PublishFs = { rename: renameSync };

export const STAGE_DIR = join('.rift', 'stage');

let sequence = 0;

function stagePath(stageDir: string): string {
  sequence += 1;
  return join(stageDir, `${process.pid}-${Date.now().toString(36)}-${sequence}`);
}

/** Removes staged files a killed process left behind. */
export function sweepStage(root: string): void {
  const dir = join(root, STAGE_DIR);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    try {
      unlinkSync(join(dir, n));
    } catch {
      // another process may be sweeping or staging; its own cleanup covers it
    }
  }
}

function storageFailure(path: string, e: unknown): RiftError {
  return new RiftError('storage_failure', [
    ['path', path],
    ['io', (e as NodeJS.ErrnoException).code ?? (e as Error).message],
  ]);
}

/**
 * Re-verifies that every target still holds the bytes the resolution used (rule 106): a
 * mismatch refuses `source_unchanged` with the digests of both.
 */
export function verifyUnchanged(root: string, writes: readonly FileWrite[], addresses: Address[]): void {
  for (const w of writes) {
    const abs = join(root, w.target);
    if (w.link) {
      if (!isSymlink(abs)) throw sourceChanged(addresses, [w.target], 'symlink', 'absent');
      continue;
    }
    let now: Buffer | null;
    try {
      const st = lstatSync(abs);
      if (!st.isFile()) throw sourceChanged(addresses, [w.target], w.before ? digest8(w.before) : 'absent', 'not a regular file');
      now = readFileSync(abs);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      now = null;
    }
    if (!sameBytes(now, w.before)) throw sourceChanged(addresses, [w.target], w.before ? digest8(w.before) : 'absent', now ? digest8(now) : 'absent');
  }
}

function isSymlink(abs: string): boolean {
  try {
    return lstatSync(abs).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Equal contents, where null (absent) equals only null. */
export function sameBytes(a: Buffer | null, b: Buffer | null): boolean {
  return a === null ? b === null : b !== null && a.equals(b);
}

interface Done {
  write: FileWrite;
  /** Where the deleted file was parked, so a rollback can put it back. */
  parked: string | null;
}

/** Publishes `writes` (already verified) or throws `storage_failure` with everything restored. */
export function publish(root: string, writes: readonly FileWrite[], fs: PublishFs = NODE_FS): void {
  const stageDir = join(root, STAGE_DIR);
  const staged = new Map<FileWrite, string>();
  const createdDirs: string[] = [];
  try {
    mkdirSync(stageDir, { recursive: true });
    for (const w of writes) {
      if (w.after === null) continue;
      const p = stagePath(stageDir);
      writeFileSync(p, w.after);
      if (w.mode !== null) chmodSync(p, w.mode);
      staged.set(w, p);
    }
  } catch (e) {
    for (const p of staged.values()) tryUnlink(p);
    throw storageFailure(STAGE_DIR, e);
  }

  const done: Done[] = [];
  let current = '';
  try {
    for (const w of writes) {
      current = w.target;
      const abs = join(root, w.target);
      if (w.after === null) {
        const parked = stagePath(stageDir);
        fs.rename(abs, parked);
        done.push({ write: w, parked });
      } else {
        if (w.before === null) makeParents(root, w.target, createdDirs);
        fs.rename(staged.get(w)!, abs);
        staged.delete(w);
        done.push({ write: w, parked: null });
      }
    }
  } catch (e) {
    rollback(root, done, createdDirs);
    for (const p of staged.values()) tryUnlink(p);
    throw storageFailure(current, e);
  }
  for (const d of done) if (d.parked) tryUnlink(d.parked);
}

function makeParents(root: string, target: string, created: string[]): void {
  const segments = target.split('/').slice(0, -1);
  for (let i = 1; i <= segments.length; i++) {
    const dir = join(root, ...segments.slice(0, i));
    try {
      mkdirSync(dir);
      created.push(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
}

/** Puts back every published file in reverse order; best effort, each step independent. */
function rollback(root: string, done: readonly Done[], createdDirs: readonly string[]): void {
  for (const d of [...done].reverse()) {
    const abs = join(root, d.write.target);
    try {
      if (d.parked) renameSync(d.parked, abs);
      else if (d.write.before === null) unlinkSync(abs);
      else {
        const p = stagePath(join(root, STAGE_DIR));
        writeFileSync(p, d.write.before);
        if (d.write.mode !== null) chmodSync(p, d.write.mode);
        renameSync(p, abs);
      }
    } catch {
      // keep restoring the rest; the failure that started the rollback is what the caller sees
    }
  }
  for (const dir of [...createdDirs].reverse()) {
    try {
      rmdirSync(dir);
    } catch {
      // not empty or already gone
    }
  }
}

function tryUnlink(p: string): void {
  try {
    unlinkSync(p);
  } catch {
    // already gone
  }
}

/** Directories a deletion left empty, removed up to (not including) the root. */
export function pruneEmptyParents(root: string, target: string): void {
  let dir = dirname(target);
  while (dir !== '.' && dir !== '') {
    try {
      rmdirSync(join(root, dir));
    } catch {
      return;
    }
    dir = dirname(dir);
  }
}
