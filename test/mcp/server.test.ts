import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startRift, type RiftMcp } from '../helpers/mcp.ts';
import { eventually, removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';
import { readLock, type ServerLock } from '../../src/mcp/lock.ts';
import { runCli } from '../helpers/cli.ts';
import { RIFT_ARGS } from '../support/rift-process.ts';

// One server per workspace (reference G.5, issue 12): `rift mcp` proxies to the workspace's
// `rift server` over Streamable HTTP; the lock elects one server, the token and loopback
// checks guard it, a dead server is replaced, and an idle one exits.

const FILES = { 'app/core.py': 'def beacon():\n    return 1\n\n\ndef other():\n    return 2\n' };

function lockOf(root: string): ServerLock {
  const lock = readLock(root);
  assert.ok(lock && lock !== 'malformed', 'a lock names the server');
  return lock;
}

function rift(args: string[], cwd: string) {
  return runCli(args, cwd);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Files a process holds open, as paths. */
function openFiles(pid: number): string[] {
  const dir = `/proc/${pid}/fd`;
  return readdirSync(dir).flatMap((fd) => {
    try {
      return [readlinkSync(join(dir, fd))];
    } catch {
      return [];
    }
  });
}

/** pids of `rift server` processes serving `root`. */
function serverPids(root: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const argv = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
        return argv.includes('server') && argv.includes(root);
      } catch {
        return false;
      }
    })
    .map(Number);
}

function raw(lock: ServerLock, path: string, headers: Record<string, string>, method = 'GET', body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: lock.port, path, method, headers }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function beacon(r: RiftMcp): Promise<string> {
  const hit = (await r.call('get_symbol', { name: 'beacon' })) as { hits: Array<{ symbol: { name: string } }> };
  return hit.hits[0]?.symbol.name;
}

