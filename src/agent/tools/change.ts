import { parsePatch } from '../../change/patch-parse.ts';
import { isRiftError } from '../../core/errors.ts';
import { parseSymbolId } from '../../core/ids.ts';
import { projectPathViolation } from '../../core/path.ts';
import type { ChangeResult, OperationPrecondition, PreconditionValue } from '../../protocol/change.ts';
import type { ChangeApi } from '../../services/api.ts';
import type { ChangeProposal } from '../policy/approval.ts';
import { appliedDiff } from '../policy/diff.ts';
import { ToolError, stringArg, type Tool } from '../base/tool.ts';
import { projectFile, type ToolContext } from './context.ts';
import { renderDiagnostics } from './diagnostics.ts';
import type { ProjectFile } from '../session/undo.ts';
import { FILE_BYTES_MAX } from '../../core/limits.ts';
import { decodeText, looksBinary } from '../../workspace/encoding.ts';

// replace_symbol, patch and rename_symbol through rift's ChangeService, in process: the same
// witnessed resolution, refusals and publication as over MCP. Each is a gated mutation like
// edit/write (a plain ask naming the files: the service, not the tool, computes the new bytes)
// and records the prior bytes of every file it may touch before the service writes, so undo
// restores them — for a rename, once the engine has said which files those are. An applied
// change runs the post-edit hooks like edit/write does, and shows the engines' diagnostics.

const DETAIL_LINES_MAX = 40;
const VALUE_CHARS_MAX = 200;

function service(ctx: ToolContext, tool: string): ChangeApi {
  const change = ctx.code.change;
  if (!change) throw new ToolError(`${tool} is unavailable in this session; use edit instead`);
  return change;
}

function failure(tool: string, e: unknown): ToolError {
  if (e instanceof ToolError) return e;
  return new ToolError(isRiftError(e) ? `${tool} failed: ${e.code}: ${e.message}` : `${tool} failed: ${(e as Error).message}`);
}

function value(v: PreconditionValue): string {
  if (v.kind !== 'text') return String(v.value);
  const one = v.value.replace(/\s+/g, ' ').trim();
  return JSON.stringify(one.length > VALUE_CHARS_MAX ? `${one.slice(0, VALUE_CHARS_MAX)}…` : one);
}

type ChangeTool = 'replace_symbol' | 'patch' | 'rename_symbol';

const REINDEX = 'the symbol is not in the index as addressed: find its current id with get_symbol and retry';
const REREAD = 'the file changed since it was indexed: re-read the symbol with get_symbol and retry; if it refuses again, read the file and use edit or patch';

const HINTS: Record<OperationPrecondition['kind'], Record<ChangeTool, string>> = {
  target_exists: {
    replace_symbol: REINDEX,
    patch: 'a file the diff names is missing (or, for a creation, already exists): check the paths with ls/read and regenerate the diff',
    rename_symbol: REINDEX,
  },
  source_unchanged: {
    replace_symbol: REREAD,
    patch: 'the file does not match the diff: read the file again and regenerate the diff against its current content',
    rename_symbol: 'a file the engine edits changed meanwhile: retry the rename',
  },
  target_is_file: {
    replace_symbol: 'the target is not a regular file',
    patch: 'a path in the diff is not a regular file',
    rename_symbol: 'a file the engine edits is not a regular file',
  },
  no_references: { replace_symbol: 'the declaration still has references', patch: 'the declaration still has references', rename_symbol: 'the declaration still has references' },
  engine_proposed_edits: {
    replace_symbol: 'the language engine proposed no edits',
    patch: 'the language engine proposed no edits',
    rename_symbol: 'the language engine will not make this rename: pick another name or symbol, or edit by hand',
  },
  writable: {
    replace_symbol: "the file's mode forbids writing it (read-only): ask the user before changing its permissions",
    patch: "a file the diff names is read-only: ask the user before changing its permissions",
    rename_symbol: "a file the engine edits is read-only: ask the user before changing its permissions",
  },
};

