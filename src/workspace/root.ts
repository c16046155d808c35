import { realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { RiftError } from '../core/errors.ts';
import { specialFilesystemOf } from './special-fs.ts';

const REMEDY = 'pass --workspace DIR naming the repository to serve';

/** A workspace that cannot be served, naming the path, why, and what to do instead. */
function workspaceError(code: 'resource_not_found' | 'configuration_invalid', path: string, reason: string): RiftError {
  return new RiftError(code, [
    ['workspace', path],
    ['requires', reason],
    ['remedy', REMEDY],
  ]);
}

/**
 * The workspace root as every process names it: absolute, symlinks resolved. It must be an
 * existing directory, not on a kernel pseudo-filesystem, and not the filesystem root by default
 * (`workspace` undefined: the current directory) — an MCP client that starts servers in `/`
 * without naming a workspace would otherwise have rift index the machine.
 */
export function canonicalRoot(workspace: string | undefined): string {
  const abs = resolve(workspace ?? '.');
  let root: string;
  try {
    if (!statSync(abs).isDirectory()) throw new Error('not a directory');
    root = realpathSync(abs);
  } catch {
    // The advice fits the case: start inside a directory, or name one (errors.ts `workspace`).
    throw new RiftError(
      'resource_not_found',
      [
        ['workspace', abs],
        ['requires', 'an existing directory'],
      ],
      { action: 'workspace' },
    );
  }
  if (workspace === undefined && root === '/') {
    throw workspaceError('configuration_invalid', root, 'a project directory: the current directory is the filesystem root and --workspace was not given');
  }
  const special = specialFilesystemOf(root);
  if (special !== null) {
    throw workspaceError('configuration_invalid', root, `a directory on an ordinary filesystem: ${special} is a kernel pseudo-filesystem`);
  }
  return root;
}
