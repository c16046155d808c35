import type { TextEdit, WorkspaceEdit } from 'vscode-languageserver-protocol';
import { digest8 } from '../core/digest.ts';
import { limitExceeded } from '../core/errors.ts';
import { ENGINE_EDIT_FILES_MAX } from '../core/limits.ts';
import { uriToPath } from '../engine/client.ts';
import { LineIndex, type PositionEncoding } from '../engine/position.ts';
import type { ChangeWarning } from '../protocol/change.ts';
import type { ChangeContext } from './plan.ts';
import { targetPolicy } from './plan.ts';
import type { FileWrite } from './publish.ts';
import { sourceChanged, targetExists, unsupported, type Address } from './refusal.ts';
import { resolveTarget } from './target.ts';

// An engine's WorkspaceEdit compiled into the same witnessed FileWrites every change tool
// produces (spec "rename", reference F.13 rules 142 and 147). Each edited file resolves through
// the [source] policy and is read now; every range must land on character boundaries of those
// bytes, and with `expect` set each replaced range must hold exactly that text — the old name —
// so an engine working from a stale view of a file refuses `source_unchanged` instead of landing
// in the wrong place. Publication re-verifies the bytes once more before writing.

export interface CompileOptions {
  encoding: PositionEncoding;
  engine: string;
  addresses: Address[];
  /** Text every replaced range must hold (a rename's old name). */
  expect?: string;
  /** Bytes already planned for a path (a moved file, edited before it moves). */
  planned?: Map<string, Buffer>;
}

export interface CompiledEdits {
  /** Final bytes per project path, in the order the engine named them. */
  files: Map<string, { before: Buffer; after: Buffer; mode: number | null }>;
  warnings: ChangeWarning[];
}

/** The text edits of a WorkspaceEdit per project path; file operations refuse `unsupported`. */
function editsByPath(root: string, edit: WorkspaceEdit, engine: string): Map<string, TextEdit[]> {
  const out = new Map<string, TextEdit[]>();
  const add = (uri: string, edits: readonly TextEdit[]) => {
    const path = uriToPath(root, uri);
    if (path === null) throw unsupported(`${engine} proposed an edit to ${uri.startsWith('file:') ? 'a file outside the workspace' : uri}; rift writes only inside the workspace root`);
    const list = out.get(path) ?? [];
    list.push(...edits);
    out.set(path, list);
  };
  for (const [uri, edits] of Object.entries(edit.changes ?? {})) add(uri, edits);
  for (const change of edit.documentChanges ?? []) {
    if ('kind' in change) {
      throw unsupported(`${engine} proposed a file ${change.kind} alongside its text edits; rift applies only text edits from engines`);
    }
    add(change.textDocument.uri, change.edits);
  }
  if (out.size > ENGINE_EDIT_FILES_MAX) throw limitExceeded('engine edit files', ENGINE_EDIT_FILES_MAX, out.size, [['engine', engine]]);
  return out;
}

export function compileWorkspaceEdit(ctx: ChangeContext, edit: WorkspaceEdit, opts: CompileOptions): CompiledEdits {
  const policy = targetPolicy(ctx);
  const files: CompiledEdits['files'] = new Map();
  const warnings: ChangeWarning[] = [];
  for (const [path, edits] of editsByPath(ctx.root, edit, opts.engine)) {
    let before: Buffer;
    let mode: number | null = null;
    let target = path;
    const planned = opts.planned?.get(path);
    if (planned) before = planned;
    else {
      const t = resolveTarget(policy, path, 'write', opts.addresses);
      if (t.bytes === null) throw targetExists(opts.addresses, [path], true);
      if (t.warning) warnings.push(t.warning);
      before = t.bytes;
      mode = t.mode;
      target = t.target;
    }
    files.set(target, { before, after: applyEdits(path, before, edits, opts), mode });
  }
  return { files, warnings };
}

function applyEdits(path: string, bytes: Buffer, edits: readonly TextEdit[], opts: CompileOptions): Buffer {
  const lines = new LineIndex(bytes, opts.encoding);
  const spans = edits.map((e) => {
    const start = lines.offset(e.range.start);
    const end = lines.offset(e.range.end);
    if (start === null || end === null || end < start) {
      throw sourceChanged(opts.addresses, [path], digest8(bytes), `${opts.engine} proposed a range that does not fit the current bytes`);
    }
    return { start, end, text: Buffer.from(e.newText, 'utf8') };
  });
  spans.sort((a, b) => a.start - b.start || a.end - b.end);
  const parts: Buffer[] = [];
  let at = 0;
  for (const s of spans) {
    if (s.start < at) throw unsupported(`${opts.engine} proposed overlapping edits in ${path}; rift applies only disjoint edits`);
    if (opts.expect !== undefined) {
      const found = bytes.subarray(s.start, s.end).toString('utf8');
      if (found !== opts.expect) throw sourceChanged(opts.addresses, [path], opts.expect, found);
    }
    parts.push(bytes.subarray(at, s.start), s.text);
    at = s.end;
  }
  parts.push(bytes.subarray(at));
  return Buffer.concat(parts);
}

/** The compiled files as FileWrites (`before` is what publication re-verifies). */
export function writesOf(compiled: CompiledEdits): FileWrite[] {
  return [...compiled.files].map(([target, f]) => ({ target, before: f.before, after: f.after, mode: f.mode, link: false }));
}
