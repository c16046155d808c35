import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { SandboxConfig } from '../../../src/agent/base/config.ts';
import { Sandbox } from '../../../src/agent/policy/sandbox.ts';
import { probeSandbox } from '../../../src/process/sandbox.ts';
import { ollamaReply } from '../../support/model-server.ts';
import { useModelServer } from '../../support/agent-harness.ts';

// The bash sandbox (bubblewrap) through the agent loop: a write outside the workspace and a
// connection to a listening 127.0.0.1 port both fail inside it, and both succeed without it
// (the control), so the sandbox is what stops them.

const probe = probeSandbox();
const skip = probe.available ? false : `bubblewrap cannot sandbox commands on this machine: ${probe.reason}`;
const CONFIG: SandboxConfig = { mode: 'auto', network: false, writable: [] };

describe('bash sandbox', { skip }, () => {
  const { server, harness } = useModelServer({ clearBeforeEach: true });
  // Outside both the workspace and /tmp (which the sandbox replaces with a private tmpfs).
  let outside: string;
  let listener: Server;
  let port = 0;
  let connections = 0;
  before(async () => {
    outside = mkdtempSync('/var/tmp/rift-sandbox-');
    listener = createServer((s) => {
      connections++;
      s.end('hello\n');
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    port = (listener.address() as AddressInfo).port;
  });
  after(() => {
    listener.close();
    rmSync(outside, { recursive: true, force: true });
  });

  async function bash(command: string, sandbox: Sandbox | undefined, cwd?: string): Promise<string> {
    server.script(ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command } }] }), ollamaReply({ content: 'ok' }));
    const h = harness({ cwd, sandbox });
    await h.run('run it');
    return h.agent.messages.filter((m) => m.role === 'tool').map((m) => m.content)[0];
  }

  it('a write outside the workspace fails; one inside it lands', async () => {
    const h = harness();
    const sandbox = Sandbox.create(CONFIG, h.cwd, []);
    assert.equal(sandbox.active, true);
    const target = join(outside, 'escaped.txt');
    const out = await bash(`echo escaped > ${target}; echo inside > inside.txt`, sandbox, h.cwd);
    assert.match(out, /Read-only file system/);
    assert.equal(existsSync(target), false);
    assert.equal(readFileSync(join(h.cwd, 'inside.txt'), 'utf8'), 'inside\n');
    // Control: the same write without the sandbox lands.
    await bash(`echo escaped > ${target}`, undefined, h.cwd);
    assert.equal(readFileSync(target, 'utf8'), 'escaped\n');
  });

  it('a network connection fails, even to 127.0.0.1; without the sandbox it connects', async () => {
    const h = harness();
    const sandbox = Sandbox.create(CONFIG, h.cwd, []);
    const out = await bash(`curl -s -m 5 http://127.0.0.1:${port}/ ; echo "curl exit $?"`, sandbox, h.cwd);
    assert.match(out, /curl exit 7/, 'could not connect');
    assert.equal(connections, 0);
    const open = await bash(`curl -s -m 5 telnet://127.0.0.1:${port} < /dev/null; echo "curl exit $?"`, undefined, h.cwd);
    assert.match(open, /hello/);
    assert.equal(connections, 1);
  });

  it("the user's rift directories and the workspace's git hooks stay read-only inside the workspace", async () => {
    const h = harness();
    const home = join(h.cwd, 'home');
    mkdirSync(join(h.cwd, '.git', 'hooks'), { recursive: true });
    mkdirSync(home);
    writeFileSync(join(home, 'config.json'), '{}\n');
    const sandbox = Sandbox.create(CONFIG, h.cwd, [home]);
    // Named through a variable: the permission check refuses a literal write into .git before the sandbox is reached.
    const out = await bash(`echo '{"permissions":{"allow":["Bash(*)"]}}' > home/config.json; h=.git/hooks; echo 'x' > $h/pre-commit; echo done`, sandbox, h.cwd);
    assert.match(out, /home\/config\.json: Read-only file system/);
    assert.match(out, /pre-commit: Read-only file system/);
    assert.equal(readFileSync(join(home, 'config.json'), 'utf8'), '{}\n');
    assert.equal(existsSync(join(h.cwd, '.git', 'hooks', 'pre-commit')), false);
  });

  it('sandbox.network: true lets a command connect', async () => {
    const h = harness();
    const before = connections;
    const out = await bash(`curl -s -m 5 telnet://127.0.0.1:${port} < /dev/null; echo "curl exit $?"`, Sandbox.create({ ...CONFIG, network: true }, h.cwd, []), h.cwd);
    assert.match(out, /hello/);
    assert.equal(connections, before + 1);
  });
});

describe('bash sandbox: unavailable', () => {
  const { server, harness } = useModelServer({ clearBeforeEach: true });

  it('says so plainly, and sandbox.mode "required" refuses every command', async () => {
    const env = { ...process.env, RIFT_BWRAP: '/nonexistent/bwrap' };
    const h = harness();
    const auto = Sandbox.create(CONFIG, h.cwd, [], env);
    assert.equal(auto.active, false);
    assert.equal(auto.describe(), 'bash sandbox: unavailable — bash commands run with your full permissions ($RIFT_BWRAP (/nonexistent/bwrap) does not exist — install it (Debian/Ubuntu: apt-get install bubblewrap) to run commands in a sandbox)');
    const required = Sandbox.create({ ...CONFIG, mode: 'required' }, h.cwd, [], env);
    server.script(ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: 'echo hi > ran.txt' } }] }), ollamaReply({ content: 'ok' }));
    const r = harness({ cwd: h.cwd, sandbox: required });
    await r.run('go');
    const result = r.agent.messages.filter((m) => m.role === 'tool')[0].content;
    assert.match(result, /^ERROR: bash runs only inside the sandbox here \(sandbox.mode = "required"\), and no sandbox is available: /);
    assert.equal(existsSync(join(h.cwd, 'ran.txt')), false);
    assert.equal(Sandbox.create({ ...CONFIG, mode: 'off' }, h.cwd, []).describe(), 'bash sandbox: unavailable — bash commands run with your full permissions (the sandbox is turned off in the user config (sandbox.mode = "off"))');
  });
});
