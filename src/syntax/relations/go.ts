// Relations of Go files: imports (the package name is the path's last element unless
// renamed), calls through packages, receivers and typed bindings, composite literals,
// embedded structs and interfaces, type references, and the types struct fields, parameters
// and `var` / `:=` bindings state or construct.

import type { Node, Tree, TreeCursor } from 'web-tree-sitter';
import { goTypeName as typeName } from '../go.ts';
import type { RelationSink } from './sink.ts';
import type { ReferenceKind } from './types.ts';
import { type LanguageSyntax, RelationWalk } from './walk.ts';

const VERSION_SUFFIX = /^v[0-9]+$/;

/** The name a package path binds without an explicit one: its last element, skipping a `/vN` major version. */
export function packageName(path: string): string {
  const parts = path.split('/');
  let last = parts[parts.length - 1];
  if (VERSION_SUFFIX.test(last) && parts.length > 1) last = parts[parts.length - 2];
  return last.replace(/^go-/, '').replace(/[.-].*$/, '');
}

const SYNTAX: LanguageSyntax = {
  own: ['import_spec', 'call_expression', 'field_declaration', 'selector_expression', 'short_var_declaration', 'var_spec', 'range_clause'],
  skip: ['comment', 'interpreted_string_literal', 'raw_string_literal'],
  functions: ['function_declaration', 'method_declaration', 'func_literal'],
  identifiers: ['identifier'],
  bindingFields: new Set(['name', 'left', 'function', 'field', 'label', 'package']),
  // `type_elem`: an interface embedding another interface.
  types: { name: 'type_identifier', qualified: 'qualified_type', constructions: ['composite_literal', 'type'], supertypes: ['type_elem'] },
  receivers: {
    access: ['selector_expression', 'operand', 'field'],
    paths: false,
    wrappers: new Set(['parenthesized_expression', 'unary_expression']),
    wrapped: 'operand',
    // A method's receiver is named by the method: `func (s *T) M()`.
    isSelf: (n, _field, locals) => n.type === 'identifier' && n.text === locals.self(),
  },
};

class GoWalk extends RelationWalk {
  protected override enter(fn: Node, type: string): void {
    if (type === 'method_declaration') {
      const receiver = fn.childForFieldName('receiver')?.firstNamedChild?.childForFieldName('name');
      if (receiver) this.locals.bindSelf(receiver.text);
    }
    super.enter(fn, type);
    this.parameters(fn.childForFieldName('result'));
  }

  protected visit(c: TreeCursor, type: string): boolean {
    const { locals, sink } = this;
    switch (type) {
      case 'import_spec': {
        const n = c.currentNode;
        const path = n.childForFieldName('path');
        const name = n.childForFieldName('name');
        if (path === null) return false;
        const module = path.text.slice(1, -1);
        if (name?.type === 'dot') sink.import('*', module, null);
        else if (name?.type !== 'blank_identifier') this.import(name?.text ?? packageName(module), module, null);
        return false;
      }
      case 'call_expression': {
        const fn = c.currentNode.childForFieldName('function');
        if (fn !== null) this.callee(fn);
        return true;
      }
      case 'field_declaration': {
        const n = c.currentNode;
        const t = n.childForFieldName('type');
        const names = n.childrenForFieldName('name').filter((x) => x !== null);
        if (names.length === 0 && t !== null) this.typeTarget('embeds', t); // an embedded struct
        for (const name of names) this.memberType(n, name.text, typeName(t));
        return true;
      }
      case 'selector_expression': {
        // `pkg.Name` used as a value (a call's callee is handled by the call).
        const n = c.currentNode;
        if (c.currentFieldName !== 'function') {
          const operand = n.childForFieldName('operand');
          const field = n.childForFieldName('field');
          if (operand?.type === 'identifier' && field !== null && this.known.has(operand.text) && locals.lookup(operand.text) === undefined) {
            this.ref('references', field, 'name', operand.text);
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
        const n = c.currentNode;
        if (locals.depth === 0) {
          for (const name of n.childrenForFieldName('name')) {
            if (name !== null) sink.member('', name.text, typeName(n.childForFieldName('type')) ?? constructed(n.childForFieldName('value')?.firstNamedChild ?? null));
          }
          return true;
        }
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
    }
    return true;
  }

  protected parameters(list: Node | null): void {
    for (const p of list?.namedChildren ?? []) {
      if (p === null) continue;
      const stated = typeName(p.childForFieldName('type'));
      for (const name of p.childrenForFieldName('name')) if (name !== null) this.locals.bind(name.text, stated);
    }
  }

  private callee(fn: Node): void {
    if (fn.type === 'generic_function' || fn.type === 'parenthesized_expression') {
      const inner = fn.childForFieldName('function') ?? fn.firstNamedChild;
      if (inner !== null) this.callee(inner);
      return;
    }
    this.target('calls', fn);
  }

  protected typeTarget(kind: ReferenceKind, t: Node): void {
    let node: Node | null = t;
    while (node !== null && (node.type === 'pointer_type' || node.type === 'generic_type' || node.type === 'parenthesized_type')) {
      node = node.type === 'generic_type' ? node.childForFieldName('type') : node.firstNamedChild;
    }
    if (node === null) return;
    if (node.type === 'type_identifier') this.ref(kind, node);
    else if (node.type === 'qualified_type') {
      const pkg = node.childForFieldName('package');
      const name = node.childForFieldName('name');
      if (pkg && name) this.ref(kind, name, 'name', pkg.text);
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

export function goRelations(tree: Tree, sink: RelationSink): void {
  new GoWalk(sink, SYNTAX).run(tree);
}
