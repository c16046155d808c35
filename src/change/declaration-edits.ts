import { digest8, sha256Hex } from '../core/digest.ts';
import { invalidField } from '../core/errors.ts';
import { parseNodeId, parseSymbolId } from '../core/ids.ts';
import type { SymbolRow } from '../index/store.ts';
import type { ChangeWarning } from '../protocol/change.ts';
import { declarationAtRange, extractDeclarations } from '../syntax/declarations.ts';
import { initSyntax } from '../syntax/runtime.ts';
import { countBreaks, prevailingEol, withEol } from '../core/lines.ts';
import { indentBefore, reindent, removalRange, separatorAfter, trimTrailingBreaks } from './layout.ts';
import type { ChangeContext, Plan } from './plan.ts';
import { targetPolicy } from './plan.ts';
import { count, failed, refuse, sourceChanged, targetExists, type Address } from './refusal.ts';
import { checkReferences, nameOffset } from './references.ts';
import { resolveTarget, type Target } from './target.ts';

// Declaration and node edits (reference F.11, F.13 rules 148–152; the reference check is in references.ts). Every
// edit resolves against current bytes first; the plan carries the exact bytes to publish.

const L = 'latin1';

export interface ResolvedSymbol {
  address: Address;
  row: SymbolRow;
  target: Target;
  bytes: Buffer;
}

/** A declaration by SymbolId, from the index, with the disk verified equal to what was indexed. */
export function resolveSymbol(ctx: ChangeContext, id: string, field: 'symbol' | 'anchor'): ResolvedSymbol {
  const parsed = parseSymbolId(id);
  if (!parsed) throw invalidField(field, 'not a rift symbol address');
  const address: Address = { kind: 'symbol', symbol: id };
  const store = ctx.indexer.store;
  const file = store.file(parsed.path);
  const rows = file ? store.symbolsOfFile(parsed.path).filter((r) => r.qname === parsed.qualifiedName && r.language === parsed.language) : [];
  if (rows.length === 0 || !file) throw targetExists([address], [parsed.path], true);
  if (rows.length > 1) {
    throw refuse('ambiguous_target', [failed('target_exists', [address], [parsed.path], count(1), count(rows.length))]);
  }
  const target = resolveTarget(targetPolicy(ctx), parsed.path, 'write', [address]);
  if (!target.bytes) throw targetExists([address], [parsed.path], true);
  // The store keeps the indexed bytes' digest: equal digests mean the bytes the spans describe.
  if (sha256Hex(target.bytes) !== file.sha256) throw sourceChanged([], [parsed.path], file.sha256.slice(0, 8), digest8(target.bytes));
  return { address, row: rows[0], target, bytes: target.bytes };
}

function write(target: Target, after: string): Plan['writes'][number] {
  return { target: target.target, before: target.bytes, after: Buffer.from(after, L), mode: target.mode, link: false };
}

function warningsOf(target: Target): ChangeWarning[] {
  return target.warning ? [target.warning] : [];
}

export function replaceSymbol(ctx: ChangeContext, symbol: string, body: Buffer): Plan {
  const r = resolveSymbol(ctx, symbol, 'symbol');
  const s = r.bytes.toString(L);
  const after = s.slice(0, r.row.span_start) + body.toString(L) + s.slice(r.row.span_end);
  return { writes: [write(r.target, after)], addresses: [r.address], warnings: warningsOf(r.target) };
}

export async function removeSymbol(ctx: ChangeContext, symbol: string, force: boolean): Promise<Plan> {
  const r = resolveSymbol(ctx, symbol, 'symbol');
  const s = r.bytes.toString(L);
  const range = removalRange(s, r.row.span_start, r.row.span_end);
  const after = s.slice(0, range.start) + s.slice(range.end);
  const checked = await checkReferences(ctx, {
    address: r.address,
    path: r.target.target,
    bytes: r.bytes,
    nameAt: nameOffset(r.bytes, r.row.item_start, r.row.item_end, r.row.name),
    removed: range,
    force,
  });
  return { writes: [write(r.target, after)], addresses: [r.address], warnings: [...warningsOf(r.target), ...checked] };
}

export interface InsertRequest {
  anchor: string | null;
  file: string | null;
  position: 'before' | 'after';
  createMissing: boolean;
}

/** Blank lines PEP 8 asks between top-level Python definitions, where the file shows none to follow. */
const PYTHON_TOP_LEVEL_BLANK_LINES = 2;

/**
 * How many blank lines separate sibling declarations (those of one container) in this file:
 * the separation they most often have (the larger on a tie), else two between top-level Python
 * definitions (PEP 8), else one.
 */
function siblingSeparation(ctx: ChangeContext, path: string, s: string, container: string | null, language: string | null): number {
  const siblings = ctx.indexer.store
    .symbolsOfFile(path)
    .filter((r) => r.container === container)
    .sort((a, b) => a.span_start - b.span_start);
  const seen = new Map<number, number>();
  for (let i = 1; i < siblings.length; i++) {
    const gap = s.slice(siblings[i - 1].span_end, siblings[i].span_start);
    if (!/^[ \t\r\n]*$/.test(gap)) continue;
    const blank = Math.max(0, countBreaks(gap) - 1);
    seen.set(blank, (seen.get(blank) ?? 0) + 1);
  }
  if (seen.size > 0) return [...seen.entries()].sort((a, b) => b[1] - a[1] || b[0] - a[0])[0][0];
  return language === 'python' && container === null ? PYTHON_TOP_LEVEL_BLANK_LINES : 1;
}

