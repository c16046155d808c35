import { editCounts } from '../core/diff.ts';
import { LINE_DIFF_BUDGET } from '../core/limits.ts';
import { splitLinesKeepEnds } from '../core/lines.ts';

// lines_added / lines_removed of one file (spec "Change results"): the size of a shortest
// line edit script, so a changed line counts once in each. Lines compare with their endings,
// so an ending change is a change. Past the search budget the whole differing middle counts.

/** Lines with their endings, one byte per char (latin1), so comparing them compares bytes. */
function splitLines(bytes: Uint8Array): string[] {
  return splitLinesKeepEnds(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1'));
}

export function lineStats(before: Uint8Array | null, after: Uint8Array | null): { added: number; removed: number } {
  const { added, removed } = editCounts(before ? splitLines(before) : [], after ? splitLines(after) : [], LINE_DIFF_BUDGET);
  return { added, removed };
}
