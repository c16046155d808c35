import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { serveWorkspace, startRift } from '../helpers/mcp.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// Declaration edits over stdio (reference F.10, F.11, F.13 rule 148 without an engine), in
// Rust, Python, TypeScript, Go and Java, asserting the exact bytes on disk after each change.

type Result = {
  status: string;
  reason?: string;
  preconditions?: Array<{ kind: string; status: string; addresses: unknown[]; paths: string[]; expected: { kind: string; value: unknown }; observed: { kind: string; value: unknown } }>;
  summary?: {
    id: string;
    files: Array<{ path: string; change: string; size_bytes: number; line_count: number; lines_added: number; lines_removed: number; digest?: string }>;
    diagnostics: Array<{ code: string; message: string; severity: string }>;
    warnings: Array<{ kind: string; reason?: string }>;
  };
};

const sym = (lang: string, path: string, name: string) => `rift://symbol/${lang}/${path}/${name}`;

const FILES = {
  'src/lib.rs': '/// Doc.\n#[inline]\npub fn beacon() {}\n\npub struct Beacon;\n\nimpl Beacon {\n    pub fn signal(&self) {}\n\n    pub fn quiet(&self) {}\n}\n',
  'app/crlf.py': 'import os\r\n\r\n\r\ndef first():\r\n    return 1\r\n\r\n\r\ndef second():\r\n    return 2\r\n',
  'app/nofinal.py': 'class Parser:\n    def parse(self):\n        return 1\n\n    def tail(self):\n        return 2',
  'web/a.ts': '/** Adds. */\nexport function add(a: number, b: number): number {\n  return a + b;\n}\n\nexport class Box {\n  open(): void {}\n\n  close(): void {}\n}\n',
  'cmd/main.go': 'package main\n\n// Run runs.\nfunc Run() {}\n\nfunc helper() {}\n',
  'java/App.java': 'public class App {\n    /** Greets. */\n    public void greet() {}\n\n    public void bye() {}\n}\n',
  'notes.md': '# notes\n',
  'app/dup.py': 'def dup():\n    return 1\n\n\ndef dup():\n    return 2\n',
  'py/pep8.py': 'import os\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n',
  'py/single.py': 'def only():\n    return 1\n',
  'py/tight.py': 'def x():\n    return 1\n\ndef y():\n    return 2\n\ndef z():\n    return 3\n',
  'py/crlf.py': 'def one():\r\n    return 1\r\n\r\n\r\ndef two():\r\n    return 2\r\n',
};

