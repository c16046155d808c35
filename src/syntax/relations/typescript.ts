// Relations of TypeScript, TSX and JavaScript files: ES imports and re-exports, `require`,
// calls, `new`, JSX elements, `extends` / `implements`, type references, and the types that
// annotations and `new` give to fields, module bindings, parameters and locals.

import type { Node, Tree, TreeCursor } from 'web-tree-sitter';
import type { RelationSink } from './sink.ts';
import type { ReferenceKind } from './types.ts';
import { followType, type LanguageSyntax, RelationWalk } from './walk.ts';

const SYNTAX: LanguageSyntax = {
  own: ['export_statement', 'call_expression', 'new_expression', 'jsx_opening_element', 'jsx_self_closing_element', 'class_heritage', 'public_field_definition', 'field_definition', 'assignment_expression', 'variable_declarator', 'catch_clause', 'for_in_statement', 'class_declaration', 'abstract_class_declaration'],
  skip: ['import_statement', 'comment', 'string', 'regex'],
  functions: [
    'function_declaration', 'generator_function_declaration', 'function_expression', 'function',
    'generator_function', 'arrow_function', 'method_definition', 'class_static_block',
  ],
  identifiers: ['identifier', 'shorthand_property_identifier'],
  bindingFields: new Set(['name', 'pattern', 'alias', 'parameter', 'label', 'left', 'function', 'constructor']),
  // A function or class declared inside a function is a local, not a declaration.
  localDeclarations: new Set(['function_declaration', 'generator_function_declaration', 'class_declaration', 'abstract_class_declaration']),
  types: { name: 'type_identifier', qualified: 'nested_type_identifier', supertypes: ['extends_type_clause'] },
  receivers: { access: ['member_expression', 'object', 'property'], paths: true, isSelf: (n) => n.type === 'this', isSuper: (n) => n.type === 'super' },
};
const PATTERN_NAMES = ['identifier', 'shorthand_property_identifier_pattern'];

export function typescriptRelations(tree: Tree, sink: RelationSink): void {
  sink.fileScope.push([0, tree.rootNode.endIndex + 1]); // a script's top level is where it starts
  moduleBindings(tree.rootNode, sink);
  new TypeScriptWalk(sink, SYNTAX, [...sink.topLevel, ...sink.importedLocals()]).run(tree);
}

class TypeScriptWalk extends RelationWalk {
  protected visit(c: TreeCursor, type: string): boolean {
    const locals = this.locals;
    switch (type) {
      case 'export_statement':
        return c.currentNode.childForFieldName('source') === null;
      case 'call_expression':
        this.call(c.currentNode);
        return true;
      case 'new_expression': {
        const ctor = c.currentNode.childForFieldName('constructor');
        if (ctor !== null) this.callee('constructs', ctor);
        return true;
      }
      case 'jsx_opening_element':
      case 'jsx_self_closing_element': {
        const name = c.currentNode.childForFieldName('name');
        // Lower-case tags are intrinsic elements (`<div>`), not components.
        if (name !== null && /^[A-Z]/.test(name.text)) this.callee('calls', name);
        return true;
      }
      case 'class_heritage':
        this.heritage(c.currentNode);
        return false;
      case 'public_field_definition':
      case 'field_definition': {
        const n = c.currentNode;
        const name = (n.childForFieldName('name') ?? n.childForFieldName('property'))?.text ?? '';
        this.memberType(n, name, annotated(n) ?? constructed(n.childForFieldName('value')));
        return true;
      }
      case 'assignment_expression': {
        // `this.x = new Foo()` types the field x.
        const n = c.currentNode;
        const left = n.childForFieldName('left');
        if (left?.type === 'member_expression' && left.childForFieldName('object')?.type === 'this') {
          this.memberType(n, left.childForFieldName('property')?.text ?? '', constructed(n.childForFieldName('right')));
        }
        return true;
      }
      case 'variable_declarator': {
        if (locals.depth === 0) return true; // module bindings were read up front
        const n = c.currentNode;
        const name = n.childForFieldName('name');
        if (name === null) return true;
        if (name.type === 'identifier') locals.bind(name.text, annotated(n) ?? constructed(n.childForFieldName('value')));
        else this.bindPattern(name, PATTERN_NAMES);
        return true;
      }
      case 'catch_clause':
      case 'for_in_statement': {
        const n = c.currentNode;
        this.bindPattern(n.childForFieldName('parameter') ?? n.childForFieldName('left'), PATTERN_NAMES);
        return true;
      }
    }
    return true;
  }

  private call(n: Node): void {
    const callee = n.childForFieldName('function');
    if (callee === null) return;
    if (callee.type === 'super') {
      this.sink.ref('calls', 'constructor', 'super', null, callee.startIndex, callee.endIndex);
      return;
    }
    if (callee.type === 'identifier' && callee.text === 'require') return;
    this.callee('calls', callee);
  }

