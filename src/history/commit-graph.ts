import { spawn } from 'node:child_process';
import { lstatSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import { COMMIT_GRAPH_RETRY_MS } from '../core/limits.ts';
import { log } from '../core/log.ts';
import { STATE_DIR } from '../workspace/state-dir.ts';

// A commit-graph with changed-path Bloom filters, kept by rift in an object directory of its own
// (`.rift/git`) and handed to `git log` as an alternate object directory: a path's history then
// skips, without reading their trees, the commits a filter says did not touch it (mypy, 13,700
// commits: `git log -- mypy/build.py` 130 -> 60 ms). Git reads a graph from the repository's
// own object directory first, so a repository that keeps one is read as it is. The repository
// is never written: the graph lives beside the store, is written in the background at low
// priority (incrementally, `--split`), and a graph that is missing or behind is only slower —
// git reads the commits it does not cover from the repository.

/** The file recording which commit the graph was last brought up to. */
const HEAD_FILE = 'rift-graph-head';

/** The directories from the workspace's state folder down to where git keeps the graph. */
const DIRS = [STATE_DIR, 'git', 'info', 'commit-graphs'];

export class CommitGraph {
  /** The write in progress, if any. */
  private writing = false;
  private lastAttempt = Number.NEGATIVE_INFINITY;
  /** rift's object directory: `<root>/.rift/git`. */
  private readonly dir: string;

  /** `root`: the workspace root, where git runs; `env`: git's environment, without the alternate. */
  constructor(
    private readonly root: string,
    private readonly env: () => NodeJS.ProcessEnv,
  ) {
    this.dir = join(root, STATE_DIR, 'git');
  }

  /**
   * Git's environment with the graph's directory as an alternate, once a graph is written there
   * (git's list separator and quoting characters in the path keep it out).
   */
  logEnv(): NodeJS.ProcessEnv {
    const env = this.env();
    if (this.usable() && this.directories(false) && isFile(join(this.dir, 'info', 'commit-graphs', 'commit-graph-chain'))) env.GIT_ALTERNATE_OBJECT_DIRECTORIES = this.dir;
    return env;
  }

  /**
   * Whether every directory from the state folder down to the graph's is a real directory of the
   * workspace (a cloned repository may carry a link there: nothing is read or written through
   * one); `create` makes the missing ones.
   */
  private directories(create: boolean): boolean {
    let dir = this.root;
    for (const name of DIRS) {
      dir = join(dir, name);
      try {
        if (!lstatSync(dir).isDirectory()) return false;
      } catch {
        if (!create || name === STATE_DIR) return false;
        try {
          mkdirSync(dir);
        } catch {
          return false;
        }
      }
    }
    return true;
  }

  /**
   * Brings the graph up to `head` in the background when it was last written for another commit
   * (at most once per COMMIT_GRAPH_RETRY_MS, one write at a time); failures (an old git, a
   * read-only `.rift`, a shallow clone, another process writing) leave the walks as they were.
   * Resolves when the write has ended: true when a graph was written (callers need not wait).
   */
  refresh(head: string): Promise<boolean> {
    if (this.writing || !this.usable() || performance.now() - this.lastAttempt < COMMIT_GRAPH_RETRY_MS) return Promise.resolve(false);
    if (this.writtenFor() === head) return Promise.resolve(false);
    this.lastAttempt = performance.now();
    if (!this.directories(true)) return Promise.resolve(false);
    this.writing = true;
    const started = performance.now();
    const proc = spawn('git', ['commit-graph', 'write', '--reachable', '--changed-paths', '--split', '--object-dir', this.dir], {
      cwd: this.root,
      env: { ...this.env(), GIT_ALTERNATE_OBJECT_DIRECTORIES: this.dir },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    if (proc.pid !== undefined) {
      try {
        setPriority(proc.pid, 19);
      } catch {
        // Not permitted here: it runs at normal priority.
      }
    }
    // A one-shot command does not wait for it (an orphaned write still completes).
    proc.unref();
    (proc.stderr as unknown as { unref?: () => void }).unref?.();
    let stderr = '';
    proc.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 1024) stderr += chunk.toString('utf8');
    });
    return new Promise<boolean>((resolve) => {
      const done = (ok: boolean) => {
        this.writing = false;
        if (ok) {
          try {
            const tmp = join(this.dir, 'info', `${HEAD_FILE}.${process.pid}`);
            writeFileSync(tmp, `${head}\n`);
            renameSync(tmp, join(this.dir, 'info', HEAD_FILE));
          } catch {
            // Written again next time.
          }
        }
        log('debug', 'history.graph', ok ? 'commit graph written' : 'commit graph not written', { ms: Math.round(performance.now() - started), ...(ok ? {} : { detail: stderr.trim().slice(0, 200) }) });
        resolve(ok);
      };
      proc.on('error', () => done(false));
      proc.on('close', (code) => done(code === 0));
    });
  }

  /** The commit the graph was last written for, or null. */
  private writtenFor(): string | null {
    const file = join(this.dir, 'info', HEAD_FILE);
    if (!this.directories(false) || !isFile(file)) return null;
    try {
      return readFileSync(file, 'utf8').trim();
    } catch {
      return null;
    }
  }

  /** Whether git can take the directory as an alternate: no list separator, no leading quote. */
  private usable(): boolean {
    return !this.dir.includes(':') && !this.dir.startsWith('"');
  }
}

/** Whether `path` is a regular file (not a link to one). */
function isFile(path: string): boolean {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
}
