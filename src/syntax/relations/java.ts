// Relations of Java files: single-type, static and on-demand imports, method invocations
// (a bare call means a member of the enclosing classes), `new`, `super(…)`, `extends` /
// `implements`, type references, and the types fields, parameters and locals declare.

import type { Node, Tree, TreeCursor } from 'web-tree-sitter';
import { compact } from '../attachment.ts';
import type { RelationSink } from './sink.ts';
import type { ReferenceKind } from './types.ts';
import { type LanguageSyntax, RelationWalk } from './walk.ts';

const SYNTAX: LanguageSyntax = {
  own: ['import_declaration', 'method_invocation', 'explicit_constructor_invocation', 'super_interfaces', 'extends_interfaces', 'field_declaration', 'local_variable_declaration', 'enhanced_for_statement', 'catch_formal_parameter', 'resource'],
  skip: ['package_declaration', 'line_comment', 'block_comment', 'string_literal'],
  functions: ['method_declaration', 'constructor_declaration', 'compact_constructor_declaration', 'lambda_expression', 'static_initializer'],
  identifiers: ['identifier'],
  bindingFields: new Set(['name', 'scope', 'field']),
  types: { name: 'type_identifier', inferred: 'var', qualified: 'scoped_type_identifier', constructions: ['object_creation_expression', 'type'], supertypes: ['superclass'] },
  receivers: { access: ['field_access', 'object', 'field'], paths: true, wrappers: new Set(['parenthesized_expression']), isSelf: (n) => n.type === 'this', isSuper: (n) => n.type === 'super' },
};

class JavaWalk extends RelationWalk {
  protected visit(c: TreeCursor, type: string): boolean {
    const { locals, sink } = this;
    switch (type) {
      case 'import_declaration':
        this.importDeclaration(c.currentNode);
        return false;
      case 'method_invocation': {
        // A call without an object means a member of the enclosing classes, never a local.
        const n = c.currentNode;
        const name = n.childForFieldName('name');
        const object = n.childForFieldName('object');
        if (name !== null) {
          if (object === null) this.ref('calls', name);
          else this.member('calls', name, object);
        }
        return true;
      }
      case 'explicit_constructor_invocation': {
        const ctor = c.currentNode.childForFieldName('constructor');
        if (ctor?.type === 'super') sink.ref('calls', 'constructor', 'super', null, ctor.startIndex, ctor.endIndex);
        else if (ctor?.type === 'this') sink.ref('calls', 'constructor', 'self', null, ctor.startIndex, ctor.endIndex);
        return true;
      }
      case 'super_interfaces':
      case 'extends_interfaces': {
        const kind = type === 'super_interfaces' ? 'implements' : 'extends';
        for (const t of c.currentNode.descendantsOfType(['type_identifier', 'scoped_type_identifier', 'generic_type'])) {
          if (t !== null && t.parent?.type === 'type_list') this.typeTarget(kind, t);
        }
        return false;
      }
      case 'field_declaration':
      case 'local_variable_declaration': {
        // Fields type members of the enclosing class; locals type bindings of the frame.
        const n = c.currentNode;
        const stated = typeName(n.childForFieldName('type'));
        for (const d of n.childrenForFieldName('declarator')) {
          const name = d?.childForFieldName('name');
          if (!name) continue;
          const t = stated ?? constructed(d!.childForFieldName('value'));
          if (type === 'field_declaration') this.memberType(n, name.text, t);
          else locals.bind(name.text, t);
        }
        return true;
      }
      case 'enhanced_for_statement':
      case 'catch_formal_parameter':
      case 'resource': {
        const n = c.currentNode;
        const name = n.childForFieldName('name');
        if (name) locals.bind(name.text, typeName(n.childForFieldName('type')));
        return true;
      }
    }
    return true;
  }

  private importDeclaration(n: Node): void {
    const isStatic = n.children.some((x) => x?.type === 'static');
    const wildcard = n.namedChildren.some((x) => x?.type === 'asterisk');
    const path = n.namedChildren.find((x) => x?.type === 'scoped_identifier' || x?.type === 'identifier');
    if (!path) return;
    const text = compact(path.text);
    if (wildcard) {
      this.sink.import('*', text, null);
      return;
    }
    const cut = text.lastIndexOf('.');
    if (cut < 0) return;
    const name = text.slice(cut + 1);
    // `import a.b.C;` binds C from package a.b; `import static a.b.C.m;` binds m from class a.b.C,
    // which a bare identifier does not mean (a bare call is a member call either way).
    if (isStatic) this.sink.import(name, text.slice(0, cut), name, false);
    else this.import(name, text.slice(0, cut), name, false);
  }

  protected parameters(params: Node | null): void {
    const locals = this.locals;
    if (params === null) return;
    if (params.type === 'identifier') {
      locals.bind(params.text, null); // `x -> …`
      return;
    }
    for (const p of params.namedChildren) {
      if (p === null) continue;
      if (p.type === 'identifier') locals.bind(p.text, null);
      else if (p.type === 'formal_parameter' || p.type === 'spread_parameter') {
        const name = p.childForFieldName('name') ?? p.descendantsOfType('identifier').at(-1) ?? null;
        if (name) locals.bind(name.text, typeName(p.childForFieldName('type') ?? p.namedChildren.find((x) => x?.type !== 'modifiers') ?? null));
      } else if (p.type === 'inferred_parameters') {
        for (const id of p.namedChildren) if (id !== null) locals.bind(id.text, null);
      }
    }
  }

  protected typeTarget(kind: ReferenceKind, t: Node): void {
    let node: Node | null = t;
    if (node.type === 'generic_type') node = node.namedChildren.find((x) => x?.type === 'type_identifier' || x?.type === 'scoped_type_identifier') ?? null;
    if (node === null) return;
    if (node.type === 'type_identifier') this.ref(kind, node);
    else if (node.type === 'scoped_type_identifier') {
      const text = compact(node.text).replace(/<.*$/, '');
      const cut = text.lastIndexOf('.');
      const scope = text.slice(0, cut);
      this.sink.ref(kind, text.slice(cut + 1), scope.includes('.') ? 'path' : 'name', scope, node.startIndex, node.endIndex);
    }
  }
}

/** The class a type names: `Foo`, `a.b.Foo`, `Foo<T>` → `Foo`; primitives and arrays name none. */
export function typeName(t: Node | null): string | null {
  if (t === null) return null;
  switch (t.type) {
    case 'type_identifier':
      return t.text === 'var' ? null : t.text;
    case 'scoped_type_identifier':
      return compact(t.text).replace(/<.*$/, '');
    case 'generic_type':
      return typeName(t.namedChildren.find((x) => x?.type === 'type_identifier' || x?.type === 'scoped_type_identifier') ?? null);
    default:
      return null;
  }
}

/** `new Foo(…)` gives a `var` binding the type Foo. */
function constructed(value: Node | null): string | null {
  if (value?.type !== 'object_creation_expression') return null;
  return typeName(value.childForFieldName('type'));
}

export function javaRelations(tree: Tree, sink: RelationSink): void {
  new JavaWalk(sink, SYNTAX).run(tree);
}
