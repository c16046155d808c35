import type { Node, Tree } from 'web-tree-sitter';
import { lineBreakAt, lineStartAt } from '../core/lines.ts';
import { SyntaxLimitError, withTree } from '../syntax/runtime.ts';
import { declarationsOfTree } from '../syntax/declarations.ts';
import { BODY_FIELDS, DECORATOR_KINDS, TEXT_LAYOUT } from '../syntax/layout.ts';
import type { SourceText } from '../syntax/text.ts';
import type { ByteRange, Declaration, LanguageId } from '../syntax/types.ts';

// What one revision of a declaration looks like, split the way a timeline tells changes
// apart: the signature (the header before the body: name, parameters, return type,
// modifiers), the decorators (Python decorators, TypeScript decorators, Java annotations,
// Rust attributes; Go has none), and the whole text (body, docs and the rest).

export type VersionKind = 'introduced' | 'body_changed' | 'signature_changed' | 'removed' | 'decorators_changed';

export interface DeclarationParts {
  whole: string;
  signature: string;
  decorators: string;
}



const utf8 = new TextDecoder('utf-8');

/**
 * Where a declaration stands in one version of its file (byte offsets), for telling whether an
 * edit of the file may have changed it without parsing: its whole span, the indentation of its
 * first line, and the header (first line, with docs and decorators above it) of each declaration
 * containing it, whose names make its qualified name.
 */
export interface DeclarationPlace {
  span: ByteRange;
  indent: number;
  headers: ByteRange[];
  /** Where the outermost declaration holding it (or it, at the top level) starts its item. */
  outerItem: number;
  /**
   * The outermost declaration holding it in the text (it, at the top level), while its start is
   * known (null once an edit reached its start): its whole span, the end -1 once an edit reached
   * past it; and `head`, the bytes from its start through the line before its body's first line
   * (its first line at least). An edit reaching it may be looked at by parsing it alone.
   */
  outer: (ByteRange & { head: number }) | null;
}

/**
 * Parses a part of a file (as `withTree` does) for `locateInSlice` and `locateNested`: a walk
 * passes one that reuses the tree of the part it parsed last (the next version's part differs by
 * the commit's edit).
 */
export type PartParser = typeof withTree;

export interface Located {
  parts: DeclarationParts;
  place: DeclarationPlace;
}

/**
 * The parts of the declaration named `qname` in a parsed file: null when the file declares no
 * such name, `unparseable` when the tree has errors. `outerItem`, when given, is where the
 * top-level declaration holding it starts, with nothing before it changed since a version whose
 * qualified names were extracted from the whole file: then only that declaration's subtree is
 * walked (what precedes it, and so any same-named declaration that would number it `~2`, is as
 * it was); the whole file is walked when the name is not found there.
 */
export function locateDeclaration(
  language: LanguageId,
  tree: Tree,
  source: SourceText,
  qname: string,
  outerItem: number | null,
): Located | null | 'unparseable' {
  if (tree.rootNode.hasError) return 'unparseable';
  let all: Declaration[] | null = null;
  if (outerItem !== null) {
    const unit = source.toUnit(outerItem);
    const top = tree.rootNode.firstNamedChildForIndex(unit);
    if (top && top.startIndex <= unit && unit < top.endIndex) {
      // The extractors walk from `rootNode` down, so a top-level node stands in for the file.
      all = declarationsOfTree(language, { rootNode: top } as Tree, source);
      if (!all.some((x) => x.qualifiedName === qname)) all = null;
    }
  }
  return place(tree, source, all ?? declarationsOfTree(language, tree, source), qname);
}

/** The declaration `qname` among the declarations `all` of a parsed tree, with its place. */
function place(tree: Tree, source: SourceText, all: readonly Declaration[], qname: string): Located | null {
  const d = all.find((x) => x.qualifiedName === qname);
  if (!d) return null;
  const bytes = source.bytes;
  const headers: ByteRange[] = [];
  // Its containers, innermost first: the outermost one names it; those around it in the text
  // (a Go method's receiver type, declared apart, is not) hold it, the declaration itself at the top.
  let outer = d;
  let holder = d;
  for (let c = d.container; c !== null; ) {
    const container = all.find((x) => x.qualifiedName === c);
    if (!container) break;
    headers.push({ start: container.span.start, end: lineBreakAt(bytes, container.itemSpan.start) });
    if (holder === outer && container.span.start <= d.span.start && d.span.end <= container.span.end) holder = container;
    outer = container;
    c = container.container;
  }
  const first = lineStartAt(bytes, d.span.start);
  let indent = first;
  while (indent < d.span.start && (bytes[indent] === 0x20 || bytes[indent] === 0x09)) indent++;
  return {
    parts: partsOf(tree.rootNode, source, d),
    place: {
      span: d.span,
      indent: indent - first,
      headers,
      outerItem: outer.itemSpan.start,
      outer: { ...holder.span, head: headLength(tree.rootNode, source, holder) },
    },
  };
}

