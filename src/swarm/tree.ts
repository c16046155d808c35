import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { runGit, type GitRun } from '../history/git.ts';
import { ensureStateDir, STATE_DIR } from '../workspace/state-dir.ts';

// Where a swarm candidate works. `CandidateTree` is the seam: the command and the merge only
// create a tree, hand its root to the candidate, take its change as a patch and remove it.
// Today the trees are detached git worktrees; projections can take their place behind the
// same four calls without the command's interface changing.

export const WORKTREES_DIR = join(STATE_DIR, 'worktrees');
export const PATCHES_DIR = join(STATE_DIR, 'patches');

/** What `git add -A` leaves out of a candidate's patch: caches a run leaves behind, and rift's own state. */
const NOISE = [':(glob,exclude)**/__pycache__/**', ':(glob,exclude)**/*.pyc', ':(glob,exclude)**/node_modules/**', ':(glob,exclude).rift/**'];

export interface CandidatePatch {
  /** `git diff --binary` of the candidate's change against the commit it started from. */
  patch: Buffer;
  /** `git diff --stat` of the same change. */
  diffstat: string;
  filesChanged: number;
}

export interface CandidateTree {
  readonly name: string;
  /** The directory the candidate works in. */
  readonly root: string;
  /** The candidate's change so far, binary-safe, cache noise excluded. */
  diff(): Promise<CandidatePatch>;
  /** Removes the tree and everything in it. */
  remove(): Promise<void>;
}

export interface CandidateTrees {
  create(ordinal: number, name: string): Promise<CandidateTree>;
}

export class SwarmRefusal extends Error {}

function must(r: GitRun, what: string): string {
  if (r.code !== 0) throw new SwarmRefusal(`${what} failed: ${r.stderr.trim() || `git exited ${r.code}`}`);
  return r.stdout.toString('utf8').trim();
}

/** The repository's top level for `cwd`, checked to have a HEAD commit (reference B.14). */
export async function repositoryRoot(cwd: string): Promise<{ root: string; head: string }> {
  const top = await runGit(cwd, ['rev-parse', '--show-toplevel']);
  if (top.code !== 0) throw new SwarmRefusal(`${cwd} is not inside a git repository; rift swarm runs candidates in git worktrees — run \`git init\` and commit, or start it inside a repository`);
  const root = top.stdout.toString('utf8').trim();
  const head = await runGit(root, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
  if (head.code !== 0) throw new SwarmRefusal(`the repository at ${root} has no commit yet; candidates start from HEAD — commit once (\`git commit --allow-empty -m init\`) and run it again`);
  return { root, head: head.stdout.toString('utf8').trim() };
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
}

class Worktree implements CandidateTree {
  constructor(
    private readonly repo: string,
    readonly name: string,
    readonly root: string,
    private readonly base: string,
  ) {}

  async diff(): Promise<CandidatePatch> {
    must(await runGit(this.root, ['add', '-A', '--', '.', ...NOISE]), 'git add -A');
    const range = ['--cached', '--no-renames', this.base, '--', '.', ...NOISE];
    const patch = await runGit(this.root, ['diff', '--binary', ...range]);
    must(patch, 'git diff --binary');
    const stat = must(await runGit(this.root, ['diff', '--stat', ...range]), 'git diff --stat');
    const names = must(await runGit(this.root, ['diff', '--name-only', '-z', ...range]), 'git diff --name-only');
    return { patch: patch.stdout, diffstat: stat, filesChanged: names.split('\0').filter(Boolean).length };
  }

  async remove(): Promise<void> {
    await runGit(this.repo, ['worktree', 'remove', '--force', this.root]);
    rmSync(this.root, { recursive: true, force: true });
    await runGit(this.repo, ['worktree', 'prune']);
  }
}

/** Removes every candidate tree and saved patch: `--cleanup`, and the start of a new swarm (which replaces the last). */
export async function clearSwarm(repo: string): Promise<void> {
  await removeAllTrees(repo);
  rmSync(join(repo, PATCHES_DIR), { recursive: true, force: true });
}

/** Removes every candidate tree under `.rift/worktrees/` (and git's records of them). */
async function removeAllTrees(repo: string): Promise<void> {
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
