// Relations of Rust files: `use` trees, calls through paths, `self` and typed bindings, macro
// invocations, struct literals, `impl Trait for Type`, supertraits, type references, and the
// types that struct fields, parameters and `let` bindings state or construct.

import type { Node, Tree, TreeCursor } from 'web-tree-sitter';
import { compact } from '../attachment.ts';
import type { RelationSink } from './sink.ts';
import type { ReceiverKind, ReferenceKind } from './types.ts';
import { followType, type LanguageSyntax, RelationWalk } from './walk.ts';

/** Smart pointers and wrappers whose methods a call reaches through auto-deref. */
const WRAPPERS = new Set(['Box', 'Rc', 'Arc', 'RefCell', 'Cell', 'Mutex', 'RwLock', 'Pin', 'Cow']);
const TYPE_PATH = /^(?:[A-Za-z_][A-Za-z0-9_]*::)*[A-Z][A-Za-z0-9_]*$/;

const SYNTAX: LanguageSyntax = {
  own: ['use_declaration', 'call_expression', 'macro_invocation', 'impl_item', 'trait_bounds', 'field_declaration', 'let_declaration', 'for_expression', 'let_condition', 'match_arm'],
  skip: ['line_comment', 'block_comment', 'string_literal', 'raw_string_literal'],
  functions: ['function_item', 'closure_expression'],
  identifiers: ['identifier'],
  bindingFields: new Set(['name', 'pattern', 'alias', 'function', 'macro', 'field', 'path', 'label']),
  types: { name: 'type_identifier', qualified: 'scoped_type_identifier', constructions: ['struct_expression', 'name'] },
  receivers: { access: ['field_expression', 'value', 'field'], paths: false, wrappers: new Set(['reference_expression', 'parenthesized_expression']), wrapped: 'value', isSelf: (n) => n.type === 'self' },
};

class RustWalk extends RelationWalk {
  protected visit(c: TreeCursor, type: string): boolean {
    switch (type) {
      case 'use_declaration': {
        const n = c.currentNode;
        const pub = n.firstNamedChild?.type === 'visibility_modifier';
        const argument = n.childForFieldName('argument');
        if (argument !== null) this.useTree(argument, '', pub);
        return false;
      }
      case 'call_expression': {
        let fn = c.currentNode.childForFieldName('function');
        if (fn?.type === 'generic_function') fn = fn.childForFieldName('function');
        if (fn !== null) this.callee(fn);
        return true;
      }
      case 'macro_invocation': {
        const m = c.currentNode.childForFieldName('macro');
        if (m !== null) this.callee(m);
        return true;
      }
      case 'impl_item':
        this.implementation(c.currentNode);
        return true;
      case 'trait_bounds': {
        // `trait A: B + C` — supertraits; bounds elsewhere (generics, `impl Trait`) are references.
        const n = c.currentNode;
        const kind = n.parent?.type === 'trait_item' ? 'extends' : 'references';
        for (const b of n.namedChildren) if (b !== null) this.typeTarget(kind, b);
        return false;
      }
      case 'field_declaration': {
        const n = c.currentNode;
        const name = n.childForFieldName('name');
        if (name !== null) this.memberType(n, name.text, typeName(n.childForFieldName('type')));
        return true;
      }
      case 'let_declaration': {
        const n = c.currentNode;
        const pattern = n.childForFieldName('pattern');
        if (pattern?.type === 'identifier') {
          this.locals.bind(pattern.text, typeName(n.childForFieldName('type')) ?? constructed(n.childForFieldName('value')));
        } else this.bindNames(pattern);
        return true;
      }
      case 'for_expression':
      case 'let_condition':
      case 'match_arm':
        this.bindNames(c.currentNode.childForFieldName('pattern'));
        return true;
    }
    return true;
  }

  /** `impl Trait for Type`: the type implements the trait. */
  private implementation(n: Node): void {
    const sink = this.sink;
    const trait = n.childForFieldName('trait');
    const self = n.childForFieldName('type');
    const selfName = self === null ? null : baseType(self);
    if (trait === null || selfName === null) return;
    const traitNode = trait.type === 'generic_type' ? trait.childForFieldName('type') : trait;
    const t = traitNode === null ? null : pathParts(traitNode);
    const enclosing = sink.enclosing(sink.source.toByte(n.startIndex));
    // The implementing type is named relative to the enclosing module, like its members.
    const from = enclosing === null ? selfName : `${enclosing.qualifiedName}::${selfName}`;
    if (t !== null) sink.refFrom(from, 'implements', t.name, t.receiver, t.text, sink.source.toByte(trait.startIndex), sink.source.toByte(trait.endIndex));
  }

