import { realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { RiftError } from '../core/errors.ts';

/** The workspace root as every process names it: absolute, symlinks resolved; it must be a directory. */
export function canonicalRoot(workspace: string): string {
  const abs = resolve(workspace);
  try {
    if (!statSync(abs).isDirectory()) throw new Error('not a directory');
    return realpathSync(abs);
  } catch {
    throw new RiftError(
      'resource_not_found',
      [
        ['workspace', workspace],
        ['requires', 'an existing directory'],
      ],
      { action: 'workspace' },
    );
  }
}
