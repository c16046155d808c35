import { test } from 'node:test';
import assert from 'node:assert/strict';
import { editCounts, editScript, middle } from '../../src/core/diff.ts';

// The one Myers diff behind change line counts and the agent's review segments.

const apply = (a: string[], b: string[], ops: string[]) => {
  const out: string[] = [];
  let i = 0;
  let j = 0;
  for (const op of ops) {
    if (op === '=') {
      assert.equal(a[i], b[j]);
      out.push(a[i++]);
      j++;
    } else if (op === '-') i++;
    else out.push(b[j++]);
  }
  assert.equal(i, a.length);
  return out;
};

test('editScript is a shortest script that turns a into b', () => {
  const a = ['a', 'b', 'c', 'a', 'b', 'b', 'a'];
  const b = ['c', 'b', 'a', 'b', 'a', 'c'];
  const ops = editScript(a, b, 100)!;
  assert.deepEqual(apply(a, b, ops), b);
  assert.equal(ops.filter((o) => o !== '=').length, 5, 'Myers 1986, figure 1: D = 5');
  assert.deepEqual(editScript(['x'], ['x'], 0), ['=']);
  assert.deepEqual(editScript([], ['y'], 1), ['+']);
  assert.equal(editScript(['a', 'b'], ['c', 'd'], 3), null, 'past maxD');
});

test('editCounts counts a changed line once on each side, and falls back past its budget', () => {
  assert.deepEqual(editCounts(['a', 'b', 'c'], ['a', 'B', 'c'], 1000), { added: 1, removed: 1, exact: true });
  assert.deepEqual(editCounts(['a'], ['a', 'b', 'c'], 1000), { added: 2, removed: 0, exact: true });
  const a = Array.from({ length: 50 }, (_, i) => `a${i}`);
  const b = Array.from({ length: 50 }, (_, i) => `b${i}`);
  assert.deepEqual(editCounts(['x', ...a, 'y'], ['x', ...b, 'y'], 10), { added: 50, removed: 50, exact: false });
  assert.deepEqual(middle(['p', 'q', 'r'], ['p', 'z', 'r']), { lo: 1, n: 1, m: 1 });
});