/** The ChangeResult as the model reads it; a refusal throws, so the loop counts it as a failed call. */
export function renderChangeResult(tool: ChangeTool, r: ChangeResult, root: string): string {
  if (r.status === 'unchanged') return 'unchanged: the result equals the current file bytes; nothing was written.';
  if (r.status === 'applied') {
    const s = r.summary;
    const lines = [`applied ${s.id}`, ...s.files.map((f) => `  ${f.path} ${f.change} +${f.lines_added} -${f.lines_removed}`)];
    for (const w of s.warnings) lines.push(`warning: ${w.message}`);
    lines.push(...renderDiagnostics(s.diagnostics, root));
    return lines.join('\n');
  }
  const lines = [`${tool} refused (${r.reason}); nothing was written.`];
  for (const p of r.preconditions.filter((x) => x.status === 'failed')) {
    const where = p.paths.length > 0 ? ` ${p.paths.join(', ')}` : '';
    lines.push(`- ${p.kind}${where}: expected ${value(p.expected)}, observed ${value(p.observed)} — ${HINTS[p.kind][tool]}`);
  }
  for (const d of r.diagnostics.slice(0, 5)) lines.push(`- ${d.severity}: ${d.message}`);
  if (r.reason === 'ambiguous_target') lines.push('The address matches more than one declaration; use patch or edit for this one.');
  return lines.join('\n');
}

/** Gate, journal, apply: the shared path of both tools. */
async function applyChange(
  ctx: ToolContext,
  tool: ChangeTool,
  files: ReadonlyArray<{ file: ProjectFile; kind: ChangeProposal['files'][number]['kind'] }>,
  detail: string[],
  apply: () => Promise<ChangeResult>,
): Promise<ChangeResult> {
  await ctx.approval.authorizeChange(ctx.gate, { tool, files: files.map((f) => ({ absPath: f.file.abs, kind: f.kind })), detail }, ctx.signal);
  if (ctx.signal.aborted) throw new ToolError('cancelled by user');
  for (const { file } of files) ctx.journal.record(file, bytesOf(file));
  let result: ChangeResult;
  try {
    result = await apply();
  } catch (e) {
    throw failure(tool, e);
  }
  if (result.status === 'refused') throw new ToolError(renderChangeResult(tool, result, rootOf(ctx)));
  return result;
}

function rootOf(ctx: ToolContext): string {
  return ctx.code.engines?.root ?? ctx.cwd;
}

/** The rendered result plus the post-edit hook report; hooks run only when files were written. */
async function withHooks(ctx: ToolContext, tool: ChangeTool, result: ChangeResult): Promise<string> {
  const text = renderChangeResult(tool, result, rootOf(ctx));
  if (result.status !== 'applied' || !ctx.hooks) return text;
  return text + (await ctx.hooks.afterEdit(ctx, result.summary.files.map((f) => f.path).join(', ')));
}

/** The `symbol` argument, which must be a SymbolId the model got from get_symbol. */
function symbolArg(args: Record<string, unknown>, tool: ChangeTool): { symbol: string; parsed: NonNullable<ReturnType<typeof parseSymbolId>> } {
  const symbol = stringArg(args, 'symbol', tool);
  const parsed = parseSymbolId(symbol);
  if (!parsed) throw new ToolError(`${tool}: '${symbol}' is not a symbol id; get one (rift://symbol/…) from get_symbol`);
  return { symbol, parsed };
}

/** A file's bytes now; null when absent or unreadable (the service then refuses on its own terms). */
function bytesOf(f: ProjectFile): Uint8Array | null {
  const r = f.files.read(f.path, FILE_BYTES_MAX);
  return r.ok ? r.bytes : null;
}

function textOf(f: ProjectFile): string | null {
  const bytes = bytesOf(f);
  return bytes === null || looksBinary(bytes) ? null : decodeText(bytes).text;
}

