// Relations of Rust files: `use` trees, calls through paths, `self` and typed bindings, macro
// invocations, struct literals, `impl Trait for Type`, supertraits, type references, and the
// types that struct fields, parameters and `let` bindings state or construct.

import type { Node, Tree } from 'web-tree-sitter';
import { compact } from '../attachment.ts';
import { forEachNode, Locals, memberChain, type RelationSink } from './sink.ts';
import type { ReceiverKind } from './types.ts';

/** Smart pointers and wrappers whose methods a call reaches through auto-deref. */
const WRAPPERS = new Set(['Box', 'Rc', 'Arc', 'RefCell', 'Cell', 'Mutex', 'RwLock', 'Pin', 'Cow']);
const BINDING_FIELDS = new Set(['name', 'pattern', 'alias', 'function', 'macro', 'field', 'path', 'label']);
const TYPE_PATH = /^(?:[A-Za-z_][A-Za-z0-9_]*::)*[A-Z][A-Za-z0-9_]*$/;


/** The node kinds the walk looks at; every other node is passed over by its kind id. */
const KINDS = ['use_declaration', 'line_comment', 'block_comment', 'string_literal', 'raw_string_literal', 'function_item', 'closure_expression', 'call_expression', 'macro_invocation', 'struct_expression', 'impl_item', 'trait_bounds', 'type_identifier', 'scoped_type_identifier', 'field_declaration', 'let_declaration', 'for_expression', 'let_condition', 'match_arm', 'identifier'];

