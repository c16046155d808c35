import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { Engine } from '../../src/services/engine.ts';
import { ScriptedModelServer } from '../support/model-server.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// The semantic tier against the scripted model server's /api/embed and /v1/embeddings: the
// server's concept vectors make a query and a declaration point the same way without sharing a
// word, so the semantic lane is the only one that can find it.

const CONCEPTS = [
  ['shrink', 'rollover', 'rotate', 'rotating', 'archive'],
  ['greet', 'hello', 'welcome', 'salute'],
  ['tally', 'count', 'counter', 'occurrences'],
];

const SOURCE = {
  'logs.py': 'def rollover_when_big(path):\n    """Start a fresh file and archive the old one once it passes the size limit."""\n    return path\n',
  'hello.py': 'def say_hello(name):\n    """Welcome someone by name."""\n    return "hello " + name\n',
  'tally.py': 'def tally(items):\n    """Occurrences of each element."""\n    return {}\n',
  'big.py': 'def big_files():\n    """Files over the size limit."""\n    return []\n',
};

const toml = (url: string, provider: 'ollama' | 'openai') =>
  `[search.semantic]\nenabled = true\nmodel = "embed-test"\nprovider = "${provider}"\nurl = "${url}"\n`;

const servers: ScriptedModelServer[] = [];
after(async () => {
  for (const s of servers) await s.close();
});

async function modelServer(): Promise<ScriptedModelServer> {
  const s = await ScriptedModelServer.start();
  s.embedConcepts = CONCEPTS;
  servers.push(s);
  return s;
}

async function open(files: Record<string, string>): Promise<{ root: string; engine: Engine }> {
  const root = tempWorkspace(files);
  const engine = await Engine.open(root, { watch: false });
  return { root, engine };
}

for (const provider of ['ollama', 'openai'] as const) {
  test(`${provider}: preparing while vectors are computed, then ready, and a query sharing no word finds its declaration first`, async () => {
    const server = await modelServer();
    server.embedDelayMs = 300;
    const { root, engine } = await open({ ...SOURCE, 'rift.toml': toml(server.url, provider) });
    try {
      await engine.build();
      const during = await engine.search.search({ query: 'shrink the journal' });
      const preparing = during.warnings.filter((w) => w.kind === 'semantic_index_preparing');
      assert.equal(preparing.length, 1, JSON.stringify(during.warnings));
      const w = preparing[0] as { prepared: number; total: number; message: string };
      assert.equal(w.total, 4);
      assert.ok(w.prepared < w.total);
      assert.deepEqual(Object.keys(w).sort(), ['kind', 'message', 'prepared', 'total']);

      await engine.semantic.idle();
      const r = await engine.search.search({ query: 'shrink the journal', include: ['score'] });
      assert.deepEqual(r.warnings, []);
      assert.equal(r.results[0]?.path, 'logs.py', JSON.stringify(r.results.map((h) => h.path)));
      assert.deepEqual(r.results[0].matched_by, ['ranked']);
      const paths = server.requests.filter((q) => q.method === 'POST').map((q) => q.path);
      assert.ok(paths.every((p) => p === (provider === 'ollama' ? '/api/embed' : '/v1/embeddings')), paths.join(','));
      assert.ok(server.requests.every((q) => q.body?.model === undefined || q.body.model === 'embed-test'));
    } finally {
      await engine.close();
      removeWorkspace(root);
    }
  });
}

