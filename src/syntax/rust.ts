// Rust declarations (reference F.5 rule 58, F.11 rules 117–118, H.1).

import type { Node, Tree } from 'web-tree-sitter';
import { attachedStart, Collector, compact, Scopes, type AttachOptions, type Frame, type SymbolFacet } from './attachment.ts';
import type { SourceText } from './text.ts';
import type { Declaration } from './types.ts';

const KINDS: Record<string, string> = {
  function_item: 'function',
  struct_item: 'struct',
  enum_item: 'enum',
  trait_item: 'trait',
  type_item: 'type_alias',
  const_item: 'constant',
  static_item: 'static',
  mod_item: 'module',
  macro_definition: 'macro',
};

/** Facets by item kind; a function's and a `static mut`'s further facets depend on the item. */
const FACETS: Record<string, SymbolFacet[]> = {
  function_item: ['value', 'callable'],
  struct_item: ['type'],
  trait_item: ['type'],
  enum_item: ['type', 'enumeration'],
  type_item: ['type', 'alias'],
  mod_item: ['namespace', 'module'],
  macro_definition: ['macro'],
};
const WALKED = [...Object.keys(KINDS), 'impl_item'];

// Outer doc comments (`///`, `/** … */`) and outer attributes attach; the grammar marks
// outer docs with an `outer` field.
function attaches(node: Node): boolean {
  const t = node.type;
  if (t === 'attribute_item') return true;
  if (t === 'line_comment' || t === 'block_comment') return node.childForFieldName('outer') !== null;
  return false;
}

export function rustDeclarations(tree: Tree, source: SourceText): Declaration[] {
  const out = new Collector(source, '::');
  const scopes = new Scopes();
  for (const node of tree.rootNode.descendantsOfType(WALKED)) {
    if (node === null) continue;
    const start = node.startIndex;
    const top = scopes.enter(start);
    const prefix = top === null ? null : top.prefix;
    const type = node.type;
    const end = node.endIndex;

    if (type === 'impl_item') {
      // `impl<T> Foo<T>` and `impl Tr for Foo<T>` both qualify members by the implementing type.
      const target = node.childForFieldName('type');
      if (target === null) continue;
      const typeText = compact(target.text);
      const qualified = out.join(prefix, typeText);
      scopes.push({ start, end, prefix: qualified, decl: null, type, flags: 0 });
      continue;
    }

    const nameNode = node.childForFieldName('name');
    if (nameNode === null) continue;
    const name = nameNode.text;
    if (name === '') continue;

    const inBehaviour = top !== null && (top.type === 'impl_item' || top.type === 'trait_item');
    const kind = type === 'function_item' && inBehaviour ? 'method' : KINDS[type];
    const facets: SymbolFacet[] = [];
    facets.push(...(FACETS[type] ?? ['value']));
    if (type === 'function_item') {
      if (kind === 'method') facets.push('member');
      if (hasAsync(node)) facets.push('async');
      if (name === 'main' && top === null) facets.push('entrypoint');
    } else if (type === 'static_item' && hasChildOfType(node, 'mutable_specifier')) facets.push('mutable');

    const visibility = visibilityOf(node);
    if (visibility === 'pub') facets.push('public');

    const options: AttachOptions = {
      attaches,
      onAttached: (sibling) => {
        if (sibling.type !== 'attribute_item') return;
        const path = attributePath(sibling);
        if (path === 'test' || path.endsWith('::test')) facets.push('test');
        else if (path === 'deprecated') facets.push('deprecated');
      },
    };
    const spanStart = attachedStart(node, source, options);

    const decl = out.add({
      name,
      prefix,
      kind,
      facets,
      visibility,
      spanStart,
      spanEnd: end,
      itemStart: start,
      itemEnd: end,
      nodeKind: type,
      parent: top?.decl ?? null,
      containerHints: top !== null && top.decl === null ? implHints(top) : null,
    });
    const frame: Frame = { start, end, prefix: decl.base, decl, type, flags: 0 };
    scopes.push(frame);
  }
  return out.finish();
}

/** Members of `impl Foo<T>` link to a `Foo<T>`, else a `Foo`, declared in the same file. */
function implHints(frame: Frame): string[] {
  const generic = frame.prefix.indexOf('<');
  return generic > 0 ? [frame.prefix, frame.prefix.slice(0, generic)] : [frame.prefix];
}

/** `pub`, the verbatim restricted form (`pub(crate)`), or `private`. */
function visibilityOf(node: Node): string {
  const first = node.firstNamedChild;
  return first !== null && first.type === 'visibility_modifier' ? first.text : 'private';
}

function hasAsync(fn: Node): boolean {
  const count = fn.namedChildCount;
  for (let i = 0; i < count; i++) {
    const child = fn.namedChild(i)!;
    const t = child.type;
    if (t === 'function_modifiers') return hasChildOfType(child, 'async');
    if (t !== 'visibility_modifier') return false;
  }
  return false;
}

function hasChildOfType(node: Node, type: string): boolean {
  const count = node.childCount;
  for (let i = 0; i < count; i++) if (node.child(i)!.type === type) return true;
  return false;
}

/** The path of an attribute (`#[tokio::test]` → `tokio::test`). */
function attributePath(item: Node): string {
  const attribute = item.firstNamedChild;
  const path = attribute?.firstNamedChild;
  return path == null ? '' : path.text;
}
