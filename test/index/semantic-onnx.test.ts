import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { semanticModelTrustKey } from '../../src/config/workspace-config.ts';
import { Engine } from '../../src/services/engine.ts';
import { writeConceptModel } from '../support/onnx-model.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// The in-process provider (`provider = "onnx"`): a real ONNX model run by onnxruntime through
// @huggingface/transformers, from a directory on this machine that the project's rift.toml names
// and the user trusts. The test model (test/support/onnx-model.ts) maps words of one concept to
// one axis, so a query and a declaration sharing no word but a concept point the same way.

const CONCEPTS = [
  ['shrink', 'rollover', 'rotate', 'archive'],
  ['greet', 'hello', 'welcome', 'salute'],
  ['tally', 'count', 'occurrences'],
];

const SOURCE = {
  'logs.py': 'def rollover_when_big(path):\n    """Start a fresh file and archive the old one once it passes the size limit."""\n    return path\n',
  'hello.py': 'def say_hello(name):\n    """Welcome someone by name."""\n    return "hello " + name\n',
  'tally.py': 'def tally(items):\n    """Occurrences of each element."""\n    return {}\n',
  'big.py': 'def big_files():\n    """Files over the size limit."""\n    return []\n',
};

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A model directory outside any workspace, as a user keeps one. */
function modelDir(file?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'rift-model-'));
  dirs.push(dir);
  writeConceptModel(dir, CONCEPTS, [], file);
  return dir;
}

const toml = (model: string) => `[search.semantic]\nenabled = true\nprovider = "onnx"\nmodel = "${model}"\n`;

/** Trusts exactly the model directory `root`'s rift.toml names. */
async function openTrusted(root: string): Promise<Engine> {
  const probe = await Engine.open(root, { watch: false });
  const key = semanticModelTrustKey(root, probe.config.current().config.search.semantic);
  await probe.close();
  assert.ok(key);
  return Engine.open(root, { watch: false, engineTrust: (k) => k === key });
}

test('onnx, untrusted: the model is never loaded; semantic_ranking_unavailable names rift trust; lexical results served', async () => {
  const model = modelDir();
  const root = tempWorkspace({ ...SOURCE, 'rift.toml': toml(model) });
  const engine = await Engine.open(root, { watch: false, engineTrust: () => false });
  try {
    await engine.build();
    await engine.semantic.idle();
    const r = await engine.search.search({ query: 'tally' });
    assert.equal(r.results[0]?.path, 'tally.py');
    assert.equal(r.warnings.length, 1, JSON.stringify(r.warnings));
    const w = r.warnings[0] as { kind: string; reason: string };
    assert.equal(w.kind, 'semantic_ranking_unavailable');
    assert.equal(w.reason, `rift.toml names an ONNX embedding model this machine has not trusted (${model}); run \`rift trust\` in the workspace to allow it, then restart rift (\`rift server --stop\` ends a shared server)`);
    assert.equal(engine.semantic.embedded, 0);
    assert.equal(existsSync(join(root, '.rift', 'vectors.db')), false, 'nothing prepared');
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});

test('onnx, trusted: every declaration embedded in-process, then ready; a query sharing no word finds its declaration first', async () => {
  const root = tempWorkspace({ ...SOURCE, 'rift.toml': toml(modelDir()) });
  const engine = await openTrusted(root);
  try {
    await engine.build();
    await engine.semantic.idle();
    assert.equal(engine.semantic.embedded, 4);
    assert.deepEqual(engine.semantic.status(), { kind: 'ready' });
    const r = await engine.search.search({ query: 'shrink the journal', include: ['score'] });
    assert.deepEqual(r.warnings, []);
    assert.equal(r.results[0]?.path, 'logs.py', JSON.stringify(r.results.map((h) => h.path)));
    assert.deepEqual(r.results[0].matched_by, ['ranked']);
    const salute = await engine.search.search({ query: 'salute', target: 'symbol' });
    assert.equal(salute.results[0]?.path, 'hello.py');
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});

test('onnx: a model inside the workspace by a relative path, quantized weights; only changed declarations are embedded again, vectors keyed by the weights', async () => {
  const root = tempWorkspace({ ...SOURCE, 'rift.toml': toml('models/concepts') });
  writeConceptModel(join(root, 'models', 'concepts'), CONCEPTS, [], 'model_quantized.onnx');
  let engine = await openTrusted(root);
  try {
    await engine.build();
    await engine.semantic.idle();
    assert.equal(engine.semantic.embedded, 4);
    writeFileSync(join(root, 'hello.py'), SOURCE['hello.py'].replace('Welcome someone', 'Greet someone warmly'));
    await engine.indexer.refresh(['hello.py']);
    await engine.semantic.idle();
    assert.equal(engine.semantic.embedded, 5, 'only the changed declaration');
    await engine.close();

    engine = await openTrusted(root);
    await engine.build();
    await engine.semantic.idle();
    assert.equal(engine.semantic.embedded, 0, 'the stored vectors are reused');
    // (The model's own tokenizer.json, in the workspace, holds the word too: declarations only.)
    const r = await engine.search.search({ query: 'salute', target: 'symbol' });
    assert.deepEqual(r.warnings, []);
    assert.equal(r.results[0]?.path, 'hello.py');
    const db = new Database(join(root, '.rift', 'vectors.db'), { readonly: true });
    const models = db.prepare('SELECT DISTINCT model FROM vectors').all() as Array<{ model: string }>;
    db.close();
    assert.equal(models.length, 1);
    assert.match(models[0].model, /^onnx:sha256:[0-9a-f]{64}$/);
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});

test('onnx: a directory without a model is unavailable, naming what is missing; nothing is fetched', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'rift-model-'));
  dirs.push(empty);
  writeFileSync(join(empty, 'config.json'), '{"model_type":"bert"}');
  const root = tempWorkspace({ ...SOURCE, 'rift.toml': toml(empty) });
  const engine = await openTrusted(root);
  try {
    await engine.build();
    await engine.semantic.idle();
    const r = await engine.search.search({ query: 'tally' });
    assert.equal(r.results[0]?.path, 'tally.py');
    const w = r.warnings.find((x) => x.kind === 'semantic_ranking_unavailable') as { reason: string } | undefined;
    assert.ok(w, JSON.stringify(r.warnings));
    assert.equal(w.reason, `no ONNX embedding model in ${empty}: it needs config.json, tokenizer.json and onnx/model.onnx (or onnx/model_quantized.onnx); missing tokenizer.json, onnx/model.onnx`);
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});