  /** Flattens a `use` tree into bindings: `a::{b::C, d as e, f::*}`. */
  private useTree(n: Node, prefix: string, pub: boolean): void {
    const join = (p: string, s: string) => (p === '' ? s : `${p}::${s}`);
    switch (n.type) {
      case 'scoped_identifier': {
        const path = n.childForFieldName('path');
        const name = n.childForFieldName('name');
        if (name === null) return;
        const module = join(prefix, path === null ? '' : compact(path.text));
        this.bind(name.text, module, name.text, pub);
        return;
      }
      case 'identifier':
      case 'crate':
      case 'super':
        this.bind(n.text, prefix, prefix === '' ? null : n.text, pub);
        return;
      case 'self':
        // `use a::b::{self}` binds `b`.
        if (prefix !== '') {
          const cut = prefix.lastIndexOf('::');
          this.bind(prefix.slice(cut + 2), cut < 0 ? '' : prefix.slice(0, cut), prefix.slice(cut + 2), pub);
        }
        return;
      case 'use_as_clause': {
        const path = n.childForFieldName('path');
        const alias = n.childForFieldName('alias');
        if (path === null || alias === null) return;
        const full = join(prefix, compact(path.text));
        const cut = full.lastIndexOf('::');
        this.bind(alias.text, cut < 0 ? '' : full.slice(0, cut), full.slice(cut + 2), pub);
        return;
      }
      case 'use_wildcard': {
        const path = n.firstNamedChild;
        this.sink.import('*', join(prefix, path === null ? '' : compact(path.text)), null, pub);
        return;
      }
      case 'scoped_use_list': {
        const path = n.childForFieldName('path');
        const list = n.childForFieldName('list');
        const next = join(prefix, path === null ? '' : compact(path.text));
        for (const item of list?.namedChildren ?? []) if (item !== null) this.useTree(item, next, pub);
        return;
      }
      case 'use_list':
        for (const item of n.namedChildren) if (item !== null) this.useTree(item, prefix, pub);
        return;
    }
  }

  private bind(local: string, module: string, imported: string | null, pub: boolean): void {
    // `use foo;` names a crate or module: the module is the binding itself.
    if (module === '') this.import(local, local, null, pub);
    else this.import(local, module, imported, pub);
  }

  protected parameters(params: Node | null): void {
    for (const p of params?.namedChildren ?? []) {
      if (p === null) continue;
      if (p.type === 'parameter') {
        const pattern = p.childForFieldName('pattern');
        if (pattern?.type === 'identifier') this.locals.bind(pattern.text, typeName(p.childForFieldName('type')));
        else this.bindNames(pattern);
      } else if (p.type !== 'self_parameter') this.bindNames(p);
    }
  }

  /** A path inside a pattern (`Some(x)`, `E::V { .. }`) names no binding. */
  private bindNames(p: Node | null): void {
    this.bindPattern(p, 'identifier', (id) => id.parent?.type !== 'scoped_identifier');
  }

  private callee(fn: Node): void {
    if (this.target('calls', fn) || fn.type !== 'scoped_identifier') return;
    const path = fn.childForFieldName('path');
    const name = fn.childForFieldName('name');
    if (name === null) return;
    if (path === null) {
      this.ref('calls', name);
      return;
    }
    const text = compact(path.text).replace(/<.*$/, '');
    if (text === 'Self') this.ref('calls', name, 'self');
    else this.ref('calls', name, text.includes('::') ? 'path' : 'name', text);
  }

  protected typeTarget(kind: ReferenceKind, t: Node): void {
    const node = t.type === 'generic_type' ? t.childForFieldName('type') : t;
    if (node === null) return;
    const parts = pathParts(node);
    if (parts !== null) this.sink.ref(kind, parts.name, parts.receiver, parts.text, node.startIndex, node.endIndex);
  }
}

function pathParts(node: Node): { name: string; receiver: ReceiverKind; text: string | null } | null {
  if (node.type === 'type_identifier' || node.type === 'identifier') return { name: node.text, receiver: 'none', text: null };
  if (node.type === 'scoped_type_identifier' || node.type === 'scoped_identifier') {
    const path = node.childForFieldName('path');
    const name = node.childForFieldName('name');
    if (name === null) return null;
    if (path === null) return { name: name.text, receiver: 'none', text: null };
    const text = compact(path.text);
    return { name: name.text, receiver: text.includes('::') ? 'path' : 'name', text };
  }
  return null;
}

/** The type an impl is for, as its members qualify (`Foo<T>` → `Foo`). */
function baseType(t: Node): string | null {
  const name = typeName(t);
  if (name === null) return null;
  const cut = name.lastIndexOf('::');
  return cut < 0 ? name : name.slice(cut + 2);
}

/** The named type a type expression reaches: through `&`, `&mut`, `Box<T>`-like wrappers, generics. */
export function typeName(t: Node | null): string | null {
  return followType(t, (t) => {
    switch (t.type) {
      case 'reference_type':
      case 'pointer_type':
        return t.childForFieldName('type');
      case 'type_identifier':
        return t.text;
      case 'scoped_type_identifier':
        return compact(t.text).replace(/<.*$/, '');
      case 'generic_type': {
        const base = t.childForFieldName('type');
        if (base !== null && WRAPPERS.has(base.text)) {
          return t.childForFieldName('type_arguments')?.firstNamedChild ?? null;
        }
        return base;
      }
      default:
        return null;
    }
  });
}

/** `Foo::new(…)`, `Foo::from(…)`, `Foo { … }` give their binding the type Foo. */
function constructed(value: Node | null): string | null {
  let v = value;
  while (v !== null && (v.type === 'try_expression' || v.type === 'await_expression' || v.type === 'reference_expression')) {
    v = v.childForFieldName('value') ?? v.firstNamedChild;
  }
  if (v === null) return null;
  if (v.type === 'struct_expression') return typeName(v.childForFieldName('name'));
  if (v.type !== 'call_expression') return null;
  const fn = v.childForFieldName('function');
  if (fn?.type !== 'scoped_identifier') return null;
  const path = fn.childForFieldName('path');
  const text = path === null ? '' : compact(path.text).replace(/<.*$/, '');
  return TYPE_PATH.test(text) && text !== 'Self' ? text : null;
}

export function rustRelations(tree: Tree, sink: RelationSink): void {
  new RustWalk(sink, SYNTAX).run(tree);
}
