// The machinery every language's relation walk shares: a pre-order cursor walk, the record of
// what was seen (deduplicated per enclosing declaration), and the local bindings of the
// functions the walk is inside. Positions in are parser code-unit indices; out, UTF-8 bytes.

import type { Language, Node, Tree, TreeCursor } from 'web-tree-sitter';
import type { SourceText } from '../text.ts';
import type { Declaration } from '../types.ts';
import type { FileRelations, ImportBinding, MemberType, ReceiverKind, Reference, ReferenceKind } from './types.ts';

/** Kinds of declarations that own members (`this`, `self` and fields resolve against them). */
export const TYPE_KINDS: ReadonlySet<string> = new Set([
  'class', 'interface', 'struct', 'enum', 'trait', 'record', 'annotation_type', 'type', 'type_alias',
]);

const kindTables = new WeakMap<Language, Map<string, Map<number, string>>>();

/** Named node kinds of `language` among `kinds`, by numeric kind id (an id compares without a string). */
function kindTable(language: Language, kinds: readonly string[]): Map<number, string> {
  let byList = kindTables.get(language);
  if (!byList) {
    byList = new Map();
    kindTables.set(language, byList);
  }
  const key = kinds.join(' ');
  let table = byList.get(key);
  if (!table) {
    const wanted = new Set(kinds);
    table = new Map();
    for (let id = 0; id < language.nodeTypeCount; id++) {
      const name = language.nodeTypeForId(id);
      if (name !== null && wanted.has(name) && language.nodeTypeIsNamed(id)) table.set(id, name);
    }
    byList.set(key, table);
  }
  return table;
}

/**
 * Walks every node in pre-order and hands the nodes of the given `kinds` to `visit`, which
 * returns false to skip the node's children. Other nodes are passed over by their numeric kind,
 * and the cursor is handed over as is, so a visitor materializes a Node only where it needs one.
 */
export function forEachNode(tree: Tree, kinds: readonly string[], visit: (cursor: TreeCursor, kind: string) => boolean): void {
  const table = kindTable(tree.language, kinds);
  const c = tree.walk();
  try {
    for (;;) {
      const kind = table.get(c.nodeTypeId);
      if ((kind === undefined || visit(c, kind)) && c.gotoFirstChild()) continue;
      while (!c.gotoNextSibling()) {
        if (!c.gotoParent()) return;
      }
    }
  } finally {
    c.delete();
  }
}

/**
 * Unwinds nested member accesses (`a.b.c` as `kind` nodes with `object` and `member` fields): the
 * innermost object and the member names read from it, outermost last. A `base` of null means a
 * member access the grammar left without one of its fields.
 */
export function memberChain(node: Node, kind: string, object: string, member: string): { base: Node | null; chain: string[] } {
  const chain: string[] = [];
  let base: Node | null = node;
  while (base !== null && base.type === kind) {
    const name = base.childForFieldName(member);
    if (name === null) return { base: null, chain };
    chain.unshift(name.text);
    base = base.childForFieldName(object);
  }
  return { base, chain };
}

export class RelationSink {
  private readonly byQname = new Map<string, Declaration>();
  private readonly seen = new Set<string>();
  private readonly references: Reference[] = [];
  private readonly imports: ImportBinding[] = [];
  private readonly members: MemberType[] = [];
  private readonly memberKeys = new Set<string>();
  /** Short names declared at file scope (bare names a reference may mean). */
  readonly topLevel = new Set<string>();
  /**
   * Code-unit ranges whose file-scope calls are kept, with from `` (a script's top level, a
   * Python `__main__` guard): they say where execution starts. Elsewhere they are dropped.
   */
  readonly fileScope: Array<[number, number]> = [];

  constructor(
    readonly source: SourceText,
    private readonly declarations: readonly Declaration[],
  ) {
    for (const d of declarations) {
      this.byQname.set(d.qualifiedName, d);
      if (d.container === null) this.topLevel.add(d.name);
    }
  }

  /** The innermost declaration whose item span holds byte `at`. */
  enclosing(at: number): Declaration | null {
    const ds = this.declarations;
    let lo = 0;
    let hi = ds.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (ds[mid].itemSpan.start <= at) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (found < 0) return null;
    // Declarations nest, so the innermost one holding `at` is on the container chain of the
    // last one starting before it. Declarations without a container link (Rust impl members)
    // fall back to a scan.
    for (let d: Declaration | undefined = ds[found]; d !== undefined; d = d.container === null ? undefined : this.byQname.get(d.container)) {
      if (d.itemSpan.start <= at && at < d.itemSpan.end) return d;
    }
    for (let i = found - 1; i >= 0; i--) {
      const d = ds[i];
      if (d.itemSpan.start <= at && at < d.itemSpan.end) return d;
    }
    return null;
  }

