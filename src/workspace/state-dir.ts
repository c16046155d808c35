import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// The workspace's own state folder (decisions.md): `<root>/.rift/`, with a `.gitignore` holding
// `*` written the first time rift creates it, so nothing rift keeps is ever committed.

export const STATE_DIR = '.rift';

/** Creates `.rift/` (and its `.gitignore`) when missing; returns its absolute path. */
export function ensureStateDir(root: string): string {
  const dir = join(root, STATE_DIR);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
  const ignore = join(dir, '.gitignore');
  if (!existsSync(ignore)) writeFileSync(ignore, '*\n');
  return dir;
}
