import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
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

test('a literal whose words are in more chunks than the bound is looked for among the first chunks in index order', () => {
  // 60 notes indexed first (lower chunk ids), then 20 that sort before them by path. Under a
  // bound of 30, the literal line matcher credits only notes among the first 30 chunks carrying
  // the words — none of the later ones — yet in path order among those; without it, path order
  // over every note puts the later ones first.
  const files: Record<string, string> = {};
  for (let i = 0; i < 60; i++) files[`notes/z${String(i).padStart(3, '0')}.md`] = `shared phrase marker ${i}\n`;
  const root = tempWorkspace(files);
  try {
    assert.equal(runCli(['index'], root).code, 0);
    for (let i = 0; i < 20; i++) writeFileSync(join(root, 'notes', `a${String(i).padStart(3, '0')}.md`), `shared phrase marker late ${i}\n`);
    assert.equal(runCli(['index'], root).code, 0);
    const literal = (env: Record<string, string>) => {
      const r = runCli(['search', 'shared phrase marker', '--json', '--limit', '100'], root, { env: { ...process.env, ...env } });
      assert.equal(r.code, 0, r.stderr);
      const results = (JSON.parse(r.stdout) as { results: Array<{ path: string; matched_by: string[] }> }).results;
      return results.filter((x) => x.matched_by.includes('content')).map((x) => x.path);
    };
    const bounded = literal({ RIFT_SEARCH_SCORED_ROWS: '30' });
    assert.equal(bounded.length, 30);
    assert.ok(bounded.every((p) => p.startsWith('notes/z')), `later notes credited: ${bounded.join(' ')}`);
    const whole = literal({});
    assert.equal(whole.length, 80);
    assert.ok(whole.some((p) => p.startsWith('notes/a')));
  } finally {
    removeWorkspace(root);
  }
});

test('a name part held by more declarations than the bound is matched in an even sample of them', () => {
  // 120 functions carry the part `widget` in their names (never whole, never as a prefix), 12 to
  // a file across ten files. Under a bound of 50 the identifier tier's part level reads an even
  // sample: fewer than all, drawn from the first files and the last alike; without it, all 120.
  const files: Record<string, string> = {};
  for (let f = 0; f < 10; f++) {
    const defs = Array.from({ length: 12 }, (_, i) => `def make_widget_${f * 12 + i}():\n    pass\n`);
    files[`pkg/m${f}.py`] = defs.join('\n');
  }
  const root = tempWorkspace(files);
  try {
    assert.equal(runCli(['index'], root).code, 0);
    const byName = (env: Record<string, string>) => {
      const r = runCli(['search', 'widget', '--json', '--limit', '200', '--target', 'symbol'], root, { env: { ...process.env, ...env } });
      assert.equal(r.code, 0, r.stderr);
      const results = (JSON.parse(r.stdout) as { results: Array<{ path: string; matched_by: string[] }> }).results;
      return results.filter((x) => x.matched_by.includes('name')).map((x) => x.path);
    };
    assert.equal(byName({}).length, 120);
    const sampled = byName({ RIFT_SEARCH_SCORED_ROWS: '50' });
    assert.ok(sampled.length >= 25 && sampled.length < 120, `sampled ${sampled.length}`);
    assert.ok(sampled.includes('pkg/m0.py') && sampled.includes('pkg/m9.py'), `sample not spread: ${[...new Set(sampled)].join(' ')}`);
  } finally {
    removeWorkspace(root);
  }
});

test('declarations and files ranked from one sample: each lane still finds the row carrying every word', () => {
  // 120 functions hold `alpha` in their text, 80 hold `omega`; one function and one note hold
  // both, and no name holds either word. One query scores the chunks once for both ranked lanes
  // (a declaration's body, and the files). Under a bound of 50 both words' lists are sampled,
  // and the pass over rows with every word must reach each lane: the declaration, and the note.
  const files: Record<string, string> = { 'docs/note.md': 'intro\nalpha meets omega here\n' };
  const fn = (name: string, text: string) => `def ${name}():\n    return "${text}"\n`;
  for (let f = 0; f < 10; f++) {
    const defs = [
      ...Array.from({ length: 12 }, (_, i) => fn(`fa_${f}_${i}`, `alpha value ${i}`)),
      ...Array.from({ length: 8 }, (_, i) => fn(`fo_${f}_${i}`, `omega value ${i}`)),
      ...(f === 6 ? [fn('both_here', 'alpha meets omega')] : []),
    ];
    files[`pkg/m${f}.py`] = defs.join('\n');
  }
  const root = tempWorkspace(files);
  try {
    assert.equal(runCli(['index'], root).code, 0);
    for (const env of [{}, { RIFT_SEARCH_SCORED_ROWS: '50' }] as Array<Record<string, string>>) {
      const r = runCli(['search', 'alpha omega', '--json', '--limit', '20'], root, { env: { ...process.env, ...env } });
      assert.equal(r.code, 0, r.stderr);
      const results = (JSON.parse(r.stdout) as {
        results: Array<{ path: string; line: number; hit: { target: string; symbol?: { name: string } } }>;
      }).results;
      const symbol = results.find((x) => x.hit.target === 'symbol');
      const file = results.find((x) => x.hit.target === 'file');
      assert.equal(symbol?.hit.symbol?.name, 'both_here', JSON.stringify(env));
      assert.deepEqual(file && { path: file.path, line: file.line }, { path: 'docs/note.md', line: 2 }, JSON.stringify(env));
    }
  } finally {
    removeWorkspace(root);
  }
});
