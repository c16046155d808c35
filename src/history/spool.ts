import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { RiftError } from '../core/errors.ts';

// A long-lived `git cat-file --batch` whose output goes to a temporary file instead of a pipe,
// for a history walk's hundreds of versions of one file. Through a pipe, git writes no further
// ahead than the pipe's buffer (a few hundred kilobytes: one or two versions of a large file)
// while the reader parses, and each side pays the kernel's copy and wake-ups per chunk: on 501
// versions of a 110 KB file, the walk waited ~60 ms for bytes git had long been able to produce.
// Written to a file, git runs as far ahead as it is asked; the reader takes each object with a
// positional read straight into its buffer, and polls only when it has caught up with git.
// The file is unlinked as soon as it is open (nothing is left behind, whatever ends the process),
// started afresh past SPOOL_ROTATE_BYTES once nothing is in flight, and closed when the last walk
// reading through it ends (an idle server holds no spooled bytes).

/** Output a spool holds before it is started afresh (checked when no request is in flight). */
const SPOOL_ROTATE_BYTES = 32 * 1024 * 1024;
/** How long a reader that caught up with git waits before looking again. */
const POLL_MS = 1;
/** Looks at the file on the next turn of the event loop before waiting POLL_MS. */
const SPINS = 8;

/** A `cat-file --batch` answer's header line: `<oid> <type> <size>`, or null for `<name> missing` (or ambiguous). */
export function batchHeader(line: string): { oid: string; type: string; size: number } | null {
  const parts = line.split(' ');
  return parts.length === 3 ? { oid: parts[0], type: parts[1], size: Number(parts[2]) } : null;
}

/** No spool file could be made (the temporary folder is missing, full or unwritable): read through a pipe instead. */
export class SpoolUnavailable extends Error {}

/** An object as `cat-file --batch` answers it. */
export interface BatchObject {
  oid: string;
  type: string;
  bytes: Buffer;
}

interface Request {
  name: string;
  /** Where the object's bytes go: a buffer of exactly `size` bytes. */
  buffer: (size: number) => Buffer;
  resolve: (value: BatchObject | null) => void;
  reject: (e: Error) => void;
}

interface Spool {
  proc: ChildProcess;
  /** Where requests are written (the process's stdin). */
  requests: Writable;
  fd: number;
  /** Where the next answer starts in the file. */
  at: number;
  /** Set once git has exited (what it wrote is still read). */
  exited: boolean;
}

export class SpooledCatFile {
  private spool: Spool | null = null;
  /** Requests written to the current process, answered in order. */
  private readonly inFlight: Request[] = [];
  /** Requests waiting for the spool to be started afresh. */
  private readonly waiting: Request[] = [];
  private reading = false;
  private readonly header = Buffer.allocUnsafe(512);
  /** Readers that hold the spool open (see `hold`). */
  private holders = 0;

  /** Processes started so far (each spool is one). */
  private started = 0;

  constructor(
    private readonly cwd: string,
    private readonly env: () => NodeJS.ProcessEnv,
    /** Output a spool holds before it is started afresh. */
    private readonly rotateBytes = SPOOL_ROTATE_BYTES,
  ) {}

  /** How many git processes this reader has started. */
  get processes(): number {
    return this.started;
  }

  /** The running process's id, if one runs. */
  get pid(): number | undefined {
    return this.spool?.proc.pid;
  }

  /** Starts the process ahead of the first request. */
  start(): void {
    this.current();
  }

