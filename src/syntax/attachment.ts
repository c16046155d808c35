// Shared declaration machinery: which preceding siblings attach to a declaration's span,
// the lexical scope stack, and qualified-name / `~N` / container bookkeeping.
// All positions here are parser code-unit indices; `Collector.finish` converts to bytes.

import type { Node } from 'web-tree-sitter';
import type { SourceText } from './text.ts';
import type { Declaration } from './types.ts';

// ---------------------------------------------------------------------------------------------
// Attachment

export interface AttachOptions {
  /** Does this preceding sibling attach (doc comment, attribute, decorator)? */
  attaches: (sibling: Node) => boolean;
  /** Siblings for which a blank line in the gap does not detach (decorators). */
  ignoresBlankLine?: (sibling: Node) => boolean;
  /** Only siblings that begin their own line attach (Go: a trailing `// x` belongs to the line above). */
  ownLine?: boolean;
  /** Called for each attached sibling, nearest first. */
  onAttached?: (sibling: Node) => void;
}

/**
 * Start (code units) of the whole-declaration span of `outer`: the earliest contiguous
 * preceding sibling that attaches. The gap between a sibling and what follows it must be
 * whitespace holding fewer than two line breaks, counting a newline the sibling's own token
 * swallowed (Rust `///` tokens end with one).
 */
export function attachedStart(outer: Node, source: SourceText, options: AttachOptions): number {
  const text = source.text;
  let start = outer.startIndex;
  let sibling = outer.previousSibling;
  while (sibling !== null && options.attaches(sibling)) {
    const end = sibling.endIndex;
    let breaks = end > 0 && text.charCodeAt(end - 1) === 10 ? 1 : 0;
    for (let i = end; i < start; i++) {
      const c = text.charCodeAt(i);
      if (c === 10) breaks++;
      else if (c !== 32 && c !== 9 && c !== 13 && c !== 12 && c !== 11) return start;
    }
    if (breaks >= 2 && !(options.ignoresBlankLine?.(sibling) ?? false)) return start;
    const s = sibling.startIndex;
    if (options.ownLine === true && !beginsLine(text, s)) return start;
    options.onAttached?.(sibling);
    start = s;
    sibling = sibling.previousSibling;
  }
  return start;
}

function beginsLine(text: string, index: number): boolean {
  for (let i = index - 1; i >= 0; i--) {
    const c = text.charCodeAt(i);
    if (c === 10) return true;
    if (c !== 32 && c !== 9 && c !== 13) return false;
  }
  return true;
}

/** Text of `[start, end)` in code units without any whitespace (`impl Foo< T >` → `Foo<T>`). */
export function compact(text: string): string {
  return text.replace(/\s+/g, '');
}