export function insertSymbol(ctx: ChangeContext, req: InsertRequest, body: Buffer): Plan {
  const b = body.toString(L);
  if (req.anchor !== null) {
    const r = resolveSymbol(ctx, req.anchor, 'anchor');
    const s = r.bytes.toString(L);
    const eol = prevailingEol(s);
    const indent = indentBefore(s, r.row.span_start);
    // The body's lines take the file's ending, so a CRLF file gets no LF lines.
    const text = withEol(reindent(trimTrailingBreaks(b), indent), eol);
    const separator = eol.repeat(siblingSeparation(ctx, r.target.target, s, r.row.container, r.row.language) + 1);
    const after =
      req.position === 'before'
        ? s.slice(0, r.row.span_start) + text + separator + indent + s.slice(r.row.span_start)
        : s.slice(0, r.row.span_end) + separator + indent + text + s.slice(r.row.span_end);
    return { writes: [write(r.target, after)], addresses: [r.address], warnings: warningsOf(r.target) };
  }
  const path = req.file!;
  const target = resolveTarget(targetPolicy(ctx), path, 'write');
  if (target.bytes === null) {
    if (!req.createMissing) throw targetExists([], [path], true);
    return { writes: [{ target: target.target, before: null, after: body, mode: null, link: false }], addresses: [], warnings: warningsOf(target) };
  }
  const s = target.bytes.toString(L);
  let after: string;
  if (s.length === 0) after = b;
  else {
    const eol = prevailingEol(s);
    const text = withEol(b, eol);
    const blank = siblingSeparation(ctx, target.target, s, null, ctx.indexer.currentSelection().syntaxLanguage(target.target));
    after = req.position === 'before' ? text + separatorAfter(text, eol, blank) + s : s + separatorAfter(s, eol, blank) + text;
  }
  return { writes: [write(target, after)], addresses: [], warnings: warningsOf(target) };
}

interface ResolvedNode {
  address: Address;
  path: string;
  language: string;
  start: number;
  end: number;
  target: Target;
  bytes: Buffer;
}

/** A node by witnessed NodeId: the witness is recomputed over the current bytes. */
function resolveNode(ctx: ChangeContext, id: string): ResolvedNode {
  const parsed = parseNodeId(id);
  if (!parsed) throw invalidField('node', 'not a witnessed rift node address');
  const address: Address = { kind: 'node', node: id };
  const target = resolveTarget(targetPolicy(ctx), parsed.path, 'write', [address]);
  if (!target.bytes) throw targetExists([address], [parsed.path], true);
  const bytes = target.bytes;
  if (parsed.end > bytes.length) throw invalidField('node', 'outside the addressed file');
  const continuation = (i: number) => i < bytes.length && (bytes[i] & 0xc0) === 0x80;
  if (continuation(parsed.start) || continuation(parsed.end)) throw invalidField('node', 'off a UTF-8 character boundary');
  const observed = digest8(bytes.subarray(parsed.start, parsed.end));
  if (observed !== parsed.witness) throw sourceChanged([address], [parsed.path], parsed.witness, observed);
  return { address, path: parsed.path, language: parsed.language, start: parsed.start, end: parsed.end, target, bytes };
}

export function replaceNode(ctx: ChangeContext, node: string, body: Buffer): Plan {
  const r = resolveNode(ctx, node);
  const s = r.bytes.toString(L);
  const after = s.slice(0, r.start) + body.toString(L) + s.slice(r.end);
  return { writes: [write(r.target, after)], addresses: [r.address], warnings: warningsOf(r.target) };
}

export function insertNode(ctx: ChangeContext, node: string, position: 'before' | 'after', body: Buffer): Plan {
  const r = resolveNode(ctx, node);
  const s = r.bytes.toString(L);
  const at = position === 'before' ? r.start : r.end;
  const after = s.slice(0, at) + body.toString(L) + s.slice(at);
  return { writes: [write(r.target, after)], addresses: [r.address], warnings: warningsOf(r.target) };
}

export async function removeNode(ctx: ChangeContext, node: string, force: boolean): Promise<Plan> {
  const r = resolveNode(ctx, node);
  const language = ctx.indexer.currentSelection().syntaxLanguage(r.target.target);
  // The node's declaration is found by parsing the file: the grammars first.
  if (language) await initSyntax();
  const declaration = language ? declarationAtRange(extractDeclarations(language, r.bytes).declarations, { start: r.start, end: r.end }) : null;
  const s = r.bytes.toString(L);
  // A node naming a declaration takes the declaration's whole span, attached docs included.
  const span = declaration ? declaration.span : { start: r.start, end: r.end };
  const range = removalRange(s, span.start, span.end);
  const after = s.slice(0, range.start) + s.slice(range.end);
  const checked: ChangeWarning[] = declaration
    ? await checkReferences(ctx, {
        address: r.address,
        path: r.target.target,
        bytes: r.bytes,
        nameAt: nameOffset(r.bytes, declaration.itemSpan.start, declaration.itemSpan.end, declaration.name),
        removed: range,
        force,
      })
    : [{ kind: 'rift.remove.node_unchecked', message: 'the removed node names no declaration, so no reference check applies' }];
  return { writes: [write(r.target, after)], addresses: [r.address], warnings: [...warningsOf(r.target), ...checked] };
}