  /** A callee or constructor: a name, or a member of a receiver (`a.b`, or `A.B` in JSX). */
  private callee(kind: 'calls' | 'constructs', node: Node): void {
    if (node.type !== 'member_expression' && node.type !== 'nested_identifier') {
      this.target(kind, node);
      return;
    }
    const property = node.childForFieldName('property') ?? node.lastNamedChild;
    const object = node.childForFieldName('object') ?? node.firstNamedChild;
    if (property !== null && object !== null && property.startIndex !== object.startIndex) this.member(kind, property, object);
  }

  private heritage(n: Node): void {
    for (const clause of n.namedChildren) {
      if (clause === null) continue;
      if (clause.type === 'extends_clause') {
        const value = clause.childForFieldName('value');
        if (value !== null) this.typeTarget('extends', value);
      } else if (clause.type === 'implements_clause') {
        for (const t of clause.namedChildren) if (t !== null) this.typeTarget('implements', t);
      } else {
        this.typeTarget('extends', clause); // JavaScript: `class_heritage` holds the expression itself
      }
    }
  }

  protected typeTarget(kind: ReferenceKind, t: Node): void {
    let node: Node | null = t;
    if (node.type === 'generic_type') node = node.childForFieldName('name');
    if (node === null) return;
    if (node.type === 'identifier' || node.type === 'type_identifier') this.ref(kind, node);
    else if (node.type === 'nested_type_identifier' || node.type === 'member_expression') {
      const name = node.childForFieldName('name') ?? node.childForFieldName('property');
      const module = node.childForFieldName('module') ?? node.childForFieldName('object');
      if (name !== null && module !== null) this.qualifiedRef(kind, name, module.text.replace(/\s+/g, ''));
    }
  }

  protected override enter(fn: Node, type: string): void {
    const single = fn.childForFieldName('parameter'); // `x => …`
    if (single !== null) this.bindPattern(single, PATTERN_NAMES);
    else super.enter(fn, type);
  }

  protected parameters(params: Node | null): void {
    if (params === null) return;
    const fn = params.parent;
    const ownerType = fn?.type === 'method_definition' ? this.owner(fn) : null;
    for (const p of params.namedChildren) {
      if (p === null) continue;
      if (p.type === 'required_parameter' || p.type === 'optional_parameter') {
        const pattern = p.childForFieldName('pattern');
        if (pattern === null) continue;
        const type = annotated(p);
        if (pattern.type === 'identifier') {
          this.locals.bind(pattern.text, type);
          // `constructor(private store: Store)` declares and types the field too.
          const propertyLike = p.namedChildren.some((m) => m?.type === 'accessibility_modifier' || m?.type === 'override_modifier') || /^\s*readonly\b/.test(p.text);
          if (ownerType !== null && propertyLike) this.sink.member(ownerType, pattern.text, type);
        } else this.bindPattern(pattern, PATTERN_NAMES);
      } else this.bindPattern(p, PATTERN_NAMES);
    }
  }
}

/** Module-scope imports, re-exports, `require` bindings and the types of module variables. */
function moduleBindings(root: Node, sink: RelationSink): void {
  for (const stmt of root.namedChildren) {
    if (stmt === null) continue;
    switch (stmt.type) {
      case 'import_statement':
        importStatement(stmt, sink);
        break;
      case 'export_statement':
        exportStatement(stmt, sink);
        break;
      case 'lexical_declaration':
      case 'variable_declaration':
        for (const d of stmt.namedChildren) if (d?.type === 'variable_declarator') moduleVariable(d, sink);
        break;
    }
  }
}

function importStatement(stmt: Node, sink: RelationSink): void {
  const source = stmt.childForFieldName('source');
  const clause = stmt.namedChildren.find((n) => n?.type === 'import_clause' || n?.type === 'import_require_clause') ?? null;
  if (clause === null) return;
  if (clause.type === 'import_require_clause') {
    const id = clause.namedChildren.find((n) => n?.type === 'identifier');
    const src = clause.childForFieldName('source') ?? clause.namedChildren.find((n) => n?.type === 'string') ?? null;
    if (id && src) sink.import(id.text, stringValue(src), null);
    return;
  }
  if (source === null) return;
  const module = stringValue(source);
  for (const part of clause.namedChildren) {
    if (part === null) continue;
    if (part.type === 'identifier') sink.import(part.text, module, 'default');
    else if (part.type === 'namespace_import') {
      const id = part.namedChildren.find((n) => n?.type === 'identifier');
      if (id) sink.import(id.text, module, null);
    } else if (part.type === 'named_imports') {
      for (const spec of part.namedChildren) {
        if (spec?.type !== 'import_specifier') continue;
        const name = spec.childForFieldName('name');
        const alias = spec.childForFieldName('alias');
        if (name !== null) sink.import((alias ?? name).text, module, name.text);
      }
    }
  }
}

