// Java declarations: types at any depth, their methods, constructors and fields.
// Annotations sit inside `modifiers`, so they are already part of the declaration node;
// only a preceding Javadoc `/** */` extends the span.

import type { Node, Tree } from 'web-tree-sitter';
import { attachedStart, Collector, compact, namedChildrenOfType, Scopes, type AttachOptions, type Frame, type SymbolFacet } from './attachment.ts';
import type { SourceText } from './text.ts';
import type { Declaration } from './types.ts';

const TYPE_KINDS: Record<string, string> = {
  class_declaration: 'class',
  interface_declaration: 'interface',
  enum_declaration: 'enum',
  record_declaration: 'record',
  annotation_type_declaration: 'annotation_type',
};

const MEMBER_KINDS: Record<string, string> = {
  method_declaration: 'method',
  annotation_type_element_declaration: 'method',
  constructor_declaration: 'constructor',
  compact_constructor_declaration: 'constructor',
  field_declaration: 'field',
  constant_declaration: 'field',
};

/** Facets of the type declarations besides `type` (a class is abstract or constructible by its modifiers). */
const TYPE_FACETS: Record<string, SymbolFacet[]> = {
  record_declaration: ['type', 'constructible'],
  enum_declaration: ['type', 'enumeration'],
  annotation_type_declaration: ['type', 'annotation'],
};
const WALKED = [...Object.keys(TYPE_KINDS), ...Object.keys(MEMBER_KINDS)];

/** Bodies whose members are declarations, mapped to whether members default to public. */
const MEMBER_BODIES: Record<string, boolean> = {
  class_body: false,
  enum_body_declarations: false,
  interface_body: true,
  annotation_type_body: true,
};

const TEST_ANNOTATIONS = new Set(['Test', 'ParameterizedTest', 'RepeatedTest', 'TestFactory', 'TestTemplate']);

interface Modifiers {
  keywords: Set<string>;
  annotations: string[];
}

function modifiersOf(node: Node): Modifiers {
  const keywords = new Set<string>();
  const annotations: string[] = [];
  const first = node.firstNamedChild;
  if (first !== null && first.type === 'modifiers') {
    const count = first.childCount;
    for (let i = 0; i < count; i++) {
      const m = first.child(i)!;
      const t = m.type;
      if (t === 'marker_annotation' || t === 'annotation') {
        const name = m.childForFieldName('name')?.text ?? '';
        annotations.push(name.slice(name.lastIndexOf('.') + 1));
      } else if (!m.isNamed) keywords.add(t);
    }
  }
  return { keywords, annotations };
}

function isJavadoc(node: Node, text: string): boolean {
  if (node.type !== 'block_comment') return false;
  const s = node.startIndex;
  return text.startsWith('/**', s) && !text.startsWith('/**/', s);
}

