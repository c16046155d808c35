import { spawn, execFile, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { RiftError, limitExceeded } from '../core/errors.ts';
import { GIT_OUTPUT_BYTES_MAX, REVISION_TREE_ENTRIES_MAX } from '../core/limits.ts';
import { CommitGraph } from './commit-graph.ts';
import type { Feed } from './feed.ts';
import { batchHeader, SpooledCatFile, SpoolUnavailable, type BatchObject } from './spool.ts';

// Git access through the git CLI only: one long-lived `cat-file --batch-check` per repository
// resolves revisions (it reads refs afresh on every request, loose or packed, in a worktree or
// not, so a moved branch is seen at once, and no process is started per read), one long-lived
// `cat-file --batch` serves object bytes, `ls-tree` lists a commit's tree and `log
// --first-parent` walks a path's history. Nothing is checked out and nothing is written in the
// repository (a commit-graph for the walks lives in rift's own directory: commit-graph.ts).

/** A git process reads only the repository it is pointed at: no inherited GIT_* redirection. */
function gitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
  env.GIT_TERMINAL_PROMPT = '0';
  env.GIT_OPTIONAL_LOCKS = '0';
  env.LC_ALL = 'C';
  return env;
}

/** Whether `dir` or a directory above it holds `.git` (a directory, or a worktree's `.git` file). */
export function findRepositoryRoot(dir: string): string | null {
  for (;;) {
    if (existsSync(join(dir, '.git'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

export interface TreeEntry {
  /** Workspace-relative path (the repository prefix above the workspace removed). */
  path: string;
  oid: string;
  size: number;
}

/** A path whose file differs between two commits: its blob in the second, null when it holds no regular file there. */
export interface TreeChange {
  path: string;
  oid: string | null;
}

export interface LogEntry {
  commit: string;
  /** Committer time, strict ISO 8601 (RFC 3339). */
  timestamp: string;
  author: string;
  summary: string;
  /** The path's blob after the commit; null when the commit deleted it. */
  blob: string | null;
}

export type Resolution = { ok: true; commit: string } | { ok: false; kind: string | null };

interface Pending {
  resolve: (value: BatchObject | null) => void;
  reject: (e: Error) => void;
  pool?: BufferPool;
}

/**
 * Buffers handed back by a reader that is done with them, read into again. A history walk reads
 * hundreds of versions of one file, each into a buffer of its size; fresh memory costs a page
 * fault per 4 KiB on first touch (a third of the time spent moving the bytes), while the walk
 * holds only a few versions at once, so a handful of buffers serve the whole walk.
 */
export class BufferPool {
  private readonly free: Buffer[] = [];
  /** What this pool allocated: nothing else is ever taken back. */
  private readonly own = new WeakSet<ArrayBufferLike>();

  /** A buffer of exactly `size` bytes (a view of a kept one when one is large enough). */
  take(size: number): Buffer {
    let best = -1;
    for (let i = 0; i < this.free.length; i++) {
      const b = this.free[i];
      if (b.length >= size && (best < 0 || b.length < this.free[best].length)) best = i;
    }
    if (best >= 0) return this.free.splice(best, 1)[0].subarray(0, size);
    // Room to grow: a file's next version is usually a little longer.
    const fresh = Buffer.allocUnsafeSlow(Math.ceil((size + (size >> 3)) / 4096) * 4096);
    this.own.add(fresh.buffer);
    return fresh.subarray(0, size);
  }

  /** Hands back a buffer `take` gave (or a view of it); nothing may read it afterwards. */
  give(bytes: Uint8Array): void {
    if (!this.own.has(bytes.buffer) || this.free.length >= POOL_BUFFERS_MAX || this.free.some((b) => b.buffer === bytes.buffer)) return;
    this.free.push(Buffer.from(bytes.buffer, 0, bytes.buffer.byteLength));
  }
}

/** Buffers a pool keeps (a walk holds its read-ahead window and two versions). */
const POOL_BUFFERS_MAX = 48;

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Logs of a path a repository keeps (see `Repository.logEntries`), and for how long. */
const LOGS_KEPT = 16;
const LOG_KEPT_MS = 60_000;

/** Blobs a history walk keeps requested ahead of the one it reads. */
const BLOB_WINDOW = 32;

/**
 * One long-lived `git cat-file --batch` (objects with their bytes) or `--batch-check` (type and
 * size only). Requests are written as they come and answered in order, so many in flight
 * pipeline through one process. Each object's bytes are copied once into a buffer of the size
 * its header announces, however the output is chunked.
 */
class CatFile {
  private proc: ChildProcessWithoutNullStreams | null = null;
  private readonly queue: Pending[] = [];
  /** A header line still arriving, in pieces. */
  private head: Buffer[] = [];
  /** The object whose bytes are arriving: its header, its buffer (size + the closing LF), bytes filled. */
  private body: { oid: string; type: string; bytes: Buffer; filled: number } | null = null;

  constructor(
    private readonly cwd: string,
    private readonly mode: '--batch' | '--batch-check',
  ) {}

  /** `pool`, when given, provides the buffer the object's bytes are read into. */
  request(name: string, pool?: BufferPool): Promise<BatchObject | null> {
    const proc = this.process();
    return new Promise((resolve, reject) => {
      this.queue.push({ resolve, reject, pool });
      proc.stdin.write(`${name}\n`);
    });
  }

  /** Starts the process ahead of the first request (its start then overlaps other work). */
  start(): void {
    this.process();
  }

  private process(): ChildProcessWithoutNullStreams {
    if (this.proc) return this.proc;
    const proc = spawn('git', ['cat-file', this.mode], { cwd: this.cwd, env: gitEnv(), stdio: 'pipe' });
    proc.stdout.on('data', (chunk: Buffer) => this.read(chunk));
    const fail = (e: Error) => {
      if (this.proc === proc) this.proc = null;
      this.head = [];
      this.body = null;
      for (const p of this.queue.splice(0)) p.reject(e);
    };
    proc.on('error', fail);
    proc.on('exit', () => fail(new RiftError('internal_error', [['operation', `git cat-file ${this.mode}`], ['detail', 'the process ended']])));
    proc.stdin.on('error', () => {}); // the exit handler reports it
    proc.unref();
    (proc.stdout as unknown as { unref?: () => void }).unref?.();
    this.proc = proc;
    return proc;
  }

  /** Answers queued requests from the output: `<oid> <type> <size>\n[<bytes>\n]` or `<name> missing\n`. */
  private read(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      const body = this.body;
      if (body) {
        const take = Math.min(body.bytes.length - body.filled, chunk.length - at);
        chunk.copy(body.bytes, body.filled, at, at + take);
        body.filled += take;
        at += take;
        if (body.filled < body.bytes.length) return;
        this.body = null;
        this.queue.shift()?.resolve({ oid: body.oid, type: body.type, bytes: body.bytes.subarray(0, body.bytes.length - 1) });
        continue;
      }
      const nl = chunk.indexOf(0x0a, at);
      if (nl < 0) {
        this.head.push(chunk.subarray(at));
        return;
      }
      this.head.push(chunk.subarray(at, nl));
      at = nl + 1;
      const header = (this.head.length === 1 ? this.head[0] : Buffer.concat(this.head)).toString('latin1');
      this.head = [];
      const head = batchHeader(header);
      if (head === null) {
        this.queue.shift()?.resolve(null);
        continue;
      }
      const { oid, type, size } = head;
      if (this.mode === '--batch-check') this.queue.shift()?.resolve({ oid, type, bytes: Buffer.alloc(0) });
      else this.body = { oid, type, bytes: this.queue[0]?.pool?.take(size + 1) ?? Buffer.allocUnsafe(size + 1), filled: 0 };
    }
  }

  close(): void {
    this.proc?.stdin.end();
    this.proc = null;
  }
}

export class Repository {
  private readonly objects: CatFile;
  /** Name resolution has a process of its own, so it never waits behind a snapshot's blob reads. */
  private readonly names: CatFile;

  private constructor(
    /** The directory git runs in: the workspace root. */
    readonly cwd: string,
    /** The workspace's path inside the repository, `''` at the top or `dir/` below it. */
    readonly prefix: string,
    /** Whether the logs read a commit-graph rift keeps in the workspace's state folder (see commit-graph.ts). */
    graph = false,
  ) {
    this.objects = new CatFile(cwd, '--batch');
    this.names = new CatFile(cwd, '--batch-check');
    this.versions = new SpooledCatFile(cwd, gitEnv);
    this.graph = graph ? new CommitGraph(cwd, gitEnv) : null;
  }

  private readonly graph: CommitGraph | null;
  /** A history walk's versions of a file, read ahead through a file rather than a pipe (see spool.ts). */
  private readonly versions: SpooledCatFile;

  /** The repository at `root` whose `prefix` is already known (as `open` found it). */
  static at(root: string, prefix: string): Repository {
    return new Repository(root, prefix);
  }

  /**
   * The repository holding `root`, or null when there is none; with `graph`, its history walks
   * read a commit-graph rift keeps in `root`'s state folder (see commit-graph.ts).
   */
  static async open(root: string, graph = false): Promise<Repository | null> {
    if (findRepositoryRoot(root) === null) return null;
    try {
      const prefix = (await git(root, ['rev-parse', '--show-prefix'])).toString('utf8').trim();
      return new Repository(root, prefix, graph);
    } catch {
      return null;
    }
  }

  /**
   * Resolves a spelling (branch, tag, full or short commit id) to a commit. Not a commit:
   * `kind` names what it resolved to, or is null when nothing resolves (unborn HEAD included).
   */
  async resolve(rev: string): Promise<Resolution> {
    // `rev` matched the revision grammar (no whitespace), so it is one batch request; read from
    // stdin, it can never be taken for an option. `^{}` peels annotated tags (a tag serves as a
    // revision when what it finally names is a commit).
    const object = await this.names.request(`${rev}^{}`);
    if (!object) return { ok: false, kind: null };
    return object.type === 'commit' ? { ok: true, commit: object.oid } : { ok: false, kind: object.type };
  }

  /**
   * One object through the long-lived batch process, named by id or by any revision expression
   * git resolves; null when missing (or ambiguous).
   */
  object(name: string): Promise<BatchObject | null> {
    return this.objects.request(name);
  }

  /** A blob's bytes (read into a buffer of `pool` when given); null when the object is missing or not a blob. */
  async blob(oid: string, pool?: BufferPool): Promise<Buffer | null> {
    const o = await this.objects.request(oid, pool);
    return o && o.type === 'blob' ? o.bytes : null;
  }

  /**
   * The regular files of a commit's tree inside the workspace: symlinks and submodules are
   * skipped. Refuses a tree over the entry bound and a path that is not UTF-8.
   */
  async tree(commit: string): Promise<TreeEntry[]> {
    const args = ['ls-tree', '-r', '-z', '-l', '--full-tree', commit];
    if (this.prefix) args.push('--', this.prefix);
    const out = await git(this.cwd, args);
    const entries: TreeEntry[] = [];
    let count = 0;
    let at = 0;
    while (at < out.length) {
      const end = out.indexOf(0, at);
      const record = out.subarray(at, end < 0 ? out.length : end);
      at = end < 0 ? out.length : end + 1;
      const tab = record.indexOf(0x09);
      const [mode, type, oid, size] = record.subarray(0, tab).toString('latin1').split(/ +/);
      count++;
      if (count > REVISION_TREE_ENTRIES_MAX) throw limitExceeded('revision_tree_entries', REVISION_TREE_ENTRIES_MAX, count, [['commit', commit]]);
      // 120000 is a symbolic link, 160000 (type commit) a submodule: neither is source here.
      if (type !== 'blob' || mode === '120000') continue;
      let full: string;
      try {
        full = fatalUtf8.decode(record.subarray(tab + 1));
      } catch {
        throw new RiftError('unsupported_path', [
          ['commit', commit],
          ['path', JSON.stringify(record.subarray(tab + 1).toString('latin1'))],
          ['violation', 'not_utf8'],
        ]);
      }
      entries.push({ path: full.slice(this.prefix.length), oid, size: Number(size) });
    }
    return entries;
  }

  /**
   * The workspace's files that differ between two commits' trees: each path with its blob in
   * `to`, or null where `to` holds no regular file (deleted, or now a symbolic link or
   * submodule). The trees are compared as git compares them, reading through the batch process
   * only the subtrees whose ids differ, so nearby commits cost a few object reads and no
   * process start. Refuses a path that is not UTF-8.
   */
  async treeChanges(from: string, to: string): Promise<TreeChange[]> {
    const [a, b] = await Promise.all([this.workspaceTree(from), this.workspaceTree(to)]);
    const changes: TreeChange[] = [];
    await this.diffTrees(a, b, '', to, changes);
    return changes;
  }

  /** The id of the tree holding the workspace in `commit`, or null when it has none. */
  private async workspaceTree(commit: string): Promise<string | null> {
    const c = await this.object(commit);
    if (!c || c.type !== 'commit') throw new Error(`not a commit: ${commit}`);
    let tree: string | null = /^tree ([0-9a-f]+)$/m.exec(c.bytes.toString('latin1'))?.[1] ?? null;
    for (const part of this.prefix.split('/').filter((p) => p !== '')) {
      if (tree === null) return null;
      const entry = (await this.treeEntries(tree)).get(part);
      tree = entry?.mode === '40000' ? entry.oid : null;
    }
    return tree;
  }

  /** A tree object's entries by name (raw bytes decoded as latin1, so any name round-trips). */
  private async treeEntries(oid: string): Promise<Map<string, { mode: string; oid: string }>> {
    const o = await this.object(oid);
    if (!o || o.type !== 'tree') throw new Error(`not a tree: ${oid}`);
    const entries = new Map<string, { mode: string; oid: string }>();
    // `<mode> <name>` NUL, then the 20-byte binary id, per entry.
    for (let at = 0; at < o.bytes.length; ) {
      const space = o.bytes.indexOf(0x20, at);
      const nul = o.bytes.indexOf(0, space);
      entries.set(o.bytes.toString('latin1', space + 1, nul), { mode: o.bytes.toString('latin1', at, space), oid: o.bytes.toString('hex', nul + 1, nul + 21) });
      at = nul + 21;
    }
    return entries;
  }

  private async diffTrees(a: string | null, b: string | null, dir: string, commit: string, out: TreeChange[]): Promise<void> {
    if (a === b) return;
    const [ea, eb] = await Promise.all([a ? this.treeEntries(a) : new Map(), b ? this.treeEntries(b) : new Map()]);
    const nested: Array<Promise<void>> = [];
    for (const name of new Set([...ea.keys(), ...eb.keys()])) {
      const x = ea.get(name);
      const y = eb.get(name);
      if (x && y && x.mode === y.mode && x.oid === y.oid) continue;
      let path: string;
      try {
        path = dir + fatalUtf8.decode(Buffer.from(name, 'latin1'));
      } catch {
        throw new RiftError('unsupported_path', [['commit', commit], ['path', JSON.stringify(dir + name)], ['violation', 'not_utf8']]);
      }
      const xTree = x?.mode === '40000' ? x.oid : null;
      const yTree = y?.mode === '40000' ? y.oid : null;
      if (xTree !== null || yTree !== null) nested.push(this.diffTrees(xTree, yTree, `${path}/`, commit, out));
      // A regular file is 100644 or 100755; a link (120000) or submodule (160000) holds none.
      const regular = y !== undefined && y.mode.startsWith('100');
      const was = x !== undefined && x.mode !== '40000';
      if (regular || was) out.push({ path, oid: regular ? y.oid : null });
    }
    await Promise.all(nested);
  }

  /** Starts the blob reader now, for reads about to come (a history walk waiting for its first version). */
  prepareReads(): void {
    if (this.spooling) {
      try {
        this.versions.start();
        return;
      } catch (e) {
        if (!(e instanceof SpoolUnavailable)) throw e;
        this.spooling = false;
      }
    }
    this.objects.start();
  }

  /**
   * A version of a file for a history walk, read ahead through the walk's spool (see spool.ts),
   * or through the batch process's pipe where no spool file can be made; null when missing or
   * not a blob.
   */
  async version(oid: string, pool?: BufferPool): Promise<Buffer | null> {
    if (this.spooling) {
      try {
        const o = await this.versions.request(oid, pool ? (size) => pool.take(size) : undefined);
        return o && o.type === 'blob' ? o.bytes : null;
      } catch (e) {
        if (!(e instanceof SpoolUnavailable)) throw e;
        this.spooling = false;
      }
    }
    return this.blob(oid, pool);
  }

  /** Whether walks read through the spool (until no spool file can be made). */
  private spooling = true;

  /**
   * Commits touching `path` (workspace-relative) along first parents from `commit`, newest
   * first, at most `max`, each with the path's blob after it — as git finds them (a long
   * history's first commits are read while git still walks the older ones); rejects after the
   * last when git fails.
   */
  async *logEntries(commit: string, path: string, max: number): AsyncGenerator<LogEntry> {
    // A commit's history never changes, so a log read to its end is kept a while: the walks of
    // several declarations of one file (the hits of one get_symbol, or an agent's questions in
    // a row) list it once. Kept briefly, as deepening a shallow clone does lengthen it.
    const key = `${commit}\0${path}`;
    const kept = this.logs.get(key);
    if (kept !== undefined && performance.now() - kept.at < LOG_KEPT_MS && (kept.max >= max || kept.entries.length < kept.max)) {
      yield* kept.entries.slice(0, max);
      return;
    }
    const entries: LogEntry[] = [];
    for await (const e of this.readLog(commit, path, max)) {
      entries.push(e);
      yield e;
    }
    this.logs.delete(key);
    this.logs.set(key, { at: performance.now(), max, entries });
    for (const old of this.logs.keys()) {
      if (this.logs.size <= LOGS_KEPT) break;
      this.logs.delete(old);
    }
  }

  /** Logs read to their end, by commit and path (oldest first), with the bound each was read with. */
  private readonly logs = new Map<string, { at: number; max: number; entries: LogEntry[] }>();

  private async *readLog(commit: string, path: string, max: number): AsyncGenerator<LogEntry> {
    // This walk reads the graph written so far; the next ones read one brought up to `commit`.
    const env = this.graph?.logEnv() ?? gitEnv();
    void this.graph?.refresh(commit);
    const proc = spawn(
      'git',
      [
        // A merge is compared with its first parent (the default for --first-parent since git
        // 2.31, stated so a merge always has its raw line); no external diff or text conversion.
        '-c', 'core.quotePath=false', 'log', '--first-parent', '--diff-merges=first-parent', '--no-renames', '--no-ext-diff', '--no-textconv',
        '--raw', '--no-abbrev', `-n${max}`,
        '--format=%x01%H%x00%cI%x00%an%x00%s', commit, '--', `:(literal,top)${this.prefix}${path}`,
      ],
      { cwd: this.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    proc.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString('utf8');
    });
    const exited = new Promise<number | null>((resolve, reject) => {
      proc.on('error', reject);
      proc.on('close', (code) => resolve(code));
    });
    exited.catch(() => undefined); // awaited below
    const decoder = new StringDecoder('utf8');
    // Each record starts with \x01; the last one read is whole only once the next one starts.
    let open = '';
    try {
      for await (const chunk of proc.stdout as AsyncIterable<Buffer>) {
        const records = (open + decoder.write(chunk)).split('\x01');
        open = records.pop()!;
        for (const record of records) if (record !== '') yield logEntry(record);
      }
      open += decoder.end();
      const code = await exited;
      if (code !== 0) throw new Error(`git log failed (exit code ${code}): ${stderr.trim()}`);
      if (open !== '') yield logEntry(open);
    } finally {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill();
    }
  }

  /**
   * The blobs of `ids` in order, nulls passed over, read ahead through the walks' spool (see
   * spool.ts) `window` at a time (requests are pipelined, so reading many costs one round trip
   * per window, not per blob), each into a buffer of `pool` when given. Ids may still be
   * arriving. The spool is closed once no reader holds it.
   */
  async *blobs(ids: Feed<string | null>, pool?: BufferPool, window = BLOB_WINDOW): AsyncGenerator<Buffer | null> {
    const release = this.versions.hold();
    try {
      yield* this.readAhead(ids, pool, window);
    } finally {
      release();
    }
  }

  private async *readAhead(ids: Feed<string | null>, pool: BufferPool | undefined, window: number): AsyncGenerator<Buffer | null> {
    const pending: Array<Promise<Buffer | null>> = [];
    let next = 0;
    const fill = () => {
      for (; next < ids.items.length && pending.length < window; next++) {
        const id = ids.items[next];
        if (id === null) continue;
        const p = this.version(id, pool);
        p.catch(() => undefined); // awaited in order below
        pending.push(p);
      }
    };
    for (;;) {
      fill();
      if (pending.length === 0) {
        if (await ids.has(next)) continue;
        return;
      }
      const bytes = await pending.shift()!;
      fill();
      yield bytes;
    }
  }

  close(): void {
    this.objects.close();
    this.names.close();
    this.versions.close();
  }
}

/** One record of `log`'s output: the commit's fields, then its raw line for the one path asked for. */
function logEntry(record: string): LogEntry {
  const [commit, timestamp, author, rest] = record.split('\x00');
  const newline = rest.indexOf('\n');
  const summary = newline < 0 ? rest : rest.slice(0, newline);
  // `:<old mode> <new mode> <old oid> <new oid> <status>\t<path>`.
  const raw = /^:\d+ \d+ [0-9a-f]+ ([0-9a-f]+) ([A-Z])/m.exec(newline < 0 ? '' : rest.slice(newline));
  const blob = !raw || raw[2] === 'D' || /^0+$/.test(raw[1]) ? null : raw[1];
  return { commit, timestamp, author, summary, blob };
}

/** Runs one git command in `cwd`; rejects on a non-zero exit. */
function git(cwd: string, args: string[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, env: gitEnv(), encoding: 'buffer', maxBuffer: GIT_OUTPUT_BYTES_MAX }, (err, stdout) => {
      if (err) reject(err);
      else resolve(stdout);
    });
  });
}

export interface GitRun {
  code: number;
  stdout: Buffer;
  stderr: string;
}

/**
 * Runs one git command in `cwd` and reports how it ended (a non-zero exit is an answer, not a
 * failure); `env` adds variables (a scratch `GIT_INDEX_FILE`), `input` is written to stdin.
 */
export function runGit(cwd: string, args: string[], o: { env?: Record<string, string>; input?: Buffer } = {}): Promise<GitRun> {
  return new Promise((resolve, reject) => {
    const child = execFile('git', args, { cwd, env: { ...gitEnv(), ...o.env }, encoding: 'buffer', maxBuffer: GIT_OUTPUT_BYTES_MAX }, (err, stdout, stderr) => {
      const code = err ? (err as { code?: unknown }).code : 0;
      if (err && typeof code !== 'number') reject(err);
      else resolve({ code: code as number, stdout, stderr: stderr.toString('utf8') });
    });
    if (o.input) child.stdin?.end(o.input);
    else child.stdin?.end();
  });
}
