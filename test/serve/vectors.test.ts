import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diffSegments, previewDiff } from '../../src/agent/policy/diff.ts';
import { COMMANDS, PROTOCOL_VERSION, UNKNOWN_CMD } from '../../src/protocol/serve.ts';
import { expandSkill } from '../../src/agent/extensions/skills.ts';

// Reference vectors: A.9 segments, A.10 preview diff, and the frozen v1 constants.

const same = (...lines: string[]) => ({ same: true, lines });
const change = (old: string[], nw: string[]) => ({ same: false, old, new: nw });

describe('serve wire vectors', () => {
  it('protocol_version is 1 and ready.commands is the v1 set', () => {
    assert.equal(PROTOCOL_VERSION, 1);
    assert.deepEqual([...COMMANDS], ['hello', 'prompt', 'answer', 'edit_decision', 'cancel', 'undo', 'list_sessions', 'list_models', 'set_model', 'set_approval']);
    for (const c of COMMANDS) assert.ok(UNKNOWN_CMD.includes(c));
  });

  it('edit_review.segments (A.9)', () => {
    assert.deepEqual(diffSegments('a\nb\nc', 'a\nB\nc'), [same('a'), change(['b'], ['B']), same('c')]);
    assert.deepEqual(diffSegments('a\nb\nc\nd\ne', 'a\nB\nc\nd\nE'), [same('a'), change(['b'], ['B']), same('c', 'd'), change(['e'], ['E'])]);
    assert.deepEqual(diffSegments('a\nc', 'a\nb\nc'), [same('a'), change([], ['b']), same('c')]);
    assert.deepEqual(diffSegments('x\ny', 'x\ny'), [same('x', 'y')]);
    const old = Array.from({ length: 3000 }, (_, i) => `old ${i}`).join('\n') + '\n';
    const nw = Array.from({ length: 3000 }, (_, i) => `new ${i}`).join('\n') + '\n';
    const big = diffSegments(old, nw);
    assert.equal(big.length, 1);
    assert.ok(!big[0].same);
    if (!big[0].same) {
      assert.equal(big[0].old.length, 3001);
      assert.equal(big[0].new.length, 3001);
    }
  });

  it('reassembling every accepted hunk reproduces new; rejecting every hunk reproduces old', () => {
    const a = 'one\ntwo\nthree\nfour\n';
    const b = 'one\n2\nthree\nfour\nfive\n';
    const segs = diffSegments(a, b);
    const join = (pickNew: boolean) => segs.flatMap((s) => (s.same ? s.lines : pickNew ? s.new : s.old)).join('\n');
    assert.equal(join(true), b);
    assert.equal(join(false), a);
  });

  it('edit_diff preview (A.10)', () => {
    assert.deepEqual(previewDiff('a\nb\nc\nd', 'a\nB\nC\nd', 40), ['@@ line 2 @@', '-b', '-c', '+B', '+C']);
    assert.deepEqual(previewDiff('', 'x\ny', 40), ['+x', '+y']);
    assert.deepEqual(previewDiff('same', 'same', 40), []);
    const many = previewDiff(Array.from({ length: 100 }, (_, i) => `o${i}`).join('\n'), Array.from({ length: 100 }, (_, i) => `n${i}`).join('\n'), 10);
    assert.equal(many.length, 11);
    assert.match(many[10], /more diff lines/);
  });

  it('/skill: with an unknown name reports the name', () => {
    assert.deepEqual(expandSkill('/skill:ghost fix it', []), { unknown: 'ghost' });
    assert.deepEqual(expandSkill('  /skill:', []), { unknown: '' });
  });
});