/** The named children of `node` of kind `type`, in order (`int a, b;` → its two declarators). */
export function namedChildrenOfType(node: Node, type: string): Node[] {
  const out: Node[] = [];
  const count = node.namedChildCount;
  for (let i = 0; i < count; i++) {
    const c = node.namedChild(i)!;
    if (c.type === type) out.push(c);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Facets

/** SymbolFacet in the reference's enum order; declaration facets are emitted in this order. */
export const SYMBOL_FACETS = [
  'namespace', 'module', 'type', 'value', 'callable', 'member', 'member_container', 'parameter',
  'type_parameter', 'constructible', 'extensible', 'implementable', 'macro', 'test', 'annotation',
  'extension', 'variant', 'enumeration', 'alias', 'property', 'abstract', 'constructor', 'static',
  'mutable', 'public', 'deprecated', 'entrypoint', 'operator', 'async', 'generator',
] as const;

export type SymbolFacet = (typeof SYMBOL_FACETS)[number];

const FACET_ORDER = new Map<string, number>(SYMBOL_FACETS.map((f, i) => [f, i]));

function orderFacets(facets: Iterable<SymbolFacet>): string[] {
  const out = [...new Set(facets)];
  out.sort((a, b) => FACET_ORDER.get(a)! - FACET_ORDER.get(b)!);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Scopes

/** A lexical region whose declarations qualify by `prefix`. */
export interface Frame {
  start: number;
  end: number;
  /** Qualified-name prefix for what is declared inside (no `~N`). */
  prefix: string;
  /** The declaration that opened the frame, or null for non-declaration containers (`impl`). */
  decl: Pending | null;
  /** Grammar kind that opened the frame. */
  type: string;
  /** Language-specific flags (exported class, interface body, …). */
  flags: number;
}

/**
 * Frames for a pre-order walk: entering a node pops the frames that ended before it. Frames
 * that are siblings of one another (several declarators in one statement) wait in `deferred`
 * until the walk reaches them, so the stack always holds properly nested regions.
 */
export class Scopes {
  private readonly stack: Frame[] = [];
  private readonly deferred: Frame[] = [];

  enter(start: number): Frame | null {
    for (;;) {
      const stack = this.stack;
      while (stack.length > 0 && stack[stack.length - 1].end <= start) stack.pop();
      const next = this.deferred[0];
      if (next === undefined || next.start > start) break;
      this.deferred.shift();
      if (next.end > start) stack.push(next);
    }
    const s = this.stack;
    return s.length > 0 ? s[s.length - 1] : null;
  }

  push(frame: Frame): void {
    this.stack.push(frame);
  }

  /** A frame that starts later than the current node (kept in start order). */
  defer(frame: Frame): void {
    let i = this.deferred.length;
    while (i > 0 && this.deferred[i - 1].start > frame.start) i--;
    this.deferred.splice(i, 0, frame);
  }
}

// ---------------------------------------------------------------------------------------------
// Collector

export interface Pending {
  name: string;
  /** Qualified name before `~N`. */
  base: string;
  kind: string;
  facets: SymbolFacet[];
  visibility: string | null;
  spanStart: number;
  spanEnd: number;
  itemStart: number;
  itemEnd: number;
  /** Grammar kind of the node at the item span. */
  nodeKind: string;
  /** Lexically enclosing declaration. */
  parent: Pending | null;
  /** For non-lexical containers (Rust `impl`, Go receivers): qualified names to try, in order. */
  containerHints: string[] | null;
  /** Final qualified name, set by `finish`. */
  qualifiedName: string;
}

/** What a language's declaration walk says of one declaration; `Collector` derives the rest. */
export interface PendingInput extends Omit<Pending, 'base' | 'parent' | 'containerHints' | 'qualifiedName'> {
  /** Qualified-name prefix this declaration's name extends (no `~N`); null at file scope. */
  prefix: string | null;
  parent?: Pending | null;
  containerHints?: string[] | null;
}

export class Collector {
  private readonly items: Pending[] = [];
  private sorted = true;

  constructor(
    private readonly source: SourceText,
    readonly separator: '.' | '::',
  ) {}

  join(prefix: string | null, name: string): string {
    return prefix === null || prefix === '' ? name : prefix + this.separator + name;
  }

  add(input: PendingInput): Pending {
    const p: Pending = {
      name: input.name,
      base: this.join(input.prefix, input.name),
      kind: input.kind,
      facets: input.facets,
      visibility: input.visibility,
      spanStart: input.spanStart,
      spanEnd: input.spanEnd,
      itemStart: input.itemStart,
      itemEnd: input.itemEnd,
      nodeKind: input.nodeKind,
      parent: input.parent ?? null,
      containerHints: input.containerHints ?? null,
      qualifiedName: '',
    };
    const last = this.items[this.items.length - 1];
    if (last !== undefined && last.itemStart > p.itemStart) this.sorted = false;
    this.items.push(p);
    return p;
  }

  finish(): Declaration[] {
    const items = this.items;
    if (!this.sorted) items.sort((a, b) => a.itemStart - b.itemStart); // stable: source order
    const seen = new Map<string, number>();
    for (const p of items) {
      const n = (seen.get(p.base) ?? 0) + 1;
      seen.set(p.base, n);
      p.qualifiedName = n === 1 ? p.base : `${p.base}~${n}`;
    }
    let names: Set<string> | null = null;
    const source = this.source;
    const out: Declaration[] = new Array(items.length);
    for (let i = 0; i < items.length; i++) {
      const p = items[i];
      let container: string | null = p.parent !== null ? p.parent.qualifiedName : null;
      if (container === null && p.containerHints !== null) {
        names ??= new Set(items.map((x) => x.qualifiedName));
        container = p.containerHints.find((h) => names!.has(h)) ?? null;
      }
      out[i] = {
        name: p.name,
        qualifiedName: p.qualifiedName,
        kind: p.kind,
        facets: orderFacets(p.facets),
        visibility: p.visibility,
        span: source.range(p.spanStart, p.spanEnd),
        itemSpan: source.range(p.itemStart, p.itemEnd),
        container,
        nodeKind: p.nodeKind,
      };
    }
    return out;
  }
}
