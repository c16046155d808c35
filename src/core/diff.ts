// The one sequence diff: Myers' O(ND) shortest edit script (Myers 1986, "An O(ND) Difference
// Algorithm and Its Variations"), over any elements compared with `===` (lines, usually). The
// common prefix and suffix are matched first; the search runs only on what lies between.

export type EditOp = '=' | '-' | '+';

export interface Middle {
  /** Length of the common prefix. */
  lo: number;
  /** Lengths of the two middles. */
  n: number;
  m: number;
}

/** The common prefix's length and the lengths of the differing middles. */
export function middle<T>(a: readonly T[], b: readonly T[]): Middle {
  let lo = 0;
  while (lo < a.length && lo < b.length && a[lo] === b[lo]) lo++;
  let ea = a.length;
  let eb = b.length;
  while (ea > lo && eb > lo && a[ea - 1] === b[eb - 1]) {
    ea--;
    eb--;
  }
  return { lo, n: ea - lo, m: eb - lo };
}

/**
 * The forward search over the middles: the edit distance, or null when it exceeds `maxD` or the
 * search takes more than `budget` steps. With `trace`, the furthest-reaching x of every diagonal
 * is recorded before each round, for the backtrack.
 */
function search<T>(a: readonly T[], b: readonly T[], mid: Middle, maxD: number, budget: number, trace: Int32Array[] | null): number | null {
  const { lo, n, m } = mid;
  const limit = Math.min(maxD, n + m);
  const offset = limit + 1;
  const v = new Int32Array(2 * limit + 3);
  let work = 0;
  for (let d = 0; d <= limit; d++) {
    trace?.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[lo + x] === b[lo + y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return d;
      if (++work > budget) return null;
    }
  }
  return null;
}

/**
 * Lines added and removed by a shortest edit script. Past `budget` search steps the count falls
 * back to the whole differing middle (`exact: false`): every line there counts as changed.
 */
export function editCounts<T>(a: readonly T[], b: readonly T[], budget: number): { added: number; removed: number; exact: boolean } {
  const mid = middle(a, b);
  if (mid.n === 0 || mid.m === 0) return { added: mid.m, removed: mid.n, exact: true };
  const d = search(a, b, mid, mid.n + mid.m, budget, null);
  if (d === null) return { added: mid.m, removed: mid.n, exact: false };
  // d = removed + added, and added - removed = m - n.
  const removed = (d - (mid.m - mid.n)) / 2;
  return { added: removed + (mid.m - mid.n), removed, exact: true };
}

/** A shortest edit script turning `a` into `b`, or null when more than `maxD` edits are needed. */
export function editScript<T>(a: readonly T[], b: readonly T[], maxD: number): EditOp[] | null {
  const mid = middle(a, b);
  const trace: Int32Array[] = [];
  const d = search(a, b, mid, maxD, Number.POSITIVE_INFINITY, trace);
  if (d === null) return null;
  const ops: EditOp[] = [];
  const offset = Math.min(maxD, mid.n + mid.m) + 1;
  let x = mid.n;
  let y = mid.m;
  for (let e = d; e > 0; e--) {
    const v = trace[e];
    const k = x - y;
    const down = k === -e || (k !== e && v[offset + k - 1] < v[offset + k + 1]);
    const prevK = down ? k + 1 : k - 1;
    const prevX = v[offset + prevK];
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push('=');
      x--;
      y--;
    }
    ops.push(down ? '+' : '-');
    x = prevX;
    y = prevY;
  }
  while (x > 0 && y > 0) {
    ops.push('=');
    x--;
    y--;
  }
  const same = (count: number): EditOp[] => new Array<EditOp>(count).fill('=');
  return [...same(mid.lo), ...ops.reverse(), ...same(a.length - mid.lo - mid.n)];
}
