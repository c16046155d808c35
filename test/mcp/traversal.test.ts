import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { symbolId } from '../../src/core/ids.ts';
import { serveWorkspace } from '../helpers/mcp.ts';
import { CASES, HEURISTIC_CASES, REFERENCE_CASES, allFiles } from './graph-fixtures.ts';

// search.traversal over real stdio MCP in all seven languages (reference F.7 rules 73–83):
// calls across files through imports, methods through typed, field and self receivers and
// through a base type, recursion, cycles, shortest paths, facets, the hit shape exactly.

type Hit = {
  hit: { target: string; symbol: { id: string; name: string } };
  matched_by: string[];
  path: string;
  traversal_path: Array<{ relationship: { from: string; kind: string; facets: string[]; to: string; derivation: string }; direction: string }>;
  distance: number;
  score?: number;
};

const id = (c: { language: string }, [path, qname]: [string, string]) => symbolId(c.language, path, qname);

// Beside the seven programs: a declaration nothing relates to, and two classes sharing a method
// name, so a call through a receiver of unknown type has no one declaration to guess.
const ISOLATED: [string, string] = ['iso/lonely.ts', 'lonely'];
const EXTRA: Record<string, string> = {
  'iso/lonely.ts': 'export function lonely(): number {\n  return 1;\n}\n',
  'guess/ts/ambiguous.ts': [
    'export class Dial {\n  sharedKnob(): void {}\n}\n',
    'export class Slider {\n  sharedKnob(): void {}\n}\n',
    'export function fiddle(x: any): void {\n  x.sharedKnob();\n}\n',
  ].join('\n'),
};