  /** The innermost declaration holding byte `at` that owns members (a class, struct, …). */
  enclosingType(at: number): Declaration | null {
    for (let d = this.enclosing(at); d !== null; d = d.container === null ? null : (this.byQname.get(d.container) ?? null)) {
      if (TYPE_KINDS.has(d.kind)) return d;
    }
    return null;
  }

  declaration(qname: string): Declaration | undefined {
    return this.byQname.get(qname);
  }

  /** Records a reference made at code units `[start, end)`; file-scope references have no `from` and are dropped. */
  ref(kind: ReferenceKind, name: string, receiver: ReceiverKind, text: string | null, start: number, end: number): void {
    if (name === '') return;
    const bytes = this.source.toByte(start);
    const from = this.enclosing(bytes);
    if (from === null) {
      if (kind === 'calls' && this.fileScope.some(([s, e]) => s <= start && start < e)) this.refFrom('', kind, name, receiver, text, bytes, this.source.toByte(end));
      return;
    }
    this.refFrom(from.qualifiedName, kind, name, receiver, text, bytes, this.source.toByte(end));
  }

  /** Records a reference made by a named declaration (Rust `impl Trait for Type` names its type). */
  refFrom(from: string, kind: ReferenceKind, name: string, receiver: ReceiverKind, text: string | null, start: number, end: number): void {
    const key = `${from}\0${kind}\0${name}\0${receiver}\0${text ?? ''}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.references.push({ from, kind, name, receiver, text, start, end });
  }

  import(local: string, module: string, imported: string | null, reexport = false): void {
    if (local === '') return;
    this.imports.push({ local, module, imported, reexport });
  }

  /** The first type stated for a member wins (a later assignment does not retype it). */
  member(owner: string, member: string, type: string | null): void {
    if (type === null || type === '' || member === '') return;
    const key = `${owner}\0${member}`;
    if (this.memberKeys.has(key)) return;
    this.memberKeys.add(key);
    this.members.push({ owner, member, type });
  }

  importedLocals(): Set<string> {
    return new Set(this.imports.filter((i) => i.module !== '').map((i) => i.local));
  }

  finish(): FileRelations {
    return { imports: this.imports, references: this.references, members: this.members };
  }
}

/** What the walk knows of a local name: bound with a stated type, bound without one, or not local. */
export type LocalBinding = { type: string | null } | undefined;

/**
 * Local bindings of the functions the walk is inside, innermost last. A frame ends where its
 * function ends; `at` pops the frames a pre-order walk has left.
 */
export class Locals {
  private readonly frames: Array<{ end: number; names: Map<string, string | null>; self?: string }> = [];

  at(start: number): void {
    const f = this.frames;
    while (f.length > 0 && f[f.length - 1].end <= start) f.pop();
  }

  get depth(): number {
    return this.frames.length;
  }

  push(end: number): void {
    this.frames.push({ end, names: new Map() });
  }

  /** Names the receiver of the innermost frame (a Go method's `s` in `func (s *T) M()`). */
  bindSelf(name: string): void {
    const top = this.frames[this.frames.length - 1];
    if (top !== undefined) top.self = name;
  }

  /** The receiver name of the innermost frame that has one: closures inside a method keep it. */
  self(): string | undefined {
    for (let i = this.frames.length - 1; i >= 0; i--) {
      const name = this.frames[i].self;
      if (name !== undefined) return name;
    }
    return undefined;
  }

  /** Binds in the innermost frame; a name bound twice keeps the first stated type. */
  bind(name: string, type: string | null): void {
    const top = this.frames[this.frames.length - 1];
    if (top === undefined || name === '') return;
    const prev = top.names.get(name);
    if (prev === undefined || prev === null) top.names.set(name, type);
  }

  /** How a receiver written as the bare name `name` is qualified: a typed local, an untyped one, or a non-local name. */
  receiver(name: string): [ReceiverKind, string | null] {
    const local = this.lookup(name);
    if (local === undefined) return ['name', name];
    return local.type === null ? ['local', null] : ['typed', local.type];
  }

  /**
   * How a receiver read through `chain` from the identifier `base` is qualified: fields of a typed
   * local (`typed`, `Type#a.b`), a path from a non-local name when `paths` allows it, else unknown.
   */
  chained(base: string, chain: readonly string[], paths: boolean): [ReceiverKind, string | null] {
    const local = this.lookup(base);
    if (local === undefined) return paths ? ['path', [base, ...chain].join('.')] : ['local', null];
    return local.type === null ? ['local', null] : ['typed', `${local.type}#${chain.join('.')}`];
  }

  lookup(name: string): LocalBinding {
    for (let i = this.frames.length - 1; i >= 0; i--) {
      const t = this.frames[i].names.get(name);
      if (t !== undefined) return { type: t };
    }
    return undefined;
  }
}
