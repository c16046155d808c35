import { existsSync, lstatSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { recoverChanges } from '../change/journal.ts';
import { Publication, type FileWrite } from '../change/publish.ts';
import { TreeLock } from '../change/tree-lock.ts';
import { invalidField, RiftError } from '../core/errors.ts';
import { MERGE_LOCK_WAIT_MS, SWARM_PATCH_BYTES_MAX } from '../core/limits.ts';
import { runGit } from '../history/git.ts';
import type { PublishResult } from '../protocol/projection.ts';
import { Engine } from '../services/engine.ts';
import { readBytesSync } from '../workspace/read.ts';
import { ensureStateDir, STATE_DIR } from '../workspace/state-dir.ts';
import { clearSwarm } from './clear.ts';
import { listPaths, projectionPatch } from './projection-tree.ts';
import { PATCHES_DIR, readRecord, repositoryRoot, SwarmRefusal, type TreeRecord } from './tree.ts';

// `rift merge <name>`: the candidate's change goes into the workspace through the engine, in
// one of two ways, refusing on a conflict with every byte left as it was.
//
// A candidate that ran in a projection is published (docs/projections.md): the projection's
// changed files are written all or none, and any file the workspace changed since the
// projection was made refuses — even where `git apply --3way` would have merged the two edits.
// The merge is the user's acceptance of the candidate's changes (`accept` names them all). It
// is used only while the projection holds exactly the saved patch, so what lands is what the
// judge saw; otherwise (the projection is gone, the patch was edited, the projection holds a
// file git does not see) the saved patch is applied the other way, and the result says why.
//
// A candidate from a worktree has its saved patch applied with `git apply --3way` semantics,
// computed away from the workspace and published by the engine. Holding the tree lock (so no
// other rift process changes the tree meanwhile), the touched files' current bytes go into a
// scratch index over HEAD; `git apply --cached --3way` merges the patch there; a conflict (or a
// patch that does not apply) refuses with nothing written. Otherwise the merged bytes are
// published through the journaled `Publication`, which checks each file still holds the bytes
// read and rolls every file back on a failure or a kill. The workspace's own index is not
// touched either way: the change lands as unstaged edits.

const NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;

export interface MergeResult {
  repo: string;
  files: string[];
  cleaned: boolean;
  /** `publish` from the candidate's projection, or the saved patch with `git apply --3way` semantics. */
  via: 'publish' | 'git apply --3way';
  /** The projection published from. */
  projection: string | null;
  /** Why a projection candidate's patch was applied with git instead. */
  note: string | null;
}

/** The candidates with a saved patch, by name. */
export function savedPatches(repo: string): string[] {
  const dir = join(repo, PATCHES_DIR);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((f) => f.endsWith('.patch')).map((f) => f.slice(0, -'.patch'.length)).sort();
}

export async function merge(cwd: string, name: string, cleanup: boolean): Promise<MergeResult> {
  if (!NAME.test(name)) throw invalidField('name', 'a candidate name holds only letters, digits, ".", "_" and "-" (as `rift swarm` printed it)');
  const { root: repo } = await repositoryRoot(cwd);
  const patchFile = join(repo, PATCHES_DIR, `${name}.patch`);
  if (!existsSync(patchFile)) {
    const have = savedPatches(repo);
    throw new SwarmRefusal(`no saved patch for candidate '${name}' (${PATCHES_DIR}/${name}.patch); ${have.length ? `saved: ${have.join(', ')}` : 'run `rift swarm` first'}`);
  }
  const record = readRecord(repo, name);
  let note: string | null = null;
  if (record?.tree === 'projection' && record.projection !== null) {
    const published = await publishProjection(repo, name, record, patchFile);
    if ('files' in published) return finish(repo, cleanup, { repo, files: published.files, cleaned: false, via: 'publish', projection: record.projection, note: null });
    note = published.fallback;
  }
  const paths = await touchedPaths(repo, patchFile);
  ensureStateDir(repo);
  const lock = TreeLock.acquire(repo);
  try {
    await lock.run(performance.now() + MERGE_LOCK_WAIT_MS, MERGE_LOCK_WAIT_MS, async (held) => {
      const restored = await recoverChanges(repo);
      if (restored.length > 0) held.record(restored);
      const writes = await mergedWrites(repo, patchFile, name, paths);
      if (writes.length === 0) return;
      Publication.begin(repo, writes, [], SWARM_PATCH_BYTES_MAX).commit();
      held.record(writes.map((w) => w.target));
    });
  } finally {
    await lock.release();
  }
  return finish(repo, cleanup, { repo, files: paths, cleaned: false, via: 'git apply --3way', projection: null, note });
}

async function finish(repo: string, cleanup: boolean, result: MergeResult): Promise<MergeResult> {
  if (cleanup) await clearSwarm(repo);
  return { ...result, cleaned: cleanup };
}

/**
 * Publishes the candidate's projection, accepting its changes. A refusal throws (nothing
 * changed); `fallback` says why the saved patch has to be applied with git instead.
 */
async function publishProjection(repo: string, name: string, record: TreeRecord, patchFile: string): Promise<{ files: string[] } | { fallback: string }> {
  const id = record.projection!;
  const engine = await Engine.open(repo, { watch: false });
  try {
    // A publish writes through the workspace's change pipeline, which works on a current index.
    await engine.build();
    let pending;
    try {
      pending = await engine.projections.pending(id);
    } catch (e) {
      if (e instanceof RiftError && e.code === 'resource_not_found') return { fallback: `its projection ${id} is gone` };
      throw e;
    }
    const saved = readFileSync(patchFile);
    if (!(await projectionPatch(repo, record)).patch.equals(saved)) return { fallback: `${PATCHES_DIR}/${name}.patch is not what its projection ${id} holds (edited since the swarm?)` };
    const patched = (await touchedPaths(repo, patchFile)).sort();
    const changed = [...pending.paths].sort();
    if (changed.join('\0') !== patched.join('\0')) {
      const odd = [...changed.filter((p) => !patched.includes(p)), ...patched.filter((p) => !changed.includes(p))];
      return { fallback: `its projection ${id} and the patch differ at ${listPaths(odd)} (a file git or rift does not see)` };
    }
    const r = await engine.projections.publish({ projection: id, accept: pending.changes.map((c) => c.id) });
    if (!r.published) throw new SwarmRefusal(refusal(name, r));
    return { files: changed };
  } finally {
    await engine.close();
  }
}

function refusal(name: string, r: PublishResult): string {
  const why: string[] = [];
  if (r.conflicts.length > 0) why.push(`the workspace changed ${listPaths(r.conflicts)} since the swarm started, and so did the candidate`);
  if (r.dependency_conflicts.length > 0) why.push(`files the candidate read changed: ${listPaths(r.dependency_conflicts.map((d) => `${d.path} (${d.observed} → ${d.current ?? 'deleted'})`))}`);
  if (r.unaccepted.length > 0) why.push(`changes still to accept: ${r.unaccepted.join(', ')}`);
  return `cannot merge '${name}': it conflicts with the workspace (${why.join('; ')}); nothing was changed — publish refuses any file the workspace changed since the candidate's projection was made, even where the edits do not overlap; commit or undo your edits to those files, or pick another candidate`;
}

/** The paths the patch touches (patches are written without rename detection, so one path per file). */
async function touchedPaths(repo: string, patchFile: string): Promise<string[]> {
  const r = await runGit(repo, ['apply', '--numstat', '-z', patchFile]);
  if (r.code !== 0) throw new SwarmRefusal(`${patchFile} is not a patch git can read: ${r.stderr.trim()}`);
  const out: string[] = [];
  for (const rec of r.stdout.toString('utf8').split('\0')) {
    const path = rec.split('\t')[2];
    if (path) out.push(path);
  }
  return out;
}

async function mergedWrites(repo: string, patchFile: string, name: string, paths: readonly string[]): Promise<FileWrite[]> {
  const index = join(repo, STATE_DIR, `merge-${process.pid}.index`);
  const env = { GIT_INDEX_FILE: index };
  const git = async (args: string[], input?: Buffer) => {
    const r = await runGit(repo, args, { env, input });
    if (r.code !== 0) throw new SwarmRefusal(`git ${args[0]} failed during the merge: ${r.stderr.trim()}`);
    return r.stdout;
  };
  try {
    await git(['read-tree', 'HEAD']);
    const before = new Map<string, { bytes: Buffer | null; mode: number | null }>();
    for (const path of paths) {
      const now = readBytesSync(repo, path, SWARM_PATCH_BYTES_MAX);
      if (!now.ok && now.reason !== 'missing') throw new SwarmRefusal(`cannot merge '${name}': ${path} in the workspace is ${now.reason.replace('_', ' ')}; nothing was changed`);
      if (now.ok) {
        const bytes = Buffer.from(now.bytes);
        const mode = lstatSync(join(repo, path)).mode & 0o7777;
        const oid = (await git(['hash-object', '-w', '--stdin'], bytes)).toString('utf8').trim();
        await git(['update-index', '--add', '--cacheinfo', `${mode & 0o111 ? '100755' : '100644'},${oid},${path}`]);
        before.set(path, { bytes, mode });
      } else {
        await git(['update-index', '--force-remove', '--', path]);
        before.set(path, { bytes: null, mode: null });
      }
    }
    const applied = await runGit(repo, ['apply', '--cached', '--3way', patchFile], { env });
    if (applied.code !== 0) {
      const why = applied.stderr.split('\n').filter((l) => /^(error|U )/.test(l)).join('; ') || applied.stderr.trim();
      throw new SwarmRefusal(`cannot merge '${name}': it conflicts with the workspace (${why}); nothing was changed — commit or undo your edits to those files, or pick another candidate`);
    }
    const writes: FileWrite[] = [];
    for (const path of [...paths].sort()) {
      const entry = (await git(['ls-files', '-s', '-z', '--', path])).toString('utf8').split('\0')[0];
      const old = before.get(path)!;
      let after: Buffer | null = null;
      let mode: number | null = null;
      if (entry) {
        const [meta] = entry.split('\t');
        const [gitMode, oid] = meta.split(' ');
        if (gitMode !== '100644' && gitMode !== '100755') throw new SwarmRefusal(`cannot merge '${name}': it makes ${path} a ${gitMode === '120000' ? 'symlink' : `mode ${gitMode} entry`}, which rift does not write; nothing was changed`);
        after = await git(['cat-file', 'blob', oid]);
        mode = gitMode === '100755' ? 0o755 : old.mode !== null ? old.mode & ~0o111 : 0o644;
      }
      if (old.bytes !== null && after !== null && old.bytes.equals(after) && (old.mode ?? 0) === mode) continue;
      if (old.bytes === null && after === null) continue;
      writes.push({ target: path, before: old.bytes, after, mode, link: false });
    }
    return writes;
  } finally {
    rmSync(index, { force: true });
    rmSync(`${index}.lock`, { force: true });
  }
}
