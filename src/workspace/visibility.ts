import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { GlobSet } from '../core/glob.ts';
import type { WorkspaceConfig } from '../config/workspace-config.ts';
import { WORKSPACE_DEPTH_MAX } from '../core/limits.ts';
import { underFloor } from '../core/path.ts';
import { drainQueue } from './queue.ts';
import { specialMountsUnder } from './special-fs.ts';

// What is visible in a workspace (decisions.md, reference F.2 rules 15–19):
//   1. the floor: any segment named `.git` or `.rift` is never visible, under every setting;
//   2. `[source].exclude` hides what it matches (and everything below a matched directory);
//   3. a non-empty `[source].include` admits only what it matches (a directory stays
//      traversable while some include pattern could still match below it);
//   4. the workspace's own `.gitignore` files, root and nested, applied as git applies them
//      (negation, deeper files override shallower ones, nothing below an ignored directory
//      can be re-included). Never global excludes, `.git/info/exclude`, or files above root.
// Below the floor sit kernel pseudo-filesystems mounted inside the workspace (`proc`, `sys`
// … under a root of `/`): never visible, so nothing walks, watches or reads them.
// Dotfiles and dot-directories other than the floor are ordinary entries.

/** The `[source]` settings this layer needs, decoupled from the config loader. */
export interface SourcePolicy {
  include: readonly string[];
  exclude: readonly string[];
  respectGitignore: boolean;
  maxFileBytes: number;
  maxFiles: number;
}

/** The `[source]` table of a workspace configuration as this layer's policy. */
export function sourcePolicy(config: WorkspaceConfig): SourcePolicy {
  return {
    include: config.source.include,
    exclude: config.source.exclude,
    respectGitignore: config.source.respect_gitignore,
    maxFileBytes: config.source.max_file_bytes,
    maxFiles: config.source.max_files,
  };
}

const GITIGNORE = '.gitignore';
const DISCOVERY_CONCURRENCY = 32;

// A path rift cannot address is never visible: it could not be named in a request anyway
// (core/path.ts refuses these shapes), and `ignore` throws on some of them.
// eslint-disable-next-line no-control-regex
const UNADDRESSABLE = /[\u0000-\u001f\u007f\\]|^\/|\/\/|\/$|(?:^|\/)\.\.?(?:\/|$)/;

