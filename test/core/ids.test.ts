import { test } from 'node:test';
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
