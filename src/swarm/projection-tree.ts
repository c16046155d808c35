import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { RiftError } from '../core/errors.ts';
import { runGit } from '../history/git.ts';
import { Engine } from '../services/engine.ts';
import { PROJECTIONS_DIR } from '../services/projection-service.ts';
import { ensureStateDir } from '../workspace/state-dir.ts';
import { must, NOISE, PATCHES_DIR, stagedDiff, SwarmRefusal, swarmRecords, type CandidatePatch, type CandidateTree, type CandidateTrees, type TreeRecord } from './tree.ts';

// Candidates in projections (docs/projections.md): each works in its own copy of the workspace
// under `.rift/projections/prj_…/`, made by the workspace's engine — copy-on-write where the
// filesystem can, its index seeded from the workspace's, so a candidate's first code read parses
// nothing — and its change lands through `publish`, which refuses what the workspace changed
// meanwhile (merge.ts).
//
// Three things a projection does not give by itself, and how they are made to hold:
// - It copies the workspace as it is, not HEAD. The swarm refuses (or falls back to worktrees)
//   when the workspace has uncommitted changes, and every projection is checked to hold
//   exactly HEAD's tree: a projection leaves out what rift does not see (symlinks, files over
//   `[source].max_file_bytes`, `[source].exclude`), and a candidate there would miss it.
// - It has no `.git`, so git run inside it would walk up to the workspace's repository. A
//   candidate's processes get GIT_CEILING_DIRECTORIES at the workspace root: git started
//   anywhere below it finds no repository (only one a candidate makes in its own tree).
// - Its change is judged as a git patch. The tree it was made as is written to the workspace's
//   object store through a private index (`.rift/patches/<name>.index`), and the patch is the
//   projection's tree against it, the same `git diff --binary` as a worktree's.

/** The `reason` of a candidate's projection; `clearSwarm` also removes any a killed swarm left. */
const REASON = 'rift swarm candidate';

/** Cache noise a run may leave (NOISE's `.rift/` aside: rift never copies or publishes it). */
const NOISE_FILES = [':(glob)**/__pycache__/**', ':(glob)**/*.pyc', ':(glob)**/node_modules/**'];

/** A projection that does not hold HEAD's tree: the paths that differ. */
export class NotAtHead extends SwarmRefusal {
  constructor(readonly paths: readonly string[]) {
    super(`a projection of the workspace differs from HEAD at ${listPaths(paths)} (rift does not copy symlinks, files over [source].max_file_bytes or what [source].exclude and .gitignore leave out)`);
  }
}

export function listPaths(paths: readonly string[], max = 5): string {
  return paths.slice(0, max).join(', ') + (paths.length > max ? ` and ${paths.length - max} more` : '');
}

/** The git environment that reads a projection's directory as the work tree of the workspace's repository, with a private index. */
function gitOver(gitDir: string, root: string, index: string): Record<string, string> {
  return { GIT_DIR: gitDir, GIT_WORK_TREE: root, GIT_INDEX_FILE: index };
}

async function gitDirOf(repo: string): Promise<string> {
  return must(await runGit(repo, ['rev-parse', '--absolute-git-dir']), 'git rev-parse --absolute-git-dir');
}

/** The cache files under the work tree `env` names that git does not ignore (what rift would see and publish). */
async function noiseFiles(root: string, env: Record<string, string>): Promise<string[]> {
  const r = await runGit(root, ['ls-files', '-z', '--others', '--exclude-standard', '--', ...NOISE_FILES], { env });
  return must(r, 'git ls-files --others').split('\0').filter(Boolean);
}

