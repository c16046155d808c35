// Relations of Go files: imports (the package name is the path's last element unless
// renamed), calls through packages, receivers and typed bindings, composite literals,
// embedded structs and interfaces, type references, and the types struct fields, parameters
// and `var` / `:=` bindings state or construct.

import type { Node, Tree } from 'web-tree-sitter';
import { goTypeName as typeName } from '../go.ts';
import { forEachNode, Locals, memberChain, type RelationSink } from './sink.ts';
import type { ReceiverKind } from './types.ts';

const BINDING_FIELDS = new Set(['name', 'left', 'function', 'field', 'label', 'package']);
const VERSION_SUFFIX = /^v[0-9]+$/;

/** The name a package path binds without an explicit one: its last element, skipping a `/vN` major version. */
export function packageName(path: string): string {
  const parts = path.split('/');
  let last = parts[parts.length - 1];
  if (VERSION_SUFFIX.test(last) && parts.length > 1) last = parts[parts.length - 2];
  return last.replace(/^go-/, '').replace(/[.-].*$/, '');
}


/** The node kinds the walk looks at; every other node is passed over by its kind id. */
const KINDS = ['import_spec', 'comment', 'interpreted_string_literal', 'raw_string_literal', 'function_declaration', 'method_declaration', 'func_literal', 'call_expression', 'composite_literal', 'field_declaration', 'type_elem', 'type_identifier', 'qualified_type', 'selector_expression', 'short_var_declaration', 'var_spec', 'range_clause', 'identifier'];

