import { existsSync, lstatSync, readdirSync, realpathSync, type Dirent } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { isRiftError } from '../core/errors.ts';
import { projectPathViolation, underFloor } from '../core/path.ts';
import { ConfigLoader } from '../config/loader.ts';
import { defaultConfig, type WorkspaceConfig } from '../config/workspace-config.ts';
import { readBytesSync, type BytesOutcome } from '../workspace/read.ts';
import { ensureStateDir } from '../workspace/state-dir.ts';
import { Visibility, sourcePolicy } from '../workspace/visibility.ts';
import { walkWorkspace } from '../workspace/walk.ts';
import { Publication, type FileWrite } from '../change/publish.ts';
import { isRefusal } from '../change/refusal.ts';
import { TreeLock, type Held } from '../change/tree-lock.ts';

// Plain file access for the agent's file tools (`ls`, `grep`, `glob`, `read`, `write`, `edit`),
// on the same parts the engine uses: workspace/ for what is visible and for bounded reads that
// never follow a link, change/ for atomic publication. No index is needed, so the tools work
// before (and without) the engine.

/** Why a path cannot be used by the file tools. */
export type LocateFailure = 'outside' | 'floor' | 'unaddressable';

export type Located = { ok: true; path: string } | { ok: false; reason: LocateFailure };

/** A publication that did not happen, in words for the model. */
export class WriteRefused extends Error {
  override readonly name = 'WriteRefused';
}

export class WorkspaceFiles {
  private constructor(readonly root: string) {}

  /** The workspace at `dir` (its real path). */
  static at(dir: string): WorkspaceFiles {
    return new WorkspaceFiles(realpathSync.native(dir));
  }

  /**
   * The project path an absolute path names, its links resolved (for a path that does not
   * exist yet, those of its deepest existing ancestor).
   */
  locate(abs: string): Located {
    let real: string;
    let rest = '';
    for (let at = abs; ; ) {
      try {
        real = join(realpathSync.native(at), rest);
        break;
      } catch {
        const up = dirname(at);
        if (up === at) return { ok: false, reason: 'outside' };
        rest = join(at.slice(up.length + 1), rest);
        at = up;
      }
    }
    const rel = relative(this.root, real);
    if (rel === '') return { ok: true, path: '' };
    if (rel.startsWith('..') || rel.startsWith(sep) || /^[A-Za-z]:/.test(rel)) return { ok: false, reason: 'outside' };
    const path = rel.split(sep).join('/');
    if (underFloor(path)) return { ok: false, reason: 'floor' };
    if (projectPathViolation(path) !== null) return { ok: false, reason: 'unaddressable' };
    return { ok: true, path };
  }

  abs(path: string): string {
    return path === '' ? this.root : join(this.root, path);
  }

  /** Regular file, directory, or nothing (a link, device or missing path). */
  kind(path: string): 'file' | 'dir' | null {
    try {
      const st = lstatSync(this.abs(path));
      return st.isFile() ? 'file' : st.isDirectory() ? 'dir' : null;
    } catch {
      return null;
    }
  }

  /** A bounded, byte-exact read that never follows a link. */
  read(path: string, maxBytes: number): BytesOutcome {
    return readBytesSync(this.root, path, maxBytes);
  }

  /** The entries of a directory, floor names left out, sorted by name. */
  list(dir: string): Dirent[] {
    return readdirSync(this.abs(dir), { withFileTypes: true })
      .filter((e) => !underFloor(e.name))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * The visible regular files below the directory `under` ('' for the root), sorted: the
   * workspace's `[source]` policy and `.gitignore` files decide, as they do for the index.
   * Throws `limit_exceeded` past `[source].max_files`.
   */
  async visibleFiles(under: string): Promise<string[]> {
    const policy = sourcePolicy(this.config());
    const visibility = await Visibility.load(this.root, policy);
    if (!visibility.isVisible(under, true)) return [];
    return (await walkWorkspace(this.root, visibility, policy, under)).files.map((f) => f.path);
  }

  /** The workspace configuration; the defaults while `rift.toml` is invalid, so the tools keep working. */
  private config(): WorkspaceConfig {
    try {
      return new ConfigLoader(this.root).current().config;
    } catch (e) {
      if (isRiftError(e)) return defaultConfig();
      throw e;
    }
  }

  /**
   * Publishes `after` at `path` atomically (stage, then rename), provided the file still holds
   * `before` (null: absent). A file that changed meanwhile, or a link or directory in the way,
   * refuses with `WriteRefused`; a failed publication leaves every byte as it was.
   */
  async write(path: string, before: Uint8Array | null, after: Uint8Array): Promise<void> {
    const w: FileWrite = {
      target: path,
      before: before === null ? null : Buffer.from(before.buffer, before.byteOffset, before.byteLength),
      after: Buffer.from(after.buffer, after.byteOffset, after.byteLength),
      mode: this.modeOf(path),
      link: false,
    };
    try {
      ensureStateDir(this.root);
      // Verifies `before` through the opened directory, journals, then renames into place.
      await this.publish(w);
    } catch (e) {
      if (isRefusal(e)) {
        // The publication observes a digest, `absent`, `symlink` or `not a regular file`.
        const observed = e.result.preconditions[0]?.observed;
        const now = observed?.kind === 'text' ? observed.value : '';
        const what = /^[0-9a-f]{8}$/.test(now) ? `digest ${now}` : now;
        throw new WriteRefused(`${path} changed on disk since it was read (now ${what}); read it again and redo the change`);
      }
      if (isRiftError(e)) throw new WriteRefused(`${path} could not be written: ${e.message}`);
      throw e;
    }
  }

  /**
   * Puts `bytes` back at `path` (null deletes it) whatever the file holds now, atomically: undo
   * of the agent's own writes. A file over `maxBytes` now is replaced without a rollback copy.
   */
  async restore(path: string, bytes: Uint8Array | null, maxBytes: number): Promise<void> {
    ensureStateDir(this.root);
    await TreeLock.hold(this.root, (held) => {
      const now = this.read(path, maxBytes);
      const current = now.ok ? Buffer.from(now.bytes) : null;
      if (current === null && bytes === null) return;
      const w: FileWrite = { target: path, before: current, after: bytes === null ? null : Buffer.from(bytes), mode: this.modeOf(path), link: false };
      this.commit(w, held);
    });
  }

  /**
   * Publishes under the tree's lock, so a change by any other rift process runs wholly before
   * or after this one (and never takes this live publication for an interrupted one); the
   * path goes into the tree's change log for those processes' indexes.
   */
  private publish(w: FileWrite): Promise<void> {
    return TreeLock.hold(this.root, (held) => this.commit(w, held));
  }

  private commit(w: FileWrite, held: Held): void {
    Publication.begin(this.root, [w], [], this.config().source.max_file_bytes).commit();
    held.record([w.target]);
  }

  private modeOf(path: string): number | null {
    const abs = this.abs(path);
    if (!existsSync(abs)) return null;
    try {
      return lstatSync(abs).mode & 0o7777;
    } catch {
      return null;
    }
  }
}
