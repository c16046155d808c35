// Named syntax nodes at a byte position, and NodeFacets derived from grammar kinds.

import { withTree } from './runtime.ts';
import type { LanguageId, SyntaxNode } from './types.ts';

/** NodeFacet in the reference's enum order. */
export const NODE_FACETS = [
  'declaration', 'definition', 'body', 'block', 'statement', 'expression', 'type_expression',
  'import', 'export', 'parameter', 'argument', 'annotation', 'comment', 'identifier', 'literal',
  'pattern', 'generated', 'test',
] as const;

export type NodeFacet = (typeof NODE_FACETS)[number];

const ANNOTATIONS = new Set(['decorator', 'annotation', 'marker_annotation', 'attribute_item', 'inner_attribute_item']);
const IMPORTS = new Set([
  'import_statement', 'import_from_statement', 'future_import_statement', 'import_declaration',
  'use_declaration', 'extern_crate_declaration', 'import_spec',
]);
const ARGUMENTS = new Set(['arguments', 'argument_list', 'keyword_argument']);
const DECLARATIONS = new Set([
  'function_signature', 'method_signature', 'abstract_method_signature', 'property_signature',
  'internal_module', 'type_spec', 'type_alias', 'const_spec', 'var_spec',
]);
const EXPRESSIONS = new Set([
  'call', 'call_expression', 'arrow_function', 'lambda', 'await', 'subscript',
  'binary_operator', 'unary_operator', 'boolean_operator', 'comparison_operator', 'not_operator',
  'list_comprehension', 'dictionary_comprehension', 'set_comprehension', 'generator_expression',
  'func_literal', 'method_invocation', 'macro_invocation', 'new_expression',
]);
const BODIES = new Set(['declaration_list', 'field_declaration_list', 'enum_variant_list', 'enum_body_declarations']);
const LITERALS = new Set([
  'string', 'template_string', 'concatenated_string', 'number', 'integer', 'float', 'true', 'false',
  'none', 'null', 'undefined', 'regex', 'char',
]);
const TS_FAMILY = new Set<LanguageId>(['typescript', 'tsx', 'javascript']);

const EMPTY: readonly NodeFacet[] = Object.freeze([]);

function classify(language: LanguageId, kind: string): readonly NodeFacet[] {
  if (kind === 'ERROR') return EMPTY;
  if (kind.includes('comment')) return ['comment'];
  if (ANNOTATIONS.has(kind)) return ['annotation'];
  if (IMPORTS.has(kind)) return ['import'];
  if (kind === 'export_statement') return ['statement', 'export'];
  if (kind === 'parameter' || kind.endsWith('_parameter') || kind.endsWith('parameter_declaration')) return ['parameter'];
  if (ARGUMENTS.has(kind)) return ['argument'];
  if (kind === 'block' || kind === 'statement_block') return ['block'];
  if (kind.endsWith('_body') || BODIES.has(kind)) return ['body'];
  if (
    kind.endsWith('_item') || kind.endsWith('_declaration') || kind.endsWith('_definition') ||
    DECLARATIONS.has(kind) || (kind === 'module' && TS_FAMILY.has(language))
  ) return ['declaration', 'definition'];
  if (kind.endsWith('_statement')) return ['statement'];
  // Python's `attribute` is `a.b`; Rust's is the inside of `#[…]`.
  if (kind.endsWith('_expression') || EXPRESSIONS.has(kind) || (kind === 'attribute' && language === 'python')) return ['expression'];
  if (kind === 'identifier' || kind.endsWith('_identifier')) return ['identifier'];
  if (kind.endsWith('_literal') || LITERALS.has(kind)) return ['literal'];
  if (kind.endsWith('_type') || kind === 'type_annotation' || (kind === 'type' && language === 'python')) return ['type_expression'];
  if (kind.endsWith('_pattern')) return ['pattern'];
  return EMPTY;
}

const cache = new Map<LanguageId, Map<string, readonly NodeFacet[]>>();

/** NodeFacets of a bare grammar kind, in enum order. */
export function nodeFacets(language: LanguageId, kind: string): readonly NodeFacet[] {
  let perLanguage = cache.get(language);
  if (perLanguage === undefined) cache.set(language, (perLanguage = new Map()));
  let facets = perLanguage.get(kind);
  if (facets === undefined) perLanguage.set(kind, (facets = classify(language, kind)));
  return facets;
}

/**
 * The named nodes whose half-open byte range contains `position`, outermost first. The root
 * node is the first entry when it contains the position (it may not: trailing whitespace
 * after the last token lies outside every node). A position at or past EOF yields `[]`.
 */
export function nodesAt(language: LanguageId, bytes: Uint8Array, position: number): SyntaxNode[] {
  if (!Number.isInteger(position) || position < 0 || position >= bytes.length) return [];
  return withTree(language, bytes, (tree, source) => {
    const unit = source.toUnit(position);
    const out: SyntaxNode[] = [];
    const cursor = tree.walk();
    try {
      if (cursor.startIndex > unit || cursor.endIndex <= unit) return out;
      for (;;) {
        if (cursor.nodeIsNamed) {
          const kind = cursor.nodeType;
          out.push({
            kind,
            range: source.range(cursor.startIndex, cursor.endIndex),
            facets: [...nodeFacets(language, kind)],
          });
        }
        // The first child ending after `unit` holds it unless `unit` falls in a gap before it.
        // (The binding's gotoFirstChildForIndex misreports child 0, so siblings are stepped.)
        if (!cursor.gotoFirstChild()) break;
        while (cursor.endIndex <= unit && cursor.gotoNextSibling());
        if (cursor.endIndex <= unit || cursor.startIndex > unit) break;
      }
    } finally {
      cursor.delete();
    }
    return out;
  });
}
