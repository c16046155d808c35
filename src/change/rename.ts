import type { PrepareRenameResult, WorkspaceEdit } from 'vscode-languageserver-protocol';
import { sha256Hex } from '../core/digest.ts';
import { invalidField } from '../core/errors.ts';
import { cutUtf8 } from '../core/lines.ts';
import { PRECONDITION_PATHS_MAX, RENAME_SURVIVORS_MAX } from '../core/limits.ts';
import { engineUnavailable, EngineDeclined } from '../engine/client.ts';
import type { ChangeWarning } from '../protocol/change.ts';
import { RENAME_PROPOSED } from '../protocol/plain.ts';
import { resolveSymbol } from './declaration-edits.ts';
import { compileWorkspaceEdit, writesOf } from './engine-edits.ts';
import type { ChangeContext, Plan } from './plan.ts';
import { connect, nameOffset } from './references.ts';
import { failed, refuse, riftDiagnostic, sourceChanged, text, unsupported, type Address } from './refusal.ts';

// `rename_symbol` (spec "rename", reference F.13 rules 142–145): the engine configured for the
// symbol's language proposes the edit set (prepareRename, then rename), compiled into witnessed
// rewrites — every replaced range must hold the old name — and applied as one change. After it,
// the tree is swept for whole-word occurrences of the old name the engine left standing.

/** `unmet_precondition` / `engine_proposed_edits` carrying the engine's own words. */
function declined(address: Address, path: string, engine: string, expected: string, words: string) {
  return refuse(
    'unmet_precondition',
    [failed('engine_proposed_edits', [address], [path], text(expected), text(words))],
    [riftDiagnostic('error', 'rift.engine.declined', `${engine}: ${words}`)],
  );
}

export async function planRename(ctx: ChangeContext, symbol: string, newName: string): Promise<Plan> {
  if (/[\r\n\0]/.test(newName)) throw invalidField('new_name', 'contains a line break or NUL');
  const r = resolveSymbol(ctx, symbol, 'symbol');
  const path = r.target.target;
  const found = ctx.engines.lookup(path, ctx.config);
  if (!found.ok) throw unsupported(`rename_symbol needs a language engine (lsp) for ${r.row.language}: ${found.reason}`);
  const c = await connect(ctx, found.handle, path, r.bytes);
  const engine = c.handle.name;
  if (!c.client.capabilities.renameProvider) throw unsupported(`${engine} does not advertise textDocument/rename`);
  if (!(await c.client.waitReady(c.handle.readyTimeoutMs))) {
    throw engineUnavailable(engine, `the engine has not confirmed its readiness after ${c.handle.readyTimeoutMs} ms (still loading the project); resend the rename once it has`);
  }
  const at = nameOffset(r.bytes, r.row.item_start, r.row.item_end, r.row.name);
  const position = c.lines.position(at);
  const where = `${path}:${position.line + 1}:${position.character + 1}`;
  const expected = `an edit set renaming ${r.row.qname} to ${newName}`;
  const document = { textDocument: { uri: c.uri }, position };

  const provider = c.client.capabilities.renameProvider;
  if (typeof provider === 'object' && provider.prepareProvider) {
    let prepared: PrepareRenameResult | null;
    try {
      prepared = await c.client.request<PrepareRenameResult | null>('textDocument/prepareRename', document);
    } catch (e) {
      if (e instanceof EngineDeclined) throw declined(r.address, path, engine, expected, e.message);
      throw e;
    }
    if (prepared === null) throw declined(r.address, path, engine, expected, `${engine} found nothing it can rename at ${where} (prepareRename answered null)`);
  }
  let edit: WorkspaceEdit | null;
  try {
    edit = await c.client.request<WorkspaceEdit | null>('textDocument/rename', { ...document, newName });
  } catch (e) {
    if (e instanceof EngineDeclined) throw declined(r.address, path, engine, expected, e.message);
    throw e;
  }
  if (edit === null || (Object.keys(edit.changes ?? {}).length === 0 && (edit.documentChanges ?? []).length === 0)) {
    throw declined(r.address, path, engine, expected, `${engine} proposed no edits for ${where}`);
  }
  const compiled = compileWorkspaceEdit(ctx, edit, { encoding: c.client.encoding, engine, addresses: [r.address], expect: r.row.name });
  const writes = writesOf(compiled);
  return { writes, addresses: [r.address], warnings: [...compiled.warnings, ...survivors(ctx, r.row.name, new Map(writes.map((w) => [w.target, w.after!])))] };
}

const IDENT = /[\p{L}\p{N}_$]/u;

