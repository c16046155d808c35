// The two diff shapes front ends see: the ± preview of edit_diff and approval prompts
// (reference A.10) and the review segments of edit_review (A.9).

export type Segment = { same: true; lines: string[] } | { same: false; old: string[]; new: string[] };

/** Rust's `str::lines()`: splits on \n, drops one trailing empty line, strips a trailing \r. */
function rustLines(s: string): string[] {
  if (s === '') return [];
  const parts = s.split('\n');
  if (parts[parts.length - 1] === '') parts.pop();
  return parts.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

/** Common prefix and suffix stripped, the middle as one `-` block then one `+` block, capped. */
export function previewDiff(oldText: string, newText: string, maxLines: number): string[] {
  const a = rustLines(oldText);
  const b = rustLines(newText);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let aEnd = a.length;
  let bEnd = b.length;
  while (aEnd > start && bEnd > start && a[aEnd - 1] === b[bEnd - 1]) {
    aEnd--;
    bEnd--;
  }
  if (start === aEnd && start === bEnd) return [];
  const out: string[] = [];
  if (start > 0 || aEnd < a.length) out.push(`@@ line ${start + 1} @@`);
  for (let i = start; i < aEnd; i++) out.push(`-${a[i]}`);
  for (let i = start; i < bEnd; i++) out.push(`+${b[i]}`);
  if (out.length > maxLines) {
    const hidden = out.length - maxLines;
    out.length = maxLines;
    out.push(`… [${hidden} more diff lines]`);
  }
  return out;
}

/** Lines of the edit_diff preview (A.10); approval prompts use 40. */
const EDIT_DIFF_LINES_MAX = 80;

/** The edit_diff payload of an applied change: the capped preview and its shown `+`/`-` entries (A.10). */
export function appliedDiff(path: string, oldText: string, newText: string): { path: string; diff: string[]; added: number; removed: number } {
  const diff = previewDiff(oldText, newText, EDIT_DIFF_LINES_MAX);
  let added = 0;
  let removed = 0;
  for (const l of diff) {
    if (l.startsWith('+')) added++;
    else if (l.startsWith('-')) removed++;
  }
  return { path, diff, added, removed };
}

/** Past this edit distance the review degrades to one whole-file change (A.9). */
export const SEGMENT_EDIT_DISTANCE_MAX = 2000;

type Op = '=' | '-' | '+';

/** Line-level Myers O(ND) diff; null when the distance exceeds `maxD`. */
function myers(a: readonly string[], b: readonly string[], maxD: number): Op[] | null {
  const n = a.length;
  const m = b.length;
  const offset = maxD + 1;
  const v = new Int32Array(2 * maxD + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= maxD; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(trace, a.length, b.length, d, offset);
    }
  }
  return null;
}

function backtrack(trace: Int32Array[], n: number, m: number, dEnd: number, offset: number): Op[] {
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = dEnd; d > 0; d--) {
    const v = trace[d];
    const k = x - y;
    const down = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]);
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
  return ops.reverse();
}

/** Review hunks of old → new: split on \n (a trailing newline gives a final empty line). */
export function diffSegments(oldText: string, newText: string): Segment[] {
  const a = oldText.split('\n');
  const b = newText.split('\n');
  const ops = myers(a, b, Math.min(a.length + b.length, SEGMENT_EDIT_DISTANCE_MAX));
  if (ops === null) return [{ same: false, old: a, new: b }];
  const out: Segment[] = [];
  let i = 0;
  let j = 0;
  for (const op of ops) {
    const last = out[out.length - 1];
    if (op === '=') {
      if (last && last.same) last.lines.push(a[i]);
      else out.push({ same: true, lines: [a[i]] });
      i++;
      j++;
    } else {
      let run: Segment;
      if (last && !last.same) run = last;
      else {
        run = { same: false, old: [], new: [] };
        out.push(run);
      }
      if (op === '-') run.old.push(a[i++]);
      else run.new.push(b[j++]);
    }
  }
  return out;
}