describe('one server per workspace', () => {
  let root: string;
  const clients: RiftMcp[] = [];
  before(() => {
    root = tempWorkspace(FILES);
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    rift(['server', '--stop', '--workspace', root], root);
    removeWorkspace(root);
  });

  test('8 rift mcp processes started at once share one server, one index writer and one watcher', async () => {
    clients.push(...(await Promise.all(Array.from({ length: 8 }, () => startRift(root)))));
    for (const c of clients) assert.equal(await beacon(c), 'beacon');
    const lock = lockOf(root);
    assert.deepEqual(serverPids(root), [lock.pid], 'exactly one rift server runs for the workspace');
    const db = join(root, '.rift', 'rift.db');
    assert.ok(openFiles(lock.pid).includes(db), 'the server holds the store');
    assert.ok(openFiles(lock.pid).includes('anon_inode:inotify'), 'the server watches the tree');
    for (const c of clients) {
      assert.ok(c.pid, 'the proxy process is known');
      const fds = openFiles(c.pid!);
      assert.ok(!fds.some((f) => f.startsWith(join(root, '.rift', 'rift.db'))), 'no proxy opens the store');
      assert.ok(!fds.includes('anon_inode:inotify'), 'no proxy watches the tree');
    }
    const status = JSON.parse(rift(['status', '--json', '--workspace', root], root).stdout);
    assert.equal(status.running, true);
    assert.equal(status.pid, lock.pid);
    assert.equal(status.clients.length, 8);
    assert.ok(status.clients.every((c: { name: string }) => c.name === 'rift-test'));
    assert.equal(status.index.state, 'current');
    assert.ok(status.memory.rss_bytes > 0);
  });

  test('the lock is owner-only and well-formed', () => {
    const mode = statSync(join(root, '.rift', 'server.json')).mode & 0o777;
    assert.equal(mode, 0o600);
    const lock = lockOf(root);
    assert.match(lock.token, /^[A-Za-z0-9_-]{32,128}$/);
    assert.equal(lock.workspace, root);
    assert.ok(lock.port >= 1 && lock.port <= 65535);
  });

  test('a write through one client is seen by the others at once (one index)', async () => {
    const [a, b] = clients;
    const before = (await a.call('get_symbol', { name: 'other' })) as { hits: Array<{ symbol: { id: string } }> };
    const applied = (await a.call('replace_symbol', { symbol: before.hits[0].symbol.id, body: 'def other():\n    return 3\n' })) as { status: string };
    assert.equal(applied.status, 'applied');
    const seen = (await b.call('get_symbol', { name: 'other' })) as { hits: Array<{ source: { text: string } }>; warnings: unknown[] };
    assert.equal(seen.hits[0].source.text, 'def other():\n    return 3');
    assert.deepEqual(seen.warnings, []);
  });

  test('requests without the token, with a foreign Host, or from a browser Origin are refused', async () => {
    const lock = lockOf(root);
    const host = `127.0.0.1:${lock.port}`;
    const auth = `Bearer ${lock.token}`;
    assert.equal((await raw(lock, '/status', { host })).status, 401);
    assert.equal((await raw(lock, '/status', { host, authorization: 'Bearer wrong-token-wrong-token-wrong-token-xx' })).status, 401);
    assert.equal((await raw(lock, '/status', { host: 'evil.example:80', authorization: auth })).status, 403);
    assert.equal((await raw(lock, '/status', { host: `attacker.test:${lock.port}`, authorization: auth })).status, 403);
    assert.equal((await raw(lock, '/status', { host, authorization: auth, origin: 'https://evil.example' })).status, 403);
    assert.equal((await raw(lock, '/status', { host, authorization: auth, origin: 'http://localhost:3000' })).status, 200);
    assert.equal((await raw(lock, '/status', { host: `localhost:${lock.port}`, authorization: auth })).status, 200);
    const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '0' } } });
    const mcpHeaders = { host, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    assert.equal((await raw(lock, '/mcp', mcpHeaders, 'POST', init)).status, 401, 'MCP itself needs the token');
    assert.equal((await raw(lock, '/mcp', { ...mcpHeaders, authorization: auth, origin: 'http://evil.example' }, 'POST', init)).status, 403);
    assert.equal((await raw(lock, '/mcp', { ...mcpHeaders, authorization: auth }, 'POST', init)).status, 200);
  });

  test('a SIGKILLed server is replaced: the stale lock is recovered and the next read works', async () => {
    const dead = lockOf(root);
    process.kill(dead.pid, 'SIGKILL');
    await eventually(() => (alive(dead.pid) ? undefined : true));
    assert.equal(lockOf(root).pid, dead.pid, 'the stale lock is still there');
    // Every proxy resends its read to a new server, which only one of them started.
    assert.deepEqual(await Promise.all(clients.map(beacon)), clients.map(() => 'beacon'));
    const fresh = lockOf(root);
    assert.notEqual(fresh.pid, dead.pid);
    assert.notEqual(fresh.token, dead.token);
    assert.deepEqual(serverPids(root), [fresh.pid], 'one proxy started the new server; the others waited for it');
    const late = await startRift(root);
    clients.push(late);
    assert.equal(await beacon(late), 'beacon');
  });

  test('after a graceful restart the proxies reconnect: same tools, same answers', async () => {
    const old = lockOf(root);
    const names = async () => (await clients[0].client.listTools()).tools.map((t) => t.name);
    const listed = await names();
    const stop = rift(['server', '--stop', '--workspace', root], root);
    assert.equal(stop.code, 0, stop.stderr);
    assert.match(stop.stderr, new RegExp(`stopped rift server \\(pid ${old.pid}\\)`));
    assert.equal(readLock(root), null, 'a stopping server removes its lock');
    assert.deepEqual(await names(), listed);
    assert.equal(await beacon(clients[1]), 'beacon');
    assert.notEqual(lockOf(root).pid, old.pid);
  });

  test('a change in flight when the server dies is answered temporarily_unavailable, never resent', async () => {
    // A validation hook holds the change inside the server long enough to kill it there.
    writeFileSync(join(root, 'rift.toml'), '[[hooks]]\nid = "slow"\nprogram = "sleep"\nrole = "validation"\narguments = ["3"]\ninclude = ["*.py"]\n');
    const c = clients[2];
    await eventually(async () => {
      const r = (await c.call('search', { query: 'beacon' })) as { warnings: unknown[] };
      return r.warnings.length === 0 ? true : undefined;
    });
    const hit = (await c.call('get_symbol', { name: 'beacon' })) as { hits: Array<{ symbol: { id: string } }> };
    const lock = lockOf(root);
    const pending = c.fail('replace_symbol', { symbol: hit.hits[0].symbol.id, body: 'def beacon():\n    return 10\n' });
    await new Promise((r) => setTimeout(r, 1200));
    process.kill(lock.pid, 'SIGKILL');
    const err = await pending;
    assert.equal(err.code, -32000);
    assert.equal(err.data.code, 'temporarily_unavailable');
    assert.equal(err.data.retry, 'operator_action');
    assert.match(err.message, /may have applied/);
    writeFileSync(join(root, 'rift.toml'), '');
    // The published bytes are on disk (publication precedes validation hooks); reads work again.
    assert.match(readFileSync(join(root, 'app/core.py'), 'utf8'), /return 10/);
    assert.equal(await beacon(c), 'beacon');
  });
});

