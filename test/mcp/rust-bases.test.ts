import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { symbolId } from '../../src/core/ids.ts';
import { serveWorkspace } from '../helpers/mcp.ts';

// A Rust type's bases may be stated in another file (`impl Trait for Type` anywhere in the
// crate), unlike every other language's, which the resolver reads from the type's own file: a
// method the type gets only through such an impl still resolves, over real stdio MCP.

type Hit = { hit: { symbol: { id: string } } };

const files: Record<string, string> = {
  'rs/src/base.rs': 'pub trait Base {\n    fn ping(&self) {}\n}\n',
  'rs/src/store.rs': 'pub struct Store;\n\nimpl Store {\n    pub fn new() -> Store {\n        Store\n    }\n}\n',
  'rs/src/extra.rs': 'use crate::base::Base;\nuse crate::store::Store;\n\nimpl Base for Store {}\n',
  'rs/src/main.rs': [
    'use crate::base::Base;',
    'use crate::store::Store;',
    '',
    'mod base;',
    'mod extra;',
    'mod store;',
    '',
    'fn main() {',
    '    let store = Store::new();',
    '    store.ping();',
    '}',
    '',
  ].join('\n'),
};

describe('Rust bases stated in another file', () => {
  const ws = serveWorkspace({ before, after }, files);

  test('a method a type has only through an impl in another file resolves to the trait\'s', async () => {
    const r = (await ws.rift.call('search', { traversal: { seed: symbolId('rust', 'rs/src/main.rs', 'main'), facets: ['calls'] }, limit: 100 })) as { results: Hit[] };
    const ids = r.results.map((h) => h.hit.symbol.id);
    assert.ok(ids.includes(symbolId('rust', 'rs/src/base.rs', 'Base::ping')), ids.join(', '));
  });
});
