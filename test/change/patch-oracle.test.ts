import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compare, generateCases, gitAnchors, runGit, runRift, type Verdict } from './patch-cases.ts';

// `patch` against `git apply --recount` on generated cases (issue 4, "Must show"). Where git
// applies, rift's bytes must be identical (CRLF sources compared after git's LF result takes
// the source's CRLF endings). Where git refuses, rift refuses for the same reason, except for
// git's anchoring of a hunk at old line 1 (or without trailing context) to the file's edge:
// the spec makes header positions a hint, so rift searches for such a hunk like any other.

const CASES = 220;

describe('patch conformance against git apply', () => {
  test(`${CASES} generated cases agree with the oracle`, () => {
    const cases = generateCases(CASES);
    assert.ok(cases.length >= 200, `at least 200 cases (got ${cases.length})`);
    const counts: Partial<Record<Verdict, number>> = {};
    const problems: string[] = [];
    for (const c of cases) {
      const git = runGit(c);
      const rift = runRift(c);
      const v = compare(git, rift);
      counts[v] = (counts[v] ?? 0) + 1;
      const explained = v === 'rift_only' && gitAnchors(c.patch);
      if (v !== 'agree_applied' && v !== 'agree_refused' && !explained) {
        problems.push(`${c.name}: ${v}; git ${git.ok ? 'applied' : `${git.reason} (${git.detail})`}; rift ${rift.ok ? 'applied' : `${rift.reason} (${rift.detail})`}`);
      }
    }
    assert.deepEqual(problems, [], JSON.stringify(counts));
    assert.ok((counts.agree_applied ?? 0) >= 150, 'most cases apply');
    assert.ok((counts.agree_refused ?? 0) >= 3, 'some cases refuse on both sides');
  });
});
