import { closeSync, fstatSync, lstatSync, openSync, readSync, readlinkSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { RiftError, invalidField, limitExceeded } from '../core/errors.ts';
import { encodeIdPath } from '../core/ids.ts';
import { FS_PAGE_ENTRIES, FS_READ_BYTES_MAX } from '../core/limits.ts';
import { projectPathViolation, underFloor } from '../core/path.ts';
import { languageFor, type WorkspaceConfig } from '../config/workspace-config.ts';
import type { Indexer } from '../index/indexer.ts';
import type { FsResource, ProjectEntry } from '../protocol/resources.ts';
import { DirHandle, OpenError, READ_FLAGS } from '../workspace/safe-open.ts';
import { compareProjectPaths } from '../workspace/walk.ts';
import { pagination } from './read-gate.ts';

// `rift://fs` (spec "Planned resources"; reference B.4, F.9 rule 101): the bytes and directory
// listings of one tree — the workspace, or a projection — for consumers without filesystem tools.
// Only what the visibility policy shows is reachable: a path under the floor, hidden by
// `[source]` or `.gitignore`, outside the tree, or reached through a symlinked directory is
// `resource_not_found`, whether it exists or not, and is never read. Every entry is opened
// through its verified parent directory (workspace/safe-open.ts), so a directory swapped for a
// link cannot redirect the read. A symlink is reported with its raw target and never followed.
//
// A file is read as a range of bytes: `start` (default 0) and `length` (default and at most
// FS_READ_BYTES_MAX). Each answer carries the digest of the whole file, read in the same pass
// as the range, so a client continuing at `next` notices a file that changed between ranges
// and starts again from 0.

/** The tree a read addresses: its root, its configuration and its index (for the visibility policy and revision). */
export interface FsTree {
  readonly root: string;
  readonly config: { current(): { config: WorkspaceConfig } };
  readonly indexer: Indexer;
}

export interface FsRequest {
  /** The URI as sent, echoed as `uri`. */
  uri: string;
  /** Decoded project path; '' for the root. */
  path: string;
  /** The directory page, or null when the URI named none. */
  pageIndex: number | null;
  start: number | null;
  length: number | null;
  /** The projection the tree belongs to (kept in `next`), or null for the workspace. */
  projection: string | null;
}

const CHUNK = 64 * 1024;
/** The longest UTF-8 sequence: a range never ends inside one. */
const UTF8_MAX = 4;

const baseName = (path: string) => path.slice(path.lastIndexOf('/') + 1);
const isContinuation = (b: number) => (b & 0xc0) === 0x80;

/** The same answer for a path that does not exist and one the policy hides. */
function notFound(path: string): RiftError {
  return new RiftError('resource_not_found', [
    ['path', path],
    ['requires', 'a visible file or directory of the tree'],
  ]);
}

export class FsService {
  constructor(private readonly tree: FsTree) {}

  read(req: FsRequest): FsResource {
    if (req.length === 0) throw invalidField('length', 'zero');
    if (req.length !== null && req.length > FS_READ_BYTES_MAX) throw limitExceeded('length', FS_READ_BYTES_MAX, req.length);
    const config = this.tree.config.current().config;
    const snapshot = { tree_revision: this.tree.indexer.snapshot.revision };
    if (req.path !== '' && projectPathViolation(req.path) !== null) throw notFound(req.path);
    const parent = this.openParent(req.path);
    try {
      if (req.path === '') return this.list(req, config, snapshot, parent, '');
      const name = baseName(req.path);
      let st;
      try {
        st = lstatSync(parent.entry(name));
      } catch {
        throw notFound(req.path);
      }
      if (st.isDirectory()) {
        if (!this.tree.indexer.isVisible(req.path, true)) throw notFound(req.path);
        let dir: DirHandle;
        try {
          dir = parent.child(name, false);
        } catch (e) {
          if (e instanceof OpenError) throw notFound(req.path);
          throw e;
        }
        try {
          return this.list(req, config, snapshot, dir, req.path);
        } finally {
          dir.close();
        }
      }
      if (!(st.isFile() || st.isSymbolicLink()) || !this.tree.indexer.isVisible(req.path)) throw notFound(req.path);
      if (req.pageIndex !== null) throw invalidField('page_index', `applies to a directory; ${req.path} is a file`);
      if (st.isSymbolicLink()) {
        if (req.start !== null || req.length !== null) throw invalidField(req.start !== null ? 'start' : 'length', `applies to a regular file; ${req.path} is a symlink`);
        const entry = this.entryOf(parent, name, req.path, config);
        if (entry === null) throw notFound(req.path);
        return { uri: req.uri, snapshot, entry, encoding: 'none' };
      }
      return this.readFile(req, config, snapshot, parent, name);
    } finally {
      parent.close();
    }
  }

  /** The directory holding `path` (the root for the root), each ancestor a visible, real directory. */
  private openParent(path: string): DirHandle {
    let dir = DirHandle.open(this.tree.root);
    const segments = path === '' ? [] : path.split('/').slice(0, -1);
    let at = '';
    try {
      for (const segment of segments) {
        at = at === '' ? segment : `${at}/${segment}`;
        if (!this.tree.indexer.isVisible(at, true)) throw notFound(path);
        let next: DirHandle;
        try {
          next = dir.child(segment, false);
        } catch (e) {
          // Missing, a file, or a symlink to elsewhere: nothing this tree can address.
          if (e instanceof OpenError) throw notFound(path);
          throw e;
        }
        dir.close();
        dir = next;
      }
    } catch (e) {
      dir.close();
      throw e;
    }
    return dir;
  }

  /** A visible entry of `dir` as the listing reports it; null for what it leaves out. */
  private entryOf(dir: DirHandle, name: string, path: string, config: WorkspaceConfig): ProjectEntry | null {
    if (underFloor(name) || projectPathViolation(path) !== null) return null;
    let st;
    try {
      st = lstatSync(dir.entry(name));
    } catch {
      return null;
    }
    if (st.isDirectory()) return this.tree.indexer.isVisible(path, true) ? { kind: 'directory', path } : null;
    if (!this.tree.indexer.isVisible(path)) return null;
    if (st.isSymbolicLink()) {
      let target: Buffer;
      try {
        target = readlinkSync(dir.entry(name), { encoding: 'buffer' });
      } catch {
        return null;
      }
      return { kind: 'file', file: { path, content: { kind: 'symlink', target: target.toString('base64') }, languages: [] } };
    }
    if (!st.isFile()) return null; // FIFOs, sockets and devices are no part of a tree
    const language = languageFor(config, path);
    return { kind: 'file', file: { path, content: { kind: 'regular', size_bytes: st.size }, languages: language === null ? [] : [language.id] } };
  }

  private list(req: FsRequest, config: WorkspaceConfig, snapshot: FsResource['snapshot'], dir: DirHandle, path: string): FsResource {
    if (req.start !== null || req.length !== null) throw invalidField(req.start !== null ? 'start' : 'length', `applies to a file; ${path === '' ? 'the root' : path} is a directory`);
    const entries: ProjectEntry[] = [];
    for (const name of dir.list()) {
      const child = path === '' ? name : `${path}/${name}`;
      const entry = this.entryOf(dir, name, child, config);
      if (entry !== null) entries.push(entry);
    }
    const pathOf = (e: ProjectEntry) => (e.kind === 'directory' ? e.path : e.file.path);
    entries.sort((a, b) => compareProjectPaths(pathOf(a), pathOf(b)));
    const page = req.pageIndex ?? 0;
    return {
      uri: req.uri,
      snapshot,
      entry: { kind: 'directory', path },
      encoding: 'directory',
      entries: entries.slice(page * FS_PAGE_ENTRIES, (page + 1) * FS_PAGE_ENTRIES),
      pagination: pagination(page, entries.length, FS_PAGE_ENTRIES),
    };
  }

  /**
   * One range of a regular file and the digest of all of it, from one pass over one open
   * descriptor. The file is text (`utf8`) when all of it is UTF-8 without a NUL byte; a text
   * range then ends on a character boundary (before `start + length`, or just past the one
   * character a shorter `length` cuts), and a `start` inside a character is refused.
   */
  private readFile(req: FsRequest, config: WorkspaceConfig, snapshot: FsResource['snapshot'], dir: DirHandle, name: string): FsResource {
    const start = req.start ?? 0;
    const length = req.length ?? FS_READ_BYTES_MAX;
    let fd: number;
    try {
      fd = openSync(dir.entry(name), READ_FLAGS);
    } catch {
      throw notFound(req.path);
    }
    const hash = createHash('sha256');
    const decoder = new TextDecoder('utf-8', { fatal: true });
    let window: Buffer;
    let windowed = 0;
    let total = 0;
    let text = true;
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) throw notFound(req.path);
      // What a range may need: its bytes and the few after them that decide a character boundary.
      window = Buffer.alloc(Math.min(length, Math.max(0, st.size - start)) + UTF8_MAX + 1);
      const chunk = Buffer.allocUnsafe(CHUNK);
      for (;;) {
        const n = readSync(fd, chunk, 0, CHUNK, null);
        if (n === 0) break;
        const bytes = chunk.subarray(0, n);
        hash.update(bytes);
        if (text) {
          try {
            decoder.decode(bytes, { stream: true });
            if (bytes.includes(0)) text = false;
          } catch {
            text = false;
          }
        }
        // The part of this chunk inside [start, start + window.length).
        const from = Math.max(start, total);
        const to = Math.min(start + window.length, total + n);
        if (from < to) windowed += bytes.copy(window, from - start, from - total, to - total);
        total += n;
      }
      if (text) {
        try {
          decoder.decode();
        } catch {
          text = false;
        }
      }
    } finally {
      closeSync(fd);
    }
    // A file that grew while it was read is served as far as the window reached.
    let end = Math.min(start + length, total, start + windowed);
    if (start >= total) end = start;
    else if (text) {
      if (isContinuation(window[0])) throw invalidField('start', `inside a UTF-8 character of ${req.path}; continue at the offset next names, or start at 0`);
      const at = (offset: number) => window[offset - start];
      while (end < total && end > start && isContinuation(at(end))) end--;
      if (end === start) {
        // `length` is shorter than the character at `start`: serve that one character whole.
        end = start + 1;
        while (end < Math.min(total, start + windowed) && isContinuation(at(end))) end++;
      }
    }
    const bytes = window.subarray(0, end - start);
    const language = languageFor(config, req.path);
    const out: FsResource = {
      uri: req.uri,
      snapshot,
      entry: { kind: 'file', file: { path: req.path, content: { kind: 'regular', size_bytes: total }, languages: language === null ? [] : [language.id] } },
      encoding: text ? 'utf8' : 'base64',
      start,
      end,
      total_bytes: total,
      content: text ? bytes.toString('utf8') : bytes.toString('base64'),
      digest: hash.digest('hex').slice(0, 8),
    };
    if (end < total) out.next = `rift://fs/${encodeIdPath(req.path)}?start=${end}&length=${length}${req.projection === null ? '' : `&projection=${req.projection}`}`;
    return out;
  }
}