describe('change tools: declarations', () => {
  const ws = serveWorkspace({ before, after }, FILES);
  const read = (p: string) => readFileSync(join(ws.root, p), 'utf8');
  const call = async (tool: string, args: Record<string, unknown>) => (await ws.rift.call(tool, args)) as Result;

  test('replace_symbol swaps the whole span (doc and attribute included) verbatim; the next read sees it', async () => {
    const r = await call('replace_symbol', { symbol: sym('rust', 'src/lib.rs', 'beacon'), body: 'pub fn beacon() -> u8 {\n    7\n}' });
    assert.equal(r.status, 'applied');
    assert.match(r.summary!.id, /^chg_[a-z2-7]{26}$/);
    assert.deepEqual(r.summary!.files, [
      { path: 'src/lib.rs', change: 'modified', size_bytes: Buffer.byteLength(read('src/lib.rs')), line_count: 11, lines_added: 3, lines_removed: 3, digest: r.summary!.files[0].digest },
    ]);
    assert.equal(read('src/lib.rs'), 'pub fn beacon() -> u8 {\n    7\n}\n\npub struct Beacon;\n\nimpl Beacon {\n    pub fn signal(&self) {}\n\n    pub fn quiet(&self) {}\n}\n');
    const hit = (await ws.rift.call('get_symbol', { name: 'beacon' })) as { hits: Array<{ source: { text: string } }> };
    assert.equal(hit.hits[0].source.text, 'pub fn beacon() -> u8 {\n    7\n}');
  });

  test('replace_symbol keeps CRLF bytes around the span and the body verbatim', async () => {
    const r = await call('replace_symbol', { symbol: sym('python', 'app/crlf.py', 'first'), body: 'def first():\r\n    return 10' });
    assert.equal(r.status, 'applied');
    assert.equal(read('app/crlf.py'), 'import os\r\n\r\n\r\ndef first():\r\n    return 10\r\n\r\n\r\ndef second():\r\n    return 2\r\n');
  });

  test('a no-op replacement is unchanged', async () => {
    const r = await call('replace_symbol', { symbol: sym('python', 'app/crlf.py', 'second'), body: 'def second():\r\n    return 2' });
    assert.deepEqual(r, { status: 'unchanged' });
  });

  test('insert_symbol after a nested anchor takes its column; before lands above its doc', async () => {
    const r = await call('insert_symbol', { anchor: sym('python', 'app/nofinal.py', 'Parser.parse'), position: 'after', body: 'def again(self):\n    return 3\n' });
    assert.equal(r.status, 'applied');
    assert.equal(read('app/nofinal.py'), 'class Parser:\n    def parse(self):\n        return 1\n\n    def again(self):\n        return 3\n\n    def tail(self):\n        return 2');
    const b = await call('insert_symbol', { anchor: sym('java', 'java/App.java', 'App.greet'), position: 'before', body: '    public void hello() {}' });
    assert.equal(b.status, 'applied');
    assert.equal(read('java/App.java'), 'public class App {\n    public void hello() {}\n\n    /** Greets. */\n    public void greet() {}\n\n    public void bye() {}\n}\n');
  });

  test('insert_symbol into the end of a file without a final newline keeps it that way', async () => {
    const r = await call('insert_symbol', { anchor: sym('python', 'app/nofinal.py', 'Parser.tail'), position: 'after', body: 'def last(self):\n    return 4' });
    assert.equal(r.status, 'applied');
    assert.ok(read('app/nofinal.py').endsWith('    def tail(self):\n        return 2\n\n    def last(self):\n        return 4'));
  });

  test('insert_symbol in a CRLF file separates with CRLF blank lines', async () => {
    const r = await call('insert_symbol', { anchor: sym('python', 'app/crlf.py', 'second'), position: 'before', body: 'def middle():\r\n    return 5' });
    assert.equal(r.status, 'applied');
    assert.equal(read('app/crlf.py'), 'import os\r\n\r\n\r\ndef first():\r\n    return 10\r\n\r\n\r\ndef middle():\r\n    return 5\r\n\r\n\r\ndef second():\r\n    return 2\r\n');
  });

  test('insert_symbol between top-level Python functions leaves the two blank lines PEP 8 and the file use', async () => {
    const r = await call('insert_symbol', { anchor: sym('python', 'py/pep8.py', 'a'), position: 'after', body: 'def between():\n    return 3\n' });
    assert.equal(r.status, 'applied');
    assert.equal(read('py/pep8.py'), 'import os\n\n\ndef a():\n    return 1\n\n\ndef between():\n    return 3\n\n\ndef b():\n    return 2\n');
    // With no pair to learn from, PEP 8's two; a file that keeps one blank line keeps its own.
    await call('insert_symbol', { anchor: sym('python', 'py/single.py', 'only'), position: 'after', body: 'def next():\n    return 2' });
    assert.equal(read('py/single.py'), 'def only():\n    return 1\n\n\ndef next():\n    return 2\n');
    await call('insert_symbol', { anchor: sym('python', 'py/tight.py', 'y'), position: 'before', body: 'def w():\n    return 0' });
    assert.equal(read('py/tight.py'), 'def x():\n    return 1\n\ndef w():\n    return 0\n\ndef y():\n    return 2\n\ndef z():\n    return 3\n');
    await call('insert_symbol', { file: 'py/tight.py', position: 'after', body: 'def end():\n    return 9\n' });
    assert.ok(read('py/tight.py').endsWith('    return 3\n\ndef end():\n    return 9\n'), 'a file target follows the same rule');
  });

  test('insert_symbol into a CRLF file writes the body with CRLF lines, anchored or at the end of the file', async () => {
    const r = await call('insert_symbol', { anchor: sym('python', 'py/crlf.py', 'one'), position: 'after', body: 'def mid(x):\n    if x:\n        return x\n    return 0\n' });
    assert.equal(r.status, 'applied');
    const end = await call('insert_symbol', { file: 'py/crlf.py', position: 'after', body: 'def last():\n    return 3\n' });
    assert.equal(end.status, 'applied');
    assert.equal(
      read('py/crlf.py'),
      'def one():\r\n    return 1\r\n\r\n\r\ndef mid(x):\r\n    if x:\r\n        return x\r\n    return 0\r\n\r\n\r\ndef two():\r\n    return 2\r\n\r\n\r\ndef last():\r\n    return 3\r\n',
    );
  });

  test('insert_symbol file target: before/after with one blank line; create_missing creates parents; missing refuses', async () => {
    const a = await call('insert_symbol', { file: 'cmd/main.go', position: 'after', body: 'func Tail() {}\n' });
    assert.equal(a.status, 'applied');
    assert.equal(read('cmd/main.go'), 'package main\n\n// Run runs.\nfunc Run() {}\n\nfunc helper() {}\n\nfunc Tail() {}\n');
    const md = await call('insert_symbol', { file: 'notes.md', position: 'before', body: 'intro' });
    assert.equal(md.status, 'applied');
    assert.equal(read('notes.md'), 'intro\n\n# notes\n');
    const missing = await call('insert_symbol', { file: 'gen/deep/new.ts', position: 'after', body: 'export const x = 1;\n' });
    assert.equal(missing.status, 'refused');
    assert.equal(missing.reason, 'unmet_precondition');
    assert.deepEqual(missing.preconditions![0], {
      kind: 'target_exists', status: 'failed', addresses: [], paths: ['gen/deep/new.ts'],
      expected: { kind: 'boolean', value: true }, observed: { kind: 'boolean', value: false },
    });
    assert.equal(existsSync(join(ws.root, 'gen')), false);
    const created = await call('insert_symbol', { file: 'gen/deep/new.ts', position: 'after', body: 'export const x = 1;\n', create_missing: true });
    assert.equal(created.status, 'applied');
    assert.equal(created.summary!.files[0].change, 'created');
    assert.equal(read('gen/deep/new.ts'), 'export const x = 1;\n');
    const hit = (await ws.rift.call('get_symbol', { name: 'x', include: [] })) as { hits: Array<{ path: string }> };
    assert.ok(hit.hits.some((h) => h.path === 'gen/deep/new.ts'), 'a later read sees the created file');
  });

  test('remove_symbol takes docs, attributes and the following separator; checks references where an engine serves', async () => {
    const r = await call('remove_symbol', { symbol: sym('typescript', 'web/a.ts', 'add') });
    assert.equal(r.status, 'applied');
    assert.equal(read('web/a.ts'), 'export class Box {\n  open(): void {}\n\n  close(): void {}\n}\n');
    assert.deepEqual(r.summary!.warnings, [], 'typescript-language-server found no reference to add');
    const last = await call('remove_symbol', { symbol: sym('typescript', 'web/a.ts', 'Box.close') });
    assert.equal(last.status, 'applied');
    assert.equal(read('web/a.ts'), 'export class Box {\n  open(): void {}\n}\n');
    const go = await call('remove_symbol', { symbol: sym('go', 'cmd/main.go', 'Run') });
    assert.equal(go.status, 'applied');
    // gopls is used only when on PATH, and then only under a go.mod: either way this file has no engine.
    assert.deepEqual(go.summary!.warnings.map((w) => w.kind), ['rift.remove.references_unchecked']);
    assert.match(go.summary!.warnings[0].reason!, /^gopls (was not found on PATH|needs one of go\.work, go\.mod at or above cmd\/main\.go)/);
    assert.equal(read('cmd/main.go'), 'package main\n\nfunc helper() {}\n\nfunc Tail() {}\n');
  });

  test('a missing symbol refuses target_exists naming the address; the tree is untouched', async () => {
    const before = read('src/lib.rs');
    const id = sym('rust', 'src/lib.rs', 'nothing_here');
    const r = await call('replace_symbol', { symbol: id, body: 'x' });
    assert.deepEqual(r, {
      status: 'refused', reason: 'unmet_precondition', diagnostics: [],
      preconditions: [{ kind: 'target_exists', status: 'failed', addresses: [{ kind: 'symbol', symbol: id }], paths: ['src/lib.rs'], expected: { kind: 'boolean', value: true }, observed: { kind: 'boolean', value: false } }],
    });
    assert.equal(read('src/lib.rs'), before);
  });

  test('a file the index does not parse refuses target_exists; a repeated name is addressed by its overload suffix (rule 120)', async () => {
    const unparsed = await call('replace_symbol', { symbol: sym('python', 'notes.md', 'notes'), body: 'x' });
    assert.equal(unparsed.status, 'refused');
    assert.deepEqual(unparsed.preconditions!.map((p) => [p.kind, p.paths, p.observed]), [['target_exists', ['notes.md'], { kind: 'boolean', value: false }]]);
    const second = await call('replace_symbol', { symbol: sym('python', 'app/dup.py', 'dup~2'), body: 'def dup():\n    return 3' });
    assert.equal(second.status, 'applied');
    assert.equal(read('app/dup.py'), 'def dup():\n    return 1\n\n\ndef dup():\n    return 3\n');
  });

  test('a broken body lands and reports parser findings', async () => {
    const r = await call('replace_symbol', { symbol: sym('rust', 'src/lib.rs', 'Beacon::quiet'), body: 'pub fn quiet(&self) {' });
    assert.equal(r.status, 'applied');
    assert.ok(r.summary!.diagnostics.length >= 1);
    assert.equal(r.summary!.diagnostics[0].code, 'rift.syntax.error');
    assert.equal(r.summary!.diagnostics[0].message, 'the parser marked this region erroneous after the change');
  });

  test('malformed requests fail invalid_request naming the field before anything resolves', async () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['replace_symbol', { symbol: 'not-a-symbol-address-x', body: 'x' }, 'field symbol, violation not a rift symbol address'],
      ['insert_symbol', { anchor: sym('rust', 'src/lib.rs', 'beacon'), file: 'src/lib.rs', position: 'after', body: 'x' }, 'field file, violation insert_symbol accepts exactly one of anchor or file, not both'],
      ['insert_symbol', { position: 'after', body: 'x' }, 'field anchor, violation insert_symbol requires exactly one of anchor or file'],
      ['insert_symbol', { anchor: sym('rust', 'src/lib.rs', 'beacon'), position: 'after', body: 'x', create_missing: true }, 'field create_missing, violation cannot be set with an anchor target'],
      ['insert_symbol', { file: '/etc/passwd', position: 'after', body: 'x' }, 'field file, violation absolute'],
      ['insert_symbol', { file: '.rift/x', position: 'after', body: 'x' }, 'field file, violation rift_state'],
      ['insert_symbol', { file: 'a.ts', position: 'middle', body: 'x' }, 'field position, violation not_one_of before|after'],
      ['replace_symbol', { symbol: sym('rust', 'src/lib.rs', 'beacon'), body: { file: 'relative.txt' } }, 'field body.file, violation not an absolute path'],
      ['replace_symbol', { symbol: sym('rust', 'src/lib.rs', 'beacon'), body: 'x', extra: 1 }, 'field extra, violation unknown_field'],
    ];
    for (const [tool, args, text] of cases) {
      const e = await ws.rift.fail(tool, args);
      assert.equal(e.data.code, 'invalid_request', tool);
      assert.equal(e.data.phase, 'change');
      assert.ok((e.data.message as string).includes(text), `${e.data.message as string} ∌ ${text}`);
    }
  });

  test('region is not served yet; a projection is addressed by its id, and an unknown one is not found', async () => {
    const e = await ws.rift.fail('replace_symbol', { symbol: sym('rust', 'src/lib.rs', 'beacon'), body: 'x', region: 'body' });
    assert.equal(e.data.code, 'capability_unavailable');
    assert.match(e.data.message as string, /capability region-scoped replacement/);
    const p = await ws.rift.fail('patch', { patch: '--- a/x\n+++ b/x\n', projection: 'rift://projection/prj_aaaaaaaaaaaaaaaaaaaaaaaaaa' });
    assert.equal(p.data.code, 'invalid_request');
    assert.match(p.data.message as string, /field projection/);
    const unknown = await ws.rift.fail('replace_symbol', { symbol: sym('rust', 'src/lib.rs', 'beacon'), body: 'x', projection: 'prj_aaaaaaaaaaaaaaaaaaaaaaaaaa' });
    assert.equal(unknown.data.code, 'resource_not_found');
    assert.match(unknown.data.message as string, /projection prj_a{26}/);
  });

  test('body from a file, and the 1 MiB bound on resolved bytes', async () => {
    const bodyFile = join(ws.root, '..', `body-${process.pid}.txt`);
    writeFileSync(bodyFile, 'pub struct Beacon(u8);');
    const r = await call('replace_symbol', { symbol: sym('rust', 'src/lib.rs', 'Beacon'), body: { file: bodyFile } });
    assert.equal(r.status, 'applied');
    assert.ok(read('src/lib.rs').includes('pub struct Beacon(u8);\n'));
    writeFileSync(bodyFile, Buffer.alloc(1024 * 1024 + 1, 0x61));
    const e = await ws.rift.fail('replace_symbol', { symbol: sym('rust', 'src/lib.rs', 'Beacon'), body: { file: bodyFile } });
    assert.equal(e.data.code, 'limit_exceeded');
    assert.deepEqual(e.data.limit, { field: 'body', limit: 1048576, required: 1048577 });
    const inline = await ws.rift.fail('replace_symbol', { symbol: sym('rust', 'src/lib.rs', 'Beacon'), body: 'é'.repeat(524289) });
    assert.deepEqual(inline.data.limit, { field: 'body', limit: 1048576, required: 1048578 });
  });
});

