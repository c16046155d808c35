import type { LanguageId } from './types.ts';

// How each language lays its declarations out in text, for readers that look at a file's lines
// or bytes without parsing it (a history walk deciding whether an edit may have changed a
// declaration, and finding where one ends), and the grammar kinds they then read a parse by.

export interface TextLayout {
  /** Whether a block ends where its lines' indentation does (Python) or at a closing brace. */
  blocks: 'indent' | 'braces';
  /** Whether a member (a method, a field) is declared by its name alone, with no keyword before it. */
  bareMembers: boolean;
}

export const TEXT_LAYOUT: Record<LanguageId, TextLayout> = {
  typescript: { blocks: 'braces', bareMembers: true },
  tsx: { blocks: 'braces', bareMembers: true },
  javascript: { blocks: 'braces', bareMembers: true },
  java: { blocks: 'braces', bareMembers: true },
  python: { blocks: 'indent', bareMembers: false },
  rust: { blocks: 'braces', bareMembers: false },
  go: { blocks: 'braces', bareMembers: false },
};

/** Keywords, across the seven languages, after which a name is declared (`func` may have a Go receiver between). */
export const DECLARING_KEYWORDS = ['def', 'class', 'function', 'func', 'fn', 'struct', 'enum', 'trait', 'interface', 'type', 'impl', 'for', 'const', 'let', 'var', 'static', 'mod', 'record'];

/** Grammar kinds that decorate a declaration: Python decorators, TypeScript decorators, Java annotations, Rust attributes (Go has none). */
export const DECORATOR_KINDS: ReadonlySet<string> = new Set(['decorator', 'annotation', 'marker_annotation', 'attribute_item', 'inner_attribute_item']);

/** The fields holding a declaration's body or value: what is not its signature. */
export const BODY_FIELDS = ['body', 'value'];