/** The bytes from `d`'s start through the line before its body's first line, its first line at least. */
function headLength(root: Node, source: SourceText, d: Declaration): number {
  const bytes = source.bytes;
  const body = bodyStart(root, source, d);
  return Math.max(lineStartAt(bytes, body), Math.min(lineBreakAt(bytes, d.span.start) + 1, d.span.end)) - d.span.start;
}

/** Where `d`'s body or value starts (what is not its signature): its item's end when it has none. */
function bodyStart(root: Node, source: SourceText, d: Declaration): number {
  const item = nodeAt(root, source, d);
  for (const field of BODY_FIELDS) {
    const body = item?.childForFieldName(field);
    if (body) return source.toByte(body.startIndex);
  }
  return d.itemSpan.end;
}

/**
 * The declaration `qname` in `bytes`, found by parsing only `slice`, the whole span an
 * outermost declaration is assumed to have in this version (its span in a version parsed before,
 * moved by an edit inside it). Null when that cannot be shown here — the slice does not parse
 * without errors as exactly one declaration spanning all of it, or does not hold `qname` — and
 * the caller parses the whole file. Offsets are the file's. Declarations numbered among
 * same-named ones (`~2`) are never looked for this way.
 */
export function locateInSlice(language: LanguageId, bytes: Uint8Array, slice: ByteRange, qname: string, parse: PartParser = withTree): Located | null {
  if (qname.includes('~')) return null;
  const part = bytes.subarray(slice.start, slice.end);
  let located: Located | null = null;
  try {
    parse(language, part, (tree, source) => {
      if (tree.rootNode.hasError) return;
      const all = declarationsOfTree(language, tree, source);
      // The declarations no other one holds (a Go method's receiver type is declared apart).
      const outers = all.filter((x) => !all.some((y) => y !== x && y.span.start <= x.span.start && x.span.end <= y.span.end));
      if (outers.length !== 1 || outers[0].span.start !== 0 || outers[0].span.end !== part.length) return;
      const found = place(tree, source, all, qname);
      if (found === null) return;
      const shift = (r: ByteRange) => ({ start: r.start + slice.start, end: r.end + slice.start });
      const p = found.place;
      located = {
        parts: found.parts,
        place: { span: shift(p.span), indent: p.indent, headers: p.headers.map(shift), outerItem: p.outerItem + slice.start, outer: p.outer && { ...p.outer, ...shift(p.outer) } },
      };
    });
  } catch (e) {
    if (!(e instanceof SyntaxLimitError)) throw e;
  }
  return located;
}

/**
 * The parts of the declaration `qname` in `bytes`, found by parsing only its own lines (`lines`:
 * from the start of the line its span starts on, at `start`, to where it ends) below the headers
 * of the declarations holding it (`headers`, innermost first: each one's lines from its start
 * through its first line), closed again in a language of braces — for an edit inside a
 * declaration held by a long one (a method of a long class), which parsing the holder alone
 * would pay for whole. Null when that cannot be shown here: the text does not parse without
 * errors, or `qname` is not found spanning exactly what it spans in the file (a header of more
 * than one line, say), or it is numbered among same-named ones.
 */
export function locateNested(language: LanguageId, bytes: Uint8Array, headers: readonly ByteRange[], lines: ByteRange, start: number, qname: string, parse: PartParser = withTree): DeclarationParts | null {
  if (qname.includes('~')) return null;
  const opened = [...headers].reverse().map((h) => Buffer.concat([bytes.subarray(lineStartAt(bytes, h.start), h.end), NEWLINE]));
  const prefix = opened.reduce((n, b) => n + b.length, 0);
  const closed = TEXT_LAYOUT[language].blocks === 'indent' ? [] : headers.map(() => CLOSING_BRACE);
  const text = Buffer.concat([...opened, bytes.subarray(lines.start, lines.end), ...closed]);
  let parts: DeclarationParts | null = null;
  try {
    parse(language, text, (tree, source) => {
      if (tree.rootNode.hasError) return;
      const d = declarationsOfTree(language, tree, source).find((x) => x.qualifiedName === qname);
      if (d && d.span.start === prefix + start - lines.start && d.span.end === prefix + lines.end - lines.start) parts = partsOf(tree.rootNode, source, d);
    });
  } catch (e) {
    if (!(e instanceof SyntaxLimitError)) throw e;
  }
  return parts;
}

const NEWLINE = Buffer.from('\n');
const CLOSING_BRACE = Buffer.from('\n}');

/**
 * Where the outermost declaration starting at `start` ends in `bytes`, found by its lines alone,
 * for a version whose edit reached past the end it had: the lines after the one holding `from`
 * (where its body or the edit starts: what precedes was the declaration's) are read for the first
 * one indented no deeper than the declaration's first line, not blank — in Python, not a comment
 * and not a closing bracket, the declaration ending with the code line before it; elsewhere,
 * starting with `}`, the declaration ending with that line. Null when the lines cannot settle it:
 * the file ends first in a brace language, or a comment ends the declaration (a line of its own,
 * or on its last line), which a parser may leave out of it. A wrong guess is caught by
 * `locateInSlice`: cut short or run long, the part does not parse as exactly one declaration.
 */
