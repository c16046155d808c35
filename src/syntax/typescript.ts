// TypeScript, TSX and JavaScript declarations. The three grammars share node kinds; where
// they differ (JS `field_definition` vs TS `public_field_definition`, decorator placement)
// both spellings are handled.

import type { Node, Tree } from 'web-tree-sitter';
import { attachedStart, Collector, compact, namedChildrenOfType, Scopes, type AttachOptions, type Frame, type Pending, type SymbolFacet } from './attachment.ts';
import type { SourceText } from './text.ts';
import type { Declaration } from './types.ts';

const WALKED = [
  'function_declaration', 'generator_function_declaration', 'function_signature',
  'class_declaration', 'abstract_class_declaration', 'interface_declaration',
  'type_alias_declaration', 'enum_declaration', 'internal_module', 'module',
  'method_definition', 'method_signature', 'abstract_method_signature', 'construct_signature',
  'public_field_definition', 'field_definition', 'property_signature',
  'lexical_declaration', 'variable_declaration', 'export_statement',
];

/** Frame flags. */
const EXPORTED = 1; // the frame's declaration is visible outside the file
const NAMESPACE = 2; // module-level rules apply inside (namespace / module bodies)
const INTERFACE = 4; // members default to public and carry no bodies

const FUNCTION_VALUES = new Set(['arrow_function', 'function_expression', 'function', 'generator_function']);

function isJsDoc(node: Node, text: string): boolean {
  if (node.type !== 'comment') return false;
  const s = node.startIndex;
  // `/**/` is an empty plain comment, not a doc comment.
  return text.startsWith('/**', s) && !text.startsWith('/**/', s);
}

interface Outer {
  /** The node whose preceding siblings may attach (the export statement when exported). */
  node: Node;
  exported: boolean;
  /** The parent of the outermost wrapper. */
  parent: Node | null;
}

/** Climbs `export`, `declare` and (for namespaces) expression-statement wrappers. */
function outerOf(node: Node): Outer {
  let outer = node;
  let exported = false;
  let parent = node.parent;
  while (parent !== null) {
    const t = parent.type;
    if (t === 'export_statement') exported = true;
    else if (t !== 'ambient_declaration' && !(t === 'expression_statement' && outer.type === 'internal_module')) break;
    outer = parent;
    parent = parent.parent;
  }
  return { node: outer, exported, parent };
}

/** Module-level means the program, or the body of a namespace / module declaration. */
function isModuleLevel(parent: Node | null): boolean {
  if (parent === null) return false;
  const t = parent.type;
  if (t === 'program') return true;
  if (t !== 'statement_block') return false;
  const owner = parent.parent;
  return owner !== null && (owner.type === 'internal_module' || owner.type === 'module');
}

/** Anonymous modifier tokens (`static`, `async`, `*`, `get`, …) and the accessibility before `name`. */
interface Modifiers {
  tokens: Set<string>;
  accessibility: string | null;
}

function modifiersBefore(node: Node, nameStart: number): Modifiers {
  const tokens = new Set<string>();
  let accessibility: string | null = null;
  const count = node.childCount;
  for (let i = 0; i < count; i++) {
    const child = node.child(i)!;
    if (child.startIndex >= nameStart) break;
    const t = child.type;
    if (t === 'accessibility_modifier') accessibility = child.text;
    else if (!child.isNamed) tokens.add(t);
  }
  return { tokens, accessibility };
}