/**
 * Whole-word occurrences of `name` across the indexed tree as it will stand after the change:
 * planned bytes for the files it writes, the index's bytes for every other file.
 */
function survivors(ctx: ChangeContext, name: string, planned: Map<string, Buffer>): ChangeWarning[] {
  const needle = Buffer.from(name, 'utf8');
  const store = ctx.indexer.store;
  const paths = new Set(store.pathsWithWords(name));
  for (const p of planned.keys()) paths.add(p);
  const hits: Array<{ path: string; line: number }> = [];
  let total = 0;
  for (const path of [...paths].sort()) {
    const bytes = planned.get(path) ?? contentOf(ctx, path);
    if (!bytes || bytes.indexOf(needle) < 0) continue;
    const s = bytes.toString('utf8');
    let line = 1;
    let scanned = 0;
    for (let i = s.indexOf(name); i >= 0; i = s.indexOf(name, i + 1)) {
      if (IDENT.test(s[i - 1] ?? '') || IDENT.test(s[i + name.length] ?? '')) continue;
      for (; scanned < i; scanned++) if (s.charCodeAt(scanned) === 10) line++;
      total++;
      if (hits.length < RENAME_SURVIVORS_MAX) hits.push({ path, line });
    }
  }
  return hits.map((h, i) => ({
    kind: 'rift.rename.surviving_occurrence',
    message:
      `${cutUtf8(name, 256)} still occurs at ${h.path}:${h.line} after the rename` +
      (i === hits.length - 1 && total > hits.length ? `; ${total - hits.length} more occurrences are not listed` : ''),
    path: h.path,
    line: h.line,
  }));
}

function contentOf(ctx: ChangeContext, path: string): Buffer | null {
  const bytes = ctx.indexer.store.indexedBytes(path);
  return bytes ? Buffer.from(bytes) : null;
}

// A rename reviewed by a caller in another process (the agent through the workspace server):
// it cannot be called back between planning and writing, so it asks twice. First `propose`:
// the plan is made and refused with the files it would write and the digest of each file's
// bytes now; then, once its user approved those files, `approved`: the plan is made again and
// applied only if it writes exactly those files and each still holds the approved bytes.

/** A file a rename would write: its project path and the SHA-256 of its bytes now. */
export interface ProposedWrite {
  path: string;
  sha256: string;
}

export type RenameReview = { propose: true } | { approved: ProposedWrite[] };

export function proposedWrites(plan: Plan): ProposedWrite[] {
  return plan.writes.map((w) => ({ path: w.target, sha256: sha256Hex(w.before ?? new Uint8Array()) }));
}

/** Nothing is written for a `propose`; the result names the files and carries their digests. */
function proposal(addresses: Address[], writes: ProposedWrite[]) {
  const paths = writes.map((w) => w.path);
  const diagnostic = riftDiagnostic('info', RENAME_PROPOSED, `the engine's edits write ${paths.length} file(s): ${paths.join(', ')}; approve them and resend the rename with rift/rename-review {approved}`);
  diagnostic.extensions = { writes };
  return refuse('unmet_precondition', [failed('engine_proposed_edits', addresses, paths.slice(0, PRECONDITION_PATHS_MAX), text('edits the caller approved'), text(`proposed, not yet approved: ${paths.join(', ')}`))], [diagnostic]);
}

/** Throws the refusal a reviewed rename answers with, unless `writes` are exactly what was approved. */
export function checkReview(review: RenameReview, addresses: Address[], writes: ProposedWrite[]): void {
  if ('propose' in review) throw proposal(addresses, writes);
  const approved = new Map(review.approved.map((w) => [w.path, w.sha256]));
  const now = writes.map((w) => w.path);
  if (now.length !== approved.size || now.some((p) => !approved.has(p))) {
    const were = [...approved.keys()].sort();
    throw refuse('unmet_precondition', [
      failed('engine_proposed_edits', addresses, [...new Set([...now, ...were])].sort().slice(0, PRECONDITION_PATHS_MAX), text(`the approved files: ${were.join(', ')}`), text(`files the engine's edits write now: ${[...now].sort().join(', ')}`)),
    ]);
  }
  const changed = writes.filter((w) => approved.get(w.path) !== w.sha256);
  if (changed.length > 0) {
    throw sourceChanged(addresses, changed.map((w) => w.path).slice(0, PRECONDITION_PATHS_MAX), changed.map((w) => `${w.path} ${approved.get(w.path)!.slice(0, 8)}`).join(', '), changed.map((w) => `${w.path} ${w.sha256.slice(0, 8)}`).join(', '));
  }
}
