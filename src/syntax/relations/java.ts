// Relations of Java files: single-type, static and on-demand imports, method invocations
// (a bare call means a member of the enclosing classes), `new`, `super(…)`, `extends` /
// `implements`, type references, and the types fields, parameters and locals declare.

import type { Node, Tree } from 'web-tree-sitter';
import { compact } from '../attachment.ts';
import { forEachNode, Locals, memberChain, type RelationSink } from './sink.ts';
import type { ReceiverKind } from './types.ts';

const FUNCTIONS = new Set(['method_declaration', 'constructor_declaration', 'compact_constructor_declaration', 'lambda_expression', 'static_initializer']);
const BINDING_FIELDS = new Set(['name', 'scope', 'field']);


/** The node kinds the walk looks at; every other node is passed over by its kind id. */
const KINDS = ['import_declaration', 'package_declaration', 'line_comment', 'block_comment', 'string_literal', 'method_invocation', 'object_creation_expression', 'explicit_constructor_invocation', 'superclass', 'super_interfaces', 'extends_interfaces', 'type_identifier', 'scoped_type_identifier', 'field_declaration', 'local_variable_declaration', 'enhanced_for_statement', 'catch_formal_parameter', 'resource', 'identifier', ...FUNCTIONS];

export function javaRelations(tree: Tree, sink: RelationSink): void {
  const locals = new Locals();
  const known = new Set<string>(sink.topLevel);

  forEachNode(tree, KINDS, (c, type) => {
    locals.at(c.startIndex);
    switch (type) {
      case 'import_declaration':
        importDeclaration(c.currentNode);
        return false;
      case 'package_declaration':
      case 'line_comment':
      case 'block_comment':
      case 'string_literal':
        return false;
      case 'method_invocation':
        invocation(c.currentNode);
        return true;
      case 'object_creation_expression': {
        const t = c.currentNode.childForFieldName('type');
        if (t !== null) typeTarget('constructs', t);
        return true;
      }
      case 'explicit_constructor_invocation': {
        const ctor = c.currentNode.childForFieldName('constructor');
        if (ctor?.type === 'super') sink.ref('calls', 'constructor', 'super', null, ctor.startIndex, ctor.endIndex);
        else if (ctor?.type === 'this') sink.ref('calls', 'constructor', 'self', null, ctor.startIndex, ctor.endIndex);
        return true;
      }
      case 'superclass':
        for (const t of c.currentNode.namedChildren) if (t !== null) typeTarget('extends', t);
        return false;
      case 'super_interfaces':
      case 'extends_interfaces': {
        const kind = type === 'super_interfaces' ? 'implements' : 'extends';
        for (const t of c.currentNode.descendantsOfType(['type_identifier', 'scoped_type_identifier', 'generic_type'])) {
          if (t !== null && t.parent?.type === 'type_list') typeTarget(kind, t);
        }
        return false;
      }
      case 'type_identifier':
        if (c.currentFieldName !== 'name' && c.nodeText !== 'var') sink.ref('references', c.nodeText, 'none', null, c.startIndex, c.endIndex);
        return false;
      case 'scoped_type_identifier':
        typeTarget('references', c.currentNode);
        return false;
      case 'field_declaration': {
        const n = c.currentNode;
        const owner = sink.enclosingType(sink.source.toByte(n.startIndex));
        const stated = typeName(n.childForFieldName('type'));
        for (const d of n.childrenForFieldName('declarator')) {
          const name = d?.childForFieldName('name');
          if (owner !== null && name) sink.member(owner.qualifiedName, name.text, stated ?? constructed(d!.childForFieldName('value')));
        }
        return true;
      }
      case 'local_variable_declaration': {
        const n = c.currentNode;
        const stated = typeName(n.childForFieldName('type'));
        for (const d of n.childrenForFieldName('declarator')) {
          const name = d?.childForFieldName('name');
          if (name) locals.bind(name.text, stated ?? constructed(d!.childForFieldName('value')));
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
      case 'identifier': {
        const name = c.nodeText;
        if (known.has(name) && !BINDING_FIELDS.has(c.currentFieldName ?? '') && locals.lookup(name) === undefined) {
          sink.ref('references', name, 'none', null, c.startIndex, c.endIndex);
        }
        return false;
      }
    }
    if (FUNCTIONS.has(type)) {
      const n = c.currentNode;
      locals.push(n.endIndex);
      parameters(n.childForFieldName('parameters'));
      return true;
    }
    return true;
  });

  function importDeclaration(n: Node): void {
    const isStatic = n.children.some((x) => x?.type === 'static');
    const wildcard = n.namedChildren.some((x) => x?.type === 'asterisk');
    const path = n.namedChildren.find((x) => x?.type === 'scoped_identifier' || x?.type === 'identifier');
    if (!path) return;
    const text = compact(path.text);
    if (wildcard) {
      sink.import('*', text, null);
      return;
    }
    const cut = text.lastIndexOf('.');
    if (cut < 0) return;
    const name = text.slice(cut + 1);
    // `import a.b.C;` binds C from package a.b; `import static a.b.C.m;` binds m from class a.b.C.
    sink.import(name, text.slice(0, cut), name, false);
    if (!isStatic) known.add(name);
  }

  function parameters(params: Node | null): void {
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

  function invocation(n: Node): void {
    const name = n.childForFieldName('name');
    if (name === null) return;
    const object = n.childForFieldName('object');
    if (object === null) {
      sink.ref('calls', name.text, 'none', null, name.startIndex, name.endIndex);
      return;
    }
    const [receiver, text] = receiverOf(object);
    sink.ref('calls', name.text, receiver, text, name.startIndex, name.endIndex);
  }

  function receiverOf(object: Node): [ReceiverKind, string | null] {
    switch (object.type) {
      case 'this':
        return ['self', null];
      case 'super':
        return ['super', null];
      case 'identifier':
        return locals.receiver(object.text);
      case 'field_access': {
        // `this.a.b.m()` reads fields of this; `s.a.m()` of a typed local; `a.b.C.m()` a path.
        const { base, chain } = memberChain(object, 'field_access', 'object', 'field');
        if (base?.type === 'this') return ['field', chain.join('.')];
        return base?.type === 'identifier' ? locals.chained(base.text, chain, true) : ['local', null];
      }
      case 'parenthesized_expression': {
        const inner = object.firstNamedChild;
        return inner === null ? ['local', null] : receiverOf(inner);
      }
      default:
        return ['local', null];
    }
  }

  function typeTarget(kind: 'extends' | 'implements' | 'references' | 'constructs', t: Node): void {
    let node: Node | null = t;
    if (node.type === 'generic_type') node = node.namedChildren.find((x) => x?.type === 'type_identifier' || x?.type === 'scoped_type_identifier') ?? null;
    if (node === null) return;
    if (node.type === 'type_identifier') sink.ref(kind, node.text, 'none', null, node.startIndex, node.endIndex);
    else if (node.type === 'scoped_type_identifier') {
      const text = compact(node.text).replace(/<.*$/, '');
      const cut = text.lastIndexOf('.');
      const scope = text.slice(0, cut);
      sink.ref(kind, text.slice(cut + 1), scope.includes('.') ? 'path' : 'name', scope, node.startIndex, node.endIndex);
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
