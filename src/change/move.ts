import type { ChangeContext, Plan } from './plan.ts';
import { engineGap, targetPolicy } from './plan.ts';
import { targetExists, unsupported } from './refusal.ts';
import { resolveTarget } from './target.ts';

// `move_file` (reference F.13 rules 146–147): any visible regular file moves, parsed or not;
// the destination must pass `[source]` and must not exist. With no language engine the
// references are left as they are, and the result says so.

export function planMove(ctx: ChangeContext, path: string, destination: string): Plan {
  const policy = targetPolicy(ctx);
  const source = resolveTarget(policy, path, 'delete');
  if (source.link) throw unsupported(`path ${path} is a symlink; move_file moves regular files — move the file it points at, or recreate the link`);
  if (source.bytes === null) throw targetExists([], [path], true);
  const dest = resolveTarget(policy, destination, 'write');
  if (dest.bytes !== null || dest.target === source.target) throw targetExists([], [destination], false);
  const reason = `${engineGap(ctx, path)}, so references to ${path} were not updated`;
  return {
    writes: [
      { target: source.target, before: source.bytes, after: null, mode: null, link: false },
      { target: dest.target, before: null, after: source.bytes, mode: source.mode, link: false },
    ],
    addresses: [],
    warnings: [
      ...(dest.warning ? [dest.warning] : []),
      { kind: 'rift.move.references_not_updated', message: `${path} moved to ${destination}; ${reason}`, path, reason },
    ],
  };
}
