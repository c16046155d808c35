import { createHash } from 'node:crypto';

/** Full SHA-256 hex. Internal only: never put this on the wire (reference C). */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The 8-hex wire digest: the first 8 lowercase hex characters of SHA-256. */
export function digest8(data: Uint8Array | string): string {
  return sha256Hex(data).slice(0, 8);
}

export const DIGEST_PATTERN = /^[0-9a-f]{8}$/;

/**
 * Tree revision over indexed files in path order. Each file contributes
 * `path ‖ 0x00 ‖ sha256(bytes) ‖ 0xFF`, so it is maintained from per-file digests
 * without re-reading the tree (decisions.md, documented in docs/mcp.md).
 */
export function treeRevision(files: Iterable<{ path: string; sha256: string }>): string {
  const h = new TreeRevisionHash();
  for (const f of files) h.add(f.path, f.sha256);
  return h.digest();
}

/**
 * The tree revision's hash fed one file at a time (`add` in path order), its input gathered in
 * blocks: one hash update per 64 KiB rather than four per file (72,000 files: 43 -> 20 ms).
 */
export class TreeRevisionHash {
  private readonly hash = createHash('sha256');
  private block = Buffer.allocUnsafe(1 << 16);
  private at = 0;

  /** One file: its path and the hex SHA-256 of its bytes (decoded as `Buffer.from(hex, 'hex')` decodes it). */
  add(path: string, sha256: string): void {
    // UTF-8 takes at most three bytes per UTF-16 unit; a digest 32 (its hex, half its length).
    const room = path.length * 3 + (sha256.length >> 1) + 2;
    if (this.at + room > this.block.length) {
      this.hash.update(this.block.subarray(0, this.at));
      this.at = 0;
      if (room > this.block.length) this.block = Buffer.allocUnsafe(room);
    }
    this.at += this.block.write(path, this.at, 'utf8');
    this.block[this.at++] = 0;
    this.at += this.block.write(sha256, this.at, 'hex');
    this.block[this.at++] = 0xff;
  }

  /** Bytes already encoded as `add` encodes files (a run of stored records), fed as they are. */
  addEncoded(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    this.hash.update(this.block.subarray(0, this.at));
    this.at = 0;
    this.hash.update(bytes);
  }

  /** The 8-hex revision of what was added. */
  digest(): string {
    this.hash.update(this.block.subarray(0, this.at));
    this.at = 0;
    return this.hash.digest('hex').slice(0, 8);
  }
}
