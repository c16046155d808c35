import { INPUT_HISTORY_MAX } from '../core/limits.ts';

// The prompt editor: a multi-line buffer with a cursor and the input history. Pure state; the
// controller maps keys onto these operations and the view draws `lines()` with the cursor.

export class Editor {
  text = '';
  /** Cursor as a UTF-16 offset into `text`, always on a code point boundary. */
  cursor = 0;
  private readonly history: string[] = [];
  /** Position while browsing history (history.length = the draft being written). */
  private browsing = 0;
  private draft = '';

  constructor(history: readonly string[] = []) {
    this.history.push(...history.slice(-INPUT_HISTORY_MAX));
    this.browsing = this.history.length;
  }

  get empty(): boolean {
    return this.text === '';
  }

  get entries(): readonly string[] {
    return this.history;
  }

  set(text: string): void {
    this.text = text;
    this.cursor = text.length;
  }

  insert(s: string): void {
    this.text = this.text.slice(0, this.cursor) + s + this.text.slice(this.cursor);
    this.cursor += s.length;
  }

  backspace(): void {
    if (this.cursor === 0) return;
    const from = prevBoundary(this.text, this.cursor);
    this.text = this.text.slice(0, from) + this.text.slice(this.cursor);
    this.cursor = from;
  }

  delete(): void {
    if (this.cursor >= this.text.length) return;
    this.text = this.text.slice(0, this.cursor) + this.text.slice(nextBoundary(this.text, this.cursor));
  }

  left(): void {
    if (this.cursor > 0) this.cursor = prevBoundary(this.text, this.cursor);
  }

  right(): void {
    if (this.cursor < this.text.length) this.cursor = nextBoundary(this.text, this.cursor);
  }

  wordLeft(): void {
    let i = this.cursor;
    while (i > 0 && /\s/.test(this.text[i - 1])) i--;
    while (i > 0 && !/\s/.test(this.text[i - 1])) i--;
    this.cursor = i;
  }

  wordRight(): void {
    let i = this.cursor;
    while (i < this.text.length && /\s/.test(this.text[i])) i++;
    while (i < this.text.length && !/\s/.test(this.text[i])) i++;
    this.cursor = i;
  }

  deleteWord(): void {
    const end = this.cursor;
    this.wordLeft();
    this.text = this.text.slice(0, this.cursor) + this.text.slice(end);
  }

  /** Start of the cursor's line. */
  home(): void {
    this.cursor = this.text.lastIndexOf('\n', this.cursor - 1) + 1;
  }

  /** End of the cursor's line. */
  end(): void {
    const nl = this.text.indexOf('\n', this.cursor);
    this.cursor = nl < 0 ? this.text.length : nl;
  }

  killToStart(): void {
    const start = this.text.lastIndexOf('\n', this.cursor - 1) + 1;
    this.text = this.text.slice(0, start) + this.text.slice(this.cursor);
    this.cursor = start;
  }

  killToEnd(): void {
    const nl = this.text.indexOf('\n', this.cursor);
    const end = nl < 0 ? this.text.length : nl === this.cursor ? nl + 1 : nl;
    this.text = this.text.slice(0, this.cursor) + this.text.slice(end);
  }

  /** The cursor's line and column (0-based, in UTF-16 units). */
  position(): { line: number; col: number } {
    const before = this.text.slice(0, this.cursor);
    const line = before.split('\n').length - 1;
    return { line, col: this.cursor - (before.lastIndexOf('\n') + 1) };
  }

  lines(): string[] {
    return this.text.split('\n');
  }

  /** Up: the line above, or on the first line the previous history entry. Returns whether it moved. */
  up(): boolean {
    const { line, col } = this.position();
    if (line > 0) {
      this.moveToLine(line - 1, col);
      return true;
    }
    if (this.browsing === 0) return false;
    if (this.browsing === this.history.length) this.draft = this.text;
    this.browsing--;
    this.set(this.history[this.browsing]);
    return true;
  }

  /** Down: the line below, or on the last line the next history entry (then the draft). */
  down(): boolean {
    const { line, col } = this.position();
    if (line < this.lines().length - 1) {
      this.moveToLine(line + 1, col);
      return true;
    }
    if (this.browsing >= this.history.length) return false;
    this.browsing++;
    this.set(this.browsing === this.history.length ? this.draft : this.history[this.browsing]);
    return true;
  }

  private moveToLine(target: number, col: number): void {
    const ls = this.lines();
    let offset = 0;
    for (let i = 0; i < target; i++) offset += ls[i].length + 1;
    this.cursor = offset + Math.min(col, ls[target].length);
  }

  /** Takes the text for submission: it joins the history (no consecutive duplicates) and the buffer clears. */
  take(): string {
    const t = this.text;
    if (t.trim() !== '' && this.history[this.history.length - 1] !== t) {
      this.history.push(t);
      if (this.history.length > INPUT_HISTORY_MAX) this.history.shift();
    }
    this.browsing = this.history.length;
    this.draft = '';
    this.set('');
    return t;
  }

  clear(): void {
    this.browsing = this.history.length;
    this.draft = '';
    this.set('');
  }
}

function prevBoundary(s: string, i: number): number {
  const c = s.charCodeAt(i - 1);
  return i >= 2 && c >= 0xdc00 && c <= 0xdfff ? i - 2 : i - 1;
}

function nextBoundary(s: string, i: number): number {
  const c = s.charCodeAt(i);
  return c >= 0xd800 && c <= 0xdbff ? i + 2 : i + 1;
}
