import { test } from 'node:test';
import assert from 'node:assert/strict';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';
import { runCli } from '../helpers/cli.ts';

// A ranked query scores a bounded number of rows (src/index/search.ts, bestScored): past it, a
// sample of a word's rows; RIFT_SEARCH_SCORED_ROWS lowers the bound so a small tree reaches it.

test('a word in more rows than a query scores is ranked from a sample, and the rows carrying every word are never left out of it', () => {
  // 120 notes hold `alpha`, 80 hold `omega`; one holds both. Scoring at most 50 rows, both
  // words' lists are sampled; the note with both is found by the pass over rows with every word.
  const files: Record<string, string> = {};
  for (let i = 0; i < 120; i++) files[`notes/a${String(i).padStart(3, '0')}.md`] = `alpha note ${i}\n`;
  for (let i = 0; i < 80; i++) files[`notes/o${String(i).padStart(3, '0')}.md`] = `omega note ${i}\n`;
  files['notes/m060.md'] = 'alpha and omega together\n';
  const root = tempWorkspace(files);
  try {
    const search = (query: string, env: Record<string, string>) => {
      const r = runCli(['search', query, '--json', '--limit', '20'], root, { env: { ...process.env, ...env } });
      assert.equal(r.code, 0, r.stderr);
      return (JSON.parse(r.stdout) as { results: Array<{ path: string; score: number }> }).results;
    };
    assert.equal(runCli(['index'], root).code, 0);
    for (const env of [{}, { RIFT_SEARCH_SCORED_ROWS: '50' }] as Array<Record<string, string>>) {
      const both = search('alpha omega', env);
      assert.equal(both[0]?.path, 'notes/m060.md', JSON.stringify(env));
      const one = search('alpha', env);
      assert.equal(one.length, 20, 'a sampled list still fills the page');
      for (let i = 1; i < one.length; i++) assert.ok(one[i - 1].score >= one[i].score, 'score orders the sampled page');
    }
  } finally {
    removeWorkspace(root);
  }
});
