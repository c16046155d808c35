// One entry point for declarations across the seven languages.

import type { Tree } from 'web-tree-sitter';
import { goDeclarations } from './go.ts';
import { javaDeclarations } from './java.ts';
import { pythonDeclarations } from './python.ts';
import { withTree } from './runtime.ts';
import { rustDeclarations } from './rust.ts';
import type { SourceText } from './text.ts';
import type { ByteRange, Declaration, FileSyntax, LanguageId } from './types.ts';
import { typescriptDeclarations } from './typescript.ts';

const EXTRACTORS: Record<LanguageId, (tree: Tree, source: SourceText) => Declaration[]> = {
  typescript: typescriptDeclarations,
  tsx: typescriptDeclarations,
  javascript: typescriptDeclarations,
  python: pythonDeclarations,
  rust: rustDeclarations,
  go: goDeclarations,
  java: javaDeclarations,
};

/**
 * Declarations of one file, in source order (by item start). Synchronous; call
 * `initSyntax()` once first. Throws SyntaxLimitError for trees past the size bounds.
 */
export function extractDeclarations(language: LanguageId, bytes: Uint8Array): FileSyntax {
  return withTree(language, bytes, (tree, source) => ({
    declarations: declarationsOfTree(language, tree, source),
    hasErrors: tree.rootNode.hasError,
  }));
}

/** Declarations of an already parsed tree (for callers that read more from the same parse). */
export function declarationsOfTree(language: LanguageId, tree: Tree, source: SourceText): Declaration[] {
  return EXTRACTORS[language](tree, source);
}

/**
 * The declaration a syntax node stands for: the first whose whole span, else the first
 * whose item span, equals `range` exactly (documented and undocumented items both link).
 */
export function declarationAtRange(declarations: readonly Declaration[], range: ByteRange): Declaration | null {
  let byItem: Declaration | null = null;
  for (const d of declarations) {
    if (d.span.start === range.start && d.span.end === range.end) return d;
    if (byItem === null && d.itemSpan.start === range.start && d.itemSpan.end === range.end) byItem = d;
  }
  return byItem;
}
