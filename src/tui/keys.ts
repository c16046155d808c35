// Raw terminal input → key events. The TUI reads stdin itself (raw mode, bracketed paste)
// instead of Ink's useInput: a paste must arrive as one piece with its newlines intact, a lone
// Esc must be told apart from the start of an escape sequence, and Alt+Enter must insert a
// newline. This module is pure: bytes in, events out; the caller owns the Esc timer.

export type KeyName =
  | 'enter' | 'newline' | 'tab' | 'shift-tab' | 'backspace' | 'delete' | 'escape'
  | 'up' | 'down' | 'left' | 'right' | 'home' | 'end' | 'pageup' | 'pagedown'
  | 'word-left' | 'word-right' | 'delete-word'
  | 'ctrl-a' | 'ctrl-c' | 'ctrl-d' | 'ctrl-e' | 'ctrl-k' | 'ctrl-l' | 'ctrl-t' | 'ctrl-u';

export type KeyEvent = { kind: 'key'; name: KeyName } | { kind: 'text'; text: string } | { kind: 'paste'; text: string };

/** How long a lone Esc waits for the rest of a sequence (ssh can split one across reads). */
export const ESC_WAIT_MS = 40;

export const PASTE_ON = '\x1b[?2004h';
export const PASTE_OFF = '\x1b[?2004l';
const PASTE_START = '\x1b[200~';
const PASTE_END = '\x1b[201~';

const CSI_KEYS: Record<string, KeyName> = {
  A: 'up', B: 'down', C: 'right', D: 'left', H: 'home', F: 'end', Z: 'shift-tab',
};
const TILDE_KEYS: Record<string, KeyName> = {
  '1': 'home', '7': 'home', '4': 'end', '8': 'end', '3': 'delete', '5': 'pageup', '6': 'pagedown',
};
const CTRL_KEYS: Record<number, KeyName> = {
  0x01: 'ctrl-a', 0x03: 'ctrl-c', 0x04: 'ctrl-d', 0x05: 'ctrl-e', 0x08: 'backspace', 0x09: 'tab',
  0x0a: 'newline', 0x0b: 'ctrl-k', 0x0c: 'ctrl-l', 0x0d: 'enter', 0x14: 'ctrl-t', 0x15: 'ctrl-u',
  0x17: 'delete-word', 0x7f: 'backspace',
};

/** Normalizes pasted line ends to \n (terminals send \r for Enter inside a paste). */
function pasteText(s: string): string {
  return s.replace(/\r\n?/g, '\n');
}

export class KeyDecoder {
  private buf = '';
  private paste: string | null = null;

  /** Feeds one chunk; returns the complete events. A trailing partial sequence waits for `flush`. */
  feed(chunk: string): KeyEvent[] {
    this.buf += chunk;
    const out: KeyEvent[] = [];
    let text = '';
    const flushText = () => {
      if (text === '') return;
      // Without bracketed paste a paste still arrives as one multi-line read: keep it whole.
      if (text.length > 1 && /[\r\n]/.test(text)) out.push({ kind: 'paste', text: pasteText(text) });
      else out.push({ kind: 'text', text });
      text = '';
    };
    let i = 0;
    while (i < this.buf.length) {
      if (this.paste !== null) {
        const end = this.buf.indexOf(PASTE_END, i);
        if (end < 0) {
          // Keep a possible partial end marker for the next chunk.
          const keep = partialSuffix(this.buf.slice(i), PASTE_END);
          this.paste += this.buf.slice(i, this.buf.length - keep);
          this.buf = this.buf.slice(this.buf.length - keep);
          return out;
        }
        this.paste += this.buf.slice(i, end);
        out.push({ kind: 'paste', text: pasteText(this.paste) });
        this.paste = null;
        i = end + PASTE_END.length;
        continue;
      }
      const ch = this.buf[i];
      const code = ch.charCodeAt(0);
      if (ch === '\x1b') {
        const seq = this.escape(i);
        if (seq === 'partial') break;
        flushText();
        i = seq.next;
        if (seq.paste) this.paste = '';
        else if (seq.event) out.push(seq.event);
        continue;
      }
      if (code < 0x20 || code === 0x7f) {
        // Text, a line end, then more text in one read is a paste from a terminal without
        // bracketed paste: it stays one piece. A line end closing a read is Enter.
        const after = this.buf.charCodeAt(i + 1);
        if ((code === 0x0d || code === 0x0a) && text !== '' && after >= 0x20 && after !== 0x7f) {
          text += ch;
          i++;
          continue;
        }
        flushText();
        const name = CTRL_KEYS[code];
        if (name) out.push({ kind: 'key', name });
        i++;
        continue;
      }
      text += ch;
      i++;
    }
    flushText();
    this.buf = this.buf.slice(i);
    return out;
  }

