import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { serveWorkspace } from '../helpers/mcp.ts';
import { limitExceeded } from '../../src/core/errors.ts';

// Error and warning advice that fits the case (issue 21): every message's action is one the
// caller can take, and every violation names what is wrong with the field.

const FILES = {
  'app.py': 'def keep():\n    return 1\n\n\ndef drop():\n    return 2\n',
  'rift.toml': '[languages.python]\nlsp = false\n',
};

describe('advice that fits', () => {
  const ws = serveWorkspace({ before, after }, FILES);
  const sym = (name: string) => `rift://symbol/python/app.py/${name}`;

  test('limit: 5000 says to resize, not to raise a configuration key that does not exist', async () => {
    const e = await ws.rift.fail('search', { query: 'keep', limit: 5000 });
    assert.equal(e.data.message, 'the request exceeded a declared resource limit: limit limit, maximum 1000, required 5000; resize the request below the named limit');
    assert.deepEqual(e.data.limit, { field: 'limit', limit: 1000, required: 5000 });
    // A limit that is a rift.toml key still says where to raise it.
    assert.match(limitExceeded('source.max_files', 10, 11, [], true).message, /; resize the request below the named limit, or raise that limit in the workspace configuration$/);
  });

  test('a missing body is violation missing; a malformed symbol is not a rift symbol address', async () => {
    const missing = await ws.rift.fail('replace_symbol', { symbol: sym('keep') });
    assert.match(missing.data.message as string, /: field body, violation missing; /);
    const malformed = await ws.rift.fail('replace_symbol', { symbol: 'keep', body: 'x' });
    assert.match(malformed.data.message as string, /: field symbol, violation not a rift symbol address; /);
    const node = await ws.rift.fail('replace_node', { node: 'rift://node/x', body: 'x' });
    assert.match(node.data.message as string, /: field node, violation not a witnessed rift node address; /);
    const empty = await ws.rift.fail('remove_symbol', { symbol: '' });
    assert.match(empty.data.message as string, /: field symbol, violation empty; /);
  });

  test('rev where git finds no repository: the remedy is git init, and enabling a provider is advised', async () => {
    mkdirSync(join(ws.root, '.git'));
    const e = await ws.rift.fail('get_symbol', { name: 'keep', rev: 'HEAD' });
    assert.equal(
      e.data.message,
      `no configured provider serves this request: workspace ${realpathSync(ws.root)}, requires a git repository - run \`git init\`, or omit \`rev\` to read the current tree; adjust the request to a served capability, or configure a provider that serves it`,
    );
  });

  test('with lsp = false configured, the unchecked-references warning says the configuration turned the engine off', async () => {
    const r = (await ws.rift.call('remove_symbol', { symbol: sym('drop') })) as { summary: { warnings: Array<{ kind: string; message: string; reason: string }> } };
    assert.deepEqual(r.summary.warnings, [
      {
        kind: 'rift.remove.references_unchecked',
        message: 'references were not checked: [languages.python] sets lsp = false, so nothing confirmed the declaration is unused',
        reason: '[languages.python] sets lsp = false',
      },
    ]);
  });
});