/** Escape a literal directory name for use inside a gitignore pattern. */
function escapeGitignoreLiteral(s: string): string {
  return s.replace(/[\\*?[\]!#]/g, (c) => `\\${c}`);
}

/**
 * Rewrite one line of `<dir>/.gitignore` as an equivalent pattern relative to the root, so
 * a chain of files can share one `ignore` instance (whose last-match-wins order then gives
 * deeper files precedence, and whose parent check forbids re-including below an ignored
 * directory, exactly as git does across files).
 */
export function rebaseGitignoreLine(line: string, dir: string): string | null {
  if (line.endsWith('\r')) line = line.slice(0, -1);
  if (line.length === 0 || line.startsWith('#')) return null;
  if (dir === '') return line;
  let negative = false;
  let body = line;
  if (body.startsWith('!')) {
    negative = true;
    body = body.slice(1);
  }
  // Trailing unescaped spaces are not part of the pattern.
  let trimmed = body;
  while (trimmed.endsWith(' ') && !trimmed.endsWith('\\ ')) trimmed = trimmed.slice(0, -1);
  if (trimmed.length === 0) return null;
  const core = trimmed.endsWith('/') ? trimmed.slice(0, -1) : trimmed;
  if (core.length === 0) return null;
  const prefix = '/' + dir.split('/').map(escapeGitignoreLiteral).join('/');
  const anchored = core.includes('/');
  const rebased = anchored ? `${prefix}/${body.replace(/^\/+/, '')}` : `${prefix}/**/${body}`;
  return (negative ? '!' : '') + rebased;
}

export class Visibility {
  readonly policy: SourcePolicy;
  private readonly include: GlobSet;
  private readonly exclude: GlobSet;
  /** Rebased rules of each directory holding a `.gitignore`, keyed by project path ('' = root). */
  private readonly gitignoreRules = new Map<string, string[]>();
  /** One `ignore` instance per gitignore directory, holding the rules of its whole chain. */
  private readonly chains = new Map<string, Ignore>();
  /** Project paths of special filesystems mounted below the root (see special-fs.ts). */
  private specialMounts: readonly string[] = [];

  private constructor(policy: SourcePolicy) {
    this.policy = policy;
    this.include = new GlobSet(policy.include);
    this.exclude = new GlobSet(policy.exclude);
  }

  /** Build the policy, reading every `.gitignore` inside the workspace that git would read. */
  static async load(root: string, policy: SourcePolicy): Promise<Visibility> {
    const v = Visibility.unread(root, policy);
    if (policy.respectGitignore) await v.discoverGitignores(root);
    return v;
  }

  /**
   * The policy before any `.gitignore` is read: a top-down walk reads each directory's file as
   * it reaches the directory (`readGitignoreIn`), before judging its entries (see walkVisible).
   */
  static unread(root: string, policy: SourcePolicy): Visibility {
    const v = new Visibility(policy);
    v.specialMounts = specialMountsUnder(root);
    return v;
  }

  /** Reads the `.gitignore` of the visible directory `dir` ('' = root), found there as a regular file. */
  async readGitignoreIn(root: string, dir: string): Promise<void> {
    try {
      this.addGitignore(dir, await readFile(join(root, dir, GITIGNORE), 'utf8'));
    } catch {
      // vanished or unreadable: git would read nothing either
    }
  }

  /**
   * A policy from explicit `.gitignore` contents (project-relative file paths), without I/O;
   * `specialMounts` are the root's special filesystems (`specialMountsUnder`), kept invisible.
   */
  static fromGitignores(policy: SourcePolicy, files: ReadonlyMap<string, string>, specialMounts: readonly string[] = []): Visibility {
    const v = new Visibility(policy);
    v.specialMounts = specialMounts;
    if (policy.respectGitignore) {
      for (const [path, text] of files) {
        if (!isGitignorePath(path)) continue;
        const dir = path === GITIGNORE ? '' : path.slice(0, -(GITIGNORE.length + 1));
        v.addGitignore(dir, text);
      }
    }
    return v;
  }

  /** The project paths of the `.gitignore` files in effect, sorted. */
  get gitignoreFiles(): string[] {
    return [...this.gitignoreRules.keys()].map((d) => (d === '' ? GITIGNORE : `${d}/${GITIGNORE}`)).sort();
  }

  /** Whether a project-relative path (a file unless `isDir`) is visible. The root ('') is. */
  isVisible(path: string, isDir = false): boolean {
    if (path === '') return true;
    if (UNADDRESSABLE.test(path)) return false;
    if (underFloor(path)) return false;
    if (this.specialMounts.length > 0 && this.onSpecialMount(path)) return false;
    if (this.exclude.matches(path, isDir)) return false;
    if (!this.include.empty && !this.included(path, isDir)) return false;
    if (this.gitignoreRules.size > 0 && this.gitignored(path, isDir)) return false;
    return true;
  }

  private onSpecialMount(path: string): boolean {
    return this.specialMounts.some((m) => path === m || (path.startsWith(m) && path.charCodeAt(m.length) === 0x2f));
  }

  private included(path: string, isDir: boolean): boolean {
    if (this.include.matches(path, isDir)) return true;
    return isDir && this.include.mayMatchBelow(path);
  }

  private gitignored(path: string, isDir: boolean): boolean {
    // The deepest directory above the path that holds a `.gitignore` carries the full chain.
    let dir = path;
    for (;;) {
      const slash = dir.lastIndexOf('/');
      dir = slash < 0 ? '' : dir.slice(0, slash);
      if (this.gitignoreRules.has(dir)) break;
      if (dir === '') return false;
    }
    return this.chain(dir).ignores(isDir ? `${path}/` : path);
  }

  private chain(dir: string): Ignore {
    let ig = this.chains.get(dir);
    if (ig) return ig;
    ig = ignore({ ignorecase: false });
    const ancestors: string[] = [''];
    if (dir !== '') {
      const segs = dir.split('/');
      for (let i = 1; i <= segs.length; i++) ancestors.push(segs.slice(0, i).join('/'));
    }
    for (const a of ancestors) {
      const rules = this.gitignoreRules.get(a);
      if (rules && rules.length > 0) ig.add(rules);
    }
    this.chains.set(dir, ig);
    return ig;
  }

  private addGitignore(dir: string, text: string): void {
    const rules: string[] = [];
    // git skips a leading UTF-8 byte order mark.
    for (const line of text.replace(/^\uFEFF/, '').split('\n')) {
      const r = rebaseGitignoreLine(line, dir);
      if (r !== null) rules.push(r);
    }
    this.gitignoreRules.set(dir, rules);
    // Chains below this directory (none exist during top-down discovery) would be stale.
    for (const key of [...this.chains.keys()]) {
      if (dir === '' || key === dir || key.startsWith(`${dir}/`)) this.chains.delete(key);
    }
  }

  /**
   * Top-down walk that reads `.gitignore` in every directory git would descend into: a
   * directory's own file is registered before any of its children is judged, so pruning by
   * the partial policy is exact. Symlinked `.gitignore` files are not followed (as git ≥ 2.32).
   */
  private async discoverGitignores(root: string): Promise<void> {
    const queue: { rel: string; depth: number }[] = [{ rel: '', depth: 0 }];
    await drainQueue(queue, DISCOVERY_CONCURRENCY, (job) => this.discoverDir(root, job.rel, job.depth, queue));
  }

  private async discoverDir(
    root: string,
    rel: string,
    depth: number,
    queue: { rel: string; depth: number }[],
  ): Promise<void> {
    let entries;
    try {
      entries = await readdir(rel === '' ? root : join(root, rel), { withFileTypes: true });
    } catch (e) {
      if (rel === '') throw e;
      return; // vanished or unreadable below the root: nothing to read there
    }
    if (holdsGitignore(entries)) await this.readGitignoreIn(root, rel);
    if (depth >= WORKSPACE_DEPTH_MAX) return;
    for (const e of entries) {
      if (!e.isDirectory()) continue;
      const child = rel === '' ? e.name : `${rel}/${e.name}`;
      if (this.isVisible(child, true)) queue.push({ rel: child, depth: depth + 1 });
    }
  }
}

/** Whether a directory's entries hold a `.gitignore` git would read (a regular file, not a symlink). */
export function holdsGitignore(entries: ReadonlyArray<{ name: string; isFile(): boolean }>): boolean {
  return entries.some((e) => e.name === GITIGNORE && e.isFile());
}

function isGitignorePath(path: string): boolean {
  return path === GITIGNORE || path.endsWith(`/${GITIGNORE}`);
}

/** Whether a change to this path changes the visibility policy itself (reload and rescan). */
export function isPolicyFile(path: string): boolean {
  return path === 'rift.toml' || isGitignorePath(path);
}
