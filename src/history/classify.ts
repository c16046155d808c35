import type { Node } from 'web-tree-sitter';
import { declarationsOfTree } from '../syntax/declarations.ts';
import { SyntaxLimitError, withTree } from '../syntax/runtime.ts';
import type { SourceText } from '../syntax/text.ts';
import type { Declaration, LanguageId } from '../syntax/types.ts';

// What one revision of a declaration looks like, split the way a timeline tells changes
// apart: the signature (the header before the body: name, parameters, return type,
// modifiers), the decorators (Python decorators, TypeScript decorators, Java annotations,
// Rust attributes; Go has none), and the whole text (body, docs and the rest).

export type VersionKind = 'introduced' | 'body_changed' | 'signature_changed' | 'removed' | 'decorators_changed';

export interface DeclarationParts {
  whole: string;
  /** The whole span's bytes, to find the same text in another revision without parsing it. */
  text: Buffer;
  signature: string;
  decorators: string;
}

/** Grammar kinds that decorate a declaration in each language. */
const DECORATOR_KINDS = new Set(['decorator', 'annotation', 'marker_annotation', 'attribute_item', 'inner_attribute_item']);

/** The field holding a declaration's body or value: what is not its signature. */
const BODY_FIELDS = ['body', 'value'];

const utf8 = new TextDecoder('utf-8');

/**
 * The parts of the declaration named `qname` in a file: null when the file declares no such
 * name, `unparseable` when it does not parse (a tree with errors, or one past the syntax bounds).
 */
export function declarationParts(language: LanguageId, bytes: Uint8Array, qname: string): DeclarationParts | null | 'unparseable' {
  try {
    return withTree(language, bytes, (tree, source) => {
      if (tree.rootNode.hasError) return 'unparseable' as const;
      const d = declarationsOfTree(language, tree, source).find((x) => x.qualifiedName === qname);
      return d ? partsOf(tree.rootNode, source, d) : null;
    });
  } catch (e) {
    if (e instanceof SyntaxLimitError) return 'unparseable';
    throw e;
  }
}

function partsOf(root: Node, source: SourceText, d: Declaration): DeclarationParts {
  const bytes = source.bytes;
  const text = (start: number, end: number) => utf8.decode(bytes.subarray(start, end));
  const item = nodeAt(root, source, d);
  let headerEnd = d.itemSpan.end;
  if (item) {
    for (const field of BODY_FIELDS) {
      const body = item.childForFieldName(field);
      if (body) {
        headerEnd = source.toByte(body.startIndex);
        break;
      }
    }
  }
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
    text: Buffer.from(bytes.subarray(d.span.start, d.span.end)),
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
