import { editScript, middle } from '../../core/diff.ts';
import { splitLines } from '../../core/lines.ts';

// The two diff shapes front ends see: the ± preview of edit_diff and approval prompts
// (reference A.10) and the review segments of edit_review (A.9).

export type Segment = { same: true; lines: string[] } | { same: false; old: string[]; new: string[] };

/** Common prefix and suffix stripped, the middle as one `-` block then one `+` block, capped. */
export function previewDiff(oldText: string, newText: string, maxLines: number): string[] {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  const { lo: start, n, m } = middle(a, b);
  if (n === 0 && m === 0) return [];
  const aEnd = start + n;
  const bEnd = start + m;
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

/** Review hunks of old → new: split on \n (a trailing newline gives a final empty line). */
export function diffSegments(oldText: string, newText: string): Segment[] {
  const a = oldText.split('\n');
  const b = newText.split('\n');
  const ops = editScript(a, b, SEGMENT_EDIT_DISTANCE_MAX);
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
