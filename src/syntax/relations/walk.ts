// The relation walk every language shares, written once: frames of locals opened by functions,
// subtrees that say nothing (comments, strings), uses of the file's names as values, type
// names, and how a callee's receiver is qualified. A language names its node types in a
// `LanguageSyntax` table and, in its subclass of `RelationWalk`, visits only the nodes whose
// meaning is its own.

import type { Node, Tree, TreeCursor } from 'web-tree-sitter';
import { forEachNode, Locals, memberChain, type RelationSink } from './sink.ts';
import type { ReceiverKind, ReferenceKind } from './types.ts';

export interface LanguageSyntax {
  /** The language's own node kinds, handed to `visit`. */
  own: readonly string[];
  /** Nodes whose subtrees say nothing of relations: comments, strings, … */
  skip: readonly string[];
  /** Nodes that open a frame of locals: functions, methods, lambdas, closures. */
  functions: readonly string[];
  /** Nodes that name a value; a use of a file-scope or imported name is a reference. */
  identifiers: readonly string[];
  /** Fields in which an identifier binds a name or names a member rather than using one. */
  bindingFields: ReadonlySet<string>;
  /** Declarations that bind a local name when they stand inside a function (TS nested functions, classes). */
  localDeclarations?: ReadonlySet<string>;
  types?: TypeSyntax;
  receivers: ReceiverSyntax;
}

/** Where types are written: each node named here is handed to `typeTarget`. */
export interface TypeSyntax {
  /** A bare type name, referenced unless it is the name a declaration declares. */
  name: string;
  /** A type name that asks for inference rather than naming a type (Java `var`). */
  inferred?: string;
  /** A qualified type name (`pkg.T`, `a::B`). */
  qualified: string;
  /** Literals that construct the type in a field: [kind, field] (Go `T{…}`, Java `new T(…)`, Rust `T { … }`). */
  constructions?: readonly [string, string];
  /** Clauses whose named children are each a type extended (`extends A, B`). */
  supertypes?: readonly string[];
}

/** How a receiver is written: member access, `this` / `self`, `super`, and what may wrap it. */
export interface ReceiverSyntax {
  /** Member access (`a.b`): [kind, field of the object, field of the member]. */
  access: readonly [string, string, string];
  /** Whether members read from a non-local name form a path (`ns.a.f()`) rather than an unknown receiver. */
  paths: boolean;
  /** Expressions a receiver may be wrapped in (`(x)`, `&x`), and the field holding it (else the first named child). */
  wrappers?: ReadonlySet<string>;
  wrapped?: string;
  /** Whether `n` is `this` / `self`; `field` when it starts a field path. */
  isSelf(n: Node, field: boolean, locals: Locals): boolean;
  /** Whether `n` is `super`. */
  isSuper?(n: Node): boolean;
}

/**
 * The named type a type expression reaches: `step` reads one node and gives the name, the node
 * to read next (through pointers, generics, wrappers), or null where no single type is named.
 */
export function followType(t: Node | null, step: (t: Node) => Node | string | null): string | null {
  let next: Node | string | null = t;
  while (next !== null && typeof next !== 'string') next = step(next);
  return next;
}

/** One walk over one file; a language's subclass reads the nodes whose meaning is its own. */
export abstract class RelationWalk {
  readonly locals = new Locals();
  /** Names a bare identifier may mean outside the locals: file-scope declarations and imports. */
  readonly known: Set<string>;

  constructor(
    readonly sink: RelationSink,
    private readonly syntax: LanguageSyntax,
    known: Iterable<string> = sink.topLevel,
  ) {
    this.known = new Set(known);
  }

  /** Visits one of the language's own node kinds; false skips its children. */
  protected abstract visit(c: TreeCursor, type: string): boolean;

  /** Binds the parameters of a function whose frame has just opened: by default, its `parameters`. */
  protected enter(fn: Node, _type: string): void {
    this.parameters(fn.childForFieldName('parameters'));
  }

  /** Binds the names of a parameter list in the innermost frame. */
  protected abstract parameters(list: Node | null): void;

  /** Records a reference of `kind` to the type written at `t`. */
  protected abstract typeTarget(kind: ReferenceKind, t: Node): void;

