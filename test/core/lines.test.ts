import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LineSplitter, countBreaks, offsetOfPosition, lineAt, lineContentEnd, lineCount, lineEndingOf, lineNumberAt, lineNumberFromStarts, lineStartAt, lineStarts, nextLineStart, offsetOfLine, prevailingEol, splitEnding, splitLines, splitLinesKeepEnds, withEol } from '../../src/core/lines.ts';

test('line numbers count LF bytes, CRLF included, by byte offset', () => {
  const bytes = Buffer.from('a\r\nbé\nc');
  assert.equal(lineNumberAt(bytes, 0), 1);
  assert.equal(lineNumberAt(bytes, 3), 2);
  assert.equal(lineNumberAt(bytes, 7), 3);
  const starts = lineStarts(bytes);
  assert.deepEqual(starts, [0, 3, 7]);
  assert.equal(lineNumberFromStarts(starts, 6), 2);
  assert.equal(lineNumberFromStarts(starts, 7), 3);
});

test('line counts and splitting keep every byte', () => {
  assert.equal(lineCount(Buffer.from('')), 0);
  assert.equal(lineCount(Buffer.from('a\n')), 1);
  assert.equal(lineCount(Buffer.from('a\nb')), 2);
  const text = 'a\r\nb\nc';
  const lines = splitLinesKeepEnds(text);
  assert.deepEqual(lines, ['a\r\n', 'b\n', 'c']);
  assert.equal(lines.join(''), text);
  assert.deepEqual(lines.map(lineEndingOf), ['crlf', 'lf', 'none']);
});

test('the line holding an offset: offset 0 is the first line, not the last (search ranges)', () => {
  const bytes = Buffer.from('hello alpha\n');
  assert.deepEqual(lineAt(bytes, 0), { start: 0, end: 11 });
  assert.equal(lineStartAt(bytes, 0), 0);
  const crlf = Buffer.from('a\r\nbb\r\nc');
  assert.deepEqual(lineAt(crlf, 4), { start: 3, end: 5 });
  assert.deepEqual(lineAt(crlf, 7), { start: 7, end: 8 });
  assert.equal(nextLineStart(crlf, 0), 3);
  assert.equal(nextLineStart(crlf, 7), 8);
  assert.equal(lineContentEnd('x\r\n', 0), 1);
  assert.equal(countBreaks(crlf, 0, 7), 2);
  // Only breaks inside [from, to) count, from bytes and strings alike.
  for (const t of ['a\nb\nc\nd\n', Buffer.from('a\nb\nc\nd\n')]) {
    assert.equal(countBreaks(t, 2, 5), 1);
    assert.equal(countBreaks(t, 1, 6), 3);
    assert.equal(countBreaks(t, 4, 4), 0);
    assert.equal(countBreaks(t), 4);
  }
  // Strings give the same answers as their bytes.
  assert.deepEqual(lineAt('hello alpha\n', 0), { start: 0, end: 11 });
  assert.deepEqual(lineStarts('a\nb\n'), [0, 2, 4]);
});

test('offsets of lines, endings and splitting without endings', () => {
  assert.equal(offsetOfLine('a\nbb\nc', 1), 0);
  assert.equal(offsetOfLine('a\nbb\nc', 3), 5);
  assert.equal(offsetOfLine('a\nbb\n', 3), null, 'a final newline opens no further line');
  assert.equal(offsetOfLine('a\n', 0), null);
  assert.deepEqual(splitLines('a\r\nb\n\nc'), ['a', 'b', '', 'c']);
  assert.deepEqual(splitLines('a\n'), ['a']);
  assert.deepEqual(splitEnding('x\r\n'), { text: 'x', eol: '\r\n' });
  assert.equal(prevailingEol('a\r\nb\r\nc\n'), '\r\n');
  assert.equal(prevailingEol('abc'), '\n');
  assert.equal(withEol('a\nb\r\nc', '\r\n'), 'a\r\nb\r\nc');
});

test('LineSplitter: lines across chunks, CRLF, a final line without newline, and an overlong line dropped whole', () => {
  const s = new LineSplitter(8);
  const utf8 = Buffer.from('é');
  assert.deepEqual(s.push(Buffer.concat([Buffer.from('ab\r\nc'), utf8.subarray(0, 1)])), [{ line: 'ab' }]);
  assert.deepEqual(s.push(Buffer.concat([utf8.subarray(1), Buffer.from('\n0123456789abc')])), [{ line: 'cé' }]);
  assert.deepEqual(s.push(Buffer.from('def\nlast')), [{ overlong: 16 }]);
  assert.deepEqual(s.end(), [{ line: 'last' }]);
  assert.deepEqual(new LineSplitter(8).end(), []);
});

test('offsetOfPosition: 1-based line and character column to a UTF-8 byte offset', () => {
  const bytes = Buffer.from('ab\r\nçd\n');
  assert.deepEqual(offsetOfPosition(bytes, 1, 1), { offset: 0 });
  assert.deepEqual(offsetOfPosition(bytes, 2, 2), { offset: 6 }, 'ç is two bytes and one column');
  assert.deepEqual(offsetOfPosition(bytes, 2, 3), { offset: 7 }, 'one past the last character is the line end');
  assert.deepEqual(offsetOfPosition(bytes, 2, 4), { past: 'column', lines: 2, columns: 2 });
  assert.deepEqual(offsetOfPosition(bytes, 3, 1), { past: 'line', lines: 2, columns: 0 });
});
