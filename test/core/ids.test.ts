import { test } from 'node:test';
import { createHash } from 'node:crypto';
import assert from 'node:assert/strict';
import { changeId, decodeIdPath, encodeIdPath, fileId, nodeId, parseNodeId, parseSymbolId, symbolId } from '../../src/core/ids.ts';
import { digest8, treeRevision, sha256Hex } from '../../src/core/digest.ts';

test('paths inside ids keep safe characters and `/`, and percent-encode every other byte in uppercase', () => {
  assert.equal(encodeIdPath('src/lib.rs'), 'src/lib.rs');
  assert.equal(encodeIdPath("a b/ü.rs"), 'a%20b/%C3%BC.rs');
  assert.equal(encodeIdPath("!$&'()*+,;=:~-_."), "!$&'()*+,;=:~-_.");
  assert.equal(encodeIdPath('a#b?c%'), 'a%23b%3Fc%25');
});

test('decoding accepts either hex case and refuses non-canonical escapes', () => {
  assert.equal(decodeIdPath('a%20b/%c3%bc.rs'), 'a b/ü.rs');
  assert.equal(decodeIdPath('src%2Flib.rs'), null, 'an escaped safe character is not canonical');
  assert.equal(decodeIdPath('a%2'), null);
  assert.equal(decodeIdPath('a b'), null);
});

test('SymbolId round-trips, splitting at the last slash', () => {
  const id = symbolId('rust', 'crates/core/src/lib.rs', 'Beacon::signal');
  assert.equal(id, 'rift://symbol/rust/crates/core/src/lib.rs/Beacon::signal');
  assert.deepEqual(parseSymbolId(id), { language: 'rust', path: 'crates/core/src/lib.rs', qualifiedName: 'Beacon::signal' });
  const spaced = symbolId('python', 'my pkg/a.py', 'A.b');
  assert.deepEqual(parseSymbolId(spaced), { language: 'python', path: 'my pkg/a.py', qualifiedName: 'A.b' });
  assert.equal(parseSymbolId('rift://symbol/rust/lib.rs'), null);
  assert.equal(parseSymbolId('rift://symbol/rust/../x.rs/f'), null);
  assert.equal(parseSymbolId('rift://node/rust/a.rs/f'), null);
});

test('NodeId carries range and witness, and `@` in a path is encoded', () => {
  const id = nodeId('rust', 'src/lib.rs', 220, 268, '3f9a1c2e');
  assert.equal(id, 'rift://node/rust/src/lib.rs@220-268#3f9a1c2e');
  assert.deepEqual(parseNodeId(id), { language: 'rust', path: 'src/lib.rs', start: 220, end: 268, witness: '3f9a1c2e' });
  const at = nodeId('typescript', 'node_modules/@scope/a.ts', 0, 1, 'aaaaaaaa');
  assert.equal(at, 'rift://node/typescript/node_modules/%40scope/a.ts@0-1#aaaaaaaa');
  assert.equal(parseNodeId(at)?.path, 'node_modules/@scope/a.ts');
  assert.equal(parseNodeId('rift://node/rust/src/lib.rs@9-3#3f9a1c2e'), null, 'start beyond end');
  assert.equal(parseNodeId('rift://node/rust/src/lib.rs@1-3#3F9A1C2E'), null, 'witness is lowercase hex');
});

test('FileId and ChangeId formats', () => {
  assert.equal(fileId('src/a b.ts'), 'rift://file/src/a%20b.ts');
  const id = changeId([{ path: 'src/a.rs', text: 'fn a() {}\n' }]);
  assert.match(id, /^chg_[a-z2-7]{26}$/);
  assert.equal(id, changeId([{ path: 'src/a.rs', text: 'fn a() {}\n' }]), 'deterministic');
  assert.notEqual(id, changeId([{ path: 'src/a.rs', text: 'fn b() {}\n' }]));
});

test('wire digests are the first 8 hex characters of SHA-256; tree revisions follow path order', () => {
  assert.equal(digest8('abc'), 'ba7816bf');
  const a = { path: 'a.rs', sha256: sha256Hex('x') };
  const b = { path: 'b.rs', sha256: sha256Hex('y') };
  assert.match(treeRevision([a, b]), /^[0-9a-f]{8}$/);
  assert.notEqual(treeRevision([a, b]), treeRevision([b, a]));
  assert.notEqual(treeRevision([a]), treeRevision([{ path: 'a.rs', sha256: sha256Hex('z') }]));
});

test('the tree revision is SHA-256 over path, 0x00, the binary digest, 0xFF per file, whatever the paths and however many', () => {
  // The definition (decisions.md), computed the plain way: the blocks the hash is fed in change nothing.
  const reference = (files: Array<{ path: string; sha256: string }>) => {
    const h = createHash('sha256');
    for (const f of files) h.update(Buffer.concat([Buffer.from(f.path, 'utf8'), Buffer.from([0]), Buffer.from(f.sha256, 'hex'), Buffer.from([0xff])]));
    return h.digest('hex').slice(0, 8);
  };
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed / 0x7fffffff);
  const pieces = ['src', 'é', '日本', '😀', 'a b', 'x'.repeat(300), 'lib', 'ü'];
  const files = Array.from({ length: 5000 }, (_, i) => ({
    path: `${Array.from({ length: 1 + Math.floor(random() * 4) }, () => pieces[Math.floor(random() * pieces.length)]).join('/')}/${i}.py`,
    sha256: sha256Hex(String(i)),
  }));
  // A path longer than a block, and digests that are not 64 hex digits (decoded as Buffer.from decodes them).
  files.push({ path: `deep/${'ш'.repeat(40_000)}.py`, sha256: sha256Hex('long') }, { path: 'odd.py', sha256: 'abc' }, { path: 'bad.py', sha256: 'zz' });
  for (const n of [0, 1, 2, 777, files.length]) assert.equal(treeRevision(files.slice(0, n)), reference(files.slice(0, n)), `${n} files`);
});
