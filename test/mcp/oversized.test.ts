import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SERVER_REQUEST_BYTES_MAX } from '../../src/core/limits.ts';
import { requestIdOf } from '../../src/mcp/stdio-transport.ts';
import { startRift } from '../helpers/mcp.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// A request over SERVER_REQUEST_BYTES_MAX is answered `limit_exceeded` naming the limit and the size,
// and the server goes on serving (issue 10: the SDK's stdio transport ended the server).

for (const standalone of [false, true]) {
  test(`a request over the stdio size limit answers limit_exceeded and ${standalone ? 'the standalone server' : 'the proxy'} lives`, async () => {
    const root = tempWorkspace({ 'a.py': 'def alpha(): pass\n' });
    const rift = await startRift(root, {}, { standalone });
    try {
      assert.equal(((await rift.call('get_symbol', { name: 'alpha' })) as { hits: unknown[] }).hits.length, 1);
      const patch = 'x'.repeat(SERVER_REQUEST_BYTES_MAX + 1024);
      const line = JSON.stringify({ method: 'tools/call', params: { name: 'patch', arguments: { patch } }, jsonrpc: '2.0', id: 0 });
      const err = await rift.fail('patch', { patch });
      assert.equal(err.code, -32000);
      // The size is the request's own: the line above but for the id the client chose.
      const required = (err.data.limit as { required: number }).required;
      assert.ok(Math.abs(required - Buffer.byteLength(line)) <= 8, `${required} vs ${Buffer.byteLength(line)}`);
      const message = `the request exceeded a declared resource limit: limit request_bytes, maximum ${SERVER_REQUEST_BYTES_MAX}, required ${required}; resize the request below the named limit`;
      assert.equal(err.message, `MCP error -32000: ${message}`);
      assert.deepEqual(err.data, {
        code: 'limit_exceeded',
        message,
        retry: 'never',
        phase: 'read',
        diagnostics: [],
        causes: [],
        limit: { field: 'request_bytes', limit: SERVER_REQUEST_BYTES_MAX, required },
      });
      // The server still serves, twice over.
      assert.equal(((await rift.call('get_symbol', { name: 'alpha' })) as { hits: unknown[] }).hits.length, 1);
      const again = await rift.fail('patch', { patch });
      assert.equal(again.data.code, 'limit_exceeded');
      assert.equal(((await rift.call('get_symbol', { name: 'alpha' })) as { hits: unknown[] }).hits.length, 1);
      // A request between the SDK's 10 MiB buffer and this limit is read, and refused by the tool's own bound.
      const big = await rift.fail('patch', { patch: 'y'.repeat(11 * 1024 * 1024) });
      assert.equal(big.data.code, 'limit_exceeded');
      assert.equal((big.data.limit as { field: string }).field, 'patch');
      assert.match(rift.stderr(), new RegExp(`WARN +mcp: request over the size limit refused bytes=\\d+ limit=${SERVER_REQUEST_BYTES_MAX} answered=true`));
    } finally {
      await rift.close();
      removeWorkspace(root);
    }
  });
}

test('the id of an oversized request is found at either end of the line', () => {
  const body = '"x":"' + 'a'.repeat(100) + '"';
  assert.equal(requestIdOf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{${body}`, ''), 7);
  assert.equal(requestIdOf(`{"method":"tools/call","id":"req-1","params":{`, ''), 'req-1');
  // Members before the id may nest and hold quotes and brackets in strings.
  assert.equal(requestIdOf(`{"meta":{"a":[1,{"id":99}],"s":"}\\"]"},"id":3,"params":{`, ''), 3);
  // Only the end is known: the id closes the top-level object.
  assert.equal(requestIdOf('{"method":"tools/call","params":{"arguments":{"patch":"aaa', 'aaa"}},"jsonrpc":"2.0","id":12}'), 12);
  assert.equal(requestIdOf('{"params":{', 'aaa"},"id":"k"}\r'), 'k');
  // A nested id never answers for the request.
  assert.equal(requestIdOf('{"params":{', '"x":{"id":5}}}'), undefined);
  assert.equal(requestIdOf('{"params":{', 'x","id":5}]}'), undefined);
  // A notification has none.
  assert.equal(requestIdOf('{"jsonrpc":"2.0","method":"notifications/x","params":{"p":"', 'zzz"}}'), undefined);
  assert.equal(requestIdOf('not json', 'at all'), undefined);
});
