import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { runGit, type GitRun } from '../history/git.ts';
import { ensureStateDir, STATE_DIR } from '../workspace/state-dir.ts';

// Where a swarm candidate works. `CandidateTree` is the seam: the command and the merge only
// create a tree, hand its root (and environment) to the candidate, take its change as a patch
// and remove it. Two kinds stand behind it: detached git worktrees (here) and projections of
// the workspace (projection-tree.ts).

export const WORKTREES_DIR = join(STATE_DIR, 'worktrees');
export const PATCHES_DIR = join(STATE_DIR, 'patches');

/** What `git add -A` leaves out of a candidate's patch: caches a run leaves behind, and rift's own state. */
export const NOISE = [':(glob,exclude)**/__pycache__/**', ':(glob,exclude)**/*.pyc', ':(glob,exclude)**/node_modules/**', ':(glob,exclude).rift/**'];

export type TreeKind = 'projection' | 'worktree';

export interface CandidatePatch {
  /** `git diff --binary` of the candidate's change against the tree it started from. */
  patch: Buffer;
  /** `git diff --stat` of the same change. */
  diffstat: string;
  filesChanged: number;
}

/** What `rift merge` needs to know about a candidate's tree: `.rift/patches/<name>.json`. */
export interface TreeRecord {
  name: string;
  tree: TreeKind;
  root: string;
  /** The projection's id, for a projection. */
  projection: string | null;
  /** What the patch is a diff against: the commit a worktree was made at, or the git tree of a projection as it was made. */
  base: string;
}

export interface CandidateTree {
  readonly name: string;
  readonly kind: TreeKind;
  /** The directory the candidate works in. */
  readonly root: string;
  /** Variables the candidate's processes get on top of the swarm's environment. */
  readonly env: Readonly<Record<string, string>>;
  readonly record: TreeRecord;
  /** The candidate's change so far, binary-safe, cache noise excluded. */
  diff(): Promise<CandidatePatch>;
  /** Removes the tree and everything in it. */
  remove(): Promise<void>;
}

export interface CandidateTrees {
  readonly kind: TreeKind;
  create(ordinal: number, name: string): Promise<CandidateTree>;
  /** Releases what making trees needed; the trees made stay usable (diff, remove). */
  close(): Promise<void>;
}

export class SwarmRefusal extends Error {}

export function must(r: GitRun, what: string): string {
  if (r.code !== 0) throw new SwarmRefusal(`${what} failed: ${r.stderr.trim() || `git exited ${r.code}`}`);
  return r.stdout.toString('utf8').trim();
}