export function declarationEnd(language: LanguageId, bytes: Uint8Array, start: number, from: number): number | null {
  const first = lineStartAt(bytes, start);
  let indent = first;
  while (indent < bytes.length && (bytes[indent] === 0x20 || bytes[indent] === 0x09)) indent++;
  const depth = indent - first;
  const python = TEXT_LAYOUT[language].blocks === 'indent';
  /** The end of the last line holding code before the closing line, and whether a comment line followed it. */
  let last = lineBreakAt(bytes, from);
  let comment = false;
  for (let nl = bytes.indexOf(0x0a, from); nl !== -1; nl = bytes.indexOf(0x0a, nl + 1)) {
    let at = nl + 1;
    while (at < bytes.length && (bytes[at] === 0x20 || bytes[at] === 0x09)) at++;
    const c = bytes[at];
    if (at >= bytes.length || c === 0x0a || c === 0x0d) continue;
    const end = lineBreakAt(bytes, at);
    if (!python) {
      if (c === 0x7d && at - (nl + 1) <= depth) return codeEnd(bytes, end);
      continue;
    }
    // A comment indented no deeper than the declaration, before the line closing it, lies outside
    // it (tree-sitter's Python scanner ends the block before such a comment); one deeper may not.
    // A line starting with a closing bracket continues the one before (no statement starts so).
    if (c === 0x23) comment ||= at - (nl + 1) > depth;
    else if (at - (nl + 1) <= depth && c !== 0x29 && c !== 0x5d && c !== 0x7d) return comment ? null : codeEnd(bytes, last);
    else [last, comment] = [end, false];
  }
  return python && !comment ? codeEnd(bytes, last) : null;
}

/** The end of the line ending at `end` without its trailing blanks; null when it holds a comment marker. */
function codeEnd(bytes: Uint8Array, end: number): number | null {
  let e = end;
  while (e > 0 && (bytes[e - 1] === 0x20 || bytes[e - 1] === 0x09 || bytes[e - 1] === 0x0d)) e--;
  const line = Buffer.from(bytes.buffer, bytes.byteOffset + lineStartAt(bytes, e), e - lineStartAt(bytes, e));
  return line.includes('#') || line.includes('//') || line.includes('/*') ? null : e;
}


function partsOf(root: Node, source: SourceText, d: Declaration): DeclarationParts {
  const bytes = source.bytes;
  const text = (start: number, end: number) => utf8.decode(bytes.subarray(start, end));
  const headerEnd = bodyStart(root, source, d);
  // Decorators anywhere in the span before the body: inside the item (TypeScript, Java) or
  // before it (Python's decorated_definition, Rust's attribute items).
  const decorators: Array<{ start: number; end: number }> = [];
  const visit = (n: Node) => {
    const r = source.range(n.startIndex, n.endIndex);
    if (r.end <= d.span.start || r.start >= headerEnd) return;
    if (DECORATOR_KINDS.has(n.type)) {
      decorators.push(r);
      return;
    }
    for (const c of n.namedChildren) if (c) visit(c);
  };
  const top = coveringNode(root, source, d.span.start, d.span.end);
  if (top) visit(top);
  let signature = '';
  let at = d.itemSpan.start;
  for (const r of decorators) {
    if (r.end <= at) continue;
    if (r.start > at) signature += text(at, Math.min(r.start, headerEnd));
    at = Math.max(at, r.end);
  }
  if (at < headerEnd) signature += text(at, headerEnd);
  return {
    whole: text(d.span.start, d.span.end),
    signature: signature.replace(/\s+/g, ' ').trim(),
    decorators: decorators.map((r) => text(r.start, r.end).replace(/\s+/g, ' ')).join('\n'),
  };
}

/** The declaration's own node: the named node whose range is exactly the item span. */
function nodeAt(root: Node, source: SourceText, d: Declaration): Node | null {
  let n: Node | null = root.namedDescendantForIndex(source.toUnit(d.itemSpan.start), source.toUnit(d.itemSpan.end));
  while (n) {
    const r = source.range(n.startIndex, n.endIndex);
    if (r.start === d.itemSpan.start && r.end === d.itemSpan.end && (!d.nodeKind || n.type === d.nodeKind)) return n;
    if (r.start < d.itemSpan.start || r.end > d.itemSpan.end) return null;
    n = n.parent;
  }
  return null;
}

/** The smallest node covering `[start, end)`. */
function coveringNode(root: Node, source: SourceText, start: number, end: number): Node | null {
  return root.namedDescendantForIndex(source.toUnit(start), source.toUnit(Math.max(start, end - 1)));
}

/**
 * What a revision did to a declaration, from its state after the revision and before it
 * (null: absent). Null when the revision left it as it was.
 */
export function classify(before: DeclarationParts | null, after: DeclarationParts | null): VersionKind | null {
  if (!before && !after) return null;
  if (!before) return 'introduced';
  if (!after) return 'removed';
  if (before.whole === after.whole) return null;
  if (before.signature !== after.signature) return 'signature_changed';
  if (before.decorators !== after.decorators) return 'decorators_changed';
  return 'body_changed';
}