test('rift server refuses a second server, and exits when idle, removing its lock', async () => {
  const root = tempWorkspace(FILES);
  let first: ChildProcess | undefined;
  try {
    first = spawn(process.execPath, [...RIFT_ARGS, 'server', '--idle-timeout', '6s'], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    first.stderr!.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => first!.on('close', resolve));
    await eventually(() => (existsSync(join(root, '.rift', 'server.json')) ? true : undefined), 20_000);
    const second = rift(['server'], root);
    assert.equal(second.code, 0);
    assert.match(second.stderr, new RegExp(`already serves this workspace`));
    assert.equal(lockOf(root).pid, first.pid, 'the first server keeps the workspace');
    assert.equal(await exited, 0);
    assert.match(stderr, /rift server stopped: idle for 6 s/);
    assert.equal(readLock(root), null);
  } finally {
    first?.kill('SIGKILL');
    removeWorkspace(root);
  }
});

test('a lock whose server is gone and whose file is damaged is replaced on the next start', async () => {
  const root = tempWorkspace(FILES);
  try {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const stale = { port: 1, pid: Number(dead.stdout), token: 'x'.repeat(43), workspace: root, version: '0.0.0' };
    mkdirSync(join(root, '.rift'), { recursive: true });
    writeFileSync(join(root, '.rift', 'server.json'), JSON.stringify(stale));
    const r1 = await startRift(root);
    assert.equal(await beacon(r1), 'beacon');
    assert.notEqual(lockOf(root).pid, stale.pid);
    await r1.close();
    rift(['server', '--stop'], root);
    writeFileSync(join(root, '.rift', 'server.json'), '{"half": ');
    const r2 = await startRift(root);
    assert.equal(await beacon(r2), 'beacon');
    await r2.close();
    const status = rift(['status'], root);
    assert.match(status.stdout, /^rift server \S+ {2}pid \d+ {2}http:\/\/127\.0\.0\.1:\d+\/mcp/);
    assert.match(status.stdout, /clients {3}0/);
  } finally {
    rift(['server', '--stop'], root);
    removeWorkspace(root);
  }
});

test('a server that idled out is started again by the next call, and a change sent then applies once', async () => {
  const root = tempWorkspace(FILES);
  const c = await startRift(root, { RIFT_SERVER_IDLE: '2s' });
  try {
    const hit = (await c.call('get_symbol', { name: 'beacon' })) as { hits: Array<{ symbol: { id: string } }> };
    const first = lockOf(root);
    await eventually(() => (readLock(root) === null ? true : undefined), 90_000);
    const r = (await c.call('replace_symbol', { symbol: hit.hits[0].symbol.id, body: 'def beacon():\n    return 7\n' })) as { status: string };
    assert.equal(r.status, 'applied', 'a request no server took is sent again, changes included');
    assert.notEqual(lockOf(root).pid, first.pid);
    assert.equal(readFileSync(join(root, 'app/core.py'), 'utf8').match(/return 7/g)?.length, 1);
  } finally {
    await c.close();
    rift(['server', '--stop'], root);
    removeWorkspace(root);
  }
});

