import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { symbolId } from '../../src/core/ids.ts';
import { serveWorkspace, startRift } from '../helpers/mcp.ts';
import { eventually, removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// The graph over time (reference F.7 rules 81–83): a disabled binding provider with and without
// relationship data from an earlier build, the node bound, and edges following edits.

type Hits = { results: Array<{ hit: { symbol: { id: string } }; distance: number }>; warnings: Array<Record<string, unknown>> };

const DISABLED = '[providers.binding]\nenabled = false\n';
const A = (name: string) => symbolId('typescript', 'src/a.ts', name);
const B = (name: string) => symbolId('typescript', 'src/b.ts', name);

const FILES = {
  'src/a.ts': "import { b } from './b';\n\nexport function a(): number {\n  return b();\n}\n",
  'src/b.ts': 'export function b(): number {\n  return 1;\n}\n',
};

describe('a disabled binding provider', () => {
  test('without relationship data from an earlier build, traversal refuses capability_unavailable', async () => {
    const root = tempWorkspace({ ...FILES, 'rift.toml': DISABLED });
    const rift = await startRift(root);
    try {
      const e = await rift.fail('search', { traversal: { seed: A('a') } });
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
      // Lexical search still answers.
      const r = (await rift.call('search', { query: 'a' })) as Hits;
      assert.ok(r.results.length > 0);
    } finally {
      await rift.close();
      removeWorkspace(root);
    }
  });

  test('with data from an earlier build, traversal answers from it, across a restart, and edits wait for re-enabling', async () => {
    // Standalone: a restart must restart the engine, not reconnect to a shared server.
    const root = tempWorkspace(FILES);
    let rift = await startRift(root, {}, { standalone: true });
    try {
      const before = (await rift.call('search', { traversal: { seed: A('a') } })) as Hits;
      assert.ok(before.results.some((h) => h.hit.symbol.id === B('b')));

      writeFileSync(join(root, 'rift.toml'), DISABLED);
      const kept = (await rift.call('search', { traversal: { seed: A('a') } })) as Hits;
      assert.deepEqual(kept.results, before.results);

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

describe('the node bound', () => {
  const callees = Array.from({ length: 1100 }, (_, i) => `f${String(i).padStart(4, '0')}`);
  const ws = serveWorkspace({ before, after }, {
    'hub.ts': `export function hub(): void {\n${callees.map((f) => `  ${f}();`).join('\n')}\n}\n${callees.map((f) => `function ${f}(): void {${f === 'f0000' ? ' beyond(); ' : ''}}`).join('\n')}\nfunction beyond(): void {}\n`,
  });

  test('a walk stopped at 1000 symbols carries traversal_truncated naming how many it visited', async () => {
    const seed = symbolId('typescript', 'hub.ts', 'hub');
    const r = (await ws.rift.call('search', { traversal: { seed }, limit: 1000 })) as Hits & { pagination: { total_pages: number } };
    assert.equal(r.results.length, 1000);
    assert.equal(r.pagination.total_pages, 1);
    assert.deepEqual(
      r.warnings.map((w) => ({ kind: w.kind, visited: w.visited })),
      [{ kind: 'traversal_truncated', visited: 1000 }],
    );
    assert.match(String(r.warnings[0].message), /narrow facets, lower depth/);
    // A walk that fits carries no warning.
    const one = (await ws.rift.call('search', { traversal: { seed: symbolId('typescript', 'hub.ts', 'f0001'), direction: 'incoming' } })) as Hits;
    assert.deepEqual(one.warnings, []);
    assert.deepEqual(one.results.map((h) => h.hit.symbol.id), [seed]);
  });

  test('a walk toward a symbol beyond the bound answers empty and names how many symbols it visited', async () => {
    // beyond sits two hops out; the bound stops the walk within the first hop's 1100 callees.
    const r = (await ws.rift.call('search', {
      traversal: { seed: symbolId('typescript', 'hub.ts', 'hub'), to: symbolId('typescript', 'hub.ts', 'beyond') },
    })) as Hits;
    assert.deepEqual(r.results, []);
    assert.deepEqual(r.warnings.map((w) => ({ kind: w.kind, visited: w.visited })), [{ kind: 'traversal_truncated', visited: 1000 }]);
    // Within reach of a less-connected seed, the same target is found and nothing is truncated.
    const near = (await ws.rift.call('search', {
      traversal: { seed: symbolId('typescript', 'hub.ts', 'f0000'), to: symbolId('typescript', 'hub.ts', 'beyond') },
    })) as Hits;
    assert.deepEqual(near.results.map((h) => [h.hit.symbol.id, h.distance]), [[symbolId('typescript', 'hub.ts', 'beyond'), 1]]);
    assert.deepEqual(near.warnings, []);
  });
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
