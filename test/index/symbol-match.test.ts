import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../../src/services/engine.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// get_symbol's match rule (reference rule 57): a case-insensitive substring of the qualified
// name. The store answers it three ways — a phrase of trigrams (printable ASCII, 3+ characters),
// GLOB through the trigram index (other 3+ character queries), a scan (shorter ones) — and each
// must find exactly what a plain substring test over every declaration finds, metacharacters of
// FTS5, GLOB and LIKE included.

const FILES = {
  'pkg/parse.py': [
    'class Parser:',
    '    def parse_args(self): pass',
    '    def __init__(self): pass',
    'def parse(): pass',
    'def reparse_all(): pass',
    'def a_b_c(): pass',
    'def x100_y2(): pass',
    'def café_crème(): pass',
    'def straße(): pass',
    'class ÉTAT:',
    '    def größe(self): pass',
    '',
  ].join('\n'),
  'web/app.ts': [
    'export class HttpServer { listen(port: number): void {} $apply(): void {} }',
    'export function get_URL(): string { return ""; }',
    'export const PARSE_LIMIT = 10;',
    'export namespace Outer { export function inner_fn(): void {} }',
    '',
  ].join('\n'),
};

const QUERIES = [
  'par', 'PARSE', 'parse_', 'e_a', 'rse.pa', '__init__', 'x10', '100_y', 'get_url', 'http', 'er.li', '$ap', 'outer.inner',
  'café', 'CAFÉ', 'straße', 'STRASSE', 'étA', 'größe', 'ß', 'é',
  'a"b', '"', '*', 'p*r', '[a]', 'a?', '%', '_', 'e%', 'NEAR', 'AND', 'parse OR', '(pa', 'pa)', ':', 'pa^', '  ', 'zzz',
];

test('every way the store matches a name finds exactly the declarations whose qualified name holds it', async () => {
  const root = tempWorkspace(FILES);
  const engine = await Engine.open(root, { watch: false });
  try {
    await engine.build();
    const store = engine.indexer.store;
    const all = store.prepared('test.qnames', `SELECT id, qname FROM symbols`).all() as Array<{ id: number; qname: string }>;
    assert.ok(all.length > 15, `${all.length} declarations`);
    for (const query of QUERIES) {
      const expected = all.filter((s) => s.qname.toLowerCase().includes(query.toLowerCase())).map((s) => s.id).sort((a, b) => a - b);
      const found = store.findSymbols({ query, offset: 0, limit: 1000 });
      assert.equal(found.total, expected.length, `total for ${JSON.stringify(query)}`);
      assert.deepEqual(found.rows.map((r) => r.id).sort((a, b) => a - b), expected, `hits for ${JSON.stringify(query)}`);
      // The exact-name page and the total counted beside it (a page inside the exact matches).
      const first = store.findSymbols({ query, offset: 0, limit: 1 });
      assert.equal(first.total, expected.length, `total beside one hit for ${JSON.stringify(query)}`);
    }
    // The phrase way is taken (and matches) for the common case.
    assert.ok(store.findSymbols({ query: 'parse', offset: 0, limit: 1 }).total >= 5);
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});
