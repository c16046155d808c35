// The tree-sitter runtime: one wasm module, seven grammars, one parser per thread, and the
// shell grammar the agent's permission check reads commands with (loaded on its own, on demand).
//
// `initSyntax()` is async (wasm instantiation); everything after it is synchronous. Every
// parse goes through `withTree`, which enforces the size bounds and always frees the tree, or
// through an `IncrementalTree` (successive versions of one file), which keeps one.

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
  const source = new SourceText(bytes);
  const tree = parseSource(language, source, null);
  try {
    checkBounds(tree.rootNode);
    return fn(tree, source);
  } finally {
    tree.delete();
  }
}

/** One parse under the time bound, reusing `old` (edited to the new text) when given. */
function parseSource(language: LanguageId, source: SourceText, old: Tree | null): Tree {
  const lang = grammar(language);
  const p = parser!;
  if (current !== language) {
    p.setLanguage(lang);
    current = language;
  }
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
    old,
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
  return tree;
}

/**
 * Successive versions of one file, parsed incrementally (tree-sitter reuses what an edit left
 * alone): `advance` moves to each version and returns its edit, and `parse` reparses the newest
 * one only when asked, so versions nobody reads cost a byte comparison, not a parse. The kept
 * tree is brought to the version parsed by one edit spanning every difference since it was
 * parsed (editing it at each version, most never parsed, cost more than the reuse it kept). A
 * version's bytes are read until the next `advance` only, so a caller may reuse their buffer
 * after it. The same bounds as `withTree` apply; `close` frees the kept tree.
 */
export class IncrementalTree {
  private tree: Tree | null = null;
  /** The version the kept tree was parsed from. */
  private parsed: SourceText | null = null;
  private source: SourceText | null = null;

  constructor(readonly language: LanguageId) {}

  /** The version now held (the last passed to `advance`). */
  get bytes(): Uint8Array | null {
    return this.source?.bytes ?? null;
  }

  /** Moves to the next version; returns the edit in byte offsets (null when the bytes are equal). */
  advance(bytes: Uint8Array): ByteEdit | null {
    const before = this.source;
    this.source = new SourceText(bytes);
    if (before === null) return { start: 0, oldEnd: 0, newEnd: bytes.length };
    return byteEdit(before.bytes, bytes);
  }

  /** Parses the version held, reusing the kept tree; `fn` reads the tree, which is kept for the next version. */
  parse<T>(fn: (tree: Tree, source: SourceText) => T): T {
    const source = this.source;
    if (source === null) throw new Error('IncrementalTree.parse before advance');
    const old = this.tree;
    this.tree = null;
    let tree: Tree;
    try {
      if (old !== null) editTree(old, this.parsed!, source);
      tree = parseSource(this.language, source, old);
    } finally {
      old?.delete();
    }
    try {
      checkBounds(tree.rootNode);
    } catch (e) {
      tree.delete();
      throw e;
    }
    this.tree = tree;
    // A copy: callers may reuse a version's buffer once they have advanced past it.
    this.parsed = new SourceText(new Uint8Array(source.bytes));
    return fn(tree, source);
  }

  close(): void {
    this.tree?.delete();
    this.tree = null;
    this.parsed = null;
    this.source = null;
  }
}

/** Edits `tree`, parsed from `before`, to stand for `after`: one edit over every difference. */
function editTree(tree: Tree, before: SourceText, after: SourceText): void {
  const edit = byteEdit(before.bytes, after.bytes);
  if (edit === null) return;
  // The prefix before the edit is common to both versions: its lines are counted once.
  const start = point(before, 0, { row: 0, column: 0 }, edit.start);
  tree.edit({
    startIndex: before.toUnit(edit.start),
    oldEndIndex: before.toUnit(edit.oldEnd),
    newEndIndex: after.toUnit(edit.newEnd),
    startPosition: start,
    oldEndPosition: point(before, edit.start, start, edit.oldEnd),
    newEndPosition: point(after, edit.start, start, edit.newEnd),
  });
}

/** A change between two versions: bytes `[start, oldEnd)` of the old became `[start, newEnd)` of the new. */
export interface ByteEdit {
  start: number;
  oldEnd: number;
  newEnd: number;
}

/** The one span covering every difference of `a` and `b` (common prefix and suffix cut), or null when equal. */
export function byteEdit(a: Uint8Array, b: Uint8Array): ByteEdit | null {
  const n = Math.min(a.length, b.length);
  const A = Buffer.from(a.buffer, a.byteOffset, a.length);
  const B = Buffer.from(b.buffer, b.byteOffset, b.length);
  // Whole blocks compare natively; the byte loop runs only inside the first differing block.
  let start = 0;
  while (start + EDIT_BLOCK <= n && A.compare(B, start, start + EDIT_BLOCK, start, start + EDIT_BLOCK) === 0) start += EDIT_BLOCK;
  while (start < n && a[start] === b[start]) start++;
  if (start === n && a.length === b.length) return null;
  let tail = 0;
  const room = n - start;
  while (tail + EDIT_BLOCK <= room && A.compare(B, b.length - tail - EDIT_BLOCK, b.length - tail, a.length - tail - EDIT_BLOCK, a.length - tail) === 0) tail += EDIT_BLOCK;
  while (tail < room && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  // Keep whole UTF-8 characters inside the edit: never start on a continuation byte.
  while (start > 0 && (a[start] & 0xc0) === 0x80) start--;
  while (tail > 0 && (a[a.length - tail] & 0xc0) === 0x80) tail--;
  return { start, oldEnd: a.length - tail, newEnd: b.length - tail };
}

const EDIT_BLOCK = 1024;

/** Row and column (code units) of byte offset `byte`, counting on from `from`, whose point is `at`. */
function point(source: SourceText, from: number, at: { row: number; column: number }, byte: number): { row: number; column: number } {
  const bytes = source.bytes;
  let row = at.row;
  let lineStart = -1;
  for (let i = bytes.indexOf(0x0a, from); i !== -1 && i < byte; i = bytes.indexOf(0x0a, i + 1)) {
    row++;
    lineStart = i + 1;
  }
  if (lineStart < 0) return { row, column: at.column + source.toUnit(byte) - source.toUnit(from) };
  return { row, column: source.toUnit(byte) - source.toUnit(lineStart) };
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
