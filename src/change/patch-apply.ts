import { lineEndingOf, splitEnding, splitLinesKeepEnds } from '../core/lines.ts';
import { refuse, failed, text, sourceChanged, targetExists } from './refusal.ts';
import { renderHeader, type FilePatch, type Hunk } from './patch-parse.ts';

// Applying one file's hunks with git apply semantics as the spec states them (reference F.12
// rules 131–140): a hunk is located by its pre-image (context + deleted lines), searching from
// its header position corrected by the drift of earlier hunks, outward, the earlier position
// winning a tie; lines an earlier hunk wrote never match again. Lines compare without their
// endings; located lines keep their exact source bytes, and an inserted line takes the ending
// prevailing where it lands.

interface ImageLine {
  text: string;
  eol: string;
  /** Written by an earlier hunk of this patch. */
  patched: boolean;
}

function toImage(bytes: Buffer): ImageLine[] {
  return splitLinesKeepEnds(bytes.toString('latin1')).map((line) => ({ ...splitEnding(line), patched: false }));
}

function majorityEol(image: readonly ImageLine[]): string | null {
  let lf = 0;
  let crlf = 0;
  for (const l of image) {
    if (l.eol === '\n') lf++;
    else if (l.eol === '\r\n') crlf++;
  }
  if (lf === 0 && crlf === 0) return null;
  return crlf > lf ? '\r\n' : '\n';
}

const show = (latin1: string) => JSON.stringify(Buffer.from(latin1, 'latin1').toString('utf8'));

/**
 * Applies one file's hunks to `source` (null when the file does not exist). Returns the new
 * bytes (null for a deletion) or throws a `Refusal`.
 */
export function applyFilePatch(file: FilePatch, source: Buffer | null): Buffer | null {
  const path = file.newPath ?? file.oldPath!;
  if (file.oldPath === null && source !== null) throw targetExists([], [path], false);
  if (file.oldPath !== null && source === null) throw targetExists([], [path], true);
  const image = source ? toImage(source) : [];
  const fileEol = majorityEol(image);
  let drift = 0;
  for (const hunk of file.hunks) {
    const pre = hunk.lines.filter((l) => l.op !== '+');
    const header = hunk.newCount === 0 ? hunk.newStart : hunk.newStart - 1;
    const last = image.length - pre.length;
    const anchor = Math.max(0, Math.min(header + drift, Math.max(last, 0)));
    const found = locate(image, pre, anchor, last);
    if (found < 0) throw mismatch(path, hunk, image, pre, anchor);
    drift = found - header;
    splice(image, found, hunk, fileEol);
  }
  if (file.newPath === null) {
    if (image.length > 0) {
      throw refuse('unmet_precondition', [
        failed('source_unchanged', [], [path], text('file fully deleted'), text(`${image.length} line(s) remain after applying the hunks`)),
      ]);
    }
    return null;
  }
  // A line that no longer ends the file needs an ending of its own.
  for (let i = 0; i < image.length - 1; i++) if (image[i].eol === '') image[i].eol = fileEol ?? '\n';
  return Buffer.from(image.map((l) => l.text + l.eol).join(''), 'latin1');
}

function matchesAt(image: readonly ImageLine[], pre: readonly { text: string }[], pos: number): boolean {
  for (let j = 0; j < pre.length; j++) {
    const l = image[pos + j];
    if (l.patched || l.text !== pre[j].text) return false;
  }
  return true;
}

/** Nearest matching position to `anchor` within [0, last]; the earlier one wins a tie. */
function locate(image: readonly ImageLine[], pre: readonly { text: string }[], anchor: number, last: number): number {
  if (last < 0) return -1;
  const reach = Math.max(anchor, last - anchor);
  for (let d = 0; d <= reach; d++) {
    const back = anchor - d;
    if (back >= 0 && back <= last && matchesAt(image, pre, back)) return back;
    const fwd = anchor + d;
    if (d > 0 && fwd <= last && matchesAt(image, pre, fwd)) return fwd;
  }
  return -1;
}

function splice(image: ImageLine[], pos: number, hunk: Hunk, fileEol: string | null): void {
  const consumed = hunk.lines.filter((l) => l.op !== '+').length;
  const source = image.slice(pos, pos + consumed);
  const out: ImageLine[] = [];
  let k = 0;
  const prevailing = (diffEol: string): string => {
    for (let b = out.length - 1; b >= 0; b--) if (out[b].eol !== '') return out[b].eol;
    for (let f = k; f < source.length; f++) if (source[f].eol !== '') return source[f].eol;
    if (pos > 0 && image[pos - 1].eol !== '') return image[pos - 1].eol;
    const after = image[pos + consumed];
    if (after && after.eol !== '') return after.eol;
    return fileEol ?? (diffEol || '\n');
  };
  for (const l of hunk.lines) {
    if (l.op === ' ') {
      out.push({ ...source[k++], patched: true });
    } else if (l.op === '-') {
      k++;
    } else {
      out.push({ text: l.text, eol: l.noNewline ? '' : prevailing(l.eol), patched: true });
    }
  }
  image.splice(pos, consumed, ...out);
}

/** The refusal for a hunk found nowhere: ordinal, the line searched from, and both sides (rule 140). */
function mismatch(path: string, hunk: Hunk, image: readonly ImageLine[], pre: readonly { text: string; eol: string }[], anchor: number) {
  const head = `hunk ${hunk.ordinal} \`${renderHeader(hunk)}\`, searched from line ${anchor + 1}`;
  let j = 0;
  while (j < pre.length && anchor + j < image.length && !image[anchor + j].patched && image[anchor + j].text === pre[j].text) j++;
  if (j >= pre.length) j = 0;
  const lineNo = anchor + j + 1;
  const want = pre[j];
  const got = image[anchor + j];
  const expected = want ? `${head}: line ${lineNo} expected ${show(want.text)} (${lineEndingOf(want.eol)})` : `${head}: expected end of file`;
  const observed = got
    ? `${head}: line ${lineNo} found ${show(got.text)} (${lineEndingOf(got.eol)})${got.patched ? ', already written by an earlier hunk' : ''}`
    : `${head}: line ${lineNo} found end of file`;
  return sourceChanged([], [path], expected, observed);
}