/** Resolves as `work` does, or rejects at once when `signal` aborts (the work goes on, unawaited). */
function unlessAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new SwarmRefusal('cancelled'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * Projections of the workspace at `repo`, each checked to hold the tree of `head`. The
 * workspace's engine is opened for the first one and its index brought up to date once (the
 * projections' indexes are seeded from it); `close` releases it while the candidates run.
 */
export class ProjectionTrees implements CandidateTrees {
  readonly kind = 'projection';
  private engine: Promise<Engine> | null = null;
  private built: Promise<unknown> | null = null;
  private building = false;

  constructor(
    private readonly repo: string,
    private readonly head: string,
    /** Stops waiting for the workspace's index build (Ctrl-C before any candidate started). */
    private readonly signal?: AbortSignal,
  ) {}

  /** The workspace's engine, opened on first use (and again after `close`, to remove projections). */
  open(): Promise<Engine> {
    if (!this.engine) {
      const opening = Engine.open(this.repo, { watch: false });
      opening.catch(() => {
        if (this.engine === opening) this.engine = null;
      });
      this.engine = opening;
    }
    return this.engine;
  }

  async create(_ordinal: number, name: string): Promise<CandidateTree> {
    const engine = await this.open();
    // One build for every projection: they copy its index, so no candidate indexes its tree.
    if (!this.built) {
      this.building = true;
      this.built = engine.build().finally(() => (this.building = false));
    }
    await unlessAborted(this.built, this.signal);
    const made = await engine.projections.create(`${REASON} ${name}`);
    const index = join(this.repo, PATCHES_DIR, `${name}.index`);
    try {
      ensureStateDir(this.repo);
      mkdirSync(dirname(index), { recursive: true });
      rmSync(index, { force: true });
      const env = gitOver(await gitDirOf(this.repo), made.path, index);
      must(await runGit(made.path, ['add', '-A', '--', '.', ...NOISE], { env }), 'git add -A');
      const base = must(await runGit(made.path, ['write-tree'], { env }), 'git write-tree');
      const off = must(await runGit(made.path, ['diff', '--name-only', '-z', '--no-renames', this.head, base, '--', '.', ...NOISE], { env }), 'git diff');
      if (off !== '') throw new NotAtHead(off.split('\0').filter(Boolean));
      return new ProjectionTree(this, name, made.id, made.path, engine.root, base, env, new Set(await noiseFiles(made.path, env)));
    } catch (e) {
      await this.discard(made.id);
      rmSync(index, { force: true });
      throw e;
    }
  }

  /** Removes projection `id` (its records and its directory); one already gone is no error. */
  async discard(id: string): Promise<void> {
    const engine = await this.open();
    try {
      await engine.projections.remove(id);
    } catch (e) {
      if (!(e instanceof RiftError && e.code === 'resource_not_found')) throw e;
    }
    rmSync(engine.projections.dirOf(id), { recursive: true, force: true });
  }

  async close(): Promise<void> {
    const engine = this.engine;
    const built = this.built;
    const building = this.building;
    this.engine = null;
    this.built = null;
    if (!engine) return;
    const close = async () => {
      await built?.catch(() => {});
      await (await engine.catch(() => null))?.close();
    };
    // A build Ctrl-C stopped waiting for still runs: the engine closes when it ends.
    if (building) void close().catch(() => {});
    else await close();
  }
}

class ProjectionTree implements CandidateTree {
  readonly kind = 'projection';
  readonly env: Record<string, string>;

  constructor(
    private readonly owner: ProjectionTrees,
    readonly name: string,
    private readonly id: string,
    readonly root: string,
    workspace: string,
    private readonly base: string,
    private readonly git: Record<string, string>,
    /** Cache files the projection held when it was made (the workspace's own: left alone). */
    private readonly noise: ReadonlySet<string>,
  ) {
    // git in the candidate's processes never looks at the workspace root: no repository above the projection.
    this.env = { GIT_CEILING_DIRECTORIES: workspace };
  }

  get record(): TreeRecord {
    return { name: this.name, tree: 'projection', root: this.root, projection: this.id, base: this.base };
  }

  async diff(): Promise<CandidatePatch> {
    // The patch leaves cache noise out; so must the publish, which takes what the directory holds.
    for (const path of await noiseFiles(this.root, this.git)) if (!this.noise.has(path)) rmSync(join(this.root, path), { force: true });
    return stagedDiff(this.root, this.base, this.git);
  }

  async remove(): Promise<void> {
    await this.owner.discard(this.id);
    rmSync(this.git.GIT_INDEX_FILE, { force: true });
  }
}

/**
 * The patch projection `record` holds now, computed as the swarm computed it: `rift merge`
 * publishes the projection only when this is still the saved patch.
 */
export async function projectionPatch(repo: string, record: TreeRecord): Promise<CandidatePatch> {
  const index = join(repo, PATCHES_DIR, `${record.name}.index`);
  const env = gitOver(await gitDirOf(repo), record.root, index);
  if (!existsSync(index)) must(await runGit(record.root, ['read-tree', record.base], { env }), 'git read-tree');
  return stagedDiff(record.root, record.base, env);
}

/**
 * Removes every candidate projection: those the last swarm recorded and any other whose reason
 * names a swarm candidate (a swarm killed before it recorded one). Other projections stay.
 */
export async function removeSwarmProjections(repo: string): Promise<void> {
  const recorded = swarmRecords(repo).filter((r) => r.tree === 'projection' && r.projection !== null);
  const dir = join(repo, PROJECTIONS_DIR);
  if (recorded.length === 0 && (!existsSync(dir) || readdirSync(dir).length === 0)) return;
  const engine = await Engine.open(repo, { watch: false });
  try {
    const ids = new Set(recorded.map((r) => r.projection!));
    for (let page = 0; ; page++) {
      const listed = engine.projections.list({ page_index: page, limit: 1000 });
      for (const p of listed.projections) if (p.reason?.startsWith(`${REASON} `)) ids.add(p.id);
      if (page + 1 >= listed.pagination.total_pages) break;
    }
    for (const id of ids) {
      try {
        await engine.projections.remove(id);
      } catch (e) {
        if (!(e instanceof RiftError && e.code === 'resource_not_found')) throw e;
      }
      rmSync(engine.projections.dirOf(id), { recursive: true, force: true });
    }
  } finally {
    await engine.close();
  }
}
