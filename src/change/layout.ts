import { lineContentEnd, lineStartAt, nextLineStart } from '../core/lines.ts';

// Text layout for declaration edits, over latin1 strings so every index is a byte offset:
// indentation of an anchor, the blank-line separator, and how far a removal reaches.

const isBlank = (s: string) => /^[ \t\r\f\v]*$/.test(s);

/** The text of the line starting at `start`, its ending excluded. */
function lineContent(s: string, start: number): string {
  return s.slice(start, lineContentEnd(s, start));
}

function indentWidth(line: string): number {
  return /^[ \t]*/.exec(line)![0].length;
}

/** The whitespace before `offset` on its line, or '' when other text precedes it there. */
export function indentBefore(s: string, offset: number): string {
  const prefix = s.slice(lineStartAt(s, offset), offset);
  return /^[ \t]*$/.test(prefix) ? prefix : '';
}

/** Line breaks ending the text (each `\n`, with or without `\r`). */
function trailingBreaks(s: string): number {
  let n = 0;
  let i = s.length;
  for (;;) {
    if (i > 0 && s[i - 1] === '\n') {
      n++;
      i--;
      if (i > 0 && s[i - 1] === '\r') i--;
    } else return n;
  }
}

export function trimTrailingBreaks(s: string): string {
  return s.replace(/(\r?\n)+$/, '');
}

/** Line breaks to add after `s` so `blankLines` blank lines separate it from what follows. */
export function separatorAfter(s: string, eol: string, blankLines: number): string {
  return eol.repeat(Math.max(0, blankLines + 1 - trailingBreaks(s)));
}

/**
 * Re-indents a body for an anchor at `indent`: the body's common indentation is removed, the
 * first line lands at the anchor's column (the insertion point is already there) and every
 * later non-blank line gets the anchor's indentation.
 */
export function reindent(body: string, indent: string): string {
  const lines = body.split('\n');
  let common: string | null = null;
  for (const l of lines) {
    if (isBlank(l)) continue;
    const ws = /^[ \t]*/.exec(l)![0];
    if (common === null || !ws.startsWith(common)) {
      let k = 0;
      while (common !== null && k < common.length && k < ws.length && common[k] === ws[k]) k++;
      common = common === null ? ws : common.slice(0, k);
    }
  }
  const cut = common?.length ?? 0;
  return lines
    .map((l, i) => {
      const stripped = isBlank(l) ? l.replace(/^[ \t]+/, '') : l.slice(cut);
      return i === 0 || isBlank(stripped) ? stripped : indent + stripped;
    })
    .join('\n');
}

/**
 * The byte range a removal takes out (reference F.13 rule 148). A span alone on its lines
 * takes its whole lines, then the separator that follows it when a blank line (or the start
 * of its block) precedes it; a span that ends its block takes the blank lines before it
 * instead, so no blank-line run is left where it stood. A span sharing a line with other
 * text takes exactly its bytes.
 */
export function removalRange(s: string, start: number, end: number): { start: number; end: number } {
  const ls = lineStartAt(s, start);
  let e = end;
  while (e < s.length && (s[e] === ' ' || s[e] === '\t')) e++;
  const aloneAfter = e === s.length || s[e] === '\n' || (s[e] === '\r' && s[e + 1] === '\n');
  if (!isBlank(s.slice(ls, start)) || !aloneAfter) return { start, end };
  const itemIndent = start - ls;
  let from = ls;
  let to = nextLineStart(s, e);

  const prevStart = ls > 0 ? lineStartAt(s, ls - 1) : -1;
  const prevLine = prevStart >= 0 ? lineContent(s, prevStart) : null;
  const opensBlock = prevLine === null || isBlank(prevLine) || indentWidth(prevLine) < itemIndent;
  if (opensBlock) {
    while (to < s.length && isBlank(lineContent(s, to))) to = nextLineStart(s, to);
  }
  const closesBlock = to >= s.length || indentWidth(lineContent(s, to)) < itemIndent;
  if (closesBlock) {
    while (from > 0) {
      const p = lineStartAt(s, from - 1);
      if (!isBlank(lineContent(s, p))) break;
      from = p;
    }
  }
  return { start: from, end: to };
}