export const replaceSymbolTool: Tool<ToolContext> = {
  name: 'replace_symbol',
  description: 'Replace a whole declaration (docs included) by its id from get_symbol with body, verbatim.',
  mutating: true,
  parameters: {
    type: 'object',
    required: ['symbol', 'body'],
    properties: { symbol: { type: 'string', description: 'rift://symbol/… id' }, body: { type: 'string' } },
  },
  async run(args, ctx) {
    const change = service(ctx, 'replace_symbol');
    const { symbol, parsed } = symbolArg(args, 'replace_symbol');
    const body = stringArg(args, 'body', 'replace_symbol');
    const file = projectFile(ctx, parsed.path);
    const detail = [symbol, ...body.split('\n').slice(0, DETAIL_LINES_MAX).map((l) => `+${l}`)];
    const before = textOf(file);
    const result = await applyChange(ctx, 'replace_symbol', [{ file, kind: 'edit' }], detail, () => change.replaceSymbol({ symbol, body }));
    const after = result.status === 'applied' ? textOf(file) : null;
    if (before !== null && after !== null) ctx.lastDiff = appliedDiff(file.abs, before, after);
    return withHooks(ctx, 'replace_symbol', result);
  },
};

export const patchTool: Tool<ToolContext> = {
  name: 'patch',
  description: 'Apply a unified diff (--- a/path, +++ b/path, @@ hunks) to one or more files, all or nothing.',
  mutating: true,
  parameters: { type: 'object', required: ['patch'], properties: { patch: { type: 'string' } } },
  async run(args, ctx) {
    const change = service(ctx, 'patch');
    const patch = stringArg(args, 'patch', 'patch');
    let parsed;
    try {
      parsed = parsePatch(Buffer.from(patch, 'utf8'));
    } catch (e) {
      throw failure('patch', e);
    }
    // Every path either side of the diff, created files included (undo deletes those).
    const files = new Map<string, { file: ProjectFile; kind: 'write' | 'edit' }>();
    for (const f of parsed) {
      for (const path of [f.oldPath, f.newPath]) {
        if (path === null || projectPathViolation(path) !== null) continue;
        const file = projectFile(ctx, path);
        if (!files.has(file.abs)) files.set(file.abs, { file, kind: f.oldPath === null ? 'write' : 'edit' });
      }
    }
    const detail = patch.split('\n').slice(0, DETAIL_LINES_MAX);
    const result = await applyChange(ctx, 'patch', [...files.values()], detail, () => change.patch({ patch }));
    return withHooks(ctx, 'patch', result);
  },
};

export const renameSymbolTool: Tool<ToolContext> = {
  name: 'rename_symbol',
  description:
    "Rename a declaration (its id from get_symbol) and every reference to it across files, as the language's engine (typescript-language-server, pyright, …) proposes; all files change together or none does.",
  mutating: true,
  parameters: {
    type: 'object',
    required: ['symbol', 'new_name'],
    properties: { symbol: { type: 'string', description: 'rift://symbol/… id' }, new_name: { type: 'string' } },
  },
  async run(args, ctx) {
    const change = service(ctx, 'rename_symbol');
    const { symbol } = symbolArg(args, 'rename_symbol');
    const newName = stringArg(args, 'new_name', 'rename_symbol');
    const root = rootOf(ctx);
    const detail = [`${symbol} → ${newName}`];
    let result: ChangeResult;
    try {
      // The engine decides which files change; the gate and the undo journal see them before any is written.
      result = await change.renameSymbol({ symbol, new_name: newName }, {}, async (writes) => {
        const paths = writes.map((w) => w.path);
        const files = paths.map((p) => projectFile({ cwd: root }, p));
        await ctx.approval.authorizeChange(ctx.gate, { tool: 'rename_symbol', files: files.map((f) => ({ absPath: f.abs, kind: 'edit' as const })), detail: [...detail, ...paths] }, ctx.signal);
        if (ctx.signal.aborted) throw new ToolError('cancelled by user');
        for (const f of files) ctx.journal.record(f, bytesOf(f));
      });
    } catch (e) {
      throw failure('rename_symbol', e);
    }
    if (result.status === 'refused') throw new ToolError(renderChangeResult('rename_symbol', result, root));
    return withHooks(ctx, 'rename_symbol', result);
  },
};
