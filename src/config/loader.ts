// Reading `rift.toml` from disk with gating (reference E.1, F.17 rules 176–177).
//
// `ConfigLoader.current()` runs on every request, so it is cheap: one `stat`. The file is re-read
// only when its identity, size, mtime or ctime changed (or its mtime is too recent to trust, the
// "racily clean" case), and re-validated only when the content digest changed. While the file is
// invalid every call throws the same `configuration_invalid` error; the next call after the file
// is fixed serves the new config. No restart is needed either way.

import { closeSync, constants, fstatSync, openSync, readSync, statSync, type BigIntStats } from 'node:fs';
import { join } from 'node:path';
import { digest8, sha256Hex } from '../core/digest.ts';
import { RiftError, isRiftError } from '../core/errors.ts';
import { CONFIG_BYTES_MAX } from '../core/limits.ts';
import { CONFIG_FILE_NAME, defaultConfig, freezeConfig, parseConfig, type WorkspaceConfig } from './workspace-config.ts';

// `languageFor` lives beside the config types; re-exported here for callers that hold a loader.
export { languageFor } from './workspace-config.ts';

export interface AcceptedConfig {
  config: WorkspaceConfig;
  /** digest8 of the accepted bytes; null when the file is absent (defaults). */
  revision: string | null;
}

/** A file modified less than this long ago may change again without changing its stat. */
const RACY_WINDOW_NS = 2_000_000_000n;

type Outcome = { accepted: AcceptedConfig } | { error: RiftError };

const MISSING = 'missing';

function fingerprint(s: BigIntStats): string {
  return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
}

function ioCode(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' ? code : 'unknown';
}

function storageFailure(io: string): RiftError {
  return new RiftError('storage_failure', [
    ['file', CONFIG_FILE_NAME],
    ['io', io],
  ]);
}

function tooLarge(bytes: number | bigint): RiftError {
  return new RiftError('configuration_invalid', [
    ['file', CONFIG_FILE_NAME],
    ['bytes', bytes.toString()],
    ['bytes_max', CONFIG_BYTES_MAX],
  ]);
}

/** Re-throwable copy: same code, evidence and message, fresh stack. */
function copyError(e: RiftError): RiftError {
  return new RiftError(e.code, e.evidence, { retry: e.retry, phase: e.phase, limit: e.limit });
}

export class ConfigLoader {
  readonly root: string;
  readonly path: string;
  /** Stat fingerprint of the state `outcome` describes; null forces a re-read. */
  private seen: string | null = null;
  /** sha256 of the bytes `outcome` was computed from; null when absent. */
  private digest: string | null = null;
  private outcome: Outcome | null = null;
  private defaults: AcceptedConfig | null = null;

  constructor(root: string) {
    this.root = root;
    this.path = join(root, CONFIG_FILE_NAME);
  }

  /**
   * The accepted configuration. Returns the same object while the file is unchanged (compare by
   * identity to notice a change). Throws `configuration_invalid` while the file is invalid and
   * `storage_failure` when it cannot be read. The returned config is deeply frozen.
   */
  current(): AcceptedConfig {
    const outcome = this.examine();
    if ('error' in outcome) throw copyError(outcome.error);
    return outcome.accepted;
  }

  /** Like `current()`, but hands the error back instead of throwing it. */
  tryCurrent(): AcceptedConfig | RiftError {
    const outcome = this.examine();
    return 'error' in outcome ? copyError(outcome.error) : outcome.accepted;
  }

  private examine(): Outcome {
    let st: BigIntStats | undefined;
    try {
      st = statSync(this.path, { bigint: true, throwIfNoEntry: false });
    } catch (e) {
      this.seen = null;
      return { error: storageFailure(ioCode(e)) };
    }

    if (st === undefined) {
      if (this.seen !== MISSING || this.outcome === null) {
        this.defaults ??= { config: freezeConfig(defaultConfig()), revision: null };
        this.seen = MISSING;
        this.digest = null;
        this.outcome = { accepted: this.defaults };
      }
      return this.outcome;
    }

    if (this.outcome !== null && this.seen === fingerprint(st)) return this.outcome;

    if (st.isDirectory()) {
      this.seen = null;
      return { error: storageFailure('EISDIR') };
    }
    if (!st.isFile()) {
      this.seen = null;
      return { error: storageFailure('not_regular_file') };
    }
    if (st.size > BigInt(CONFIG_BYTES_MAX)) {
      return this.settle(fingerprint(st), null, { error: tooLarge(st.size) }, st);
    }

    let bytes: Uint8Array;
    let opened: BigIntStats;
    try {
      ({ bytes, stats: opened } = readBounded(this.path));
    } catch (e) {
      this.seen = null;
      return { error: storageFailure(ioCode(e)) };
    }
    if (bytes.byteLength > CONFIG_BYTES_MAX) {
      const size = Math.max(Number(opened.size), bytes.byteLength);
      return this.settle(fingerprint(opened), null, { error: tooLarge(size) }, opened);
    }

    const digest = sha256Hex(bytes);
    if (this.outcome !== null && this.digest === digest) {
      return this.settle(fingerprint(opened), digest, this.outcome, opened);
    }
    let outcome: Outcome;
    try {
      outcome = { accepted: { config: freezeConfig(parseConfig(bytes)), revision: digest8(bytes) } };
    } catch (e) {
      if (!isRiftError(e)) throw e;
      outcome = { error: e };
    }
    return this.settle(fingerprint(opened), digest, outcome, opened);
  }

  private settle(seen: string, digest: string | null, outcome: Outcome, st: BigIntStats): Outcome {
    // A file written within the racy window may change again without a visible stat change:
    // keep the outcome but re-read next time (the digest check keeps that cheap).
    const age = BigInt(Date.now()) * 1_000_000n - st.mtimeNs;
    this.seen = age < RACY_WINDOW_NS ? null : seen;
    this.digest = digest;
    this.outcome = outcome;
    return outcome;
  }
}

/** Read at most CONFIG_BYTES_MAX + 1 bytes, with the stats of the opened file. */
function readBounded(path: string): { bytes: Uint8Array; stats: BigIntStats } {
  const flags = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);
  const fd = openSync(path, flags);
  try {
    const stats = fstatSync(fd, { bigint: true });
    if (stats.isDirectory()) {
      const e = new Error('is a directory') as NodeJS.ErrnoException;
      e.code = 'EISDIR';
      throw e;
    }
    const buf = Buffer.alloc(CONFIG_BYTES_MAX + 1);
    let total = 0;
    while (total < buf.length) {
      const n = readSync(fd, buf, total, buf.length - total, null);
      if (n === 0) break;
      total += n;
    }
    return { bytes: buf.subarray(0, total), stats };
  } finally {
    closeSync(fd);
  }
}