test('fusion: identifier, lexical and semantic lanes each win where they should, in one deterministic order', async () => {
  const server = await modelServer();
  const { root, engine } = await open({ ...SOURCE, 'rift.toml': toml(server.url, 'ollama') });
  try {
    await engine.build();
    await engine.semantic.idle();
    // Identifier lane wins: `tally` is a name; the semantic lane also ranks tally.py first.
    const byName = await engine.search.search({ query: 'tally', include: ['score'] });
    assert.equal(byName.results[0].path, 'tally.py');
    assert.deepEqual(byName.results[0].matched_by, ['ranked', 'name']);
    // Lexical wins: big.py carries both words of `big files` (name and docs); the semantic lane
    // (no concept in the query) spreads its credit evenly and decides nothing.
    const lexical = await engine.search.search({ query: 'big files', include: ['score'], target: 'symbol' });
    assert.equal(lexical.results[0].path, 'big.py');
    // Semantic wins: no word of the query is in the code.
    const semantic = await engine.search.search({ query: 'salute', target: 'symbol' });
    assert.equal(semantic.results[0].path, 'hello.py');
    assert.deepEqual(semantic.results[0].matched_by, ['ranked']);
    // The order is deterministic: the same query answers the same page.
    assert.deepEqual(await engine.search.search({ query: 'big files', include: ['score'], target: 'symbol' }), lexical);
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});

test('only changed declarations are embedded again, and vectors survive a restart', async () => {
  const server = await modelServer();
  const { root, engine } = await open({ ...SOURCE, 'rift.toml': toml(server.url, 'ollama') });
  let reopened: Engine | null = null;
  try {
    await engine.build();
    await engine.semantic.idle();
    const first = server.embeddedTexts().filter((t) => t.includes('\n'));
    assert.equal(first.length, 4, 'every declaration embedded once');

    writeFileSync(join(root, 'hello.py'), SOURCE['hello.py'].replace('Welcome someone', 'Greet someone warmly'));
    await engine.indexer.refresh(['hello.py']);
    await engine.semantic.idle();
    const second = server.embeddedTexts().filter((t) => t.includes('\n')).slice(first.length);
    assert.deepEqual(second.map((t) => t.split('\n')[0]), ['say_hello'], 'only the changed declaration');
    await engine.close();

    reopened = await Engine.open(root, { watch: false });
    await reopened.build();
    await reopened.semantic.idle();
    const third = server.embeddedTexts().filter((t) => t.includes('\n')).slice(first.length + second.length);
    assert.deepEqual(third, [], 'the stored vectors are reused');
    const r = await reopened.search.search({ query: 'salute' });
    assert.deepEqual(r.warnings, []);
    assert.equal(r.results[0]?.path, 'hello.py');
  } finally {
    await engine.close();
    await reopened?.close();
    removeWorkspace(root);
  }
});

test('an unreachable or failing embedding server: semantic_ranking_unavailable on every answer, lexical results still served', async () => {
  // A port that was free a moment ago and has no listener now.
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  const { root, engine } = await open({ ...SOURCE, 'rift.toml': toml(`http://127.0.0.1:${port}`, 'ollama') });
  try {
    await engine.build();
    await engine.semantic.idle();
    for (let i = 0; i < 2; i++) {
      const r = await engine.search.search({ query: 'tally' });
      assert.equal(r.results[0]?.path, 'tally.py');
      assert.equal(r.warnings.length, 1);
      const w = r.warnings[0] as { kind: string; reason: string; message: string };
      assert.equal(w.kind, 'semantic_ranking_unavailable');
      assert.match(w.reason, new RegExp(`127\\.0\\.0\\.1:${port}/api/embed could not be reached`));
      assert.deepEqual(Object.keys(w).sort(), ['kind', 'message', 'reason']);
    }
  } finally {
    await engine.close();
    removeWorkspace(root);
  }

  const server = await modelServer();
  server.embedFailure = { status: 404, error: "model 'embed-test' not found" };
  const second = await open({ ...SOURCE, 'rift.toml': toml(server.url, 'openai') });
  try {
    await second.engine.build();
    await second.engine.semantic.idle();
    server.embedFailure = null;
    const r = await second.engine.search.search({ query: 'tally' });
    const w = r.warnings.find((x) => x.kind === 'semantic_ranking_unavailable') as { reason: string } | undefined;
    assert.ok(w, 'unavailable for the server life, even once the server recovers');
    assert.match(w.reason, /HTTP 404 for model embed-test/);
  } finally {
    await second.engine.close();
    removeWorkspace(second.root);
  }
});

test('semantic tier disabled: no embedding request and no semantic warning', async () => {
  const server = await modelServer();
  const { root, engine } = await open({ ...SOURCE, 'rift.toml': `[search.semantic]\nenabled = false\nurl = "${server.url}"\n` });
  try {
    await engine.build();
    const r = await engine.search.search({ query: 'tally' });
    assert.deepEqual(r.warnings, []);
    assert.equal(server.requests.length, 0);
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});