export function goRelations(tree: Tree, sink: RelationSink): void {
  const locals = new Locals();
  const known = new Set<string>(sink.topLevel);
  /** The receiver name of each method frame: `s.x.M()` through it reads a field of the receiver type. */
  const receivers: Array<{ end: number; name: string }> = [];

  forEachNode(tree, KINDS, (c, type) => {
    const start = c.startIndex;
    locals.at(start);
    while (receivers.length > 0 && receivers[receivers.length - 1].end <= start) receivers.pop();
    switch (type) {
      case 'import_spec': {
        const n = c.currentNode;
        const path = n.childForFieldName('path');
        const name = n.childForFieldName('name');
        if (path === null) return false;
        const module = path.text.slice(1, -1);
        if (name?.type === 'dot') sink.import('*', module, null);
        else if (name?.type !== 'blank_identifier') {
          const local = name?.text ?? packageName(module);
          sink.import(local, module, null);
          known.add(local);
        }
        return false;
      }
      case 'comment':
      case 'interpreted_string_literal':
      case 'raw_string_literal':
        return false;
      case 'function_declaration':
      case 'method_declaration':
      case 'func_literal': {
        const n = c.currentNode;
        locals.push(n.endIndex);
        if (type === 'method_declaration') {
          const receiver = n.childForFieldName('receiver')?.firstNamedChild?.childForFieldName('name');
          if (receiver) receivers.push({ end: n.endIndex, name: receiver.text });
        }
        parameters(n.childForFieldName('parameters'));
        parameters(n.childForFieldName('result'));
        return true;
      }
      case 'call_expression': {
        const fn = c.currentNode.childForFieldName('function');
        if (fn !== null) target('calls', fn);
        return true;
      }
      case 'composite_literal': {
        const t = c.currentNode.childForFieldName('type');
        if (t !== null) typeTarget('constructs', t);
        return true;
      }
      case 'field_declaration': {
        const n = c.currentNode;
        const owner = sink.enclosingType(sink.source.toByte(n.startIndex));
        const t = n.childForFieldName('type');
        const names = n.childrenForFieldName('name').filter((x) => x !== null);
        if (names.length === 0 && t !== null) typeTarget('embeds', t); // an embedded struct
        if (owner !== null) for (const name of names) sink.member(owner.qualifiedName, name.text, typeName(t));
        return true;
      }
      case 'type_elem': {
        // An interface embedding another interface.
        for (const t of c.currentNode.namedChildren) if (t !== null) typeTarget('extends', t);
        return false;
      }
      case 'type_identifier':
        if (c.currentFieldName !== 'name') sink.ref('references', c.nodeText, 'none', null, c.startIndex, c.endIndex);
        return false;
      case 'qualified_type':
        typeTarget('references', c.currentNode);
        return false;
      case 'selector_expression': {
        // `pkg.Name` used as a value (a call's callee is handled by the call).
        const n = c.currentNode;
        if (c.currentFieldName !== 'function') {
          const operand = n.childForFieldName('operand');
          const field = n.childForFieldName('field');
          if (operand?.type === 'identifier' && field !== null && known.has(operand.text) && locals.lookup(operand.text) === undefined) {
            sink.ref('references', field.text, 'name', operand.text, field.startIndex, field.endIndex);
          }
        }
        return true;
      }
      case 'short_var_declaration': {
        const n = c.currentNode;
        const left = n.childForFieldName('left')?.namedChildren ?? [];
        const right = n.childForFieldName('right')?.namedChildren ?? [];
        left.forEach((id, i) => {
          if (id?.type === 'identifier') locals.bind(id.text, left.length === right.length ? constructed(right[i]) : null);
        });
        return true;
      }
      case 'var_spec': {
        if (locals.depth === 0) {
          const n = c.currentNode;
          for (const name of n.childrenForFieldName('name')) {
            if (name !== null) sink.member('', name.text, typeName(n.childForFieldName('type')) ?? constructed(n.childForFieldName('value')?.firstNamedChild ?? null));
          }
          return true;
        }
        const n = c.currentNode;
        const stated = typeName(n.childForFieldName('type'));
        const values = n.childForFieldName('value')?.namedChildren ?? [];
        n.childrenForFieldName('name').forEach((name, i) => {
          if (name !== null) locals.bind(name.text, stated ?? constructed(values[i] ?? null));
        });
        return true;
      }
      case 'range_clause': {
        for (const id of c.currentNode.childForFieldName('left')?.namedChildren ?? []) if (id?.type === 'identifier') locals.bind(id.text, null);
        return true;
      }
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

  function parameters(list: Node | null): void {
    for (const p of list?.namedChildren ?? []) {
      if (p === null) continue;
      const stated = typeName(p.childForFieldName('type'));
      for (const name of p.childrenForFieldName('name')) if (name !== null) locals.bind(name.text, stated);
    }
  }

  function target(kind: 'calls', fn: Node): void {
    if (fn.type === 'identifier') {
      if (locals.lookup(fn.text) === undefined) sink.ref(kind, fn.text, 'none', null, fn.startIndex, fn.endIndex);
      return;
    }
    if (fn.type === 'generic_function' || fn.type === 'parenthesized_expression') {
      const inner = fn.childForFieldName('function') ?? fn.firstNamedChild;
      if (inner !== null) target(kind, inner);
      return;
    }
    if (fn.type !== 'selector_expression') return;
    const operand = fn.childForFieldName('operand');
    const field = fn.childForFieldName('field');
    if (operand === null || field === null) return;
    const [receiver, text] = receiverOf(operand);
    sink.ref(kind, field.text, receiver, text, field.startIndex, field.endIndex);
  }

  function receiverOf(operand: Node): [ReceiverKind, string | null] {
    const self = receivers[receivers.length - 1]?.name;
    if (operand.type === 'identifier') {
      if (operand.text === self) return ['self', null];
      return locals.receiver(operand.text);
    }
    if (operand.type === 'selector_expression') {
      // `s.a.b.M()` reads fields of the receiver s, or of a typed local.
      const { base, chain } = memberChain(operand, 'selector_expression', 'operand', 'field');
      if (base?.type === 'identifier') {
        if (base.text === self) return ['field', chain.join('.')];
        const chained = locals.chained(base.text, chain, false);
        if (chained[0] === 'typed') return chained;
      }
    }
    if (operand.type === 'parenthesized_expression' || operand.type === 'unary_expression') {
      const inner = operand.childForFieldName('operand') ?? operand.firstNamedChild;
      if (inner !== null) return receiverOf(inner);
    }
    return ['local', null];
  }

  function typeTarget(kind: 'constructs' | 'embeds' | 'extends' | 'references', t: Node): void {
    let node: Node | null = t;
    while (node !== null && (node.type === 'pointer_type' || node.type === 'generic_type' || node.type === 'parenthesized_type')) {
      node = node.type === 'generic_type' ? node.childForFieldName('type') : node.firstNamedChild;
    }
    if (node === null) return;
    if (node.type === 'type_identifier') sink.ref(kind, node.text, 'none', null, node.startIndex, node.endIndex);
    else if (node.type === 'qualified_type') {
      const pkg = node.childForFieldName('package');
      const name = node.childForFieldName('name');
      if (pkg && name) sink.ref(kind, name.text, 'name', pkg.text, name.startIndex, name.endIndex);
    }
  }
}

/** `T{…}`, `&T{…}`, `NewT(…)`, `pkg.NewT(…)` give their binding the type T (by Go's constructor convention). */
function constructed(value: Node | null): string | null {
  let v = value;
  if (v?.type === 'unary_expression') v = v.childForFieldName('operand');
  if (v === null) return null;
  if (v.type === 'composite_literal') return typeName(v.childForFieldName('type'));
  if (v.type !== 'call_expression') return null;
  const fn = v.childForFieldName('function');
  if (fn?.type === 'identifier') return /^New[A-Z]/.test(fn.text) ? fn.text.slice(3) : null;
  if (fn?.type === 'selector_expression') {
    const operand = fn.childForFieldName('operand');
    const field = fn.childForFieldName('field');
    if (operand?.type === 'identifier' && field !== null && /^New[A-Z]/.test(field.text)) return `${operand.text}.${field.text.slice(3)}`;
  }
  return null;
}
