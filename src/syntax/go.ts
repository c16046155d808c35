// Go declarations: package-level functions, methods, types, constants and variables.
// Go has no nested named declarations worth indexing (function-local types and variables
// are locals), so only the file's top level is read. Doc comments follow the godoc rule.

import type { Node, Tree } from 'web-tree-sitter';
import { attachedStart, Collector, compact, type AttachOptions, type SymbolFacet } from './attachment.ts';
import type { SourceText } from './text.ts';
import { followType } from './relations/walk.ts';
import type { Declaration } from './types.ts';

const EXPORTED = /^\p{Lu}/u;
const TEST_FUNCTION = /^(Test|Benchmark|Fuzz)(?![\p{Ll}])/u;

export function goDeclarations(tree: Tree, source: SourceText): Declaration[] {
  const out = new Collector(source, '.');
  const root = tree.rootNode;
  let isMainPackage = false;

  const attach = (facets: SymbolFacet[]): AttachOptions => ({
    attaches: (s) => s.type === 'comment',
    ownLine: true,
    onAttached: (s) => {
      if (/^(?:\/\/|\/\*)\s*Deprecated:/m.test(s.text)) facets.push('deprecated');
    },
  });

  const count = root.namedChildCount;
  for (let i = 0; i < count; i++) {
    const node = root.namedChild(i)!;
    switch (node.type) {
      case 'package_clause': {
        isMainPackage = node.firstNamedChild?.text === 'main';
        break;
      }
      case 'function_declaration': {
        const name = node.childForFieldName('name')?.text ?? '';
        if (name === '') break;
        const facets: SymbolFacet[] = ['value', 'callable'];
        if (name === 'main' && isMainPackage && node.childForFieldName('type_parameters') === null) facets.push('entrypoint');
        if (TEST_FUNCTION.test(name) && /\*\s*testing\.[TBF]\b/.test(node.childForFieldName('parameters')?.text ?? '')) facets.push('test');
        emit(node, node, name, null, 'function', facets);
        break;
      }
      case 'method_declaration': {
        const name = node.childForFieldName('name')?.text ?? '';
        const receiver = receiverType(node);
        if (name === '' || receiver === null) break;
        emit(node, node, name, receiver, 'method', ['value', 'callable', 'member']);
        break;
      }
      case 'type_declaration':
      case 'const_declaration':
      case 'var_declaration':
        specs(node);
        break;
    }
  }
  return out.finish();

  function emit(outer: Node, item: Node, name: string, receiver: string | null, kind: string, facets: SymbolFacet[]): void {
    const exported = EXPORTED.test(name);
    if (exported) facets.push('public');
    out.add({
      name, prefix: receiver, kind, facets, visibility: exported ? 'exported' : 'private',
      spanStart: attachedStart(outer, source, attach(facets)), spanEnd: outer.endIndex,
      itemStart: item.startIndex, itemEnd: item.endIndex, nodeKind: item.type,
      containerHints: receiver === null ? null : [receiver],
    });
  }

  /** A single-spec declaration is the item itself; in a `( … )` group each spec is. */
  function specs(decl: Node): void {
    let holder = decl;
    const second = decl.child(1);
    let grouped = second !== null && second.type === '(';
    if (second !== null && second.type === 'var_spec_list') {
      holder = second;
      grouped = true;
    }
    const n = holder.namedChildCount;
    for (let i = 0; i < n; i++) {
      const spec = holder.namedChild(i)!;
      const outer = grouped ? spec : decl;
      switch (spec.type) {
        case 'type_spec':
        case 'type_alias': {
          const name = spec.childForFieldName('name')?.text ?? '';
          if (name === '') break;
          let kind = 'type_alias';
          const facets: SymbolFacet[] = ['type'];
          if (spec.type === 'type_alias') facets.push('alias');
          else {
            const t = spec.childForFieldName('type')?.type;
            kind = t === 'struct_type' ? 'struct' : t === 'interface_type' ? 'interface' : 'type';
          }
          emit(outer, outer, name, null, kind, facets);
          break;
        }
        case 'const_spec':
        case 'var_spec': {
          // `const a, b = 1, 2` declares two names sharing one spec and one span.
          const m = spec.childCount;
          for (let j = 0; j < m; j++) {
            if (spec.fieldNameForChild(j) !== 'name') continue;
            const id = spec.child(j)!;
            if (id.type !== 'identifier') continue;
            const name = id.text;
            if (name === '' || name === '_') continue;
            const constant = spec.type === 'const_spec';
            emit(outer, outer, name, null, constant ? 'constant' : 'variable', constant ? ['value'] : ['value', 'mutable']);
          }
          break;
        }
      }
    }
  }
}

/** The receiver's type name without pointer or type arguments (`(s *Server[T])` → `Server`). */
function receiverType(method: Node): string | null {
  const t = method.childForFieldName('receiver')?.firstNamedChild?.childForFieldName('type') ?? null;
  return goTypeName(t) ?? (t === null ? null : compact(t.text) || null);
}

/** The named type a type expression reaches: `T`, `*T`, `pkg.T`, `T[K]`. */
export function goTypeName(t: Node | null): string | null {
  return followType(t, (t) => {
    switch (t.type) {
      case 'pointer_type':
      case 'parenthesized_type':
        return t.firstNamedChild;
      case 'generic_type':
        return t.childForFieldName('type');
      case 'type_identifier':
        return t.text;
      case 'qualified_type':
        return compact(t.text);
      default:
        return null;
    }
  });
}
