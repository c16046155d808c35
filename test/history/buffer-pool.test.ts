import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BufferPool } from '../../src/history/git.ts';

// A history walk reads hundreds of versions into buffers handed back once nothing reads them:
// a buffer is taken again only after it was given back, once, and only buffers the pool made.

test('a buffer given back is taken again for a size it holds, never twice, and never one the pool did not make', () => {
  const pool = new BufferPool();
  const a = pool.take(100_000);
  assert.equal(a.length, 100_000);
  const b = pool.take(100_000);
  assert.notEqual(a.buffer, b.buffer, 'two buffers in use are distinct');

  pool.give(a);
  pool.give(a); // given twice: kept once
  const c = pool.take(90_000);
  assert.equal(c.buffer, a.buffer, 'the given buffer serves a smaller size');
  assert.equal(c.length, 90_000);
  const d = pool.take(90_000);
  assert.notEqual(d.buffer, a.buffer, 'a buffer given twice is not handed out twice');

  // Larger than any kept: a new one.
  pool.give(b);
  const e = pool.take(500_000);
  assert.notEqual(e.buffer, b.buffer);
  assert.equal(e.length, 500_000);

  // A buffer from elsewhere (here one of Node's shared pool slices) is never taken in.
  const foreign = Buffer.from('small');
  pool.give(foreign);
  const f = pool.take(3);
  assert.notEqual(f.buffer, foreign.buffer);
});
