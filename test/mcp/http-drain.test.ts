import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WorkspaceHttpServer } from '../../src/mcp/http.ts';
import { failureKind } from '../../src/mcp/remote.ts';
import type { ToolServices } from '../../src/mcp/tools.ts';

// A stopping workspace server answers what it already took and refuses the rest as never run
// (503), so the proxy sends a refused request — a change included — to the next server instead
// of answering "outcome unknown" (the race behind the idle-restart test's rare failure).

const TOKEN = 'test-token';

function post(port: number, message: object, session?: string): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', ...message }),
  });
}

function initialize(port: number): Promise<Response> {
  return post(port, { id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } } });
}

/** A session on `port`, initialized: its id. */
async function session(port: number): Promise<string> {
  const init = await initialize(port);
  assert.equal(init.status, 200);
  const id = init.headers.get('mcp-session-id')!;
  await init.text();
  assert.equal((await post(port, { method: 'notifications/initialized' }, id)).status, 202);
  return id;
}

test('a draining server finishes the request it took and refuses new ones with 503, which the proxy may resend', async () => {
  let open!: (s: ToolServices) => void;
  const services = new Promise<ToolServices>((r) => (open = r));
  const http = await WorkspaceHttpServer.listen({
    port: 0,
    token: TOKEN,
    version: '0.0.0-test',
    workspace: '/nowhere',
    services,
    indexState: () => ({}),
    onActivity: () => {},
    onShutdown: () => {},
  });
  try {
    // Initialize and the lists are answered while the engine opens; a tool call waits for it,
    // so it is in flight when the server starts to stop.
    const id = await session(http.port);
    const listed = await post(http.port, { id: 2, method: 'tools/list' }, id);
    assert.equal(listed.status, 200);
    assert.match(await listed.text(), /"get_symbol"/);
    const taken = post(http.port, { id: 3, method: 'tools/call', params: { name: 'get_symbol', arguments: { name: 'x' } } }, id);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(http.busy, true);
    let drained = false;
    const draining = http.drain(10_000).then(() => (drained = true));

    const refused = await initialize(http.port);
    assert.equal(refused.status, 503);
    assert.match(((await refused.json()) as { error: string }).error, /stopping/);
    assert.equal(drained, false, 'the request taken before is still being answered');

    open({} as ToolServices);
    assert.equal((await taken).status, 200, 'the request taken before the stop is answered');
    await draining;
    assert.equal(drained, true);
  } finally {
    await http.close();
  }
  assert.equal(failureKind(new StreamableHTTPError(503, 'Error POSTing to endpoint: stopping')), 'undelivered');
  assert.equal(failureKind(new StreamableHTTPError(500, 'Error POSTing to endpoint')), 'lost');
});

test('a stopping server lingers until its clients retire their kept-alive sockets, refusing with connection: close meanwhile', async () => {
  const { Agent, request } = await import('node:http');
  const http = await WorkspaceHttpServer.listen({
    port: 0,
    token: TOKEN,
    version: '0.0.0-test',
    workspace: '/nowhere',
    services: new Promise<ToolServices>(() => {}),
    indexState: () => ({}),
    onActivity: () => {},
    onShutdown: () => {},
  });
  // One kept-alive socket, as the proxy's fetch keeps one between calls.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const get = (path: string) =>
    new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: http.port, path, agent, headers: { authorization: `Bearer ${TOKEN}` } }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection }));
      });
      req.on('error', reject);
      req.end();
    });
  try {
    assert.equal((await get('/status')).status, 200);
    await http.drain(1000);
    let lingered = false;
    const lingering = http.linger(30_000).then(() => (lingered = true));
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(lingered, false, 'the client still holds its socket: the server waits instead of dropping it');
    // A request written on that socket now is refused as never run, and the socket is retired.
    assert.deepEqual(await get('/status'), { status: 503, connection: 'close' });
    await lingering;
    assert.equal(lingered, true, 'the server stops waiting once the client has let its socket go');
  } finally {
    agent.destroy();
    await http.close();
  }
});
