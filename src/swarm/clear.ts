import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { removeSwarmProjections } from './projection-tree.ts';
import { PATCHES_DIR, removeWorktrees } from './tree.ts';

/**
 * Removes every candidate tree — worktrees and projections — and every saved patch: `rift merge
 * --cleanup`, and the start of a new swarm (which replaces the last).
 */
export async function clearSwarm(repo: string): Promise<void> {
  await removeWorktrees(repo);
  // The patches folder holds the tree records that name the projections: it goes last.
  await removeSwarmProjections(repo);
  rmSync(join(repo, PATCHES_DIR), { recursive: true, force: true });
}
