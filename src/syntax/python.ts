// Python declarations: classes, functions and methods at any depth — `def`, or a lambda bound
// by a plain assignment (`key = lambda x: …`) — plus module-level ALL_CAPS constants. Decorators belong to the span through `decorated_definition`; comments never
// attach (docstrings live inside the body already).

import type { Node, Tree } from 'web-tree-sitter';
import { Collector, Scopes, type Pending, type SymbolFacet } from './attachment.ts';
import type { SourceText } from './text.ts';
import type { Declaration } from './types.ts';

// `yield` is walked so the innermost enclosing function can be marked a generator.
const WALKED = ['function_definition', 'class_definition', 'yield', 'lambda'];

const CONSTANT = /^_*[A-Z][A-Z0-9_]*$/;
export const MAIN_GUARD = /^__name__==(['"])__main__\1$|^(['"])__main__\2==__name__$/;
const TEST_NAME = /^test(?:_|[A-Z0-9]|$)/;

export function pythonDeclarations(tree: Tree, source: SourceText): Declaration[] {
  const out = new Collector(source, '.');
  const scopes = new Scopes();
  const root = tree.rootNode;
  const hasMainGuard = moduleLevel(root, out);
  const generators = new Set<Pending>();

  for (const node of root.descendantsOfType(WALKED)) {
    if (node === null) continue;
    const start = node.startIndex;
    const top = scopes.enter(start);
    const type = node.type;

    if (type === 'yield') {
      if (top !== null && top.decl !== null && top.type === 'function_definition') generators.add(top.decl);
      continue;
    }
    if (type === 'lambda') {
      // `name = lambda …` declares like a `def` would at that place: a method when the
      // nearest enclosing declaration is a class, else a function (nested ones qualify).
      const stmt = lambdaStatement(node);
      if (stmt === null) continue;
      const inClass = top !== null && top.type === 'class_definition';
      const name = stmt.firstNamedChild!.childForFieldName('left')!.text;
      const visibility = isPrivate(name) ? 'private' : 'public';
      const facets: SymbolFacet[] = inClass ? ['value', 'callable', 'member'] : ['value', 'callable'];
      if (TEST_NAME.test(name)) facets.push('test');
      if (visibility === 'public') facets.push('public');
      out.add({
        name, prefix: top?.prefix ?? null, kind: inClass ? 'method' : 'function', facets, visibility,
        spanStart: stmt.startIndex, spanEnd: stmt.endIndex, itemStart: stmt.startIndex, itemEnd: stmt.endIndex,
        nodeKind: stmt.type, parent: top?.decl ?? null,
      });
      continue;
    }

    const nameNode = node.childForFieldName('name');
    if (nameNode === null) continue;
    const name = nameNode.text;
    if (name === '') continue;

    const parent = node.parent;
    const decorated = parent !== null && parent.type === 'decorated_definition' ? parent : null;
    const decorators = decorated === null ? [] : decoratorNames(decorated);
    const facets: SymbolFacet[] = [];
    let kind: string;
    if (type === 'class_definition') {
      kind = 'class';
      facets.push('type', 'constructible');
    } else {
      const inClass = top !== null && top.type === 'class_definition';
      kind = inClass ? 'method' : 'function';
      facets.push('value', 'callable');
      if (inClass) {
        facets.push('member');
        if (name === '__init__') facets.push('constructor');
      }
      if (node.firstChild?.type === 'async') facets.push('async');
      if (TEST_NAME.test(name)) facets.push('test');
      if (name === 'main' && top === null && hasMainGuard) facets.push('entrypoint');
      for (const d of decorators) {
        const last = d.slice(d.lastIndexOf('.') + 1);
        if (d === 'staticmethod') facets.push('static');
        else if (d === 'property' || last === 'setter' || last === 'getter' || last === 'deleter' || d === 'functools.cached_property' || d === 'cached_property') facets.push('property');
        else if (last === 'abstractmethod') facets.push('abstract');
      }
    }
    for (const d of decorators) {
      if (d === 'deprecated' || d.endsWith('.deprecated')) facets.push('deprecated');
    }
    const visibility = isPrivate(name) ? 'private' : 'public';
    if (visibility === 'public') facets.push('public');

    const outer = decorated ?? node;
    const end = node.endIndex;
    const decl = out.add({
      name, prefix: top?.prefix ?? null, kind, facets, visibility,
      spanStart: outer.startIndex, spanEnd: outer.endIndex, itemStart: start, itemEnd: end, nodeKind: type,
      parent: top?.decl ?? null,
    });
    scopes.push({ start, end, prefix: decl.base, decl, type, flags: 0 });
  }
  for (const g of generators) g.facets.push('generator');
  return out.finish();
}

/** The statement `name = lambda …` (or `name: T = lambda …`) that binds this lambda, else null. */
function lambdaStatement(lambda: Node): Node | null {
  const assignment = lambda.parent;
  if (assignment === null || assignment.type !== 'assignment') return null;
  const right = assignment.childForFieldName('right');
  const left = assignment.childForFieldName('left');
  if (right === null || right.startIndex !== lambda.startIndex || left === null || left.type !== 'identifier') return null;
  const stmt = assignment.parent;
  return stmt !== null && stmt.type === 'expression_statement' ? stmt : null;
}

/** `_x` and `__x` are private by convention; dunders (`__init__`) are not. */
function isPrivate(name: string): boolean {
  if (name.charCodeAt(0) !== 95) return false;
  return !(name.length > 4 && name.startsWith('__') && name.endsWith('__'));
}

/** Dotted names of a definition's decorators, call arguments dropped (`@a.b(x)` → `a.b`). */
function decoratorNames(decorated: Node): string[] {
  const names: string[] = [];
  const count = decorated.namedChildCount;
  for (let i = 0; i < count; i++) {
    const d = decorated.namedChild(i)!;
    if (d.type !== 'decorator') continue;
    let expr = d.firstNamedChild;
    if (expr !== null && expr.type === 'call') expr = expr.childForFieldName('function');
    if (expr !== null) names.push(expr.text.replace(/\s+/g, ''));
  }
  return names;
}

/** Adds module-level constants; reports whether the module has an `if __name__ == "__main__":` guard. */
function moduleLevel(root: Node, out: Collector): boolean {
  let guard = false;
  const count = root.namedChildCount;
  for (let i = 0; i < count; i++) {
    const stmt = root.namedChild(i)!;
    const t = stmt.type;
    if (t === 'if_statement') {
      const cond = stmt.childForFieldName('condition');
      if (cond !== null && cond.type === 'comparison_operator' && MAIN_GUARD.test(cond.text.replace(/\s+/g, ''))) guard = true;
      continue;
    }
    if (t !== 'expression_statement') continue;
    const assignment = stmt.firstNamedChild;
    if (assignment === null || assignment.type !== 'assignment') continue;
    const left = assignment.childForFieldName('left');
    if (left === null || left.type !== 'identifier') continue;
    const name = left.text;
    if (!CONSTANT.test(name)) continue;
    if (assignment.childForFieldName('right')?.type === 'lambda') continue; // a function, declared by the walk
    const visibility = isPrivate(name) ? 'private' : 'public';
    const facets: SymbolFacet[] = visibility === 'public' ? ['value', 'public'] : ['value'];
    out.add({
      name, prefix: null, kind: 'constant', facets, visibility,
      spanStart: stmt.startIndex, spanEnd: stmt.endIndex, itemStart: stmt.startIndex, itemEnd: stmt.endIndex,
      nodeKind: t,
    });
  }
  return guard;
}
