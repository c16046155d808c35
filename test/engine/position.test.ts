import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LineIndex } from '../../src/engine/position.ts';

// Byte offsets ⇄ LSP positions: UTF-16 code units by default, UTF-8 bytes when negotiated;
// lines end at \n, \r\n or a lone \r.

const bytes = (s: string) => Buffer.from(s, 'utf8');

test('UTF-16 positions count code units: a BMP character is one, an astral one two', () => {
  const text = bytes('é𝄞x\nab');
  const ix = new LineIndex(text, 'utf-16');
  assert.deepEqual(ix.position(0), { line: 0, character: 0 });
  assert.deepEqual(ix.position(2), { line: 0, character: 1 }, 'after é (2 bytes)');
  assert.deepEqual(ix.position(6), { line: 0, character: 3 }, 'after 𝄞 (4 bytes, 2 units)');
  assert.deepEqual(ix.position(9), { line: 1, character: 1 });
  assert.equal(ix.offset({ line: 0, character: 3 }), 6);
  assert.equal(ix.offset({ line: 1, character: 1 }), 9);
  assert.equal(ix.offset({ line: 0, character: 2 }), null, 'inside a surrogate pair splits a character');
});

test('UTF-8 positions count bytes and refuse a split character', () => {
  const ix = new LineIndex(bytes('é𝄞x\n'), 'utf-8');
  assert.deepEqual(ix.position(6), { line: 0, character: 6 });
  assert.equal(ix.offset({ line: 0, character: 6 }), 6);
  assert.equal(ix.offset({ line: 0, character: 1 }), null);
});

test('\\r\\n and a lone \\r end lines; positions past a line or the text clamp', () => {
  const ix = new LineIndex(bytes('a\r\nbc\rd'), 'utf-16');
  assert.deepEqual(ix.position(3), { line: 1, character: 0 });
  assert.deepEqual(ix.position(6), { line: 2, character: 0 });
  assert.equal(ix.offset({ line: 0, character: 99 }), 1, 'clamps before the \\r\\n');
  assert.equal(ix.offset({ line: 1, character: 99 }), 5, 'clamps before the lone \\r');
  assert.equal(ix.offset({ line: 9, character: 0 }), 7, 'a line past the end is the end of the text');
});
