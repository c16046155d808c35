import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { addLogSink, type LogEvent } from '../../src/core/log.ts';
import { Engine } from '../../src/services/engine.ts';
import { initSyntax, LANGUAGE_IDS, withTree } from '../../src/syntax/runtime.ts';
import { warmParser, warmSample } from '../../src/syntax/warm.ts';
import { eventually, removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// A serving engine's idle parse workers warm their parsers on samples of the languages the tree
// holds most (src/syntax/warm.ts), a parse per turn, and stop at the first real request.

before(() => initSyntax());

describe('parser warm-up', () => {
  it("every language's sample is code its grammar parses without an error", () => {
    for (const language of LANGUAGE_IDS) {
      const sample = warmSample(language);
      assert.ok(sample.length > 2000, `${language}: a few kilobytes`);
      withTree(language, sample, (tree) => assert.equal(tree.rootNode.hasError, false, `${language} sample parses cleanly`));
    }
  });

  it('stops when asked, before its next parse, and parses only languages it has grammars for', async () => {
    let checks = 0;
    assert.equal(await warmParser(['python', 'go'], Number.POSITIVE_INFINITY, () => ++checks > 3), 3, 'three parses, then the fourth check stops it');
    assert.equal(await warmParser(['markdown', 'cobol'], Number.POSITIVE_INFINITY, () => false), 0, 'no grammar, no parse');
    assert.equal(await warmParser([], Number.POSITIVE_INFINITY, () => false), 0);
    assert.equal(await warmParser(['python'], 0, () => false), 0, 'no budget, no parse');
  });

  it("a serving engine's workers warm on the tree's languages; a first build's do not (nothing to tell them which)", async () => {
    const root = tempWorkspace({ 'pkg/a.py': 'def main():\n    return 1\n', 'pkg/b.py': 'class B:\n    pass\n' });
    const warmed: LogEvent[] = [];
    const stop = addLogSink((e) => {
      if (e.target === 'parse.warm') warmed.push(e);
    });
    try {
      let engine = await Engine.open(root, { watch: true });
      await engine.build();
      await engine.indexer.workers()!.ready();
      await engine.close();
      assert.equal(warmed.length, 0, 'an empty store names no language to warm on');

      engine = await Engine.open(root, { watch: true });
      try {
        const workers = engine.indexer.workers()!;
        await workers.ready();
        await eventually(() => (warmed.length >= workers.size ? true : undefined), 30_000);
        assert.equal(warmed.length, workers.size, 'each worker reports its warm-up');
        for (const e of warmed) assert.ok(Number(e.fields.parses) > 0, 'and parsed samples');
      } finally {
        await engine.close();
      }
    } finally {
      stop();
      removeWorkspace(root);
    }
  });
});