export function typescriptDeclarations(tree: Tree, source: SourceText): Declaration[] {
  const text = source.text;
  const out = new Collector(source, '.');
  const scopes = new Scopes();

  const attachOptions = (facets: SymbolFacet[]): AttachOptions => ({
    attaches: (s) => s.type === 'decorator' || isJsDoc(s, text),
    ignoresBlankLine: (s) => s.type === 'decorator',
    onAttached: (s) => {
      if (s.type === 'comment' && /@deprecated\b/.test(s.text)) facets.push('deprecated');
    },
  });

  const add = (
    node: Node, top: Frame | null, name: string, kind: string, facets: SymbolFacet[],
    visibility: string, outer: Node, item: Node, flags: number,
  ): Pending => {
    const spanStart = attachedStart(outer, source, attachOptions(facets));
    const decl = out.add({
      name, prefix: top?.prefix ?? null, kind, facets, visibility,
      spanStart, spanEnd: outer.endIndex, itemStart: item.startIndex, itemEnd: item.endIndex,
      nodeKind: item.type, parent: top?.decl ?? null,
    });
    scopes.push({ start: node.startIndex, end: node.endIndex, prefix: decl.base, decl, type: node.type, flags });
    return decl;
  };

  for (const node of tree.rootNode.descendantsOfType(WALKED)) {
    if (node === null) continue;
    const start = node.startIndex;
    const top = scopes.enter(start);
    const type = node.type;

    switch (type) {
      case 'export_statement': {
        // Only `export default <anonymous class or function>` declares here; named
        // exported declarations are visited as themselves.
        const value = node.childForFieldName('value');
        if (value === null || node.childForFieldName('declaration') !== null) break;
        const vt = value.type;
        const facets: SymbolFacet[] = ['public'];
        let kind: string;
        if (vt === 'class') {
          kind = 'class';
          facets.push('type', 'constructible');
        } else if (FUNCTION_VALUES.has(vt)) {
          kind = 'function';
          facets.push('value', 'callable');
          functionFacets(value, facets);
        } else break;
        const decl = out.add({
          name: 'default', prefix: top?.prefix ?? null, kind, facets, visibility: 'exported',
          spanStart: attachedStart(node, source, attachOptions(facets)), spanEnd: node.endIndex,
          itemStart: value.startIndex, itemEnd: value.endIndex, nodeKind: vt, parent: top?.decl ?? null,
        });
        scopes.push({ start: value.startIndex, end: value.endIndex, prefix: decl.base, decl, type: vt, flags: EXPORTED });
        break;
      }

      case 'function_declaration':
      case 'generator_function_declaration':
      case 'function_signature': {
        const name = nameOf(node);
        if (name === null) break;
        const o = outerOf(node);
        const exported = o.exported;
        const facets: SymbolFacet[] = ['value', 'callable'];
        functionFacets(node, facets);
        if (exported) facets.push('public');
        add(node, top, name, 'function', facets, exported ? 'exported' : 'private', o.node, node, exported ? EXPORTED : 0);
        break;
      }

      case 'class_declaration':
      case 'abstract_class_declaration': {
        const name = nameOf(node);
        if (name === null) break;
        const o = outerOf(node);
        const facets: SymbolFacet[] = type === 'abstract_class_declaration' ? ['type', 'abstract'] : ['type', 'constructible'];
        if (o.exported) facets.push('public');
        add(node, top, name, 'class', facets, o.exported ? 'exported' : 'private', o.node, node, o.exported ? EXPORTED : 0);
        break;
      }

      case 'interface_declaration':
      case 'type_alias_declaration':
      case 'enum_declaration': {
        const name = nameOf(node);
        if (name === null) break;
        const o = outerOf(node);
        let kind: string;
        let flags = o.exported ? EXPORTED : 0;
        const facets: SymbolFacet[] = ['type'];
        if (type === 'interface_declaration') {
          kind = 'interface';
          flags |= INTERFACE;
        } else if (type === 'type_alias_declaration') {
          kind = 'type_alias';
          facets.push('alias');
        } else {
          kind = 'enum';
          facets.push('enumeration');
        }
        if (o.exported) facets.push('public');
        add(node, top, name, kind, facets, o.exported ? 'exported' : 'private', o.node, node, flags);
        break;
      }

      case 'internal_module':
      case 'module': {
        if (!node.isNamed) break; // the `module` keyword token shares the kind name
        const nameNode = node.childForFieldName('name');
        if (nameNode === null) break;
        // `namespace A.B` qualifies as `A.B`; `declare module "x"` is named by the string's contents.
        const name = nameNode.type === 'string' ? unquote(nameNode.text) : compact(nameNode.text);
        if (name === '') break;
        const o = outerOf(node);
        const facets: SymbolFacet[] = type === 'module' ? ['namespace', 'module'] : ['namespace'];
        if (o.exported) facets.push('public');
        add(node, top, name, type === 'module' ? 'module' : 'namespace', facets,
          o.exported ? 'exported' : 'private', o.node, node, (o.exported ? EXPORTED : 0) | NAMESPACE);
        break;
      }

      case 'method_definition':
      case 'method_signature':
      case 'abstract_method_signature':
      case 'construct_signature':
      case 'public_field_definition':
      case 'field_definition':
      case 'property_signature': {
        member(node, top);
        break;
      }

      case 'lexical_declaration':
      case 'variable_declaration': {
        // Only module-level (and namespace-level) bindings are declarations; locals are not.
        if (top !== null && (top.flags & NAMESPACE) === 0) break;
        variables(node, top);
        break;
      }
    }
  }
  return out.finish();

  function member(node: Node, top: Frame | null): void {
    const parent = node.parent;
    if (parent === null) return;
    const inInterface = parent.type === 'interface_body';
    // Object-literal methods and type-literal members are not declarations.
    if (parent.type !== 'class_body' && !inInterface) return;
    if (!inInterface && parent.parent?.type === 'class') {
      // A class expression declares members only as the value of a declared class
      // (`const A = class {…}`, `export default class {…}`), not as an argument.
      if (top === null || top.decl === null || top.decl.kind !== 'class' || top.type.endsWith('class_declaration')) return;
    }
    const type = node.type;
    // An interface's construct signature (`new (x: T): U`) is its `new` method, as ctags and
    // TypeScript's own navigation name it.
    const construct = type === 'construct_signature';
    const nameNode = construct ? null : (node.childForFieldName('name') ?? node.childForFieldName('property'));
    if (!construct && nameNode === null) return;
    const name = nameNode === null ? 'new' : nameNode.text;
    if (name === '') return;
    const mods = modifiersBefore(node, nameNode === null ? node.startIndex : nameNode.startIndex);
    const isField = type === 'public_field_definition' || type === 'field_definition' || type === 'property_signature';
    const facets: SymbolFacet[] = isField ? ['value', 'member', 'property'] : ['value', 'callable', 'member'];
    if (mods.tokens.has('static')) facets.push('static');
    if (mods.tokens.has('abstract') || type === 'abstract_method_signature') facets.push('abstract');
    if (!isField) {
      if (mods.tokens.has('async')) facets.push('async');
      if (mods.tokens.has('*')) facets.push('generator');
      if (mods.tokens.has('get') || mods.tokens.has('set')) facets.push('property');
      if ((name === 'constructor' && !inInterface) || construct) facets.push('constructor');
    }
    const visibility = nameNode?.type === 'private_property_identifier' ? 'private' : (mods.accessibility ?? 'public');
    const containerExported = top !== null && (top.flags & EXPORTED) !== 0;
    if (visibility === 'public' && containerExported) facets.push('public');
    add(node, top, name, isField ? 'property' : 'method', facets, visibility, node, node, 0);
  }

  function variables(node: Node, top: Frame | null): void {
    const o = outerOf(node);
    if (!isModuleLevel(o.parent)) return;
    const keyword = node.type === 'variable_declaration' ? 'var' : (node.childForFieldName('kind')?.type ?? 'let');
    const declarators = namedChildrenOfType(node, 'variable_declarator');
    const single = declarators.length === 1;
    for (const d of declarators) {
      const nameNode = d.childForFieldName('name');
      if (nameNode === null || nameNode.type !== 'identifier') continue; // destructuring patterns are skipped
      const name = nameNode.text;
      const value = d.childForFieldName('value');
      const facets: SymbolFacet[] = [];
      let kind: string;
      if (value !== null && FUNCTION_VALUES.has(value.type)) {
        kind = 'function';
        facets.push('value', 'callable');
        functionFacets(value, facets);
      } else if (value !== null && value.type === 'class') {
        kind = 'class';
        facets.push('type', 'constructible');
      } else if (keyword === 'const') {
        kind = 'constant';
        facets.push('value');
      } else {
        kind = 'variable';
        facets.push('value', 'mutable');
      }
      if (o.exported) facets.push('public');
      // One declarator: the statement is the declaration. Several: each declarator alone,
      // so replacing one never takes its neighbours along.
      const outer = single ? o.node : d;
      const item = single ? node : d;
      const spanStart = single ? attachedStart(outer, source, attachOptions(facets)) : d.startIndex;
      const decl = out.add({
        name, prefix: top?.prefix ?? null, kind, facets, visibility: o.exported ? 'exported' : 'private',
        spanStart, spanEnd: outer.endIndex, itemStart: item.startIndex, itemEnd: item.endIndex,
        nodeKind: item.type, parent: top?.decl ?? null,
      });
      const frame: Frame = { start: d.startIndex, end: d.endIndex, prefix: decl.base, decl, type: d.type, flags: o.exported ? EXPORTED : 0 };
      if (d === declarators[0]) scopes.push(frame);
      else scopes.defer(frame);
    }
  }
}

function nameOf(node: Node): string | null {
  const n = node.childForFieldName('name');
  if (n === null) return null;
  const t = n.text;
  return t === '' ? null : t;
}

/** `async` / generator facets of a function node (declaration, expression or arrow). */
function functionFacets(fn: Node, facets: SymbolFacet[]): void {
  const t = fn.type;
  if (t === 'generator_function_declaration' || t === 'generator_function') facets.push('generator');
  const first = fn.firstChild;
  if (first !== null && first.type === 'async') facets.push('async');
}

function unquote(s: string): string {
  return s.length >= 2 ? s.slice(1, -1) : s;
}