  /** The object `name` names (its bytes in a buffer `buffer(size)` gives), or null when missing. */
  request(name: string, buffer: (size: number) => Buffer = (size) => Buffer.allocUnsafe(size)): Promise<BatchObject | null> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ name, buffer, resolve, reject });
      this.send();
      void this.read();
    });
  }

  /**
   * Holds the spool open for a reader of many objects; the returned release closes it once no
   * reader holds it (requests still in flight then fail, and the next request starts another).
   */
  hold(): () => void {
    this.holders++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      if (--this.holders === 0) this.close();
    };
  }

  /** Ends the process; the requests sent to it and not yet answered fail (with `error`). */
  close(error: Error = this.failure('closed')): void {
    const s = this.spool;
    this.spool = null;
    if (s) {
      s.requests.end();
      closeSync(s.fd);
    }
    for (const r of this.inFlight.splice(0)) r.reject(error);
  }

  /** Writes the waiting requests to the process, starting it afresh first when its file is long and nothing is in flight. */
  private send(): void {
    if (this.waiting.length === 0) return;
    if (this.spool !== null && this.spool.at >= this.rotateBytes) {
      if (this.inFlight.length > 0) return; // sent once those are read
      this.close();
    }
    let s: Spool;
    try {
      s = this.current();
    } catch (e) {
      for (const r of this.waiting.splice(0)) r.reject(e as Error);
      return;
    }
    const lines = this.waiting.map((r) => `${r.name}\n`).join('');
    this.inFlight.push(...this.waiting.splice(0));
    s.requests.write(lines);
  }

  private current(): Spool {
    if (this.spool !== null) return this.spool;
    const path = join(tmpdir(), `rift-cat-file-${process.pid}-${randomBytes(6).toString('hex')}`);
    let fd: number;
    try {
      fd = openSync(path, 'wx+', 0o600);
    } catch (e) {
      throw new SpoolUnavailable(`no spool file in ${tmpdir()}: ${(e as Error).message}`);
    }
    try {
      unlinkSync(path);
    } catch {
      // Left behind at worst; the name is never reused.
    }
    let proc: ChildProcess;
    try {
      proc = spawn('git', ['cat-file', '--batch'], { cwd: this.cwd, env: this.env(), stdio: ['pipe', fd, 'ignore'] });
    } catch (e) {
      closeSync(fd);
      throw e;
    }
    const s: Spool = { proc, requests: proc.stdin!, fd, at: 0, exited: false };
    this.started++;
    proc.on('error', () => (s.exited = true));
    proc.on('exit', () => (s.exited = true));
    s.requests.on('error', () => {}); // seen as the exit
    proc.unref();
    this.spool = s;
    return s;
  }

  /** Answers the requests in flight in order, from the file, as git writes it. */
  private async read(): Promise<void> {
    if (this.reading) return;
    this.reading = true;
    try {
      while (this.inFlight.length > 0) {
        // Requests in flight are always the current process's: closing one fails them all.
        const s = this.spool!;
        const r = this.inFlight[0];
        try {
          const answer = await this.answer(s, r);
          if (this.inFlight[0] !== r) continue; // closed meanwhile: it has failed already
          this.inFlight.shift();
          r.resolve(answer);
        } catch (e) {
          if (this.inFlight[0] !== r) continue;
          // The process ended early: what was sent to it fails; requests waiting go to another.
          this.close(e as Error);
        }
        if (this.inFlight.length === 0) this.send();
      }
    } finally {
      this.reading = false;
    }
    if (this.inFlight.length > 0) void this.read();
  }

  /** One answer: `<oid> <type> <size>\n<bytes>\n`, or `<name> missing\n` (null). */
  private async answer(s: Spool, r: Request): Promise<BatchObject | null> {
    let line = -1;
    let got = 0;
    for (let spins = 0; ; spins++) {
      got = readSync(s.fd, this.header, 0, this.header.length, s.at);
      line = this.header.subarray(0, got).indexOf(0x0a);
      if (line >= 0) break;
      if (got === this.header.length) throw this.failure('an answer header past 512 bytes');
      await this.wait(s, spins, s.at + got + 1);
    }
    const head = batchHeader(this.header.toString('latin1', 0, line));
    s.at += line + 1;
    if (head === null) return null;
    const size = head.size;
    const bytes = r.buffer(size);
    let filled = 0;
    for (let spins = 0; filled < size; spins++) {
      const n = readSync(s.fd, bytes, filled, size - filled, s.at + filled);
      filled += n;
      if (filled < size && n === 0) await this.wait(s, spins, s.at + size);
    }
    s.at += size + 1; // and the closing newline
    return { oid: head.oid, type: head.type, bytes };
  }

  /**
   * Waits for git to write more, up to `needed` bytes of the file: a turn of the event loop at
   * first, then POLL_MS; throws once git has exited without writing them.
   */
  private async wait(s: Spool, spins: number, needed: number): Promise<void> {
    if (s.exited && fstatSync(s.fd).size < needed) throw this.failure('the process ended');
    if (spins < SPINS) await new Promise<void>((resolve) => setImmediate(resolve));
    else await new Promise<void>((resolve) => setTimeout(resolve, POLL_MS));
  }

  private failure(detail: string): RiftError {
    return new RiftError('internal_error', [
      ['operation', 'git cat-file --batch'],
      ['detail', detail],
    ]);
  }
}
