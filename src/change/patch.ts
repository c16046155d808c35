import { applyFilePatch } from './patch-apply.ts';
import { parsePatch } from './patch-parse.ts';
import type { ChangeContext, Plan } from './plan.ts';
import { targetPolicy } from './plan.ts';
import type { FileWrite } from './publish.ts';
import { resolveTarget } from './target.ts';

// `patch` as one change (reference F.12): every file resolves before anything is written,
// and any file's refusal refuses them all (rule 141).

export function planPatch(ctx: ChangeContext, body: Buffer): Plan {
  const files = parsePatch(body);
  const policy = targetPolicy(ctx);
  const writes: FileWrite[] = [];
  const plan: Plan = { writes, addresses: [], warnings: [], extraPaths: [] };
  for (const file of files) {
    const path = file.newPath ?? file.oldPath!;
    const target = resolveTarget(policy, path, file.newPath === null ? 'delete' : 'write');
    if (target.warning) plan.warnings.push(target.warning);
    if (target.link) {
      // Deleting a link removes the link itself; its hunks are checked against what it points at.
      const resolved = resolveTarget(policy, path, 'write');
      applyFilePatch(file, resolved.bytes);
      writes.push({ target: target.target, before: null, after: null, mode: null, link: true });
      plan.extraPaths!.push(path);
      continue;
    }
    const after = applyFilePatch(file, target.bytes);
    writes.push({ target: target.target, before: target.bytes, after, mode: target.mode, link: false });
  }
  return plan;
}
