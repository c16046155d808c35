// What the syntax layer tells the rest of rift about one file. Offsets are UTF-8 byte
// offsets, half-open.

export type LanguageId = 'typescript' | 'tsx' | 'javascript' | 'python' | 'rust' | 'go' | 'java';

export interface ByteRange {
  start: number;
  end: number;
}

export interface Declaration {
  /** Short name as written (`parse`). */
  name: string;
  /** Containers joined with `::` (Rust) or `.` (others); overloads get `~2`, `~3`, … */
  qualifiedName: string;
  /** Bare kind: `function`, `class`, `method`, `struct`, … */
  kind: string;
  /** SymbolFacet values, in a stable order. */
  facets: string[];
  /** `pub`, `private`, `public`, `protected`, `package`, `exported`, … or null where the language has none. */
  visibility: string | null;
  /** Whole-declaration span: attached docs, attributes and decorators included, no trailing newline. */
  span: ByteRange;
  /** The declaration node's own range. */
  itemSpan: ByteRange;
  /** Qualified name of the enclosing declaration, when that is itself a declaration. */
  container: string | null;
  /** Grammar kind of the declaration node at `itemSpan` (`function_item`), when known. */
  nodeKind?: string;
}

export interface SyntaxNode {
  /** Bare grammar kind (`function_item`, `call_expression`). */
  kind: string;
  range: ByteRange;
  /** NodeFacet values. */
  facets: string[];
}

export interface FileSyntax {
  declarations: Declaration[];
  /** True when the tree holds ERROR or MISSING nodes. */
  hasErrors: boolean;
}

/** Languages a built-in syntax provider parses. */
export const SYNTAX_LANGUAGES: ReadonlySet<string> = new Set<LanguageId>(['typescript', 'tsx', 'javascript', 'python', 'rust', 'go', 'java']);
