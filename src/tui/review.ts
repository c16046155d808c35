import type { Segment } from '../agent/policy/diff.ts';
import type { ReviewDecision, ReviewRequest } from '../agent/policy/gate.ts';

// Inline edit review: the same segments the engine sends serve's edit_review, one hunk per
// change segment, each accepted or rejected on its own. The content applied is the reassembly
// (reference A.9): every same run, plus the new side of accepted hunks and the old side of
// rejected ones, joined with \n — the proposal exactly when every hunk is accepted.

/** Lines of unchanged context shown around a hunk. */
export const REVIEW_CONTEXT_LINES = 2;

export function assemble(segments: readonly Segment[], accepted: readonly boolean[]): string {
  const out: string[] = [];
  let h = 0;
  for (const s of segments) {
    if (s.same) out.push(...s.lines);
    else out.push(...(accepted[h++] ? s.new : s.old));
  }
  return out.join('\n');
}

export interface ReviewLine {
  text: string;
  style: 'add' | 'del' | 'context' | 'meta';
}

export class ReviewModel {
  /** Index into `segments` of each change segment (hunk). */
  readonly hunks: number[];
  readonly accepted: boolean[];
  /** The hunk under the cursor. */
  current = 0;
  /** Scroll offset within the current hunk's lines. */
  scroll = 0;

  constructor(readonly req: ReviewRequest) {
    this.hunks = req.segments.flatMap((s, i) => (s.same ? [] : [i]));
    this.accepted = this.hunks.map(() => true);
  }

  get acceptedCount(): number {
    return this.accepted.filter(Boolean).length;
  }

  move(delta: number): void {
    if (this.hunks.length === 0) return;
    this.current = Math.min(this.hunks.length - 1, Math.max(0, this.current + delta));
    this.scroll = 0;
  }

  toggle(): void {
    if (this.hunks.length > 0) this.accepted[this.current] = !this.accepted[this.current];
  }

  /** Accepts or rejects the current hunk and moves on to the next. */
  mark(accept: boolean): void {
    if (this.hunks.length === 0) return;
    this.accepted[this.current] = accept;
    this.move(1);
  }

  setAll(accept: boolean): void {
    this.accepted.fill(accept);
  }

  /** Nothing accepted rejects the edit; everything accepted applies the proposal verbatim. */
  decision(): ReviewDecision {
    if (this.hunks.length > 0 && this.acceptedCount === 0) return { apply: false };
    if (this.acceptedCount === this.hunks.length) return { apply: true };
    return { apply: true, content: assemble(this.req.segments, this.accepted) };
  }

  /** 1-based line in the old file where the current hunk starts. */
  private startLine(): number {
    let line = 1;
    for (let i = 0; i < this.hunks[this.current]; i++) {
      const s = this.req.segments[i];
      line += s.same ? s.lines.length : s.old.length;
    }
    return line;
  }

  /** The current hunk with its context: `-` old lines, `+` new lines. */
  hunkLines(): ReviewLine[] {
    if (this.hunks.length === 0) return [{ text: '(no changes)', style: 'meta' }];
    const at = this.hunks[this.current];
    const seg = this.req.segments[at] as Extract<Segment, { same: false }>;
    const before = this.req.segments[at - 1];
    const after = this.req.segments[at + 1];
    const out: ReviewLine[] = [{ text: `@@ line ${this.startLine()} @@`, style: 'meta' }];
    if (before?.same) for (const l of before.lines.slice(-REVIEW_CONTEXT_LINES)) out.push({ text: ` ${l}`, style: 'context' });
    for (const l of seg.old) out.push({ text: `-${l}`, style: 'del' });
    for (const l of seg.new) out.push({ text: `+${l}`, style: 'add' });
    if (after?.same) for (const l of after.lines.slice(0, REVIEW_CONTEXT_LINES)) out.push({ text: ` ${l}`, style: 'context' });
    return out;
  }

  /** Scrolls within a hunk taller than the pane. */
  scrollBy(delta: number, visible: number): void {
    const max = Math.max(0, this.hunkLines().length - visible);
    this.scroll = Math.min(max, Math.max(0, this.scroll + delta));
  }
}
