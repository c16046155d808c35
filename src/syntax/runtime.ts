// The tree-sitter runtime: one wasm module, seven grammars, one parser per thread, and the
// shell grammar the agent's permission check reads commands with (loaded on its own, on demand).
//
// `initSyntax()` is async (wasm instantiation); everything after it is synchronous. Every
// parse goes through `withTree`, which enforces the size bounds and always frees the tree.

import { createRequire } from 'node:module';
import { Language, Parser, type Node, type Tree } from 'web-tree-sitter';
import { PARSE_TIME_MAX_MS, SYNTAX_DEPTH_MAX, SYNTAX_NODES_MAX } from '../core/limits.ts';
import { SourceText } from './text.ts';
import type { LanguageId } from './types.ts';

export const LANGUAGE_IDS: readonly LanguageId[] = ['typescript', 'tsx', 'javascript', 'python', 'rust', 'go', 'java'];

const GRAMMAR_FILES: Record<LanguageId, string> = {
  typescript: 'tree-sitter-typescript.wasm',
  tsx: 'tree-sitter-tsx.wasm',
  javascript: 'tree-sitter-javascript.wasm',
  python: 'tree-sitter-python.wasm',
  rust: 'tree-sitter-rust.wasm',
  go: 'tree-sitter-go.wasm',
  java: 'tree-sitter-java.wasm',
};

/**
 * Thrown when a file's tree crosses SYNTAX_NODES_MAX or SYNTAX_DEPTH_MAX, or its parse runs past
 * PARSE_TIME_MAX_MS (`time`, in milliseconds); the caller skips the file.
 */
export class SyntaxLimitError extends Error {
  readonly limit: 'nodes' | 'depth' | 'time';
  readonly maximum: number;
  readonly observed: number;
  constructor(limit: 'nodes' | 'depth' | 'time', maximum: number, observed: number) {
    super(limit === 'time' ? `parse cancelled: over ${maximum} ms` : `syntax tree too large: ${limit} ${observed} exceeds ${maximum}`);
    this.name = 'SyntaxLimitError';
    this.limit = limit;
    this.maximum = maximum;
    this.observed = observed;
  }
}

let initializing: Promise<void> | null = null;
let parser: Parser | null = null;
let current: LanguageId | null = null;
const languages = new Map<LanguageId, Language>();

/** Loads the runtime and all grammars. Idempotent; safe to call from any thread and any cwd. */
export function initSyntax(): Promise<void> {
  if (initializing === null) {
    initializing = load().catch((err: unknown) => {
      initializing = null; // a later call may retry
      throw err;
    });
  }
  return initializing;
}

// Resolve from this module, not the cwd: workers and CLI runs start anywhere.
const require = createRequire(import.meta.url);
let runtime: Promise<void> | null = null;

function initRuntime(): Promise<void> {
  if (runtime === null) {
    const runtimeWasm = require.resolve('web-tree-sitter/tree-sitter.wasm');
    runtime = Parser.init({ locateFile: () => runtimeWasm }).catch((err: unknown) => {
      runtime = null;
      throw err;
    });
  }
  return runtime;
}

async function load(): Promise<void> {
  await initRuntime();
  const loaded = await Promise.all(
    LANGUAGE_IDS.map(async (id) => {
      const file = require.resolve(`@vscode/tree-sitter-wasm/wasm/${GRAMMAR_FILES[id]}`);
      return [id, await Language.load(file)] as const;
    }),
  );
  for (const [id, language] of loaded) languages.set(id, language);
  parser = new Parser();
}

export function isSyntaxReady(): boolean {
  return parser !== null;
}

/** The loaded grammar for a language (after `initSyntax`). */
export function grammar(language: LanguageId): Language {
  const found = languages.get(language);
  if (found === undefined || parser === null) throw new Error('syntax runtime not initialized: call initSyntax() first');
  return found;
}

/** Chunk size handed to the parser per read; below the binding's 10 KiB transfer buffer. */
const CHUNK = 4096;