function exportStatement(stmt: Node, sink: RelationSink): void {
  const source = stmt.childForFieldName('source');
  const module = source === null ? '' : stringValue(source);
  const isDefault = stmt.children.some((n) => n?.type === 'default');
  const clause = stmt.namedChildren.find((n) => n?.type === 'export_clause' || n?.type === 'namespace_export') ?? null;
  if (clause?.type === 'export_clause') {
    for (const spec of clause.namedChildren) {
      if (spec?.type !== 'export_specifier') continue;
      const name = spec.childForFieldName('name');
      const alias = spec.childForFieldName('alias');
      if (name !== null) sink.import((alias ?? name).text, module, name.text, true);
    }
    return;
  }
  if (clause?.type === 'namespace_export') {
    const id = clause.namedChildren.find((n) => n?.type === 'identifier');
    if (id && source) sink.import(id.text, module, null, true);
    return;
  }
  if (source !== null) {
    sink.import('*', module, null, true);
    return;
  }
  if (!isDefault) return;
  // `export default Foo` and `export default class Foo {}` name the default export.
  const declaration = stmt.childForFieldName('declaration');
  const value = stmt.childForFieldName('value');
  const named = declaration?.childForFieldName('name') ?? (value?.type === 'identifier' ? value : (value?.childForFieldName('name') ?? null));
  if (named) sink.import('default', '', named.text, true);
}

function moduleVariable(d: Node, sink: RelationSink): void {
  const name = d.childForFieldName('name');
  const value = d.childForFieldName('value');
  if (name === null) return;
  const required = requireOf(value);
  if (required !== null) {
    if (name.type === 'identifier') sink.import(name.text, required, null);
    else if (name.type === 'object_pattern') {
      for (const p of name.namedChildren) {
        if (p?.type === 'shorthand_property_identifier_pattern') sink.import(p.text, required, p.text);
        else if (p?.type === 'pair_pattern') {
          const key = p.childForFieldName('key');
          const v = p.childForFieldName('value');
          if (key && v?.type === 'identifier') sink.import(v.text, required, key.text);
        }
      }
    }
    return;
  }
  if (name.type === 'identifier') sink.member('', name.text, annotated(d) ?? constructed(value));
}

/** The module of `require("m")`, when `value` is one. */
function requireOf(value: Node | null): string | null {
  if (value?.type !== 'call_expression') return null;
  const fn = value.childForFieldName('function');
  const args = value.childForFieldName('arguments');
  const first = args?.firstNamedChild;
  if (fn?.type !== 'identifier' || fn.text !== 'require' || first?.type !== 'string') return null;
  return stringValue(first);
}

function stringValue(s: Node): string {
  const fragment = s.namedChildren.find((n) => n?.type === 'string_fragment');
  return fragment ? fragment.text : s.text.slice(1, -1);
}

/** The type a `: T` annotation on `n` states, when it names one type. */
function annotated(n: Node): string | null {
  const annotation = n.childForFieldName('type');
  return annotation === null ? null : typeName(annotation);
}

export function typeName(t: Node | null): string | null {
  return followType(t, (t) => {
    switch (t.type) {
      case 'type_annotation':
      case 'parenthesized_type':
        return t.firstNamedChild;
      case 'type_identifier':
      case 'nested_type_identifier':
        return t.text.replace(/\s+/g, '');
      case 'generic_type':
        return t.childForFieldName('name');
      case 'union_type': {
        // `Foo | null` and `Foo | undefined` are still a Foo receiver.
        const parts = t.namedChildren.filter((p) => p !== null && !/^(null|undefined)$/.test(p.text));
        return parts.length === 1 ? parts[0] : null;
      }
      default:
        return null;
    }
  });
}

/** `new Foo(…)` (possibly awaited or parenthesized) and `x as Foo` give their binding a type. */
function constructed(value: Node | null): string | null {
  let v = value;
  while (v !== null) {
    if (v.type === 'as_expression' || v.type === 'satisfies_expression') {
      const stated = typeName(v.lastNamedChild);
      if (stated !== null) return stated;
      v = v.firstNamedChild;
    } else if (v.type === 'parenthesized_expression' || v.type === 'await_expression' || v.type === 'non_null_expression') {
      v = v.firstNamedChild;
    } else break;
  }
  if (v?.type !== 'new_expression') return null;
  const ctor = v.childForFieldName('constructor');
  if (ctor?.type === 'identifier' || ctor?.type === 'member_expression') return ctor.text.replace(/\s+/g, '');
  return null;
}
