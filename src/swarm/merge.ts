import { existsSync, lstatSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { recoverChanges } from '../change/journal.ts';
import { Publication, type FileWrite } from '../change/publish.ts';
import { TreeLock } from '../change/tree-lock.ts';
import { invalidField } from '../core/errors.ts';
import { MERGE_LOCK_WAIT_MS, SWARM_PATCH_BYTES_MAX } from '../core/limits.ts';
import { runGit } from '../history/git.ts';
import { readBytesSync } from '../workspace/read.ts';
import { ensureStateDir, STATE_DIR } from '../workspace/state-dir.ts';
import { clearSwarm, PATCHES_DIR, repositoryRoot, SwarmRefusal } from './tree.ts';

// `rift merge <name>`: the candidate's saved patch goes into the workspace with `git apply
// --3way` semantics, computed away from the workspace and published by the engine. Holding the
// tree lock (so no other rift process changes the tree meanwhile), the touched files' current
// bytes go into a scratch index over HEAD; `git apply --cached --3way` merges the patch there;
// a conflict (or a patch that does not apply) refuses with nothing written. Otherwise the merged
// bytes are published through the journaled `Publication`, which checks each file still holds
// the bytes read and rolls every file back on a failure or a kill. The workspace's own index is
// not touched: the change lands as unstaged edits.

const NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;

export interface MergeResult {
  repo: string;
  files: string[];
  cleaned: boolean;
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
  if (cleanup) await clearSwarm(repo);
  return { repo, files: paths, cleaned: cleanup };
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
