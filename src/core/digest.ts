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
  const h = createHash('sha256');
  const zero = Buffer.from([0]);
  const ff = Buffer.from([0xff]);
  for (const f of files) {
    h.update(f.path, 'utf8');
    h.update(zero);
    h.update(Buffer.from(f.sha256, 'hex'));
    h.update(ff);
  }
  return h.digest('hex').slice(0, 8);
}
