import { describe, it, beforeEach, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { SERVE_LINE_BYTES_MAX, PREFLIGHT_TIMEOUT_MS } from '../../src/core/limits.ts';
import { ollamaReply } from '../support/model-server.ts';
import { useModelServer } from '../support/agent-harness.ts';
import { ServeClient } from './client.ts';

// The edges of `rift --serve`: a model host that never answers, stdin closing before ready, an
// unbounded stdin line, commands whose fields have the wrong type, and sessions no turn used.

describe('rift --serve at its edges', () => {
  const { server, workspace, killAtEnd } = useModelServer({ clearBeforeEach: true });
  let cwd: string;
  let home: string;
  beforeEach(() => ({ cwd, home } = workspace('rift-serve-edge-')));
  const open = (args: string[]) => {
    const c = new ServeClient(['--no-index', ...args], cwd, home);
    killAtEnd(c.child);
    return c;
  };
  const sessions = () => (existsSync(join(home, 'sessions')) ? readdirSync(join(home, 'sessions')) : []);

  // A model host that accepts every connection and never sends a byte.
  let silent: Server;
  const sockets = new Set<Socket>();
  before(async () => {
    silent = createServer((s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => silent.close(() => r()));
  });
  const silentHost = () => `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;

  it('a host that never answers: ready comes after the preflight budget, with a warning naming it', async () => {
    const c = open(['--host', silentHost(), '--model', 'test-model']);
    await c.event('ready');
    const w = await c.event('warning');
    assert.equal(w.text, `the model server at ${silentHost()} did not answer within ${PREFLIGHT_TIMEOUT_MS / 1000} s — check that it is running and not overloaded, or point rift at another with --host / RIFT_HOST — fix the server or model, then send set_model`);
    assert.equal(await c.close(), 0);
  });

  it('stdin EOF while the model is being checked ends the process at once, printing nothing and keeping no session', async () => {
    const c = open(['--host', silentHost(), '--model', 'test-model']);
    c.child.stdin.end();
    assert.equal(await c.exit, 0);
    assert.deepEqual(c.raw, []);
    assert.deepEqual(sessions(), []);
  });

  it('a stdin line over the bound is dropped with one warning, and the next line is read', async () => {
    const c = open(['--host', server.url, '--model', 'test-model']);
    await c.event('context');
    const from = c.events.length;
    const size = SERVE_LINE_BYTES_MAX + 100;
    const chunk = 'x'.repeat(1024 * 1024);
    for (let sent = 0; sent < size; sent += chunk.length) c.child.stdin.write(chunk);
    c.send('');
    c.send({ cmd: 'hello', edit_review: false });
    await c.event('capabilities', from);
    assert.deepEqual(c.since(from).map((e) => e.event), ['warning', 'capabilities']);
    const bytes = Math.ceil(size / chunk.length) * chunk.length;
    assert.equal(c.events[from].text, `command line dropped: ${bytes} bytes, over the ${SERVE_LINE_BYTES_MAX}-byte bound; send one JSON command per line`);
    assert.equal(await c.close(), 0);
  });

  it('a field of the wrong type is a warning naming it; missing fields keep their defaults', async () => {
    const c = open(['--host', server.url, '--model', 'test-model']);
    await c.event('context');
    const from = c.events.length;
    c.send({ cmd: 'prompt', text: ['fix', 'it'] });
    c.send({ cmd: 'prompt', text: 42 });
    c.send({ cmd: 'answer', id: '1', text: 'yes' });
    c.send({ cmd: 'answer', id: 1, text: { a: 1 } });
    c.send({ cmd: 'edit_decision', id: 1, apply: 'yes' });
    c.send({ cmd: 'edit_decision', id: 1, apply: true, content: 7 });
    c.send({ cmd: 'set_model', model: 5 });
    c.send({ cmd: 'set_approval', approve: 'no' });
    c.send({ cmd: 'hello', edit_review: 'yes', approve: 'maybe' });
    await c.event('capabilities', from);
    assert.deepEqual(c.since(from).map((e) => e.text ?? e.event), [
      "prompt needs a string 'text' field",
      "prompt needs a string 'text' field",
      "answer needs a number 'id' field",
      "answer needs a string 'text' field",
      "edit_decision needs a boolean 'apply' field",
      "edit_decision needs a string 'content' field",
      "set_model needs a 'model' field",
      "set_approval needs a boolean 'approve' field",
      'capabilities',
    ]);
    assert.deepEqual(c.events.at(-1), { event: 'capabilities', protocol_version: 1, edit_review: false, approve: true });
    assert.equal(await c.close(), 0);
  });

  it("cancel closes the turn's pending ask with ask_closed, before done", async () => {
    server.script(ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: 'touch never.txt' } }] }));
    const c = open(['--host', server.url, '--model', 'test-model']);
    await c.event('context');
    const from = c.events.length;
    c.send({ cmd: 'prompt', text: 'touch it' });
    const ask = await c.event('ask', from);
    c.send({ cmd: 'cancel' });
    await c.event('done', from);
    const after = c.since(c.events.indexOf(ask) + 1).map((e) => e.event);
    assert.deepEqual(after.slice(0, 1), ['ask_closed']);
    assert.deepEqual(c.events.find((e) => e.event === 'ask_closed'), { event: 'ask_closed', id: ask.id });
    assert.ok(after.indexOf('ask_closed') < after.indexOf('done'));
    assert.equal(await c.close(), 0);
  });

  it('a session no turn ran in leaves no file; one that ran a turn keeps it', async () => {
    const idle = open(['--host', server.url, '--model', 'test-model']);
    const ready = await idle.event('ready');
    assert.equal(existsSync(ready.session), true, 'reserved while running');
    assert.equal(await idle.close(), 0);
    assert.equal(existsSync(ready.session), false);
    server.script(ollamaReply({ content: 'hi' }));
    const used = open(['--host', server.url, '--model', 'test-model']);
    const r2 = await used.event('ready');
    await used.turn('hello');
    assert.equal(await used.close(), 0);
    assert.equal(existsSync(r2.session), true);
    assert.deepEqual(sessions(), [r2.session.slice(r2.session.lastIndexOf('/') + 1)]);
  });
});
