import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';

// The heap bounds are V8 flags set at run time: what they change is seen in a fresh process,
// where the young generation starts at its initial size.

test('while withSmallYoungGeneration runs, the young generation keeps its size; after it, it grows again', () => {
  const script = `
    import { getHeapSpaceStatistics } from 'node:v8';
    import { withSmallYoungGeneration } from ${JSON.stringify(new URL('../../src/core/heap.ts', import.meta.url).href)};
    const young = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
    // Objects that survive a few collections (kept, then let go in turns) make V8 grow the young generation.
    const churn = () => { let kept = []; for (let i = 0; i < 3e6; i++) { kept.push({ i, s: 'x' + i }); if (kept.length > 2e5) kept = []; } };
    const start = young();
    await withSmallYoungGeneration(async () => churn());
    const during = young();
    let thrown = null;
    await withSmallYoungGeneration(async () => { throw new Error('inside'); }).catch((e) => (thrown = e.message));
    churn();
    process.stdout.write(JSON.stringify({ start, during, after: young(), thrown }));`;
  const out = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' }));
  assert.equal(out.during, out.start, 'no growth inside');
  assert.ok(out.after > out.start, `growth after: ${out.after} against ${out.start}`);
  assert.equal(out.thrown, 'inside', 'a throwing fn rejects with its error (and restores the default)');
});
