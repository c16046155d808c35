import { TreeRevisionHash } from '../core/digest.ts';
import { compareProjectPaths, pathPlace } from '../workspace/walk.ts';

/**
 * The stored files' digests in path order (SQLite's binary order, which is
 * `compareProjectPaths`'s), as the tree revision reads them, with their encoding kept: every
 * file's `path ‖ 0x00 ‖ digest ‖ 0xFF` in one buffer, so a revision hashes it in a few large
 * updates (72,000 files: 5 MB, ~5 ms) instead of encoding each file again (~40 ms), with the
 * changes a read must account for spliced in at their places. A committed change of a file's
 * digest is written into the buffer in place; a file added or removed has it encoded afresh when
 * next needed.
 */
export class TreeRows {
  private encoded: { bytes: Buffer; starts: Int32Array } | null = null;

  constructor(
    private readonly paths: string[],
    private readonly digests: Map<string, string>,
  ) {}

  /** The tree revision of these files with `changes` applied: a digest (a file changed or added), or null (a file gone). */
  revision(changes: ReadonlyMap<string, string | null>): string {
    const { bytes, starts } = this.encoding();
    const splices: Array<{ at: number; end: number; path: string; digest: string | null }> = [];
    for (const [path, digest] of changes) {
      const i = this.index(path);
      if (this.paths[i] === path) splices.push({ at: starts[i], end: starts[i + 1], path, digest });
      else if (digest !== null) splices.push({ at: starts[i], end: starts[i], path, digest });
    }
    // In path order (a file added at a stored file's place precedes it).
    splices.sort((a, b) => a.at - b.at || compareProjectPaths(a.path, b.path));
    const h = new TreeRevisionHash();
    let done = 0;
    for (const s of splices) {
      h.addEncoded(bytes.subarray(done, s.at));
      if (s.digest !== null) h.add(s.path, s.digest);
      done = s.end;
    }
    h.addEncoded(bytes.subarray(done));
    return h.digest();
  }

  /**
   * Brings the rows to what a committed batch wrote (its deletions, then its updates), or says
   * they should be read again (false): a batch adding or removing more than SPLICES_MAX files (a
   * build, a branch switch) would move the path list once per file.
   */
  apply(updates: ReadonlyArray<{ path: string; sha256: string }>, deletions: readonly string[]): boolean {
    let splices = 0;
    for (const path of deletions) if (this.digests.has(path)) splices++;
    for (const u of updates) if (!this.digests.has(u.path)) splices++;
    if (splices > SPLICES_MAX) return false;
    for (const path of deletions) {
      if (!this.digests.delete(path)) continue;
      this.paths.splice(this.index(path), 1);
      this.encoded = null;
    }
    for (const u of updates) {
      const old = this.digests.get(u.path);
      if (old === undefined) {
        this.paths.splice(this.index(u.path), 0, u.path);
        this.encoded = null;
      } else if (this.encoded !== null) {
        // The digest is the 32 bytes before the record's closing 0xFF: rewritten in place when
        // both are whole SHA-256 digests, else the buffer is encoded afresh.
        if (DIGEST_HEX.test(old) && DIGEST_HEX.test(u.sha256)) this.encoded.bytes.write(u.sha256, this.encoded.starts[this.index(u.path) + 1] - 33, 'hex');
        else this.encoded = null;
      }
      this.digests.set(u.path, u.sha256);
    }
    return true;
  }

  /** Where `path` is, or would be, among the paths. */
  private index(path: string): number {
    return pathPlace(this.paths, path, (p) => p);
  }

  /** The buffer and where each file's record starts in it (one more entry: its length). */
  private encoding(): { bytes: Buffer; starts: Int32Array } {
    if (this.encoded !== null) return this.encoded;
    const starts = new Int32Array(this.paths.length + 1);
    let size = 0;
    for (const [i, path] of this.paths.entries()) {
      starts[i] = size;
      size += Buffer.byteLength(path, 'utf8') + Buffer.byteLength(this.digests.get(path)!, 'hex') + 2;
    }
    starts[this.paths.length] = size;
    const bytes = Buffer.allocUnsafe(size);
    let at = 0;
    for (const path of this.paths) {
      at += bytes.write(path, at, 'utf8');
      bytes[at++] = 0;
      at += bytes.write(this.digests.get(path)!, at, 'hex');
      bytes[at++] = 0xff;
    }
    this.encoded = { bytes, starts };
    return this.encoded;
  }
}

const DIGEST_HEX = /^[0-9a-f]{64}$/;
/** Files a batch may add or remove and the rows still be brought up to date in place (see `apply`). */
const SPLICES_MAX = 64;