  run(tree: Tree): void {
    const s = this.syntax;
    const types = s.types;
    const skip = new Set(s.skip);
    const functions = new Set(s.functions);
    const identifiers = new Set(s.identifiers);
    const supertypes = new Set(types?.supertypes);
    const construction = types?.constructions;
    const kinds = [...s.own, ...s.skip, ...s.functions, ...s.identifiers, ...supertypes];
    if (types !== undefined) kinds.push(types.name, types.qualified);
    if (construction !== undefined) kinds.push(construction[0]);
    const locals = this.locals;

    forEachNode(tree, kinds, (c, type) => {
      locals.at(c.startIndex);
      if (skip.has(type)) return false;
      if (identifiers.has(type)) {
        const name = c.nodeText;
        if (this.known.has(name) && !s.bindingFields.has(c.currentFieldName ?? '') && locals.lookup(name) === undefined) {
          this.sink.ref('references', name, 'none', null, c.startIndex, c.endIndex);
        }
        return false;
      }
      if (types !== undefined && type === types.name) {
        if (c.currentFieldName !== 'name' && c.nodeText !== types.inferred) this.sink.ref('references', c.nodeText, 'none', null, c.startIndex, c.endIndex);
        return false;
      }
      if (types !== undefined && type === types.qualified) {
        this.typeTarget('references', c.currentNode);
        return false;
      }
      if (supertypes.has(type)) {
        for (const t of c.currentNode.namedChildren) if (t !== null) this.typeTarget('extends', t);
        return false;
      }
      if (construction !== undefined && type === construction[0]) {
        const t = c.currentNode.childForFieldName(construction[1]);
        if (t !== null) this.typeTarget('constructs', t);
        return true;
      }
      if (locals.depth > 0 && s.localDeclarations?.has(type)) {
        const name = c.currentNode.childForFieldName('name');
        if (name !== null) locals.bind(name.text, null);
      }
      if (functions.has(type)) {
        const n = c.currentNode;
        locals.push(n.endIndex);
        this.enter(n, type);
        return true;
      }
      return this.visit(c, type);
    });
  }

  /** Records a reference named by `name` where it stands. */
  ref(kind: ReferenceKind, name: Node, receiver: ReceiverKind = 'none', text: string | null = null): void {
    this.sink.ref(kind, name.text, receiver, text, name.startIndex, name.endIndex);
  }

  /** Records `name` as a type reference, through `path` when one qualifies it (`a.B` names, `a.b.C` paths). */
  qualifiedRef(kind: ReferenceKind, name: Node, path: string): void {
    this.ref(kind, name, path.includes('.') ? 'path' : 'name', path);
  }

  /**
   * A callee or constructor that is a bare name not bound locally, or a member read from a
   * receiver; false for any other shape, which the language reads itself.
   */
  target(kind: ReferenceKind, node: Node): boolean {
    if (node.type === 'identifier') {
      if (this.locals.lookup(node.text) === undefined) this.ref(kind, node);
      return true;
    }
    const [access, objectField, memberField] = this.syntax.receivers.access;
    if (node.type !== access) return false;
    const object = node.childForFieldName(objectField);
    const member = node.childForFieldName(memberField);
    if (object !== null && member !== null) this.member(kind, member, object);
    return true;
  }

  /** Records `member` read from `object`, qualified by what the object is. */
  member(kind: ReferenceKind, member: Node, object: Node): void {
    const [receiver, text] = this.receiverOf(object);
    this.ref(kind, member, receiver, text);
  }

  /** How a receiver expression is qualified: this / self, super, a local, fields of either, a path. */
  receiverOf(n: Node): [ReceiverKind, string | null] {
    const r = this.syntax.receivers;
    if (r.isSelf(n, false, this.locals)) return ['self', null];
    if (r.isSuper?.(n) === true) return ['super', null];
    if (n.type === 'identifier') return this.locals.receiver(n.text);
    const [access, objectField, memberField] = r.access;
    if (n.type === access) {
      // `this.a.b.f()` reads fields of this; `s.a.f()` fields of a typed local; `ns.a.f()` maybe a path.
      const { base, chain } = memberChain(n, access, objectField, memberField);
      if (base !== null && r.isSelf(base, true, this.locals)) return ['field', chain.join('.')];
      return base?.type === 'identifier' ? this.locals.chained(base.text, chain, r.paths) : ['local', null];
    }
    if (r.wrappers?.has(n.type) === true) {
      const inner = (r.wrapped === undefined ? null : n.childForFieldName(r.wrapped)) ?? n.firstNamedChild;
      if (inner !== null) return this.receiverOf(inner);
    }
    return ['local', null];
  }

  /** Binds, untyped, the names of a pattern: the identifier itself, or the `names` kinds inside it that `keep` accepts. */
  bindPattern(p: Node | null, names: string | readonly string[] = 'identifier', keep?: (id: Node) => boolean): void {
    if (p === null) return;
    if (p.type === 'identifier') {
      this.locals.bind(p.text, null);
      return;
    }
    for (const id of p.descendantsOfType(names as string | string[])) {
      if (id !== null && (keep === undefined || keep(id))) this.locals.bind(id.text, null);
    }
  }

  /** Binds an import in the sink; a bound name (not a wildcard) is one bare identifiers may mean. */
  import(local: string, module: string, imported: string | null, reexport = false): void {
    this.sink.import(local, module, imported, reexport);
    if (local !== '*') this.known.add(local);
  }

  /** States the type of member `member` of the type declaration enclosing `n`, when there is one. */
  memberType(n: Node, member: string, type: string | null): void {
    const owner = this.owner(n);
    if (owner !== null) this.sink.member(owner, member, type);
  }

  /** The qualified name of the type declaration enclosing `n`. */
  owner(n: Node): string | null {
    return this.sink.enclosingType(this.sink.source.toByte(n.startIndex))?.qualifiedName ?? null;
  }
}