test('a proxy of another version refuses clearly while the running server has clients', async () => {
  const root = tempWorkspace(FILES);
  const other = await startRift(root);
  try {
    assert.equal(await beacon(other), 'beacon');
    const { McpProxy } = await import('../../src/mcp/proxy.ts');
    const { PassThrough } = await import('node:stream');
    const input = new PassThrough();
    const output = new PassThrough();
    let out = '';
    output.on('data', (d) => (out += d));
    const notes: string[] = [];
    const proxy = new McpProxy({ root, version: '0.0.0-other', note: (n) => notes.push(n), input, output });
    const running = proxy.run();
    input.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'old', version: '0' } } })}\n`);
    const reply = await eventually(() => (out.includes('\n') ? JSON.parse(out.split('\n')[0]) : undefined), 20_000);
    assert.equal(reply.id, 1);
    assert.equal(reply.error.code, -32000);
    assert.equal(reply.error.data.code, 'temporarily_unavailable');
    assert.match(reply.error.message, /rift server \S+ \(pid \d+\) serves this workspace with 1 client\(s\); this is rift 0\.0\.0-other/);
    assert.match(reply.error.message, /rift mcp --standalone/);
    input.end();
    await running;
    assert.equal(await beacon(other), 'beacon', 'the running server was left alone');
  } finally {
    await other.close();
    rift(['server', '--stop'], root);
    removeWorkspace(root);
  }
});

test('a server never idles out while it answers a request', async () => {
  const root = tempWorkspace({ ...FILES, 'rift.toml': '[[hooks]]\nid = "slow"\nprogram = "sleep"\nrole = "validation"\narguments = ["5"]\ninclude = ["*.py"]\n' });
  const c = await startRift(root, { RIFT_SERVER_IDLE: '1s' });
  try {
    const hit = (await c.call('get_symbol', { name: 'beacon' })) as { hits: Array<{ symbol: { id: string } }> };
    const pid = lockOf(root).pid;
    const r = (await c.call('replace_symbol', { symbol: hit.hits[0].symbol.id, body: 'def beacon():\n    return 8\n' })) as { status: string };
    assert.equal(r.status, 'applied');
    assert.equal(lockOf(root).pid, pid, 'the same server answered the whole 5 s change');
  } finally {
    await c.close();
    rift(['server', '--stop'], root);
    removeWorkspace(root);
  }
});

/** Modules large enough that a cold build lasts well past its first stored batch. */
function manyModules(count: number): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    const fns = Array.from({ length: 30 }, (_, k) => `def f${k}(x):\n    return helper${(i + 1) % count}(x) + f${(k + 1) % 30}(x - 1) if x > ${k} else ${k}\n`);
    files[`pkg/m${i}.py`] = [`from pkg.m${(i + 1) % count} import helper${(i + 1) % count}`, '', `def helper${i}(x):\n    return x\n`, ...fns].join('\n');
  }
  return files;
}

test('a server stopped during its cold build stops the build and exits; the next index reads only what it had not stored', async () => {
  const count = 1200;
  const root = tempWorkspace(manyModules(count));
  let server: ChildProcess | undefined;
  try {
    server = spawn(process.execPath, [...RIFT_ARGS, 'server'], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    server.stderr!.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => server!.on('close', resolve));
    const storedFiles = () => {
      const db = new Database(join(root, '.rift', 'rift.db'), { readonly: true, fileMustExist: true });
      try {
        return (db.prepare(`SELECT count(*) AS n FROM files`).get() as { n: number }).n;
      } finally {
        db.close();
      }
    };
    // Signalled once the build has stored its first files.
    await eventually(() => (storedFiles() > 0 ? true : undefined), 60_000);
    server.kill('SIGTERM');
    assert.equal(await exited, 0, stderr);
    assert.match(stderr, /index build stopped: rift is closing/);
    assert.match(stderr, /rift server stopped: signalled/);
    const stored = storedFiles();
    assert.ok(stored > 0 && stored < count, `stored ${stored} of ${count}`);

    const resumed = rift(['index', '--json'], root);
    assert.equal(resumed.code, 0, resumed.stderr);
    const stats = JSON.parse(resumed.stdout) as { files: number; reparsed: number };
    assert.deepEqual([stats.files, stats.reparsed], [count, count - stored]);
    // The graph the resumed build resolved: a caller in a file stored before the stop.
    const callers = rift(['callers', 'helper1'], root);
    assert.equal(callers.code, 0, callers.stderr);
    assert.match(callers.stdout, /pkg\/m0\.py/);
  } finally {
    server?.kill('SIGKILL');
    removeWorkspace(root);
  }
});