export function javaDeclarations(tree: Tree, source: SourceText): Declaration[] {
  const text = source.text;
  const out = new Collector(source, '.');
  const scopes = new Scopes();
  const attach: AttachOptions = { attaches: (s) => isJavadoc(s, text) };

  for (const node of tree.rootNode.descendantsOfType(WALKED)) {
    if (node === null) continue;
    const start = node.startIndex;
    const top = scopes.enter(start);
    const type = node.type;
    const typeKind = TYPE_KINDS[type];

    // Members count only in the body of a named type declaration, not in anonymous class
    // bodies (`new Runnable() {…}`) or enum-constant bodies.
    let publicByDefault = false;
    let member = true;
    if (typeKind === undefined) {
      const body = node.parent;
      if (body === null || !(body.type in MEMBER_BODIES)) continue;
      const owner = body.type === 'enum_body_declarations' ? body.parent?.parent : body.parent;
      if (owner == null || !(owner.type in TYPE_KINDS)) continue;
      publicByDefault = MEMBER_BODIES[body.type];
    } else {
      const body = node.parent;
      member = body !== null && body.type in MEMBER_BODIES;
      publicByDefault = member && MEMBER_BODIES[body!.type];
    }

    const mods = modifiersOf(node);
    const kw = mods.keywords;
    const visibility = kw.has('public') ? 'public' : kw.has('protected') ? 'protected' : kw.has('private') ? 'private'
      : publicByDefault ? 'public' : 'package';
    const facets: SymbolFacet[] = [];
    // Member interfaces, enums, records and annotation types are implicitly static, and so
    // is every member type of an interface.
    const implicitStatic = typeKind !== undefined && member && (type !== 'class_declaration' || publicByDefault);
    if (kw.has('static') || implicitStatic) facets.push('static');
    if (visibility === 'public') facets.push('public');
    for (const a of mods.annotations) {
      if (a === 'Deprecated') facets.push('deprecated');
      else if (TEST_ANNOTATIONS.has(a)) facets.push('test');
    }
    const spanStart = attachedStart(node, source, attach);
    const end = node.endIndex;

    if (typeKind !== undefined) {
      const name = node.childForFieldName('name')?.text ?? '';
      if (name === '') continue;
      if (type === 'class_declaration') facets.push('type', kw.has('abstract') ? 'abstract' : 'constructible');
      else facets.push(...(TYPE_FACETS[type] ?? ['type']));
      add(node, top, name, typeKind, facets, visibility, spanStart);
      continue;
    }

    const kind = MEMBER_KINDS[type];
    if (kind === 'field') {
      const inInterface = publicByDefault;
      facets.push('value', 'member');
      if (inInterface) facets.push('static');
      else if (!kw.has('final')) facets.push('mutable');
      const declarators = namedChildrenOfType(node, 'variable_declarator');
      // `int a, b;` declares each name; with several, each declarator is its own span.
      const single = declarators.length === 1;
      for (const d of declarators) {
        const name = d.childForFieldName('name')?.text ?? '';
        if (name === '') continue;
        out.add({
          name, prefix: top?.prefix ?? null, kind, facets: [...facets], visibility,
          spanStart: single ? spanStart : d.startIndex, spanEnd: single ? end : d.endIndex,
          itemStart: single ? start : d.startIndex, itemEnd: single ? end : d.endIndex,
          nodeKind: single ? type : d.type,
          parent: top?.decl ?? null,
        });
      }
      continue;
    }

    const name = node.childForFieldName('name')?.text ?? '';
    if (name === '') continue;
    facets.push('value', 'callable', 'member');
    if (kind === 'constructor') facets.push('constructor');
    else {
      const hasBody = node.childForFieldName('body') !== null;
      const interfaceLike = publicByDefault;
      if (kw.has('abstract') || (interfaceLike && !hasBody && !kw.has('static') && !kw.has('default'))) facets.push('abstract');
      if (name === 'main' && kw.has('static') && visibility === 'public' && isMainSignature(node)) facets.push('entrypoint');
    }
    add(node, top, name, kind, facets, visibility, spanStart);
  }
  return out.finish();

  function add(node: Node, top: Frame | null, name: string, kind: string, facets: SymbolFacet[], visibility: string, spanStart: number): void {
    const start = node.startIndex;
    const end = node.endIndex;
    const decl = out.add({
      name, prefix: top?.prefix ?? null, kind, facets, visibility,
      spanStart, spanEnd: end, itemStart: start, itemEnd: end, nodeKind: node.type, parent: top?.decl ?? null,
    });
    scopes.push({ start, end, prefix: decl.base, decl, type: node.type, flags: 0 });
  }
}

/** `void main(String[] args)` / `void main(String... args)`. */
function isMainSignature(method: Node): boolean {
  if (method.childForFieldName('type')?.type !== 'void_type') return false;
  const params = method.childForFieldName('parameters');
  if (params === null || params.namedChildCount !== 1) return false;
  const p = params.namedChild(0)!;
  if (p.type === 'formal_parameter') {
    const t = compact(p.childForFieldName('type')?.text ?? '');
    const dims = p.childForFieldName('dimensions'); // `String args[]`
    return t === 'String[]' || t === 'java.lang.String[]' || (dims !== null && (t === 'String' || t === 'java.lang.String'));
  }
  if (p.type === 'spread_parameter') {
    const t = compact(p.text);
    return t.startsWith('String...') || t.startsWith('java.lang.String...');
  }
  return false;
}