/**
 * Parses `bytes` (valid UTF-8) and runs `fn` on the tree; the tree is freed afterwards even
 * when `fn` throws. Throws SyntaxLimitError when the tree is too large or too deep, or when the
 * parse runs past PARSE_TIME_MAX_MS: some inputs make a grammar's scanner quadratic (thousands of
 * comment lines in one indented Python block), and one file must not hold a thread for minutes.
 */
export function withTree<T>(language: LanguageId, bytes: Uint8Array, fn: (tree: Tree, source: SourceText) => T): T {
  const lang = grammar(language);
  const p = parser!;
  if (current !== language) {
    p.setLanguage(lang);
    current = language;
  }
  const source = new SourceText(bytes);
  const text = source.text;
  const started = performance.now();
  let cancelled = false;
  const tree = p.parse(
    (index: number) => {
      if (index >= text.length) return undefined;
      let end = Math.min(index + CHUNK, text.length);
      // Never end a chunk between the halves of a surrogate pair.
      const last = text.charCodeAt(end - 1);
      if (last >= 0xd800 && last <= 0xdbff && end < text.length) end -= 1;
      return text.slice(index, end);
    },
    null,
    {
      // Called every few hundred parse operations; returning true cancels the parse. (The binding's
      // type says void; its documentation and behaviour say boolean.)
      progressCallback: (() => (cancelled ||= performance.now() - started > PARSE_TIME_MAX_MS)) as () => void,
    },
  );
  if (tree === null) {
    // A cancelled parse would otherwise resume on the parser's next call, with another file.
    p.reset();
    if (cancelled) throw new SyntaxLimitError('time', PARSE_TIME_MAX_MS, Math.round(performance.now() - started));
    throw new Error(`tree-sitter returned no tree for a ${language} file`);
  }
  try {
    checkBounds(tree.rootNode);
    return fn(tree, source);
  } finally {
    tree.delete();
  }
}

function checkBounds(root: Node): void {
  const count = root.descendantCount;
  if (count > SYNTAX_NODES_MAX) throw new SyntaxLimitError('nodes', SYNTAX_NODES_MAX, count);
  if (count <= SYNTAX_DEPTH_MAX) return;
  // A subtree of k nodes is at most k - 1 edges deep, so only subtrees large enough to
  // cross the bound are entered: the walk touches a thin spine, not the whole tree.
  const cursor = root.walk();
  try {
    let depth = 0;
    for (;;) {
      const node = cursor.currentNode;
      if (depth > SYNTAX_DEPTH_MAX) throw new SyntaxLimitError('depth', SYNTAX_DEPTH_MAX, depth);
      if (depth + node.descendantCount - 1 > SYNTAX_DEPTH_MAX && cursor.gotoFirstChild()) {
        depth++;
        continue;
      }
      while (!cursor.gotoNextSibling()) {
        if (!cursor.gotoParent()) return;
        depth--;
      }
    }
  } finally {
    cursor.delete();
  }
}

let shellLoading: Promise<void> | null = null;
let shellParser: Parser | null = null;

/** Loads the bash grammar (tree-sitter-bash) into a parser of its own. Idempotent. */
export function initShellSyntax(): Promise<void> {
  if (shellLoading === null) {
    shellLoading = (async () => {
      await initRuntime();
      const language = await Language.load(require.resolve('@vscode/tree-sitter-wasm/wasm/tree-sitter-bash.wasm'));
      const p = new Parser();
      p.setLanguage(language);
      shellParser = p;
    })().catch((err: unknown) => {
      shellLoading = null;
      throw err;
    });
  }
  return shellLoading;
}

/**
 * Parses a shell command (after `initShellSyntax`) and runs `fn` on the tree, freed afterwards.
 * Throws SyntaxLimitError when the tree is too large or too deep.
 */
export function withShellTree<T>(text: string, fn: (tree: Tree) => T): T {
  if (shellParser === null) throw new Error('shell grammar not initialized: call initShellSyntax() first');
  const tree = shellParser.parse(text);
  if (tree === null) throw new Error('tree-sitter returned no tree for a shell command');
  try {
    checkBounds(tree.rootNode);
    return fn(tree);
  } finally {
    tree.delete();
  }
}
