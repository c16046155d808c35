import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyDecoder, type KeyEvent } from '../../src/tui/keys.ts';

const key = (name: string): KeyEvent => ({ kind: 'key', name } as KeyEvent);
const decode = (...chunks: string[]) => {
  const d = new KeyDecoder();
  return chunks.flatMap((c) => d.feed(c));
};

test('keys: printable text, control keys, Enter closing a read', () => {
  assert.deepEqual(decode('hello'), [{ kind: 'text', text: 'hello' }]);
  assert.deepEqual(decode('\r'), [key('enter')]);
  assert.deepEqual(decode('hi\r'), [{ kind: 'text', text: 'hi' }, key('enter')], 'typed text then Enter in one read is not a paste');
  assert.deepEqual(decode('\x03'), [key('ctrl-c')]);
  assert.deepEqual(decode('\x7f\x08'), [key('backspace'), key('backspace')]);
  assert.deepEqual(decode('\n'), [key('newline')], 'Ctrl-J inserts a line');
  assert.deepEqual(decode('\t'), [key('tab')]);
  assert.deepEqual(decode('\x14\x04\x15\x0b\x17\x01\x05'), ['ctrl-t', 'ctrl-d', 'ctrl-u', 'ctrl-k', 'delete-word', 'ctrl-a', 'ctrl-e'].map(key));
  assert.deepEqual(decode('é日本'), [{ kind: 'text', text: 'é日本' }]);
});

test('keys: CSI and SS3 sequences, modifiers, Alt+Enter and CSI u Shift+Enter', () => {
  assert.deepEqual(decode('\x1b[A\x1b[B\x1b[C\x1b[D'), ['up', 'down', 'right', 'left'].map(key));
  assert.deepEqual(decode('\x1bOA\x1bOH\x1bOF'), ['up', 'home', 'end'].map(key));
  assert.deepEqual(decode('\x1b[H\x1b[F\x1b[1~\x1b[4~\x1b[3~\x1b[5~\x1b[6~\x1b[Z'), ['home', 'end', 'home', 'end', 'delete', 'pageup', 'pagedown', 'shift-tab'].map(key));
  assert.deepEqual(decode('\x1b[1;5D\x1b[1;5C\x1b[1;3D'), ['word-left', 'word-right', 'word-left'].map(key));
  assert.deepEqual(decode('\x1b\r'), [key('newline')]);
  assert.deepEqual(decode('\x1b[13;2u\x1b[13u'), [key('newline'), key('enter')]);
  assert.deepEqual(decode('\x1bb\x1bf\x1b\x7f'), ['word-left', 'word-right', 'delete-word'].map(key));
  assert.deepEqual(decode('a\x1b[Db'), [{ kind: 'text', text: 'a' }, key('left'), { kind: 'text', text: 'b' }]);
  assert.deepEqual(decode('\x1b[99x'), [], 'an unknown sequence is swallowed whole, not typed');
});

test('keys: a sequence split across reads is joined; a lone Esc waits for flush', () => {
  const d = new KeyDecoder();
  assert.deepEqual(d.feed('\x1b'), []);
  assert.equal(d.pending, true);
  assert.deepEqual(d.feed('[A'), [key('up')]);
  assert.equal(d.pending, false);
  assert.deepEqual(d.feed('\x1b['), []);
  assert.deepEqual(d.feed('5~'), [key('pageup')]);
  assert.deepEqual(d.feed('\x1b'), []);
  assert.deepEqual(d.flush(), [key('escape')]);
  assert.equal(d.pending, false);
  assert.deepEqual(d.feed('\x1b\x1b[A'), [key('escape'), key('up')], 'Esc then an arrow');
});

test('keys: bracketed paste arrives whole with newlines, across reads, and never submits', () => {
  assert.deepEqual(decode('\x1b[200~line one\rline two\r\n\x1b[201~'), [{ kind: 'paste', text: 'line one\nline two\n' }]);
  const d = new KeyDecoder();
  assert.deepEqual(d.feed('\x1b[200~abc\r'), []);
  assert.equal(d.pending, false, 'inside a paste nothing waits on the Esc timer');
  assert.deepEqual(d.feed('def\x1b[20'), []);
  assert.deepEqual(d.feed('1~\r'), [{ kind: 'paste', text: 'abc\ndef' }, key('enter')]);
  assert.deepEqual(decode('\x1b[200~\x1b[A\x03\x1b[201~'), [{ kind: 'paste', text: '\x1b[A\x03' }], 'keys inside a paste are text');
});

test('keys: a multi-line read without bracketed paste is one paste', () => {
  assert.deepEqual(decode('first\rsecond'), [{ kind: 'paste', text: 'first\nsecond' }]);
  assert.deepEqual(decode('first\nsecond\r'), [{ kind: 'paste', text: 'first\nsecond' }, key('enter')]);
});
