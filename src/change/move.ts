import type { WorkspaceEdit } from 'vscode-languageserver-protocol';
import { EngineDeclined, engineUnavailable, fileUri } from '../engine/client.ts';
import type { ChangeWarning } from '../protocol/change.ts';
import { compileWorkspaceEdit, writesOf } from './engine-edits.ts';
import type { ChangeContext, Plan } from './plan.ts';
import { targetPolicy } from './plan.ts';
import type { FileWrite } from './publish.ts';
import { connect } from './references.ts';
import { targetExists, unsupported } from './refusal.ts';
import { resolveTarget } from './target.ts';

// `move_file` (reference F.13 rules 146–147): any visible regular file moves, parsed or not;
// the destination must pass `[source]` and must not exist. An engine advertising
// `workspace/willRenameFiles` proposes the reference updates, compiled with the move into one
// change (edits to the moved file itself land in its new place); otherwise references stay as
// they are and the result says why.

export async function planMove(ctx: ChangeContext, path: string, destination: string): Promise<Plan> {
  const policy = targetPolicy(ctx);
  const source = resolveTarget(policy, path, 'delete');
  if (source.link) throw unsupported(`path ${path} is a symlink; move_file moves regular files — move the file it points at, or recreate the link`);
  if (source.bytes === null) throw targetExists([], [path], true);
  const dest = resolveTarget(policy, destination, 'write');
  if (dest.bytes !== null || dest.target === source.target) throw targetExists([], [destination], false);
  const warnings: ChangeWarning[] = dest.warning ? [dest.warning] : [];
  const notUpdated = (reason: string): ChangeWarning => ({
    kind: 'rift.move.references_not_updated',
    message: `${path} moved to ${destination}; references to it were not updated: ${reason}`,
    path,
    reason,
  });
  let moved = source.bytes;
  let others: FileWrite[] = [];
  const updated = await engineEdits(ctx, source.target, dest.target, source.bytes);
  if ('reason' in updated) warnings.push(notUpdated(updated.reason));
  else {
    const compiled = compileWorkspaceEdit(ctx, updated.edit, { encoding: updated.encoding, engine: updated.engine, addresses: [], planned: new Map([[source.target, source.bytes], [dest.target, source.bytes]]) });
    warnings.push(...compiled.warnings);
    // Edits addressed to the file under either name apply to the moved bytes.
    const own = compiled.files.get(source.target) ?? compiled.files.get(dest.target);
    if (own) moved = own.after;
    others = writesOf(compiled).filter((w) => w.target !== source.target && w.target !== dest.target);
  }
  return {
    writes: [
      { target: source.target, before: source.bytes, after: null, mode: null, link: false },
      { target: dest.target, before: null, after: moved, mode: source.mode, link: false },
      ...others,
    ],
    addresses: [],
    warnings,
  };
}

type EngineEdits = { edit: WorkspaceEdit; engine: string; encoding: 'utf-8' | 'utf-16' } | { reason: string };

async function engineEdits(ctx: ChangeContext, from: string, to: string, bytes: Buffer): Promise<EngineEdits> {
  const found = ctx.engines.lookup(from, ctx.config);
  if (!found.ok) return { reason: found.reason };
  const c = await connect(ctx, found.handle, from, bytes);
  const engine = c.handle.name;
  if (!c.client.capabilities.workspace?.fileOperations?.willRename) return { reason: `${engine} does not advertise workspace/willRenameFiles` };
  if (!(await c.client.waitReady(c.handle.readyTimeoutMs))) {
    throw engineUnavailable(engine, `the engine has not confirmed its readiness after ${c.handle.readyTimeoutMs} ms (still loading the project); resend the move once it has`);
  }
  let edit: WorkspaceEdit | null;
  try {
    edit = await c.client.request<WorkspaceEdit | null>('workspace/willRenameFiles', { files: [{ oldUri: c.uri, newUri: fileUri(ctx.root, to) }] });
  } catch (e) {
    if (e instanceof EngineDeclined) return { reason: `${engine} declined: ${e.message}` };
    throw e;
  }
  return { edit: edit ?? {}, engine, encoding: c.client.encoding };
}
