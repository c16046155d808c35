// Bundles the compiled program (dist/, from tsc) into dist/bundle/: the command entry and the
// worker entries, with the modules they share split into chunks, all in one folder (a worker is
// started by a path relative to the module that starts it, which is then a chunk there). Loading
// a few files instead of ~500 (rift's own and its pure-JS dependencies) halves the time a process
// spends before it can work: the workspace server's first answer, every command's start.
// Packages with native code, WebAssembly or files of their own stay outside, loaded from
// node_modules as before.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';

const OUT = 'dist/bundle';
rmSync(OUT, { recursive: true, force: true });
await build({
  entryPoints: { entry: 'dist/cli/entry.js', 'parse-worker': 'dist/index/parse-worker.js', 'aside-worker': 'dist/index/aside-worker.js' },
  outdir: OUT,
  chunkNames: 'chunk-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Loaded from node_modules: native addons, grammars and language servers found by path, the
  // terminal UI's renderer (WebAssembly layout), the optional embedding runtime, the TS loader.
  external: [
    'better-sqlite3',
    '@parcel/watcher',
    'web-tree-sitter',
    '@vscode/tree-sitter-wasm',
    'pyright',
    'typescript',
    'typescript-language-server',
    '@huggingface/transformers',
    'ink',
    'react',
    'react/*',
    'tsx',
    'tsx/*',
  ],
  // CommonJS dependencies bundled into ES modules still call require() for Node's built-ins.
  banner: { js: "import { createRequire as __riftCreateRequire } from 'node:module'; const require = __riftCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});
