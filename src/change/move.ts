import type { WorkspaceEdit } from 'vscode-languageserver-protocol';
import { languageFor } from '../config/workspace-config.ts';
import { cutUtf8 } from '../core/lines.ts';
import { MOVE_UNREWRITTEN_MAX } from '../core/limits.ts';
import { EngineDeclined, engineUnavailable, fileUri } from '../engine/client.ts';
import type { ChangeWarning } from '../protocol/change.ts';
import { pythonModuleOf, rewritePythonImports, type ModuleMove } from '../syntax/python-imports.ts';
import { initSyntax, SyntaxLimitError } from '../syntax/runtime.ts';
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
// they are and the result says why — except for Python, whose imports rift rewrites itself from
// the syntax tree (syntax/python-imports.ts) in the same change, warning for each occurrence it
// cannot rewrite safely.

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
  if ('reason' in updated) {
    const rewritten = languageFor(ctx.config, source.target)?.id === 'python' ? await pythonImports(ctx, source.target, dest.target, source.bytes) : null;
    if (rewritten === null || 'reason' in rewritten) warnings.push(notUpdated(rewritten ? `${updated.reason}, and ${rewritten.reason}` : updated.reason));
    else {
      moved = rewritten.moved;
      others = rewritten.others;
      warnings.push(...rewritten.unrewritten(path, destination));
    }
  } else {
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

interface SyntaxRewrite {
  moved: Buffer;
  others: FileWrite[];
  unrewritten: (path: string, destination: string) => ChangeWarning[];
}

/**
 * Python imports of the moved module rewritten across the indexed tree, and the moved file's own
 * relative imports re-based; null reasons say why no rewrite was attempted. Candidates are the
 * Python files whose text holds the module's last name (every import of it spells that name);
 * their bytes are read now and re-verified at publication like every other write.
 */
async function pythonImports(ctx: ChangeContext, from: string, to: string, bytes: Buffer): Promise<SyntaxRewrite | { reason: string }> {
  const store = ctx.indexer.store;
  const srcRoot = store.file('src/__init__.py') === null;
  const before = pythonModuleOf(from, srcRoot);
  const after = pythonModuleOf(to, srcRoot);
  if (before === null || after === null) return { reason: `${before === null ? from : to} names no importable Python module` };
  if (from.endsWith('/__init__.py') || to.endsWith('/__init__.py')) return { reason: 'a package\'s __init__.py moves the package, not one module; rift rewrites imports only for module moves' };
  const move: ModuleMove = { from: before.name, to: after.name };
  await initSyntax();
  const policy = targetPolicy(ctx);
  const found: Array<{ path: string; line: number; reason: string }> = [];
  const rewrite = (path: string, b: Buffer, pkgBefore: string[] | null, pkgAfter: string[] | null): Buffer | null => {
    try {
      const r = rewritePythonImports(b, pkgBefore, pkgAfter, move, path.endsWith('/__init__.py'));
      for (const u of r.unrewritten) found.push({ path, ...u });
      return r.after;
    } catch (e) {
      if (!(e instanceof SyntaxLimitError)) throw e;
      found.push({ path, line: 1, reason: `the file was not parsed: ${e.message}` });
      return null;
    }
  };
  const moved = rewrite(from, bytes, before.package, after.package) ?? bytes;
  const others: FileWrite[] = [];
  const leaf = before.name[before.name.length - 1];
  for (const path of store.pathsWithWords(leaf)) {
    if (path === from || languageFor(ctx.config, path)?.id !== 'python') continue;
    // Read as indexed (a file that needs no rewrite need not be writable), resolved for writing
    // only when it changes.
    const indexed = store.indexedBytes(path);
    const seen = indexed ? Buffer.from(indexed) : resolveTarget(policy, path, 'write').bytes;
    if (seen === null || seen.indexOf(leaf) < 0) continue;
    const pkg = pythonModuleOf(path, srcRoot)?.package ?? null;
    const mark = found.length;
    let out = rewrite(path, seen, pkg, pkg);
    if (out === null) continue;
    const t = resolveTarget(policy, path, 'write');
    if (t.bytes === null || t.target !== path) continue;
    if (!t.bytes.equals(seen)) {
      found.length = mark; // the file changed since it was indexed: its bytes now are what counts
      out = rewrite(path, t.bytes, pkg, pkg);
    }
    if (out !== null) others.push({ target: path, before: t.bytes, after: out, mode: t.mode, link: false });
  }
  return {
    moved,
    others,
    unrewritten: (p, d) =>
      found.slice(0, MOVE_UNREWRITTEN_MAX).map((f, i) => {
        const more = i === MOVE_UNREWRITTEN_MAX - 1 && found.length > MOVE_UNREWRITTEN_MAX ? `; ${found.length - MOVE_UNREWRITTEN_MAX} more occurrences are not listed` : '';
        const reason = `${f.path === from ? d : f.path}:${f.line}: ${cutUtf8(f.reason, 512)}${more}`;
        return { kind: 'rift.move.references_not_updated', message: `${p} moved to ${d}; a reference was not updated at ${reason}`, path: f.path === from ? d : f.path, reason };
      }),
  };
}