export function rustRelations(tree: Tree, sink: RelationSink): void {
  const locals = new Locals();
  const known = new Set<string>(sink.topLevel);

  forEachNode(tree, KINDS, (c, type) => {
    locals.at(c.startIndex);
    switch (type) {
      case 'use_declaration': {
        const n = c.currentNode;
        const pub = n.firstNamedChild?.type === 'visibility_modifier';
        const argument = n.childForFieldName('argument');
        if (argument !== null) useTree(argument, '', pub);
        return false;
      }
      case 'line_comment':
      case 'block_comment':
      case 'string_literal':
      case 'raw_string_literal':
        return false;
      case 'function_item':
      case 'closure_expression': {
        const n = c.currentNode;
        locals.push(n.endIndex);
        parameters(n.childForFieldName('parameters'));
        return true;
      }
      case 'call_expression':
        call(c.currentNode);
        return true;
      case 'macro_invocation': {
        const m = c.currentNode.childForFieldName('macro');
        if (m !== null) target('calls', m);
        return true;
      }
      case 'struct_expression': {
        const name = c.currentNode.childForFieldName('name');
        if (name !== null) typeTarget('constructs', name);
        return true;
      }
      case 'impl_item': {
        const n = c.currentNode;
        const trait = n.childForFieldName('trait');
        const self = n.childForFieldName('type');
        const selfName = self === null ? null : baseType(self);
        if (trait !== null && selfName !== null) {
          const traitNode = trait.type === 'generic_type' ? trait.childForFieldName('type') : trait;
          const t = traitNode === null ? null : pathParts(traitNode);
          const enclosing = sink.enclosing(sink.source.toByte(n.startIndex));
          // The implementing type is named relative to the enclosing module, like its members.
          const from = enclosing === null ? selfName : `${enclosing.qualifiedName}::${selfName}`;
          if (t !== null) sink.refFrom(from, 'implements', t.name, t.receiver, t.text, sink.source.toByte(trait.startIndex), sink.source.toByte(trait.endIndex));
        }
        return true;
      }
      case 'trait_bounds': {
        // `trait A: B + C` — supertraits; bounds elsewhere (generics, `impl Trait`) are references.
        const n = c.currentNode;
        const kind = n.parent?.type === 'trait_item' ? 'extends' : 'references';
        for (const b of n.namedChildren) if (b !== null) typeTarget(kind, b);
        return false;
      }
      case 'type_identifier':
        if (c.currentFieldName !== 'name') sink.ref('references', c.nodeText, 'none', null, c.startIndex, c.endIndex);
        return false;
      case 'scoped_type_identifier':
        typeTarget('references', c.currentNode);
        return false;
      case 'field_declaration': {
        const n = c.currentNode;
        const owner = sink.enclosingType(sink.source.toByte(n.startIndex));
        const name = n.childForFieldName('name');
        if (owner !== null && name !== null) sink.member(owner.qualifiedName, name.text, typeName(n.childForFieldName('type')));
        return true;
      }
      case 'let_declaration': {
        const n = c.currentNode;
        const pattern = n.childForFieldName('pattern');
        if (pattern?.type === 'identifier') {
          locals.bind(pattern.text, typeName(n.childForFieldName('type')) ?? constructed(n.childForFieldName('value')));
        } else bindPattern(pattern);
        return true;
      }
      case 'for_expression':
      case 'let_condition':
      case 'match_arm':
        bindPattern(c.currentNode.childForFieldName('pattern'));
        return true;
      case 'identifier': {
        const name = c.nodeText;
        if (known.has(name) && !BINDING_FIELDS.has(c.currentFieldName ?? '') && locals.lookup(name) === undefined) {
          sink.ref('references', name, 'none', null, c.startIndex, c.endIndex);
        }
        return false;
      }
    }
    return true;
  });

  /** Flattens a `use` tree into bindings: `a::{b::C, d as e, f::*}`. */
  function useTree(n: Node, prefix: string, pub: boolean): void {
    const join = (p: string, s: string) => (p === '' ? s : `${p}::${s}`);
    switch (n.type) {
      case 'scoped_identifier': {
        const path = n.childForFieldName('path');
        const name = n.childForFieldName('name');
        if (name === null) return;
        const module = join(prefix, path === null ? '' : compact(path.text));
        bind(name.text, module, name.text, pub);
        return;
      }
      case 'identifier':
      case 'crate':
      case 'super':
        bind(n.text, prefix, prefix === '' ? null : n.text, pub);
        return;
      case 'self':
        // `use a::b::{self}` binds `b`.
        if (prefix !== '') {
          const cut = prefix.lastIndexOf('::');
          bind(prefix.slice(cut + 2), cut < 0 ? '' : prefix.slice(0, cut), prefix.slice(cut + 2), pub);
        }
        return;
      case 'use_as_clause': {
        const path = n.childForFieldName('path');
        const alias = n.childForFieldName('alias');
        if (path === null || alias === null) return;
        const full = join(prefix, compact(path.text));
        const cut = full.lastIndexOf('::');
        bind(alias.text, cut < 0 ? '' : full.slice(0, cut), full.slice(cut + 2), pub);
        return;
      }
      case 'use_wildcard': {
        const path = n.firstNamedChild;
        sink.import('*', join(prefix, path === null ? '' : compact(path.text)), null, pub);
        return;
      }
      case 'scoped_use_list': {
        const path = n.childForFieldName('path');
        const list = n.childForFieldName('list');
        const next = join(prefix, path === null ? '' : compact(path.text));
        for (const item of list?.namedChildren ?? []) if (item !== null) useTree(item, next, pub);
        return;
      }
      case 'use_list':
        for (const item of n.namedChildren) if (item !== null) useTree(item, prefix, pub);
        return;
    }
  }

  function bind(local: string, module: string, imported: string | null, pub: boolean): void {
    // `use foo;` names a crate or module: the module is the binding itself.
    if (module === '') sink.import(local, local, null, pub);
    else sink.import(local, module, imported, pub);
    known.add(local);
  }

  function parameters(params: Node | null): void {
    for (const p of params?.namedChildren ?? []) {
      if (p === null) continue;
      if (p.type === 'parameter') {
        const pattern = p.childForFieldName('pattern');
        if (pattern?.type === 'identifier') locals.bind(pattern.text, typeName(p.childForFieldName('type')));
        else bindPattern(pattern);
      } else if (p.type !== 'self_parameter') bindPattern(p);
    }
  }

  function bindPattern(p: Node | null): void {
    if (p === null) return;
    if (p.type === 'identifier') locals.bind(p.text, null);
    else for (const id of p.descendantsOfType('identifier')) if (id !== null && id.parent?.type !== 'scoped_identifier') locals.bind(id.text, null);
  }

  function call(n: Node): void {
    let fn = n.childForFieldName('function');
    if (fn?.type === 'generic_function') fn = fn.childForFieldName('function');
    if (fn === null) return;
    target('calls', fn);
  }

  function target(kind: 'calls' | 'constructs', fn: Node): void {
    if (fn.type === 'identifier') {
      if (locals.lookup(fn.text) === undefined) sink.ref(kind, fn.text, 'none', null, fn.startIndex, fn.endIndex);
      return;
    }
    if (fn.type === 'scoped_identifier') {
      const path = fn.childForFieldName('path');
      const name = fn.childForFieldName('name');
      if (name === null) return;
      if (path === null) {
        sink.ref(kind, name.text, 'none', null, name.startIndex, name.endIndex);
        return;
      }
      const text = compact(path.text).replace(/<.*$/, '');
      if (text === 'Self') sink.ref(kind, name.text, 'self', null, name.startIndex, name.endIndex);
      else sink.ref(kind, name.text, text.includes('::') ? 'path' : 'name', text, name.startIndex, name.endIndex);
      return;
    }
    if (fn.type === 'field_expression') {
      const value = fn.childForFieldName('value');
      const field = fn.childForFieldName('field');
      if (value === null || field === null) return;
      const [receiver, text] = receiverOf(value);
      sink.ref(kind, field.text, receiver, text, field.startIndex, field.endIndex);
    }
  }

  function receiverOf(value: Node): [ReceiverKind, string | null] {
    switch (value.type) {
      case 'self':
        return ['self', null];
      case 'identifier':
        return locals.receiver(value.text);
      case 'field_expression': {
        // `self.a.b.f()` reads fields of self; `s.a.f()` fields of a typed local.
        const { base, chain } = memberChain(value, 'field_expression', 'value', 'field');
        if (base?.type === 'self') return ['field', chain.join('.')];
        return base?.type === 'identifier' ? locals.chained(base.text, chain, false) : ['local', null];
      }
      case 'reference_expression':
      case 'parenthesized_expression': {
        const inner = value.childForFieldName('value') ?? value.firstNamedChild;
        return inner === null ? ['local', null] : receiverOf(inner);
      }
      default:
        return ['local', null];
    }
  }

  function typeTarget(kind: 'extends' | 'references' | 'constructs', t: Node): void {
    const node = t.type === 'generic_type' ? t.childForFieldName('type') : t;
    if (node === null) return;
    const parts = pathParts(node);
    if (parts !== null) sink.ref(kind, parts.name, parts.receiver, parts.text, node.startIndex, node.endIndex);
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
  while (t !== null) {
    switch (t.type) {
      case 'reference_type':
      case 'pointer_type':
        t = t.childForFieldName('type');
        break;
      case 'type_identifier':
        return t.text;
      case 'scoped_type_identifier':
        return compact(t.text).replace(/<.*$/, '');
      case 'generic_type': {
        const base = t.childForFieldName('type');
        if (base !== null && WRAPPERS.has(base.text)) {
          t = t.childForFieldName('type_arguments')?.firstNamedChild ?? null;
          break;
        }
        t = base;
        break;
      }
      default:
        return null;
    }
  }
  return null;
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
