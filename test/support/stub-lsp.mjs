// A small, deterministic language server for tests: LSP 3.17 over stdio (vscode-jsonrpc), whose
// behaviour its arguments choose. It stands in for a real engine where a test needs an engine to
// lack a capability, never become ready, publish exactly the diagnostics it is told to, or fail
// to start — things no real engine does on demand. Tests reach it as `stub-lsp` on PATH
// (test/support/bin/stub-lsp) through `[languages.<id>.lsp] command = "stub-lsp"`.
//
// Arguments:
//   --references            advertise textDocument/references: every whole-word occurrence of the
//                           word at the position, in the open or on-disk files under the root with
//                           the document's extension (the declaration included; rift drops what
//                           the removal takes out)
//   --rename                advertise textDocument/rename: the same occurrences, replaced
//   --will-rename           advertise workspace/willRenameFiles (answered with no edits)
//   --never-ready           begin a work-done progress at `initialized` and never end it
//   --hold-initialize=PATH  answer `initialize` only once PATH (relative to the working
//                           directory) exists
//   --exit=CODE             exit with CODE at once, before reading anything
//   --duplicate-diagnostics publish every diagnostic twice
//
// Diagnostics are published for every open document on each open and change, with its version:
// an error `stub.fixme` for each whole-word FIXME, and a hint `stub.note` for each NOTE.

import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node.js';

const flags = new Map(
  process.argv.slice(2).map((a) => {
    const eq = a.indexOf('=');
    return eq < 0 ? [a, ''] : [a.slice(0, eq), a.slice(eq + 1)];
  }),
);

if (flags.has('--exit')) process.exit(Number(flags.get('--exit')));

const connection = createMessageConnection(new StreamMessageReader(process.stdin), new StreamMessageWriter(process.stdout));
/** Open documents: uri → { text, version }. */
const documents = new Map();
let root = process.cwd();

const IDENT = /[\p{L}\p{N}_$]/u;

/** Whole-word occurrences of `word` in `text` as LSP ranges (UTF-16 positions, like JS strings). */
function occurrences(text, word) {
  const out = [];
  const lines = text.split('\n');
  for (let line = 0; line < lines.length; line++) {
    const s = lines[line];
    for (let i = s.indexOf(word); i >= 0; i = s.indexOf(word, i + 1)) {
      if (IDENT.test(s[i - 1] ?? '') || IDENT.test(s[i + word.length] ?? '')) continue;
      out.push({ start: { line, character: i }, end: { line, character: i + word.length } });
    }
  }
  return out;
}

function wordAt(text, position) {
  const s = text.split('\n')[position.line] ?? '';
  let start = position.character;
  let end = position.character;
  while (start > 0 && IDENT.test(s[start - 1])) start--;
  while (end < s.length && IDENT.test(s[end])) end++;
  return s.slice(start, end);
}

/** Files under the root with `ext`, sorted, skipping dot folders and node_modules. */
function filesWith(ext, dir = root, out = []) {
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (e.name.startsWith('.') || e.name === 'node_modules') continue;
    const abs = join(dir, e.name);
    if (e.isDirectory()) filesWith(ext, abs, out);
    else if (e.isFile() && extname(e.name) === ext) out.push(abs);
  }
  return out;
}

/** Every whole-word occurrence, per file uri, of the word at the position. */
function locate(params) {
  const doc = documents.get(params.textDocument.uri);
  const word = doc ? wordAt(doc.text, params.position) : '';
  if (word === '') return [];
  const ext = extname(fileURLToPath(params.textDocument.uri));
  return filesWith(ext).flatMap((abs) => {
    const uri = pathToFileURL(abs).href;
    const text = documents.get(uri)?.text ?? readFileSync(abs, 'utf8');
    return occurrences(text, word).map((range) => ({ uri, range }));
  });
}

function publish(uri) {
  const doc = documents.get(uri);
  const diagnostics = [
    ...occurrences(doc.text, 'FIXME').map((range) => ({ range, severity: 1, code: 'stub.fixme', source: 'stub', message: 'FIXME left in the code' })),
    ...occurrences(doc.text, 'NOTE').map((range) => ({ range, severity: 4, code: 'stub.note', source: 'stub', message: 'a note' })),
  ].sort((a, b) => a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character);
  const twice = flags.has('--duplicate-diagnostics') ? diagnostics.flatMap((d) => [d, d]) : diagnostics;
  void connection.sendNotification('textDocument/publishDiagnostics', { uri, version: doc.version, diagnostics: twice });
}

connection.onRequest('initialize', async (params) => {
  if (params.rootUri) root = fileURLToPath(params.rootUri);
  const hold = flags.get('--hold-initialize');
  if (hold) while (!existsSync(hold)) await new Promise((r) => setTimeout(r, 20));
  const capabilities = { textDocumentSync: 1 };
  if (flags.has('--references')) capabilities.referencesProvider = true;
  if (flags.has('--rename')) capabilities.renameProvider = true;
  if (flags.has('--will-rename')) capabilities.workspace = { fileOperations: { willRename: { filters: [{ scheme: 'file', pattern: { glob: '**/*' } }] } } };
  return { capabilities, serverInfo: { name: 'stub-lsp' } };
});

connection.onNotification('initialized', () => {
  if (!flags.has('--never-ready')) return;
  // Sent back to back, so the progress begins before any later answer reaches the client.
  connection.sendRequest('window/workDoneProgress/create', { token: 'stub-load' }).catch(() => {});
  void connection.sendNotification('$/progress', { token: 'stub-load', value: { kind: 'begin', title: 'loading (never ends)' } });
});

connection.onNotification('textDocument/didOpen', ({ textDocument: d }) => {
  documents.set(d.uri, { text: d.text, version: d.version });
  publish(d.uri);
});

connection.onNotification('textDocument/didChange', ({ textDocument: d, contentChanges }) => {
  documents.set(d.uri, { text: contentChanges[contentChanges.length - 1].text, version: d.version });
  publish(d.uri);
});

connection.onNotification('textDocument/didClose', ({ textDocument: d }) => documents.delete(d.uri));

connection.onRequest('textDocument/references', (params) => locate(params));

connection.onRequest('textDocument/rename', (params) => {
  const changes = {};
  for (const l of locate(params)) (changes[l.uri] ??= []).push({ range: l.range, newText: params.newName });
  return { changes };
});

connection.onRequest('workspace/willRenameFiles', () => null);

connection.onRequest('shutdown', () => null);
connection.onNotification('exit', () => process.exit(0));
connection.onClose(() => process.exit(0));
connection.listen();
