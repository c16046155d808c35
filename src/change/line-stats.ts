import { LINE_DIFF_BUDGET } from '../core/limits.ts';
import { splitLinesKeepEnds } from '../core/lines.ts';

// lines_added / lines_removed of one file (spec "Change results"): the size of a shortest
// line edit script, so a changed line counts once in each. Lines compare with their endings,
// so an ending change is a change. Common prefix and suffix are trimmed first; the middle runs
// Myers' O(ND) search under a budget, past which the whole middle counts as changed.

/** Lines with their endings, one byte per char (latin1), so comparing them compares bytes. */
function splitLines(bytes: Uint8Array): string[] {
  return splitLinesKeepEnds(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1'));
}

export function lineStats(before: Uint8Array | null, after: Uint8Array | null): { added: number; removed: number } {
  const a = before ? splitLines(before) : [];
  const b = after ? splitLines(after) : [];
  let lo = 0;
  while (lo < a.length && lo < b.length && a[lo] === b[lo]) lo++;
  let ea = a.length;
  let eb = b.length;
  while (ea > lo && eb > lo && a[ea - 1] === b[eb - 1]) {
    ea--;
    eb--;
  }
  const n = ea - lo;
  const m = eb - lo;
  if (n === 0 || m === 0) return { added: m, removed: n };
  const d = editDistance(a, lo, n, b, lo, m);
  if (d === null) return { added: m, removed: n };
  // d = removed + added, and added - removed = m - n.
  const removed = (d - (m - n)) / 2;
  return { added: removed + (m - n), removed };
}

/** Myers' shortest edit script length (insertions + deletions), or null past the budget. */
function editDistance(a: string[], ao: number, n: number, b: string[], bo: number, m: number): number | null {
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  let work = 0;
  for (let d = 0; d <= max; d++) {
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[ao + x] === b[bo + y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return d;
      if (++work > LINE_DIFF_BUDGET) return null;
    }
  }
  return max;
}
