// One parse, two readings: a file's declarations and, when the binding provider is enabled,
// what those declarations call, construct, extend, import and mention.

import type { Tree } from 'web-tree-sitter';
import { declarationsOfTree } from '../declarations.ts';
import { withTree } from '../runtime.ts';
import type { SourceText } from '../text.ts';
import type { Declaration, LanguageId } from '../types.ts';
import { goRelations } from './go.ts';
import { javaRelations } from './java.ts';
import { pythonRelations } from './python.ts';
import { rustRelations } from './rust.ts';
import { RelationSink } from './sink.ts';
import type { FileRelations } from './types.ts';
import { typescriptRelations } from './typescript.ts';

const WALKS: Record<LanguageId, (tree: Tree, sink: RelationSink) => void> = {
  typescript: typescriptRelations,
  tsx: typescriptRelations,
  javascript: typescriptRelations,
  python: pythonRelations,
  rust: rustRelations,
  go: goRelations,
  java: javaRelations,
};

export interface FileFacts {
  declarations: Declaration[];
  /** Null when relations were not asked for. */
  relations: FileRelations | null;
}

/**
 * Declarations of one file and, with `relations`, its relationship facts, from one parse.
 * Synchronous; call `initSyntax()` once first. Throws SyntaxLimitError past the size bounds.
 */
export function extractFileFacts(language: LanguageId, bytes: Uint8Array, relations: boolean): FileFacts {
  return withTree(language, bytes, (tree, source) => {
    const declarations = declarationsOfTree(language, tree, source);
    return { declarations, relations: relations ? relationsOfTree(language, tree, source, declarations) : null };
  });
}

function relationsOfTree(language: LanguageId, tree: Tree, source: SourceText, declarations: Declaration[]): FileRelations {
  const sink = new RelationSink(source, declarations);
  WALKS[language](tree, sink);
  return sink.finish();
}
