import { closeSync, constants, fchmodSync, fsyncSync, linkSync, lstatSync, openSync, readlinkSync, renameSync, rmdirSync, symlinkSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { digest8, sha256Hex } from '../core/digest.ts';
import { storageFailure } from '../core/errors.ts';
import { DirHandle, OpenError } from '../workspace/safe-open.ts';
import { CHANGES_DIR, INTENT_FILE, CHANGE_TAG, openChangesDir, removeChangeDir, writeIntent, type Intent } from './journal.ts';
import { isRefusal, sourceChanged, type Address } from './refusal.ts';

// Publication (reference F.10 rules 105–106; issue 10). It runs under the tree lock and names
// every entry through an opened directory (`DirHandle`), so a directory swapped for a symlink
// can never redirect a write outside the workspace:
//
//   1. open the directory of every target, verified to be where resolution found it, and
//      re-read every target through it: unless each still holds the bytes the resolution
//      used, refuse `source_unchanged` (rule 106) — nothing has been written;
//   2. in the change's own directory `.rift/changes/<id>/` stage the new bytes (`new-<k>`) and
//      keep a hard link to each original (`old-<k>`), then write and fsync the intent record
//      (only it: a kill needs no fsync at all, and after a power cut a staged file that did not
//      reach the disk is caught by recovery, which then keeps the originals — journal.ts);
//   3. create missing parent directories, check every directory still sits where it was
//      opened, rename each staged file into place (a deletion unlinks; its bytes stay in
//      `old-<k>`), and check again: a directory moved underneath rolls the change back and
//      refuses;
//   4. `commit` removes the directories deletions emptied (never the root), then the intent
//      record (the commit point), then the change directory.
//
// A process killed anywhere in 2–4 leaves the intent record, and the next holder of the lock
// rolls the change back from it (journal.ts): every file wholly old, nothing lost. Until the
// commit the record also covers what transform hooks write to the change's files.

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

/** The filesystem calls that put bytes in place; tests substitute one to inject a failure. */
export interface PublishFs {
  rename(from: string, to: string): void;
  unlink(path: string): void;
}

const NODE_FS: PublishFs = { rename: renameSync, unlink: unlinkSync };

const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

let sequence = 0;

/** Equal contents, where null (absent) equals only null. */
export function sameBytes(a: Buffer | null, b: Buffer | null): boolean {
  return a === null ? b === null : b !== null && a.equals(b);
}

const baseName = (path: string) => path.slice(path.lastIndexOf('/') + 1);
const parentOf = (path: string) => (path.includes('/') ? dirname(path) : '');

interface Entry {
  write: FileWrite;
  /** The target's directory, as a project path. */
  parent: string;
  name: string;
  staged: string | null;
  backup: string | null;
  done: boolean;
}

/** `durable`: fsynced, for a copy that may become a file's only one. */
function writeFileAt(dir: DirHandle, name: string, bytes: Buffer, mode: number | null, durable: boolean): void {
  const fd = openSync(dir.entry(name), CREATE_FLAGS, 0o666);
  try {
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    if (mode !== null) fchmodSync(fd, mode);
    if (durable) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function missing(abs: string): boolean {
  try {
    lstatSync(abs);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

export class Publication {
  private readonly handles: DirHandle[] = [];
  /** Opened directories by project path ('' is the root). */
  private readonly dirs = new Map<string, DirHandle>();
  /** Directories this change created, shallow first. */
  private readonly created: string[] = [];
  private readonly entries: Entry[];
  private readonly id = `${process.pid}-${Date.now().toString(36)}-${++sequence}`;
  private changes: DirHandle | null = null;
  private stage: DirHandle | null = null;
  private intent: Intent | null = null;

  private constructor(
    private readonly root: string,
    writes: readonly FileWrite[],
    private readonly addresses: Address[],
    private readonly fs: PublishFs,
  ) {
    this.entries = writes.map((write) => ({ write, parent: parentOf(write.target), name: baseName(write.target), staged: null, backup: null, done: false }));
  }

  /**
   * Verifies and publishes `writes` (sorted, each a real change), or throws: a refusal when
   * the tree moved since resolution (nothing written), `storage_failure` when the disk failed
   * (everything restored).
   */
  static begin(root: string, writes: readonly FileWrite[], addresses: Address[], maxBytes: number, fs: PublishFs = NODE_FS): Publication {
    const p = new Publication(root, writes, addresses, fs);
    try {
      p.openDirectories();
      for (const e of p.entries) if (p.dirs.has(e.parent)) p.verify(e, maxBytes);
    } catch (e) {
      p.closeAll();
      throw e;
    }
    p.stageAll();
    p.putInPlace();
    return p;
  }

  private open(path: string): DirHandle {
    try {
      const h = DirHandle.open(join(this.root, path));
      this.handles.push(h);
      this.dirs.set(path, h);
      return h;
    } catch (e) {
      if (path === '' || !(e instanceof OpenError)) throw storageFailure(path === '' ? '.' : path, e);
      // The resolution walked this directory; a link or nothing there now means the tree moved.
      if (e.reason === 'unreadable' || e.reason === 'too_long') throw storageFailure(path, e);
      throw sourceChanged(this.addresses, [path], `directory ${path}`, e.reason === 'symlink' ? 'symlink' : e.reason === 'missing' ? 'absent' : 'not a directory');
    }
  }

  /** Opens each target's directory, or for a creation its nearest existing ancestor. */
  private openDirectories(): void {
    this.open('');
    const toCreate = new Set<string>();
    for (const e of this.entries) {
      let dir = e.parent;
      while (dir !== '' && !this.dirs.has(dir) && !toCreate.has(dir) && missing(join(this.root, dir))) {
        if (e.write.before !== null || e.write.link) throw sourceChanged(this.addresses, [e.write.target], `directory ${dir}`, 'absent');
        toCreate.add(dir);
        dir = parentOf(dir);
      }
      if (!this.dirs.has(dir) && !toCreate.has(dir)) this.open(dir);
    }
    this.created.push(...[...toCreate].sort((a, b) => a.split('/').length - b.split('/').length || (a < b ? -1 : 1)));
  }

  /** Rule 106 against one entry, read through its opened directory. */
  private verify(e: Entry, maxBytes: number): void {
    const w = e.write;
    const now = this.dirs.get(e.parent)!.look(e.name, Math.max(maxBytes, w.before?.length ?? 0));
    if (w.link) {
      if (now.kind !== 'link') throw sourceChanged(this.addresses, [w.target], 'symlink', now.kind === 'absent' ? 'absent' : 'not a symlink');
      return;
    }
    if (w.before === null ? now.kind === 'absent' : now.kind === 'file' && now.bytes !== null && now.bytes.equals(w.before)) return;
    const observed =
      now.kind === 'file' ? (now.bytes === null ? `more than ${maxBytes} bytes` : digest8(now.bytes)) : now.kind === 'other' ? 'not a regular file' : now.kind === 'link' ? 'symlink' : 'absent';
    throw sourceChanged(this.addresses, [w.target], w.before ? digest8(w.before) : 'absent', observed);
  }

  /** Stages new bytes and keeps originals in the change directory, then writes the intent record. */
  private stageAll(): void {
    try {
      this.changes = openChangesDir(this.dirs.get('')!, true)!;
      this.handles.push(this.changes);
      this.stage = this.changes.child(this.id, true);
      this.handles.push(this.stage);
      const intent: Intent = { version: 1, phase: 'publish', dirs: [...this.created], files: [] };
      this.entries.forEach((e, k) => {
        const w = e.write;
        if (w.after !== null) {
          e.staged = `new-${k}`;
          writeFileAt(this.stage!, e.staged, w.after, w.mode, false);
        }
        if (w.before !== null || w.link) {
          e.backup = `old-${k}`;
          this.keepOriginal(e, e.backup);
        }
        intent.files.push({ target: w.target, link: w.link, before: e.backup, before_sha256: w.before ? sha256Hex(w.before) : null, after_sha256: w.after ? sha256Hex(w.after) : null });
      });
      writeIntent(this.stage, intent);
      this.intent = intent;
    } catch (e) {
      if (this.changes && this.stage) removeChangeDir(this.changes, this.stage, this.id);
      this.closeAll();
      throw storageFailure(CHANGES_DIR, e);
    }
  }

  /** Keeps the original as `backup`: a hard link, or a copy where the filesystem has none. */
  private keepOriginal(e: Entry, backup: string): void {
    const at = this.dirs.get(e.parent)!.entry(e.name);
    try {
      linkSync(at, this.stage!.entry(backup));
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EMLINK' && code !== 'EXDEV') throw err;
    }
    if (e.write.link) symlinkSync(readlinkSync(at), this.stage!.entry(backup));
    else writeFileAt(this.stage!, backup, e.write.before!, e.write.mode, true);
  }

  private putInPlace(): void {
    let current = '';
    try {
      for (const path of this.created) {
        current = path;
        const h = this.dirs.get(parentOf(path))!.child(baseName(path), true);
        this.handles.push(h);
        this.dirs.set(path, h);
      }
      this.refuseIfMoved();
      for (const e of this.entries) {
        current = e.write.target;
        const at = this.dirs.get(e.parent)!.entry(e.name);
        if (e.write.after === null) this.fs.unlink(at);
        else this.fs.rename(this.stage!.entry(e.staged!), at);
        e.done = true;
      }
      this.refuseIfMoved();
    } catch (e) {
      this.rollback();
      if (isRefusal(e)) throw e;
      throw storageFailure(current, e);
    }
  }

  /** A directory the change writes in no longer sits where it was opened: the tree moved. */
  private refuseIfMoved(): void {
    for (const [path, h] of this.dirs) {
      if (h.stillAt()) continue;
      const below = this.entries.filter((e) => path === '' || e.parent === path || e.parent.startsWith(`${path}/`)).map((e) => e.write.target);
      throw sourceChanged(this.addresses, below, `directory ${path || '(workspace root)'} where resolution found it`, 'moved or replaced by something else');
    }
  }

  /** Marks the change as running transform hooks; returns the environment that tags them. */
  hooksStarting(): Record<string, string> {
    if (this.intent!.phase !== 'hooks') {
      this.intent = { ...this.intent!, phase: 'hooks' };
      try {
        writeIntent(this.stage!, this.intent);
      } catch (e) {
        throw storageFailure(CHANGES_DIR, e);
      }
    }
    return { [CHANGE_TAG]: this.id };
  }

  /**
   * The change stands. Directories its deletions emptied go first, still before the commit
   * point, so that a kill at any moment leaves the tree wholly old — recovery puts a deleted
   * file back, recreating its directory — or wholly new, without an empty directory the change
   * removed. Then the intent record goes (the commit point), then the change's directory.
   */
  commit(): void {
    for (const e of this.entries) if (e.write.after === null) this.pruneEmptyParents(e.parent);
    try {
      unlinkSync(this.stage!.entry(INTENT_FILE));
    } catch (e) {
      this.closeAll();
      throw storageFailure(CHANGES_DIR, e);
    }
    removeChangeDir(this.changes!, this.stage!, this.id);
    this.closeAll();
  }

  /** Puts every published file back (best effort, each step independent), then forgets the change. */
  rollback(): void {
    for (const e of [...this.entries].reverse()) {
      if (!e.done) continue;
      const at = this.dirs.get(e.parent)!.entry(e.name);
      try {
        if (e.backup) renameSync(this.stage!.entry(e.backup), at);
        else unlinkSync(at);
      } catch {
        // keep restoring the rest; the failure that started the rollback is what the caller sees
      }
    }
    for (const path of [...this.created].reverse()) {
      const parent = this.dirs.get(parentOf(path));
      try {
        if (parent && this.dirs.has(path)) rmdirSync(parent.entry(baseName(path)));
      } catch {
        // not empty or already gone
      }
    }
    if (this.changes && this.stage) removeChangeDir(this.changes, this.stage, this.id);
    this.closeAll();
  }

  /** Directories a deletion left empty, removed up to (not including) the root. */
  private pruneEmptyParents(dir: string): void {
    for (; dir !== ''; dir = parentOf(dir)) {
      const parent = this.dirs.get(parentOf(dir)) ?? null;
      let opened: DirHandle | null = null;
      try {
        const h = parent ?? (opened = DirHandle.open(join(this.root, parentOf(dir))));
        rmdirSync(h.entry(baseName(dir)));
      } catch {
        return;
      } finally {
        opened?.close();
      }
    }
  }

  private closeAll(): void {
    for (const h of this.handles.splice(0)) h.close();
  }
}