/** The repository's top level for `cwd`, checked to have a HEAD commit (reference B.14). */
export async function repositoryRoot(cwd: string): Promise<{ root: string; head: string }> {
  const top = await runGit(cwd, ['rev-parse', '--show-toplevel']);
  if (top.code !== 0) throw new SwarmRefusal(`${cwd} is not inside a git repository; rift swarm starts every candidate from the HEAD commit — run \`git init\` and commit, or start it inside a repository`);
  const root = top.stdout.toString('utf8').trim();
  const head = await runGit(root, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
  if (head.code !== 0) throw new SwarmRefusal(`the repository at ${root} has no commit yet; candidates start from HEAD — commit once (\`git commit --allow-empty -m init\`) and run it again`);
  return { root, head: head.stdout.toString('utf8').trim() };
}

/**
 * What `git status` reports in the workspace: changed, staged and untracked (not ignored)
 * paths — what a copy of the workspace holds that HEAD does not. `.rift/` is rift's own.
 */
export async function uncommittedPaths(root: string): Promise<string[]> {
  const r = await runGit(root, ['status', '--porcelain', '-z', '--untracked-files=normal', '--', '.', ':(exclude).rift']);
  must(r, 'git status');
  // Not trimmed: a record starts with its two status letters, the first often a space.
  const recs = r.stdout.toString('utf8').split('\0');
  const paths: string[] = [];
  for (let i = 0; i < recs.length; i++) {
    const rec = recs[i];
    if (rec.length < 4) continue;
    paths.push(rec.slice(3));
    // A rename or copy carries its source as the next record.
    if (rec[0] === 'R' || rec[0] === 'C') i++;
  }
  return paths;
}

/** Adds `.rift/worktrees/` and `.rift/patches/` to the repository's `info/exclude` once. */
export async function excludeSwarmDirs(root: string): Promise<void> {
  const common = must(await runGit(root, ['rev-parse', '--git-common-dir']), 'git rev-parse --git-common-dir');
  const info = join(isAbsolute(common) ? common : join(root, common), 'info');
  mkdirSync(info, { recursive: true });
  const file = join(info, 'exclude');
  const have = existsSync(file) ? readFileSync(file, 'utf8').split('\n') : [];
  const add = ['.rift/worktrees/', '.rift/patches/'].filter((l) => !have.includes(l));
  if (add.length > 0) appendFileSync(file, `${have.length > 0 && have.at(-1) !== '' ? '\n' : ''}${add.join('\n')}\n`);
}

/** Detached git worktrees at `.rift/worktrees/<ordinal>-<name>`, all at the commit the swarm started from. */
export class WorktreeTrees implements CandidateTrees {
  readonly kind = 'worktree';

  constructor(
    private readonly repo: string,
    private readonly head: string,
  ) {}

  async create(ordinal: number, name: string): Promise<CandidateTree> {
    ensureStateDir(this.repo);
    mkdirSync(join(this.repo, WORKTREES_DIR), { recursive: true });
    const root = join(this.repo, WORKTREES_DIR, `${ordinal}-${name}`);
    // A tree a killed swarm left behind makes way, and git forgets it.
    rmSync(root, { recursive: true, force: true });
    await runGit(this.repo, ['worktree', 'prune']);
    must(await runGit(this.repo, ['worktree', 'add', '--detach', '--quiet', root, this.head]), `git worktree add ${root}`);
    return new Worktree(this.repo, name, root, this.head);
  }

  async close(): Promise<void> {}
}

class Worktree implements CandidateTree {
  readonly kind = 'worktree';
  readonly env = {};

  constructor(
    private readonly repo: string,
    readonly name: string,
    readonly root: string,
    private readonly base: string,
  ) {}

  get record(): TreeRecord {
    return { name: this.name, tree: 'worktree', root: this.root, projection: null, base: this.base };
  }

  diff(): Promise<CandidatePatch> {
    return stagedDiff(this.root, this.base);
  }

  async remove(): Promise<void> {
    await runGit(this.repo, ['worktree', 'remove', '--force', this.root]);
    rmSync(this.root, { recursive: true, force: true });
    await runGit(this.repo, ['worktree', 'prune']);
  }
}

/**
 * Stages every change of the work tree (cache noise left out) and diffs the index against
 * `base` (a commit or a tree): binary-safe, without rename detection (one path per file).
 * `env` can name another work tree and index (`GIT_WORK_TREE`, `GIT_INDEX_FILE`).
 */
export async function stagedDiff(cwd: string, base: string, env: Record<string, string> = {}): Promise<CandidatePatch> {
  must(await runGit(cwd, ['add', '-A', '--', '.', ...NOISE], { env }), 'git add -A');
  const range = ['--cached', '--no-renames', base, '--', '.', ...NOISE];
  const patch = await runGit(cwd, ['diff', '--binary', ...range], { env });
  must(patch, 'git diff --binary');
  const stat = must(await runGit(cwd, ['diff', '--stat', ...range], { env }), 'git diff --stat');
  const names = must(await runGit(cwd, ['diff', '--name-only', '-z', ...range], { env }), 'git diff --name-only');
  return { patch: patch.stdout, diffstat: stat, filesChanged: names.split('\0').filter(Boolean).length };
}

/** Saves what `rift merge` needs to know about a candidate's tree. */
export function saveRecord(repo: string, record: TreeRecord): void {
  mkdirSync(join(repo, PATCHES_DIR), { recursive: true });
  writeFileSync(join(repo, PATCHES_DIR, `${record.name}.json`), `${JSON.stringify(record, null, 2)}\n`);
}

/** The record of candidate `name`'s tree, or null (none saved, or not one this version reads). */
export function readRecord(repo: string, name: string): TreeRecord | null {
  try {
    const r = JSON.parse(readFileSync(join(repo, PATCHES_DIR, `${name}.json`), 'utf8')) as Partial<TreeRecord>;
    if (typeof r.root !== 'string' || typeof r.base !== 'string' || (r.tree !== 'projection' && r.tree !== 'worktree')) return null;
    return { name, tree: r.tree, root: r.root, projection: typeof r.projection === 'string' ? r.projection : null, base: r.base };
  } catch {
    return null;
  }
}

/** Every candidate's tree record the last swarm saved. */
export function swarmRecords(repo: string): TreeRecord[] {
  const dir = join(repo, PATCHES_DIR);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => readRecord(repo, f.slice(0, -'.json'.length)))
    .filter((r): r is TreeRecord => r !== null);
}

/** Removes every candidate worktree under `.rift/worktrees/` (and git's records of them). */
export async function removeWorktrees(repo: string): Promise<void> {
  const dir = join(repo, WORKTREES_DIR);
  if (existsSync(dir)) {
    for (const entry of readdirSync(dir)) {
      await runGit(repo, ['worktree', 'remove', '--force', join(dir, entry)]);
      rmSync(join(dir, entry), { recursive: true, force: true });
    }
    rmSync(dir, { recursive: true, force: true });
  }
  await runGit(repo, ['worktree', 'prune']);
}
