import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine } from '../../src/services/engine.ts';
import { RELEVANCE_SET, answerIndexed, copyRelevanceSubset, label, metrics, pythonStdlib, runRelevance, type Scored } from '../../bench/relevance.ts';

// Search relevance over real code every machine has: the relevance set of bench/relevance.ts
// (prose and identifier queries, each with the declaration or file a developer would want)
// over a realistic subset of the Python standard library, indexed in-process. bench/search.ts
// runs the same set over the whole stdlib and records both numbers in docs/benchmarks.md.

const MRR_TARGET = 0.6;
const QUERIES_MIN = 30;

/** Copies the subset into a temp dir, so `.rift/` never lands in the machine's Python. */
function copySubset(stdlib: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'rift-relevance-')));
  copyRelevanceSubset(stdlib, dir);
  return dir;
}

const found = pythonStdlib();
const skip = 'error' in found ? `python3 not found (${found.error}): the relevance set runs over its standard library` : false;

describe('search relevance over the Python standard library', { skip }, () => {
  let dir: string;
  let engine: Engine;
  before(async () => {
    dir = copySubset((found as { root: string }).root);
    engine = await Engine.open(dir, { watch: false });
    await engine.build();
  });
  after(async () => {
    await engine?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test(`MRR@10 ≥ ${MRR_TARGET} over at least ${QUERIES_MIN} prose and identifier queries`, async (t) => {
    const kept = RELEVANCE_SET.filter((q) => answerIndexed(engine, q));
    const absent = RELEVANCE_SET.filter((q) => !kept.includes(q));
    if (absent.length > 0) t.diagnostic(`not scored (answer absent from this Python): ${absent.map((q) => JSON.stringify(q.query)).join(', ')}`);
    assert.ok(kept.length >= QUERIES_MIN, `${kept.length} queries have their answer in this stdlib; the set needs ${QUERIES_MIN}`);
    assert.ok(kept.some((q) => q.kind === 'prose') && kept.some((q) => q.kind === 'identifier'));

    const scored = await runRelevance(engine, kept, 10);
    const m = metrics(scored);
    const line = (s: Scored) => `  ${s.rank === 0 ? '—' : s.rank} ${JSON.stringify(s.query.query)} → ${s.top.slice(0, 3).map(label).join(', ')}`;
    t.diagnostic(
      `MRR@10 ${m.mrr.toFixed(3)}, recall@10 ${(m.recall * 100).toFixed(1)} % over ${m.queries} queries ` +
        `(prose ${m.byKind.prose.mrr.toFixed(3)}, identifier ${m.byKind.identifier.mrr.toFixed(3)})`,
    );
    const notFirst = scored.filter((s) => s.rank !== 1);
    assert.ok(
      m.mrr >= MRR_TARGET,
      `MRR@10 ${m.mrr.toFixed(3)} < ${MRR_TARGET}; answers not ranked first (rank, query → rift's top 3):\n${notFirst.map(line).join('\n')}`,
    );
  });
});
