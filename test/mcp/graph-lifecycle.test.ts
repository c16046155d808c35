import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { digest8 } from '../../src/core/digest.ts';
import { symbolId } from '../../src/core/ids.ts';
import { serveWorkspace, startRift, type RiftMcp } from '../helpers/mcp.ts';
import { eventually, removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';
import { CASES, hubFixture } from './graph-fixtures.ts';

// The graph over time (reference F.7 rules 81–83): a disabled binding provider with and without
// relationship data from an earlier build, the node bound (in all seven languages), and edges
// following edits.

type Hits = { results: Array<{ hit: { symbol: { id: string } }; distance: number }>; warnings: Array<Record<string, unknown>> };

const DISABLED = '[providers.binding]\nenabled = false\n';
const A = (name: string) => symbolId('typescript', 'src/a.ts', name);
const B = (name: string) => symbolId('typescript', 'src/b.ts', name);

const FILES = {
  'src/a.ts': "import { b } from './b';\n\nexport function a(): number {\n  return b();\n}\n",
  'src/b.ts': 'export function b(): number {\n  return 1;\n}\n',
};

/** Waits until the server has accepted these rift.toml bytes (rift://workspace names their digest). */
async function configured(rift: RiftMcp, toml: string): Promise<void> {
  await eventually(async () => {
    const r = await rift.client.readResource({ uri: 'rift://workspace' });
    const text = (r.contents[0] as { text: string }).text;
    return (JSON.parse(text) as { configuration_revision: string }).configuration_revision === digest8(toml) || undefined;
  }, 30_000);
}

describe('a disabled binding provider', () => {
  test('with data from an earlier build, traversal answers from it across a restart, and edits wait for re-enabling', async () => {
    // Standalone: a restart must restart the engine, not reconnect to a shared server.
    const root = tempWorkspace(FILES);
    let rift = await startRift(root, {}, { standalone: true });
    try {
      const before = (await rift.call('search', { traversal: { seed: A('a') } })) as Hits;
      assert.ok(before.results.some((h) => h.hit.symbol.id === B('b')));
      writeFileSync(join(root, 'rift.toml'), DISABLED);
      await configured(rift, DISABLED);
      await rift.close();
      rift = await startRift(root, {}, { standalone: true });
      const restarted = (await rift.call('search', { traversal: { seed: A('a') } })) as Hits;
      assert.deepEqual(restarted.results, before.results);

      // While disabled the graph is left as it was: a new call is not linked yet.
      writeFileSync(join(root, 'src/b.ts'), 'export function b(): number {\n  return c();\n}\n\nexport function c(): number {\n  return 2;\n}\n');
      await eventually(async () => ((await rift.call('get_symbol', { name: 'c', include: [] })) as { hits: unknown[] }).hits.length === 1 || undefined);
      const frozen = (await rift.call('search', { traversal: { seed: B('b') } })) as Hits;
      assert.deepEqual(frozen.results, []);

      // Enabled again, the files that changed meanwhile are read for relations.
      writeFileSync(join(root, 'rift.toml'), '[providers.binding]\nenabled = true\n');
      const live = await eventually(async () => {
        const r = (await rift.call('search', { traversal: { seed: B('b') } })) as Hits;
        return r.results.some((h) => h.hit.symbol.id === B('c')) ? r : undefined;
      });
      assert.equal(live.results[0].distance, 1);
    } finally {
      await rift.close();
      removeWorkspace(root);
    }
  });
});

// One server takes a workspace holding all seven programs, and a hub wider than the node bound
// in each language, through the provider's life: disabled before any graph exists, enabled,
// disabled again. The tests run in order and share that server (one process: standalone).
describe('the binding provider over time, in every language', () => {
  const BOUND = 1000;
  const ENABLED = '[providers.binding]\nenabled = true\n';
  const languages = CASES.map((c) => ({ c, hub: hubFixture(c.language, BOUND + 100) }));
  const state = {} as { root: string; rift: RiftMcp };
  before(async () => {
    state.root = tempWorkspace(Object.assign({ 'rift.toml': DISABLED }, ...languages.map(({ c, hub }) => ({ ...c.files, ...hub.files }))));
    state.rift = await startRift(state.root, {}, { standalone: true });
  });
  after(async () => {
    await state.rift.close();
    removeWorkspace(state.root);
  });
  const walk = async (traversal: Record<string, unknown>) =>
    (await state.rift.call('search', { traversal, limit: BOUND })) as Hits & { pagination: { total_pages: number } };
  const ids = (r: Hits) => r.results.map((h) => h.hit.symbol.id);
  const truncation = (r: Hits) => r.warnings.map((w) => ({ kind: w.kind, visited: w.visited }));
  /** The walks compared before and after the provider is disabled again. */
  const probes = ({ c, hub }: (typeof languages)[number]) => {
    const id = ([path, qname]: [string, string]) => symbolId(c.language, path, qname);
    return [{ seed: id(hub.hub) }, { seed: id(hub.hub), to: id(hub.beyond) }, { seed: id(c.entry), depth: 3 }, { seed: id(c.helper), direction: 'incoming', depth: 3 }];
  };
  const answered = new Map<string, Hits[]>();

  for (const { c, hub } of languages) {
    const id = ([path, qname]: [string, string]) => symbolId(c.language, path, qname);
    test(`${c.language}: disabled before any graph was built, traversal refuses capability_unavailable; lexical reads answer`, async () => {
      const e = await state.rift.fail('search', { traversal: { seed: id(hub.hub) } });
      assert.equal(e.code, -32000);
      assert.deepEqual(e.data, {
        code: 'capability_unavailable',
        message:
          'no configured provider serves this request: capability relationship traversal (providers.binding disabled); adjust the request to a served capability, or configure a provider that serves it',
        retry: 'operator_action',
        phase: 'read',
        diagnostics: [],
        causes: [],
      });
      const lexical = (await state.rift.call('search', { query: 'beyond', target: 'symbol', limit: 20 })) as Hits;
      assert.ok(ids(lexical).includes(id(hub.beyond)), ids(lexical).join(', '));
    });
  }

  test('enabled, the graph is built', async () => {
    writeFileSync(join(state.root, 'rift.toml'), ENABLED);
    await configured(state.rift, ENABLED);
    for (const { c, hub } of languages) {
      await eventually(async () => ((await walk({ seed: symbolId(c.language, ...hub.hub) })).results.length > 0 ? true : undefined), 120_000);
    }
  });

  for (const { c, hub } of languages) {
    const id = ([path, qname]: [string, string]) => symbolId(c.language, path, qname);
    test(`${c.language}: a walk stopped at the node bound carries traversal_truncated naming how many it visited`, async () => {
      const r = await walk({ seed: id(hub.hub) });
      assert.equal(r.results.length, BOUND);
      assert.equal(r.pagination.total_pages, 1);
      assert.ok(r.results.every((h) => h.distance === 1));
      assert.deepEqual(truncation(r), [{ kind: 'traversal_truncated', visited: BOUND }]);
      assert.match(String(r.warnings[0].message), /narrow facets, lower depth/);
      // A walk that fits carries no warning.
      const one = await walk({ seed: id(hub.callee(1)), direction: 'incoming', facets: ['calls'] });
      assert.deepEqual(one.warnings, []);
      assert.deepEqual(ids(one), [id(hub.hub)]);
    });

    test(`${c.language}: a walk toward a symbol beyond the bound answers empty and names how many symbols it visited`, async () => {
      const r = await walk({ seed: id(hub.hub), to: id(hub.beyond) });
      assert.deepEqual(r.results, []);
      assert.deepEqual(truncation(r), [{ kind: 'traversal_truncated', visited: BOUND }]);
      const near = await walk({ seed: id(hub.callee(0)), to: id(hub.beyond) });
      assert.deepEqual(near.results.map((h) => [h.hit.symbol.id, h.distance]), [[id(hub.beyond), 1]]);
      assert.deepEqual(near.warnings, []);

      const walks: Hits[] = [];
      for (const t of probes({ c, hub })) walks.push(await walk(t));
      assert.ok(walks[2].results.length > 0, `${c.language}: the entry reaches something`);
      assert.ok(walks[3].results.length > 0, `${c.language}: the helper is called`);
      answered.set(c.language, walks);
    });
  }

  test('disabled again', async () => {
    writeFileSync(join(state.root, 'rift.toml'), DISABLED);
    await configured(state.rift, DISABLED);
  });

  for (const language of languages) {
    test(`${language.c.language}: the data kept answers every walk as before`, async () => {
      const walks = answered.get(language.c.language);
      assert.ok(walks, 'walked while enabled');
      for (const [i, t] of probes(language).entries()) assert.deepEqual(await walk(t), walks[i], JSON.stringify(t));
    });
  }
});

describe('edges follow edits', () => {
  const ws = serveWorkspace({ before, after }, {
    'src/a.ts': "import { later } from './b';\n\nexport function a(): number {\n  return later();\n}\n",
    'src/b.ts': 'export function other(): number {\n  return 1;\n}\n',
    'src/c.ts': "import { other } from './b';\n\nexport function c(): number {\n  return other();\n}\n",
  });

  const reached = async (seed: string, direction = 'outgoing') =>
    ((await ws.rift.call('search', { traversal: { seed, direction } })) as Hits).results.map((h) => h.hit.symbol.id);

  test('a name another file comes to declare links the references waiting for it; removing it unlinks them', async () => {
    assert.deepEqual(await reached(A('a')), []);
    assert.deepEqual(await reached(symbolId('typescript', 'src/c.ts', 'c')), [B('other')]);

    writeFileSync(join(ws.root, 'src/b.ts'), 'export function other(): number {\n  return 1;\n}\n\nexport function later(): number {\n  return 2;\n}\n');
    await eventually(async () => ((await reached(A('a'))).includes(B('later')) ? true : undefined));
    assert.deepEqual(await reached(B('later'), 'incoming'), [A('a')]);

    rmSync(join(ws.root, 'src/b.ts'));
    await eventually(async () => ((await reached(A('a'))).length === 0 ? true : undefined));
    assert.deepEqual(await reached(symbolId('typescript', 'src/c.ts', 'c')), []);
  });
});