describe('search.traversal in every language', () => {
  const ws = serveWorkspace({ before, after }, {
    ...allFiles(),
    ...Object.assign({}, ...REFERENCE_CASES.map((r) => r.files), ...HEURISTIC_CASES.map((h) => h.files)),
    ...EXTRA,
  });

  const walk = async (traversal: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    (await ws.rift.call('search', { traversal, limit: 1000, ...extra })) as { results: Hit[]; warnings: unknown[]; pagination: unknown };
  const ids = (r: { results: Hit[] }) => r.results.map((h) => h.hit.symbol.id);

  for (const c of CASES) {
    describe(c.language, () => {
      test('a call across files through an import is an outgoing calls hit with the exact hop', async () => {
        const from = id(c, c.find);
        const r = await walk({ seed: from, facets: ['calls'] });
        const helper = r.results.find((h) => h.hit.symbol.id === id(c, c.helper));
        assert.ok(helper, `${c.language}: find calls helper (${ids(r).join(', ')})`);
        assert.deepEqual(helper.matched_by, ['relationship']);
        assert.equal(helper.distance, 1);
        assert.deepEqual(helper.traversal_path, [
          {
            relationship: { from, kind: 'calls', facets: ['calls'], to: id(c, c.helper), derivation: 'resolution' },
            direction: 'outgoing',
          },
        ]);
        assert.equal(helper.path, c.helper[0]);
      });

      test('methods resolve through a typed receiver, a field, self/this and a base type', async () => {
        const entry = await walk({ seed: id(c, c.entry), facets: ['calls'] });
        assert.ok(ids(entry).includes(id(c, c.find)), `${c.language}: the entry calls Store.find (${ids(entry).join(', ')})`);
        assert.ok(ids(entry).includes(id(c, c.ping)), `${c.language}: the entry calls the inherited ping`);
        const find = await walk({ seed: id(c, c.find), facets: ['calls'] });
        assert.ok(ids(find).includes(id(c, c.inner)), `${c.language}: find calls inner.get through the field`);
        assert.ok(ids(find).includes(id(c, c.lookup)), `${c.language}: find calls lookup through self`);
        for (const h of [...entry.results, ...find.results]) assert.equal(h.traversal_path[0].relationship.derivation, 'resolution');
      });

      test('incoming keeps each relationship in its own orientation (impact)', async () => {
        const r = await walk({ seed: id(c, c.helper), direction: 'incoming', facets: ['calls'] });
        const find = r.results.find((h) => h.hit.symbol.id === id(c, c.find));
        assert.ok(find, `${c.language}: find calls helper (${ids(r).join(', ')})`);
        assert.deepEqual(find.traversal_path[0], {
          relationship: { from: id(c, c.find), kind: 'calls', facets: ['calls'], to: id(c, c.helper), derivation: 'resolution' },
          direction: 'incoming',
        });
      });

      test('a recursive function is never its own hit, either way', async () => {
        const seed = id(c, c.recursive);
        const out = await walk({ seed, facets: ['calls'], depth: 3 });
        assert.ok(!ids(out).includes(seed));
        const incoming = await walk({ seed, direction: 'incoming', facets: ['calls'], depth: 3 });
        assert.ok(!ids(incoming).includes(seed));
        assert.ok(ids(incoming).includes(id(c, c.find)));
      });

      test('a cycle is walked once: each symbol once, at its shortest distance', async () => {
        const r = await walk({ seed: id(c, c.find), facets: ['calls'], depth: 6 });
        const seen = ids(r);
        assert.equal(new Set(seen).size, seen.length);
        assert.ok(!seen.includes(id(c, c.find)));
        assert.equal(r.results.find((h) => h.hit.symbol.id === id(c, c.lookup))?.distance, 1);
        const back = await walk({ seed: id(c, c.lookup), facets: ['calls'], depth: 6 });
        assert.equal(back.results.find((h) => h.hit.symbol.id === id(c, c.find))?.distance, 1);
        assert.equal(back.results.find((h) => h.hit.symbol.id === id(c, c.helper))?.distance, 2);
      });

      test('to answers the shortest route and only that symbol', async () => {
        const r = await walk({ seed: id(c, c.entry), to: id(c, c.helper), facets: ['calls'] });
        assert.deepEqual(ids(r), [id(c, c.helper)]);
        const [hit] = r.results;
        assert.equal(hit.distance, 2);
        assert.equal(hit.traversal_path.length, 2);
        assert.equal(hit.traversal_path[0].relationship.from, id(c, c.entry));
        assert.equal(hit.traversal_path[0].relationship.to, id(c, c.find));
        assert.equal(hit.traversal_path[1].relationship.to, id(c, c.helper));
      });

      test('a to the walk cannot reach answers empty, with no warning', async () => {
        // helper calls only itself: nothing leads from it back to the entry.
        const r = await walk({ seed: id(c, c.helper), to: id(c, c.entry) });
        assert.deepEqual(r.results, []);
        assert.deepEqual(r.warnings, []);
        // A reachable to the facets rule out answers the same way.
        const ruledOut = await walk({ seed: id(c, c.entry), to: id(c, c.helper), facets: ['extends'] });
        assert.deepEqual(ruledOut.results, []);
        assert.deepEqual(ruledOut.warnings, []);
      });

      test('a stated parameter type is a references relationship, walked either way and only under its facet', async () => {
        const rc = REFERENCE_CASES.find((x) => x.language === c.language)!;
        const [referrer, referenced] = [id(rc, rc.referrer), id(rc, rc.referenced)];
        const out = await walk({ seed: referrer, facets: ['references'] });
        assert.deepEqual(ids(out), [referenced]);
        assert.deepEqual(out.results[0].traversal_path, [
          { relationship: { from: referrer, kind: 'references', facets: ['references'], to: referenced, derivation: 'resolution' }, direction: 'outgoing' },
        ]);
        assert.equal(out.results[0].distance, 1);
        const incoming = await walk({ seed: referenced, direction: 'incoming', facets: ['references'] });
        assert.deepEqual(incoming.results.map((h) => [h.hit.symbol.id, h.traversal_path[0].relationship.from, h.traversal_path[0].relationship.to]), [
          [referrer, referrer, referenced],
        ]);
        const calls = await walk({ seed: referrer, facets: ['calls'] });
        assert.ok(!ids(calls).includes(referenced));
      });

      test('extends / implements / embeds link the type to its base', async () => {
        const r = await walk({ seed: id(c, c.store), facets: ['extends', 'implements', 'embeds'] });
        assert.deepEqual(ids(r), [id(c, c.base)]);
        assert.ok(['extends', 'implements', 'embeds'].includes(r.results[0].traversal_path[0].relationship.kind));
      });

      test('contains links a type to its members', async () => {
        const r = await walk({ seed: id(c, c.store), facets: ['contains'] });
        assert.ok(ids(r).includes(id(c, c.find)), `${c.language}: ${ids(r).join(', ')}`);
      });
    });
  }

  const ts = CASES[0];

  test('defaults are outgoing and depth 1: neighbors only', async () => {
    const r = await walk({ seed: id(ts, ts.entry) });
    assert.ok(ids(r).includes(id(ts, ts.find)));
    assert.ok(!ids(r).includes(id(ts, ts.helper)), 'helper is two hops away');
    assert.ok(r.results.every((h) => h.distance === 1 && h.traversal_path.every((p) => p.direction === 'outgoing')));
  });

  test('facets narrow the walk; an empty list follows every facet', async () => {
    const constructs = await walk({ seed: id(ts, ts.entry), facets: ['constructs'] });
    assert.deepEqual(ids(constructs), [id(ts, ts.store)]);
    const imports = await walk({ seed: id(ts, ts.entry), facets: ['imports'] });
    assert.deepEqual(ids(imports), [id(ts, ts.store)]);
    assert.equal(imports.results[0].traversal_path[0].relationship.kind, 'imports');
    const all = await walk({ seed: id(ts, ts.entry), facets: [] });
    const omitted = await walk({ seed: id(ts, ts.entry) });
    assert.deepEqual(ids(all), ids(omitted));
    assert.ok(ids(all).length > ids(constructs).length);
  });

  test('with query, a symbol both lanes reach keeps its lexical score and carries both matched_by entries', async () => {
    const lexical = (await ws.rift.call('search', { query: 'lookup', target: 'symbol', include: ['score'], limit: 50 })) as { results: Hit[] };
    const both = (await ws.rift.call('search', {
      query: 'lookup',
      target: 'symbol',
      include: ['score'],
      limit: 50,
      traversal: { seed: id(ts, ts.find) },
    })) as { results: Hit[] };
    const alone = lexical.results.find((h) => h.hit.symbol.id === id(ts, ts.lookup))!;
    const fused = both.results.find((h) => h.hit.symbol.id === id(ts, ts.lookup))!;
    assert.ok(alone.matched_by.length > 0 && !alone.matched_by.includes('relationship'));
    assert.deepEqual(fused.matched_by, [...alone.matched_by, 'relationship']);
    assert.equal(fused.score, alone.score);
    assert.equal(fused.distance, 1);
    // A symbol only the walk reached rides along, after the lexical hits.
    const inner = both.results.findIndex((h) => h.hit.symbol.id === id(ts, ts.inner));
    assert.ok(inner >= 0);
    assert.deepEqual(both.results[inner].matched_by, ['relationship']);
    assert.ok(both.results.slice(0, inner).every((h) => h.matched_by.some((m) => m !== 'relationship')));
  });

  test('target "file" never carries a walked hit', async () => {
    const r = await walk({ seed: id(ts, ts.entry) }, { target: 'file' });
    assert.deepEqual(r.results, []);
  });

  test('paths.include narrows walked hits too', async () => {
    const r = await walk({ seed: id(ts, ts.find), facets: ['calls'] }, { paths: { include: ['ts/util.ts'] } });
    assert.deepEqual(ids(r), [id(ts, ts.helper)]);
  });

  test('walked hits page with page_index and limit like any other hits', async () => {
    const all = await walk({ seed: id(ts, ts.entry), depth: 3 });
    const first = (await ws.rift.call('search', { traversal: { seed: id(ts, ts.entry), depth: 3 }, limit: 2 })) as { results: Hit[]; pagination: { total_pages: number } };
    const second = (await ws.rift.call('search', { traversal: { seed: id(ts, ts.entry), depth: 3 }, limit: 2, page_index: 1 })) as { results: Hit[] };
    assert.deepEqual([...ids(first), ...ids(second)], ids(all).slice(0, 4));
    assert.equal(first.pagination.total_pages, Math.ceil(all.results.length / 2));
    // Ordered by distance, then path.
    const distances = all.results.map((h) => h.distance);
    assert.deepEqual(distances, [...distances].sort((a, b) => a - b));
  });

  test('a seed that resolves to nothing refuses resource_not_found; a malformed one is invalid_request', async () => {
    const missing = symbolId('typescript', 'ts/store.ts', 'Store.nothing');
    const e = await ws.rift.fail('search', { traversal: { seed: missing } });
    assert.equal(e.data.code, 'resource_not_found');
    assert.equal(
      e.data.message,
      `the requested resource does not exist in the current snapshot: symbol ${missing}; search or list first, then retry with an identity that answer returned`,
    );
    const bad = await ws.rift.fail('search', { traversal: { seed: 'rift://symbol/Store.find' } });
    assert.equal(bad.data.code, 'invalid_request');
    assert.match(bad.data.message as string, /field traversal\.seed, violation not a rift symbol address/);
    const badTo = await ws.rift.fail('search', { traversal: { seed: id(ts, ts.find), to: 'rift://symbol/typescript/nope' } });
    assert.match(badTo.data.message as string, /field traversal\.to/);
  });

  for (const h of HEURISTIC_CASES) {
    test(`${h.language}: a link no binding explains but one declaration's name fits carries derivation "heuristic" (${h.guesser[1]})`, async () => {
      const [guesser, guessed] = [id(h, h.guesser), id(h, h.guessed)];
      const r = await walk({ seed: guesser, facets: ['calls'] });
      assert.deepEqual(ids(r), [guessed]);
      assert.deepEqual(r.results[0].traversal_path, [
        { relationship: { from: guesser, kind: 'calls', facets: ['calls'], to: guessed, derivation: 'heuristic' }, direction: 'outgoing' },
      ]);
      const incoming = await walk({ seed: guessed, direction: 'incoming', facets: ['calls'] });
      assert.deepEqual(incoming.results.map((x) => [x.hit.symbol.id, x.traversal_path[0].relationship.derivation]), [[guesser, 'heuristic']]);
    });
  }

  test('a method name two declarations share is no guess: the call links nothing', async () => {
    const r = await walk({ seed: symbolId('typescript', 'guess/ts/ambiguous.ts', 'fiddle') });
    assert.deepEqual(r.results, []);
  });

  test('go: main calls store.NewStore() across the package import, then Find through the value it returned', async () => {
    const go = CASES.find((c) => c.language === 'go')!;
    const main = id(go, go.entry);
    const newStore = symbolId('go', 'go/store/store.go', 'NewStore');
    const calls = await walk({ seed: main, facets: ['calls'] });
    const hop = calls.results.find((h) => h.hit.symbol.id === newStore);
    assert.ok(hop, ids(calls).join(', '));
    assert.equal(hop.distance, 1);
    assert.deepEqual(hop.traversal_path, [
      { relationship: { from: main, kind: 'calls', facets: ['calls'], to: newStore, derivation: 'resolution' }, direction: 'outgoing' },
    ]);
    // The call crossed the import: the same reference links main to NewStore as an import.
    const imports = await walk({ seed: main, facets: ['imports'] });
    assert.ok(ids(imports).includes(newStore), ids(imports).join(', '));
    assert.equal(imports.results.find((h) => h.hit.symbol.id === newStore)!.traversal_path[0].relationship.kind, 'imports');
    // Impact the other way: NewStore is called from main, in another package.
    const callers = await walk({ seed: newStore, direction: 'incoming', facets: ['calls'] });
    assert.deepEqual(ids(callers), [main]);
  });

  test('a declaration with no relationship at all, so no graph node, answers empty as seed and as to', async () => {
    const lonely = symbolId('typescript', ...ISOLATED);
    // It is a declaration the index holds...
    const found = (await ws.rift.call('get_symbol', { name: 'lonely', include: [] })) as { hits: Array<{ symbol: { id: string } }> };
    assert.equal(found.hits[0]?.symbol.id, lonely);
    // ...that no edge touches, either way, along any facet, at any depth.
    for (const direction of ['outgoing', 'incoming']) {
      const r = await walk({ seed: lonely, direction, depth: 8 });
      assert.deepEqual(r.results, []);
      assert.deepEqual(r.warnings, []);
    }
    // As to, nothing reaches it: the walk from a well-connected seed answers empty, not its whole reach.
    const toward = await walk({ seed: id(ts, ts.entry), to: lonely });
    assert.deepEqual(toward.results, []);
    assert.deepEqual(toward.warnings, []);
  });

  test('a declaration with no edges answers an empty result, not an error', async () => {
    // The entry of the JavaScript case is called by nothing.
    const r = await walk({ seed: id(CASES[2], CASES[2].entry), direction: 'incoming' });
    assert.deepEqual(r.results, []);
    assert.deepEqual(r.warnings, []);
  });

  test('traversal never combines with rev', async () => {
    const e = await ws.rift.fail('search', { traversal: { seed: id(ts, ts.find) }, rev: 'main' });
    assert.equal(e.data.code, 'capability_unavailable');
    assert.match(e.data.message as string, /relationship traversal/);
  });

  test('depth is bounded: above 8 is limit_exceeded naming the field, 0 is invalid', async () => {
    const e = await ws.rift.fail('search', { traversal: { seed: id(ts, ts.find), depth: 9 } });
    assert.equal(e.data.code, 'limit_exceeded');
    assert.deepEqual(e.data.limit, { field: 'traversal.depth', limit: 8, required: 9 });
    const zero = await ws.rift.fail('search', { traversal: { seed: id(ts, ts.find), depth: 0 } });
    assert.equal(zero.data.code, 'invalid_request');
    assert.match(zero.data.message as string, /field traversal\.depth/);
    const dir = await ws.rift.fail('search', { traversal: { seed: id(ts, ts.find), direction: 'sideways' } });
    assert.match(dir.data.message as string, /field traversal\.direction/);
  });

  test('search without query or traversal is invalid_request naming query', async () => {
    const e = await ws.rift.fail('search', {});
    assert.match(e.data.message as string, /field query, violation missing/);
    const empty = await ws.rift.fail('search', { query: '', traversal: { seed: id(ts, ts.find) } });
    assert.match(empty.data.message as string, /field query, violation empty/);
  });
});
