// Relations of Python files: `import` / `from … import`, calls (a class called is constructed,
// decided when the name resolves), base classes, names used in annotations, and the types that
// annotations and constructor calls give to attributes, module bindings, parameters and locals.

import type { Node, Tree } from 'web-tree-sitter';
import { MAIN_GUARD } from '../python.ts';
import { forEachNode, Locals, memberChain, type RelationSink } from './sink.ts';
import type { ReceiverKind } from './types.ts';

/** Identifier positions that bind a name rather than use it. */
const BINDING_FIELDS = new Set(['name', 'left', 'alias', 'function', 'attribute']);
const CLASS_NAME = /^_*[A-Z]/;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;


/** The node kinds the walk looks at; every other node is passed over by its kind id. */
const KINDS = ['import_statement', 'import_from_statement', 'comment', 'string', 'function_definition', 'lambda', 'if_statement', 'class_definition', 'call', 'type', 'assignment', 'for_statement', 'for_in_clause', 'as_pattern_target', 'named_expression', 'identifier'];

export function pythonRelations(tree: Tree, sink: RelationSink): void {
  const locals = new Locals();
  const known = new Set<string>(sink.topLevel);

  forEachNode(tree, KINDS, (c, type) => {
    locals.at(c.startIndex);
    switch (type) {
      case 'import_statement':
      case 'import_from_statement':
        importStatement(c.currentNode);
        return false;
      case 'comment':
      case 'string':
        return false;
      case 'function_definition':
      case 'lambda': {
        const n = c.currentNode;
        locals.push(n.endIndex);
        parameters(n.childForFieldName('parameters'));
        return true;
      }
      case 'if_statement': {
        const n = c.currentNode;
        const cond = n.childForFieldName('condition');
        if (n.parent?.type === 'module' && cond !== null && MAIN_GUARD.test(cond.text.replace(/\s+/g, ''))) sink.fileScope.push([n.startIndex, n.endIndex]);
        return true;
      }
      case 'class_definition': {
        const n = c.currentNode;
        const bases = n.childForFieldName('superclasses');
        for (const b of bases?.namedChildren ?? []) {
          if (b !== null && b.type !== 'keyword_argument') typeTarget('extends', b);
        }
        return true;
      }
      case 'call':
        call(c.currentNode);
        return true;
      case 'type':
        annotationRefs(c.currentNode);
        return false;
      case 'assignment':
        assignment(c.currentNode);
        return true;
      case 'for_statement':
      case 'for_in_clause':
        bindPattern(c.currentNode.childForFieldName('left'));
        return true;
      case 'as_pattern_target':
        bindPattern(c.currentNode.firstNamedChild);
        return false;
      case 'named_expression':
        bindPattern(c.currentNode.childForFieldName('name'));
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

  function importStatement(n: Node): void {
    if (n.type === 'import_statement') {
      for (const part of n.namedChildren) {
        if (part === null) continue;
        if (part.type === 'dotted_name') {
          // `import a.b.c` binds `a`; `a.b.c.f()` then walks the path from it.
          const head = part.firstNamedChild?.text ?? '';
          bindImport(head, head, null);
        } else if (part.type === 'aliased_import') {
          const name = part.childForFieldName('name');
          const alias = part.childForFieldName('alias');
          if (name && alias) bindImport(alias.text, name.text, null);
        }
      }
      return;
    }
    const moduleNode = n.childForFieldName('module_name');
    if (moduleNode === null) return;
    const module = moduleNode.text.replace(/\s+/g, '');
    if (n.namedChildren.some((p) => p?.type === 'wildcard_import')) {
      bindImport('*', module, null);
      return;
    }
    for (const part of n.namedChildren) {
      if (part === null || part.startIndex === moduleNode.startIndex) continue;
      if (part.type === 'dotted_name') bindImport(part.text, module, part.text);
      else if (part.type === 'aliased_import') {
        const name = part.childForFieldName('name');
        const alias = part.childForFieldName('alias');
        if (name && alias) bindImport(alias.text, module, name.text);
      }
    }
  }

  function bindImport(local: string, module: string, imported: string | null): void {
    // Every binding a module holds is importable from it, so every import re-exports.
    sink.import(local, module, imported, true);
    if (local !== '*') known.add(local);
  }

  function parameters(params: Node | null): void {
    if (params === null) return;
    for (const p of params.namedChildren) {
      if (p === null) continue;
      switch (p.type) {
        case 'identifier':
          if (p.text !== 'self' && p.text !== 'cls') locals.bind(p.text, null);
          break;
        case 'typed_parameter': {
          const id = p.namedChildren.find((x) => x?.type === 'identifier');
          if (id) locals.bind(id.text, typeName(p.childForFieldName('type')));
          break;
        }
        case 'default_parameter':
        case 'typed_default_parameter': {
          const id = p.childForFieldName('name');
          if (id) locals.bind(id.text, typeName(p.childForFieldName('type')));
          break;
        }
        default:
          bindPattern(p);
      }
    }
  }

  function bindPattern(p: Node | null): void {
    if (p === null) return;
    if (p.type === 'identifier') locals.bind(p.text, null);
    else for (const id of p.descendantsOfType('identifier')) if (id !== null) locals.bind(id.text, null);
  }

  function assignment(n: Node): void {
    const left = n.childForFieldName('left');
    if (left === null) return;
    const right = n.childForFieldName('right');
    const stated = typeName(n.childForFieldName('type')) ?? constructed(right) ?? (right?.type === 'identifier' ? (locals.lookup(right.text)?.type ?? null) : null);
    if (left.type === 'attribute') {
      // `self.x = Store()` / `self.x: Store` / `self.x = store` (a typed parameter) types the attribute.
      const object = left.childForFieldName('object');
      const attribute = left.childForFieldName('attribute');
      if (object?.text === 'self' && attribute !== null) {
        const owner = sink.enclosingType(sink.source.toByte(n.startIndex));
        if (owner !== null) sink.member(owner.qualifiedName, attribute.text, stated);
      }
      return;
    }
    if (left.type !== 'identifier') {
      if (locals.depth > 0) bindPattern(left);
      return;
    }
    if (locals.depth > 0) {
      locals.bind(left.text, stated);
      return;
    }
    // Class bodies state attribute types; module scope states module bindings'.
    const owner = sink.enclosingType(sink.source.toByte(n.startIndex));
    sink.member(owner?.qualifiedName ?? '', left.text, stated);
  }

  function call(n: Node): void {
    const fn = n.childForFieldName('function');
    if (fn === null) return;
    if (fn.type === 'identifier') {
      if (locals.lookup(fn.text) === undefined && fn.text !== 'super') sink.ref('calls', fn.text, 'none', null, fn.startIndex, fn.endIndex);
      return;
    }
    if (fn.type !== 'attribute') return;
    const object = fn.childForFieldName('object');
    const attribute = fn.childForFieldName('attribute');
    if (object === null || attribute === null) return;
    const [receiver, text] = receiverOf(object);
    sink.ref('calls', attribute.text, receiver, text, attribute.startIndex, attribute.endIndex);
  }

  function receiverOf(object: Node): [ReceiverKind, string | null] {
    if (object.type === 'identifier') {
      const name = object.text;
      if (name === 'self' || name === 'cls') return ['self', null];
      return locals.receiver(name);
    }
    if (object.type === 'call' && object.childForFieldName('function')?.text === 'super') return ['super', null];
    if (object.type === 'attribute') {
      // `self.a.b.f()` reads attributes of self; `s.a.f()` of a typed local; `m.a.f()` a path.
      const { base, chain } = memberChain(object, 'attribute', 'object', 'attribute');
      if (base?.type !== 'identifier') return ['local', null];
      if (base.text === 'self') return ['field', chain.join('.')];
      const chained = locals.chained(base.text, chain, true);
      if (chained[0] !== 'local') return chained;
    }
    return ['local', null];
  }

  function typeTarget(kind: 'extends' | 'references', t: Node): void {
    if (t.type === 'identifier') sink.ref(kind, t.text, 'none', null, t.startIndex, t.endIndex);
    else if (t.type === 'attribute') {
      const object = t.childForFieldName('object');
      const attribute = t.childForFieldName('attribute');
      if (object === null || attribute === null) return;
      const path = object.text.replace(/\s+/g, '');
      sink.ref(kind, attribute.text, path.includes('.') ? 'path' : 'name', path, attribute.startIndex, attribute.endIndex);
    } else if (t.type === 'subscript') {
      const value = t.childForFieldName('value');
      if (value !== null) typeTarget(kind, value); // `Base[T]`
    }
  }

  /** Names an annotation uses, string annotations (`"Foo"`) included. */
  function annotationRefs(t: Node): void {
    for (const n of t.descendantsOfType(['identifier', 'attribute', 'string_content'])) {
      if (n === null) continue;
      if (n.type === 'string_content') {
        const name = n.text.trim();
        if (IDENTIFIER.test(name)) {
          const dot = name.lastIndexOf('.');
          if (dot < 0) sink.ref('references', name, 'none', null, n.startIndex, n.endIndex);
          else sink.ref('references', name.slice(dot + 1), 'path', name.slice(0, dot), n.startIndex, n.endIndex);
        }
      } else if (n.parent?.type !== 'attribute') typeTarget('references', n);
    }
  }
}

/** The class an annotation names: `Foo`, `mod.Foo`, `"Foo"`, `Optional[Foo]`, `Foo | None`. */
export function typeName(t: Node | null): string | null {
  while (t !== null) {
    switch (t.type) {
      case 'type':
        t = t.firstNamedChild;
        break;
      case 'identifier':
      case 'attribute':
        return IDENTIFIER.test(t.text) ? t.text : null;
      case 'string': {
        const content = t.namedChildren.find((n) => n?.type === 'string_content')?.text.trim() ?? '';
        return IDENTIFIER.test(content) ? content : null;
      }
      case 'subscript':
      case 'generic_type': {
        const value = t.childForFieldName('value') ?? t.firstNamedChild;
        const args = t.type === 'subscript' ? t.childForFieldName('subscript') : t.namedChildren[1];
        t = value?.text === 'Optional' ? (args ?? null) : value;
        break;
      }
      case 'binary_operator': {
        // `Foo | None`
        const left = t.childForFieldName('left');
        const right = t.childForFieldName('right');
        t = right?.text === 'None' ? left : left?.text === 'None' ? right : null;
        break;
      }
      default:
        return null;
    }
  }
  return null;
}

/** `Foo(…)` / `mod.Foo(…)` with a class-like (capitalized) name gives its binding that type. */
function constructed(value: Node | null): string | null {
  let v = value;
  if (v?.type === 'await') v = v.firstNamedChild;
  if (v?.type !== 'call') return null;
  const fn = v.childForFieldName('function');
  if (fn === null || !IDENTIFIER.test(fn.text)) return null;
  const last = fn.text.slice(fn.text.lastIndexOf('.') + 1);
  return CLASS_NAME.test(last) ? fn.text : null;
}