  /** Whether a lone Esc (or a partial sequence) is waiting; the caller flushes it after ESC_WAIT_MS. */
  get pending(): boolean {
    return this.buf !== '' && this.paste === null;
  }

  /** The wait is over: a lone Esc is the Esc key; any other partial sequence is dropped. */
  flush(): KeyEvent[] {
    const rest = this.buf;
    this.buf = '';
    if (rest === '\x1b') return [{ kind: 'key', name: 'escape' }];
    if (rest.startsWith('\x1b') && rest.length === 2 && rest[1] >= ' ') return [{ kind: 'key', name: 'escape' }, { kind: 'text', text: rest[1] }];
    return [];
  }

  /** Decodes the escape sequence at `i`. */
  private escape(i: number): 'partial' | { next: number; event?: KeyEvent; paste?: boolean } {
    const b = this.buf;
    if (i + 1 >= b.length) return 'partial';
    const next = b[i + 1];
    if (next === '[') {
      // CSI: parameters 0x30–0x3f, intermediates 0x20–0x2f, one final byte 0x40–0x7e.
      let j = i + 2;
      while (j < b.length && b.charCodeAt(j) >= 0x20 && b.charCodeAt(j) <= 0x3f) j++;
      if (j >= b.length) return 'partial';
      const params = b.slice(i + 2, j);
      const final = b[j];
      const end = j + 1;
      if (b.slice(i, end) === PASTE_START) return { next: end, paste: true };
      const mod = Number(params.split(';')[1] ?? '1');
      const ctrlOrAlt = mod === 3 || mod === 5;
      if (final === '~') {
        const name = TILDE_KEYS[params.split(';')[0]];
        return { next: end, event: name ? { kind: 'key', name } : undefined };
      }
      if (final === 'u') {
        // CSI u (fixterms): 13;2u is Shift+Enter in terminals that report it.
        const [k, m] = params.split(';');
        if (k === '13') return { next: end, event: { kind: 'key', name: m && m !== '1' ? 'newline' : 'enter' } };
        return { next: end };
      }
      let name = CSI_KEYS[final];
      if (name === 'left' && ctrlOrAlt) name = 'word-left';
      if (name === 'right' && ctrlOrAlt) name = 'word-right';
      return { next: end, event: name ? { kind: 'key', name } : undefined };
    }
    if (next === 'O') {
      if (i + 2 >= b.length) return 'partial';
      const name = CSI_KEYS[b[i + 2]];
      return { next: i + 3, event: name ? { kind: 'key', name } : undefined };
    }
    // Alt+key: ESC then the key.
    if (next === '\r' || next === '\n') return { next: i + 2, event: { kind: 'key', name: 'newline' } };
    if (next === '\x7f' || next === '\x08') return { next: i + 2, event: { kind: 'key', name: 'delete-word' } };
    if (next === 'b') return { next: i + 2, event: { kind: 'key', name: 'word-left' } };
    if (next === 'f') return { next: i + 2, event: { kind: 'key', name: 'word-right' } };
    if (next === '\x1b') return { next: i + 1, event: { kind: 'key', name: 'escape' } };
    return { next: i + 2, event: { kind: 'key', name: 'escape' } };
  }
}

/** Length of the longest suffix of `s` that is a proper prefix of `marker`. */
function partialSuffix(s: string, marker: string): number {
  for (let n = Math.min(marker.length - 1, s.length); n > 0; n--) if (marker.startsWith(s.slice(s.length - n))) return n;
  return 0;
}
