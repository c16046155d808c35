// Relations of Python files: `import` / `from … import`, calls (a class called is constructed,
// decided when the name resolves), base classes, names used in annotations, and the types that
// annotations and constructor calls give to attributes, module bindings, parameters and locals.

import type { Node, Tree, TreeCursor } from 'web-tree-sitter';
import { MAIN_GUARD } from '../python.ts';
import type { RelationSink } from './sink.ts';
import type { ReferenceKind } from './types.ts';
import { followType, type LanguageSyntax, RelationWalk } from './walk.ts';

const CLASS_NAME = /^_*[A-Z]/;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;

const SYNTAX: LanguageSyntax = {
  own: ['import_statement', 'import_from_statement', 'if_statement', 'class_definition', 'call', 'type', 'assignment', 'for_statement', 'for_in_clause', 'as_pattern_target', 'named_expression'],
  skip: ['comment', 'string'],
  functions: ['function_definition', 'lambda'],
  identifiers: ['identifier'],
  bindingFields: new Set(['name', 'left', 'alias', 'function', 'attribute']),
  receivers: {
    access: ['attribute', 'object', 'attribute'],
    paths: true,
    // `cls.f()` is a call on the class itself; fields are read only through `self`.
    isSelf: (n, field) => n.type === 'identifier' && (n.text === 'self' || (!field && n.text === 'cls')),
    isSuper: (n) => n.type === 'call' && n.childForFieldName('function')?.text === 'super',
  },
};

class PythonWalk extends RelationWalk {
  protected visit(c: TreeCursor, type: string): boolean {
    switch (type) {
      case 'import_statement':
      case 'import_from_statement':
        this.importStatement(c.currentNode);
        return false;
      case 'if_statement': {
        const n = c.currentNode;
        const cond = n.childForFieldName('condition');
        if (n.parent?.type === 'module' && cond !== null && MAIN_GUARD.test(cond.text.replace(/\s+/g, ''))) this.sink.fileScope.push([n.startIndex, n.endIndex]);
        return true;
      }
      case 'class_definition': {
        const bases = c.currentNode.childForFieldName('superclasses');
        for (const b of bases?.namedChildren ?? []) {
          if (b !== null && b.type !== 'keyword_argument') this.typeTarget('extends', b);
        }
        return true;
      }
      case 'call': {
        const fn = c.currentNode.childForFieldName('function');
        // `super()` is a receiver (`super().f()`), not a call of its own.
        if (fn !== null && !(fn.type === 'identifier' && fn.text === 'super')) this.target('calls', fn);
        return true;
      }
      case 'type':
        this.annotationRefs(c.currentNode);
        return false;
      case 'assignment':
        this.assignment(c.currentNode);
        return true;
      case 'for_statement':
      case 'for_in_clause':
        this.bindPattern(c.currentNode.childForFieldName('left'));
        return true;
      case 'as_pattern_target':
        this.bindPattern(c.currentNode.firstNamedChild);
        return false;
      case 'named_expression':
        this.bindPattern(c.currentNode.childForFieldName('name'));
        return true;
    }
    return true;
  }

  private importStatement(n: Node): void {
    // Every binding a module holds is importable from it, so every import re-exports.
    if (n.type === 'import_statement') {
      for (const part of n.namedChildren) {
        if (part === null) continue;
        if (part.type === 'dotted_name') {
          // `import a.b.c` binds `a`; `a.b.c.f()` then walks the path from it.
          const head = part.firstNamedChild?.text ?? '';
          this.import(head, head, null, true);
        } else if (part.type === 'aliased_import') {
          const name = part.childForFieldName('name');
          const alias = part.childForFieldName('alias');
          if (name && alias) this.import(alias.text, name.text, null, true);
        }
      }
      return;
    }
    const moduleNode = n.childForFieldName('module_name');
    if (moduleNode === null) return;
    const module = moduleNode.text.replace(/\s+/g, '');
    if (n.namedChildren.some((p) => p?.type === 'wildcard_import')) {
      this.import('*', module, null, true);
      return;
    }
    for (const part of n.namedChildren) {
      if (part === null || part.startIndex === moduleNode.startIndex) continue;
      if (part.type === 'dotted_name') this.import(part.text, module, part.text, true);
      else if (part.type === 'aliased_import') {
        const name = part.childForFieldName('name');
        const alias = part.childForFieldName('alias');
        if (name && alias) this.import(alias.text, module, name.text, true);
      }
    }
  }

  protected parameters(params: Node | null): void {
    if (params === null) return;
    const locals = this.locals;
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
          this.bindPattern(p);
      }
    }
  }

  private assignment(n: Node): void {
    const locals = this.locals;
    const left = n.childForFieldName('left');
    if (left === null) return;
    const right = n.childForFieldName('right');
    const stated = typeName(n.childForFieldName('type')) ?? constructed(right) ?? (right?.type === 'identifier' ? (locals.lookup(right.text)?.type ?? null) : null);
    if (left.type === 'attribute') {
      // `self.x = Store()` / `self.x: Store` / `self.x = store` (a typed parameter) types the attribute.
      const object = left.childForFieldName('object');
      const attribute = left.childForFieldName('attribute');
      if (object?.text === 'self' && attribute !== null) this.memberType(n, attribute.text, stated);
      return;
    }
    if (left.type !== 'identifier') {
      if (locals.depth > 0) this.bindPattern(left);
      return;
    }
    if (locals.depth > 0) {
      locals.bind(left.text, stated);
      return;
    }
    // Class bodies state attribute types; module scope states module bindings'.
    this.sink.member(this.owner(n) ?? '', left.text, stated);
  }

  protected typeTarget(kind: ReferenceKind, t: Node): void {
    if (t.type === 'identifier') this.ref(kind, t);
    else if (t.type === 'attribute') {
      const object = t.childForFieldName('object');
      const attribute = t.childForFieldName('attribute');
      if (object !== null && attribute !== null) this.qualifiedRef(kind, attribute, object.text.replace(/\s+/g, ''));
    } else if (t.type === 'subscript') {
      const value = t.childForFieldName('value');
      if (value !== null) this.typeTarget(kind, value); // `Base[T]`
    }
  }

  /** Names an annotation uses, string annotations (`"Foo"`) included. */
  private annotationRefs(t: Node): void {
    for (const n of t.descendantsOfType(['identifier', 'attribute', 'string_content'])) {
      if (n === null) continue;
      if (n.type === 'string_content') {
        const name = n.text.trim();
        if (IDENTIFIER.test(name)) {
          const dot = name.lastIndexOf('.');
          if (dot < 0) this.sink.ref('references', name, 'none', null, n.startIndex, n.endIndex);
          else this.sink.ref('references', name.slice(dot + 1), 'path', name.slice(0, dot), n.startIndex, n.endIndex);
        }
      } else if (n.parent?.type !== 'attribute') this.typeTarget('references', n);
    }
  }
}

/** The class an annotation names: `Foo`, `mod.Foo`, `"Foo"`, `Optional[Foo]`, `Foo | None`. */
export function typeName(t: Node | null): string | null {
  return followType(t, (t) => {
    switch (t.type) {
      case 'type':
        return t.firstNamedChild;
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
        return value?.text === 'Optional' ? (args ?? null) : value;
      }
      case 'binary_operator': {
        // `Foo | None`
        const left = t.childForFieldName('left');
        const right = t.childForFieldName('right');
        return right?.text === 'None' ? left : left?.text === 'None' ? right : null;
      }
      default:
        return null;
    }
  });
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

export function pythonRelations(tree: Tree, sink: RelationSink): void {
  new PythonWalk(sink, SYNTAX).run(tree);
}
