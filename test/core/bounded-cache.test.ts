import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BoundedCache } from '../../src/core/bounded-cache.ts';

test('a bounded cache keeps at most twice its capacity, and what was used recently', () => {
  const cache = new BoundedCache<number, string>(4);
  for (let i = 0; i < 100; i++) {
    cache.set(i, `v${i}`);
    // Entry 0 is read after every insertion: it is always recently used.
    assert.equal(cache.get(0), 'v0');
    assert.ok(cache.size <= 8, `size ${cache.size} after ${i + 1} insertions`);
  }
  assert.equal(cache.get(99), 'v99');
  assert.equal(cache.get(1), undefined, 'an entry not used since long ago is gone');
});

test('a bounded cache stores null as a value, distinct from a missing key', () => {
  const cache = new BoundedCache<string, string | null>(2);
  cache.set('cycle', null);
  assert.equal(cache.get('cycle'), null);
  assert.equal(cache.get('absent'), undefined);
  // Moved to the young generation when read from the old one, and kept.
  cache.set('a', 'x');
  assert.equal(cache.get('cycle'), null);
  cache.set('b', 'y');
  assert.equal(cache.get('cycle'), null);
  assert.throws(() => new BoundedCache(0), /at least 1/);
});

test('a weighed cache is bounded by the weight it holds, not its entries', () => {
  const cache = new BoundedCache<number, number[]>(100, (rows) => rows.length);
  for (let i = 0; i < 50; i++) cache.set(i, Array.from({ length: 30 }, () => i));
  // Each list weighs 30: the young generation turns over every 4 lists, so at most 7 are held.
  assert.ok(cache.size <= 7, `size ${cache.size}`);
  assert.deepEqual(cache.get(49), Array.from({ length: 30 }, () => 49));
  // Replacing an entry counts only its new weight.
  const small = new BoundedCache<string, number[]>(10, (rows) => rows.length);
  for (let i = 0; i < 20; i++) small.set('same', [1, 2, 3]);
  assert.deepEqual(small.get('same'), [1, 2, 3]);
  assert.equal(small.size, 1);
});