describe('change tools: disk drift', () => {
  test('a file changed on disk after indexing refuses source_unchanged with both 8-hex digests', async () => {
    const root = tempWorkspace({ 'a.py': 'def f():\n    return 1\n' });
    // A long debounce keeps the watcher from re-indexing the external edit before the change.
    const rift = await startRift(root, { RIFT_WATCH_DEBOUNCE_MS: '60000' });
    try {
      await rift.call('get_symbol', { name: 'f' });
      writeFileSync(join(root, 'a.py'), 'def f():\n    return 2\n');
      const r = (await rift.call('replace_symbol', { symbol: sym('python', 'a.py', 'f'), body: 'def f(): pass' })) as Result;
      assert.equal(r.status, 'refused');
      const p = r.preconditions![0];
      assert.equal(p.kind, 'source_unchanged');
      assert.deepEqual(p.paths, ['a.py']);
      assert.match(String(p.expected.value), /^[0-9a-f]{8}$/);
      assert.match(String(p.observed.value), /^[0-9a-f]{8}$/);
      assert.notEqual(p.expected.value, p.observed.value);
      assert.equal(readFileSync(join(root, 'a.py'), 'utf8'), 'def f():\n    return 2\n');
    } finally {
      await rift.close();
      removeWorkspace(root);
    }
  });
});
