import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lineCount, lineNumberAt, lineNumberFromStarts, lineStarts, splitLinesKeepEnds, lineEndingOf } from '../../src/core/lines.ts';

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
