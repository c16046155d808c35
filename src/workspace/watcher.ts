import { realpath } from 'node:fs/promises';
import { resolve, sep } from 'node:path';
import watcher from '@parcel/watcher';
import { underFloor } from '../core/path.ts';
import { specialMountsUnder } from './special-fs.ts';

export { isPolicyFile } from './visibility.ts';

// The workspace watcher: raw filesystem events as project-relative `/` paths. Nothing under
// the floor (`.git`, `.rift`, at any depth) is ever reported. The caller coalesces events,
// filters them through `Visibility`, and reloads the policy when `isPolicyFile` says so.
// A rename arrives as a delete of the old path and a create of the new one in one batch.
// A directory event names only the directory: a removed or renamed directory's contents are
// not listed one by one, so the caller treats a directory path as "everything below it".

export interface WatchEvent {
  path: string;
  type: 'create' | 'update' | 'delete';
}

export interface WorkspaceWatcher {
  close(): Promise<void>;
}

// Matched by the native backend against absolute paths (substring semantics, no flags).
const FLOOR_PATTERN = new RegExp('(?:^|[/\\\\])\\.(?:git|rift)(?:[/\\\\]|$)');

/**
 * Special filesystems below the root are neither listed nor watched (listing /proc fails
 * outright). A pattern rather than ignore paths: it is matched against the path relative to
 * the root, which is also right for a root of `/` (the backend then spells paths `//proc`).
 */
function specialMountPattern(absRoot: string): RegExp[] {
  const mounts = specialMountsUnder(absRoot);
  if (mounts.length === 0) return [];
  const alternatives = mounts.map((m) => m.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return [new RegExp(`^(?:${alternatives.join('|')})(?:/|$)`)];
}

export async function watchWorkspace(
  root: string,
  onEvents: (events: WatchEvent[]) => void,
  onError: (err: Error) => void,
): Promise<WorkspaceWatcher> {
  const absRoot = resolve(root);
  const prefixes = new Set([absRoot]);
  try {
    prefixes.add(await realpath(absRoot));
  } catch {
    // subscribe reports a missing root below
  }
  const relativize = (p: string): string | null => {
    for (const prefix of prefixes) {
      const base = prefix.endsWith(sep) ? prefix : prefix + sep;
      if (p.startsWith(base)) {
        // A root of `/` is reported with a doubled separator.
        const rel = p.slice(base.length).replace(/^\/+/, '');
        return sep === '/' ? rel : rel.split(sep).join('/');
      }
    }
    return null;
  };

  let closed = false;
  const subscription = await watcher.subscribe(
    absRoot,
    (err, events) => {
      if (closed) return;
      if (err) {
        onError(err);
        return;
      }
      const out: WatchEvent[] = [];
      for (const e of events) {
        const path = relativize(e.path);
        if (path === null || path === '' || underFloor(path)) continue;
        out.push({ path, type: e.type });
      }
      if (out.length > 0) onEvents(out);
    },
    { ignore: ['.git', '.rift', FLOOR_PATTERN, ...specialMountPattern(absRoot)] },
  );

  return {
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await subscription.unsubscribe();
    },
  };
}
