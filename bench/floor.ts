// The parse floor: the CPU time tree-sitter alone needs for a set of files, with the parser
// rift uses (web-tree-sitter, wasm) and with native tree-sitter (the npm `tree-sitter` binding
// and the grammar packages, installed apart by `npm run bench:native` into .bench/native so that
// `npm ci` never compiles them). Each measurement runs in a child process of its own,
// single-threaded, so its CPU time is the parser's and nothing else's:
//
//   node --import tsx bench/floor.ts <wasm|native> <parse|extract|job> LIST ROOT
//
// parse: tree-sitter's parse only (the floor). extract: parse plus rift's declaration
// extraction over the tree (the syntax providers, unchanged, on either runtime). job: rift's
// whole parse job per file (read, digest, parse, extract, full-text input; wasm only).
// LIST holds `language<TAB>path` lines; prints one JSON line {files, bytes, cpuS}.

import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LanguageId } from '../src/syntax/types.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Where `npm run bench:native` installs native tree-sitter and its grammars. */
export const NATIVE = join(ROOT, '.bench', 'native');

export type Parser = 'wasm' | 'native';
export type Mode = 'parse' | 'extract' | 'job';

export interface FloorRun {
  files: number;
  bytes: number;
  cpuS: number;
}

/** Runs one measurement in a child process; null (with the reason) when that parser cannot load here. */
export function measureFloor(parser: Parser, mode: Mode, files: ReadonlyArray<{ path: string; language: string }>, root: string, scratch: string): FloorRun | { error: string } {
  const list = join(scratch, `floor-${parser}-${mode}.txt`);
  writeFileSync(list, files.map((f) => `${f.language}\t${f.path}`).join('\n') + '\n');
  const r = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), parser, mode, list, root], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 600_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  if (r.status !== 0) return { error: (r.stderr || r.stdout || `exit ${r.status}`).trim().split('\n').find((l) => /^\w*Error(\s\[\w+\])?: /.test(l.trim()))?.trim() ?? 'failed' };
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as FloorRun;
}

// ---------------------------------------------------------------------------------------------
// Child side.

interface NativeTree {
  rootNode: { descendantCount: number };
}
interface NativeParser {
  setLanguage(language: unknown): void;
  parse(input: (index: number) => string | null, old?: unknown, options?: { bufferSize: number }): NativeTree;
}

function nativeLanguages(): Record<LanguageId, unknown> {
  const require = createRequire(join(NATIVE, 'package.json'));
  const ts = require('tree-sitter-typescript') as { typescript: unknown; tsx: unknown };
  return {
    typescript: ts.typescript,
    tsx: ts.tsx,
    javascript: require('tree-sitter-javascript'),
    python: require('tree-sitter-python'),
    rust: require('tree-sitter-rust'),
    go: require('tree-sitter-go'),
    java: require('tree-sitter-java'),
  };
}

async function child(parser: Parser, mode: Mode, listFile: string, root: string): Promise<void> {
  const items = readFileSync(listFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [language, path] = l.split('\t');
      return { language: language as LanguageId, path };
    });
  const { initSyntax, withTree } = await import('../src/syntax/runtime.ts');
  const { SourceText } = await import('../src/syntax/text.ts');
  const { runParseItem } = await import('../src/index/parse-job.ts');
  const { pythonDeclarations } = await import('../src/syntax/python.ts');
  const { typescriptDeclarations } = await import('../src/syntax/typescript.ts');
  const { rustDeclarations } = await import('../src/syntax/rust.ts');
  const { goDeclarations } = await import('../src/syntax/go.ts');
  const { javaDeclarations } = await import('../src/syntax/java.ts');
  const extractors = {
    typescript: typescriptDeclarations, tsx: typescriptDeclarations, javascript: typescriptDeclarations,
    python: pythonDeclarations, rust: rustDeclarations, go: goDeclarations, java: javaDeclarations,
  };
  await initSyntax();
  // Files are read before the clock starts: the floor is parsing, not I/O.
  const inputs = mode === 'job' ? [] : items.map((i) => ({ ...i, bytes: readFileSync(join(root, i.path)) }));
  let run: () => void;
  if (mode === 'job') {
    run = () => {
      for (const i of items) runParseItem(root, Number.MAX_SAFE_INTEGER, { path: i.path, language: i.language, keepContent: true, relations: false });
    };
  } else if (parser === 'wasm') {
    run = () => {
      for (const i of inputs) {
        try {
          withTree(i.language, i.bytes, (tree, source) => (mode === 'extract' ? extractors[i.language](tree, source) : tree.rootNode.descendantCount));
        } catch {
          // past the syntax bounds: the indexer stores such a file unparsed, as here
        }
      }
    };
  } else {
    const require = createRequire(join(NATIVE, 'package.json'));
    const Native = require('tree-sitter') as new () => NativeParser;
    const languages = nativeLanguages();
    const p = new Native();
    run = () => {
      for (const i of inputs) {
        p.setLanguage(languages[i.language]);
        const source = new SourceText(i.bytes);
        const text = source.text;
        // One read of the whole text (the binding copies it into its own buffer).
        const tree = p.parse((at) => (at >= text.length ? null : at === 0 ? text : text.slice(at)), undefined, { bufferSize: text.length + 16 });
        if (mode === 'extract') extractors[i.language](tree as never, source);
        else void tree.rootNode.descendantCount;
      }
    };
  }
  const before = process.cpuUsage();
  run();
  const used = process.cpuUsage(before);
  const bytes = inputs.reduce((n, i) => n + i.bytes.length, 0);
  process.stdout.write(`${JSON.stringify({ files: items.length, bytes, cpuS: (used.user + used.system) / 1e6 })}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [parser, mode, list, root] = process.argv.slice(2) as [Parser, Mode, string, string];
  await child(parser, mode, list, root);
}
