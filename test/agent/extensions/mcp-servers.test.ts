import { describe, it, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { McpServerConfig } from '../../../src/agent/base/config.ts';
import { McpServers } from '../../../src/agent/extensions/mcp-servers.ts';
import { mcpIdentity, mcpServerKey } from '../../../src/agent/extensions/project-trust.ts';
import { Approval } from '../../../src/agent/policy/approval.ts';
import type { AskRequest, Gate } from '../../../src/agent/policy/gate.ts';
import { PermissionRules } from '../../../src/agent/policy/permissions.ts';
import { Sandbox } from '../../../src/agent/policy/sandbox.ts';
import { MCP_RESULT_BYTES_MAX } from '../../../src/core/limits.ts';
import { ollamaReply } from '../../support/model-server.ts';
import { tempDir, toolContext, toolError, useModelServer, type Harness } from '../../support/agent-harness.ts';
import { startHttpMcpServer } from '../../support/mcp-http.ts';

// The agent's MCP client against real MCP servers: a stdio fixture (tools that answer, fail,
// overflow, return non-text blocks, and one that kills its server mid-call) and a Streamable
// HTTP server on 127.0.0.1. The agent loop drives every call, through the permission gate.

const FIXTURE = fileURLToPath(new URL('./fixtures/tool-server.mjs', import.meta.url));
const stdio = (name: string, env: Record<string, string> = {}, scope: McpServerConfig['scope'] = 'user'): McpServerConfig => ({
  name,
  scope,
  transport: { kind: 'stdio', command: process.execPath, args: [FIXTURE], env },
  sandbox: false,
});
const OFF = Sandbox.create({ mode: 'off', network: false, writable: [] }, tempDir(), []);

function gateAnswering(answers: Array<string | null>): Gate & { asked: AskRequest[] } {
  const asked: AskRequest[] = [];
  return { interactive: true, asked, ask: async (req) => (asked.push(req), answers.shift() ?? null) };
}

function attach(h: Harness, notes: string[] = []): McpServers {
  return new McpServers({ cwd: h.cwd, version: '0.0.0-test', registry: h.agent.registry, sandbox: OFF, note: (n) => notes.push(n) });
}

const toolMessages = (body: { messages: Array<{ role: string; content: string; tool_name?: string }> }) => body.messages.filter((m) => m.role === 'tool');

describe('agent MCP client', () => {
  const { server, harness } = useModelServer({ assertConsumed: true, clearBeforeEach: true });
  const open: McpServers[] = [];
  let from = 0;
  beforeEach(() => void (from = server.chatRequests().length));
  const chats = () => server.chatRequests().slice(from);
  after(async () => {
    for (const m of open) await m.close();
  });

  it('offers each tool as <server>_<tool> with its schema; results are text joined, bounded, and errors stay tool errors', async () => {
    const h = harness();
    const notes: string[] = [];
    const mcp = attach(h, notes);
    open.push(mcp);
    const outcome = await mcp.start(stdio('fx', { FIXTURE_TOKEN: 'tok-123' }));
    assert.equal(outcome.ok, true, outcome.text);
    assert.equal(outcome.text, "mcp 'fx': 7 tool(s) registered (fx_echo, fx_env, fx_big, fx_fail, fx_mixed, fx_crash, fx_hang)");
    assert.deepEqual(notes, [outcome.text]);
    server.script(
      ollamaReply({
        toolCalls: [
          { name: 'fx_echo', arguments: { text: 'hi' } },
          { name: 'fx_env', arguments: {} },
          { name: 'fx_mixed', arguments: {} },
          { name: 'fx_fail', arguments: {} },
          { name: 'fx_big', arguments: {} },
        ],
      }),
      ollamaReply({ content: 'done' }),
    );
    const r = await h.run('use the tools');
    assert.equal(r.outcome, 'answered');
    const [first, second] = chats();
    const echo = first.body.tools.find((t: { function: { name: string } }) => t.function.name === 'fx_echo');
    assert.equal(echo.function.description, '[fx MCP] Echo the text back.');
    assert.deepEqual(echo.function.parameters.properties, { text: { type: 'string' } });
    assert.deepEqual(echo.function.parameters.required, ['text']);
    const results = toolMessages(second.body).map((m) => m.content);
    assert.equal(results[0], 'echo: hi');
    assert.equal(results[1], 'tok-123', 'the configured environment reaches the server');
    assert.equal(results[2], 'before\n[unsupported content block: image]\nafter');
    assert.equal(results[3], 'ERROR: fx_fail reported an error: the widget is broken');
    assert.ok(Buffer.byteLength(results[4]) <= MCP_RESULT_BYTES_MAX + 200, `bounded: ${Buffer.byteLength(results[4])}`);
    assert.match(results[4], /^startx+\n\.\.\. \[output truncated: 50000 of 200008 bytes shown\] \.\.\.\nx+end$/);
    assert.deepEqual(r.tools.map((t) => [t.name, t.ok]), [['fx_echo', true], ['fx_env', true], ['fx_mixed', true], ['fx_fail', false], ['fx_big', true]]);
  });

  it('a server that crashes mid-call is a warning and a tool error; the turn goes on, and its tools then fail fast', async () => {
    const h = harness();
    const mcp = attach(h);
    open.push(mcp);
    assert.equal((await mcp.start(stdio('fx'))).ok, true);
    server.script(
      ollamaReply({ toolCalls: [{ name: 'fx_crash', arguments: {} }] }),
      ollamaReply({ toolCalls: [{ name: 'fx_echo', arguments: { text: 'still there?' } }, { name: 'write', arguments: { path: 'ok.txt', content: 'ok\n' } }] }),
      ollamaReply({ content: 'I worked around it.' }),
    );
    const r = await h.run('crash it');
    assert.equal(r.outcome, 'answered');
    assert.equal(r.reply, 'I worked around it.');
    const [, second, third] = chats();
    const crash = toolMessages(second.body)[0].content;
    assert.match(crash, /^ERROR: MCP server 'fx' stopped during the call \(it exited(; its last output: tool-server: crashing on purpose)?\); fx_crash did not finish and its tools are unavailable in this session$/);
    const [echo, write] = toolMessages(third.body).slice(-2).map((m) => m.content);
    assert.match(echo, /^ERROR: MCP server 'fx' is not running \(it exited.*\), so fx_echo is unavailable in this session; do the step another way$/);
    assert.match(write, /^Wrote 3 bytes/, 'the other tools still work');
    const warnings = h.of('warning').map((w) => w.text);
    assert.equal(warnings.filter((w) => w.startsWith("MCP server 'fx' stopped during a call to fx_crash")).length, 1, 'one warning for the dead server');
  });

  it('a cancel ends the call in flight and the server stays usable; calls leave no listener on the turn\'s signal', async () => {
    const h = harness();
    const mcp = attach(h);
    open.push(mcp);
    assert.equal((await mcp.start(stdio('fx'))).ok, true);
    const turn = new AbortController();
    const ctx = toolContext({ cwd: h.cwd, signal: turn.signal });
    const echo = h.agent.registry.get('fx_echo')!;
    // More calls than Node's listener warning threshold (10): the SDK alone would leave one each.
    for (let i = 0; i < 12; i++) assert.equal(await echo.run({ text: `m${i}` }, ctx), `echo: m${i}`);
    assert.equal(getEventListeners(turn.signal, 'abort').length, 0);
    const hanging = toolError(h.agent.registry.get('fx_hang')!.run({}, ctx));
    setTimeout(() => turn.abort(), 50);
    assert.equal(await hanging, 'cancelled by user');
    assert.equal(await echo.run({ text: 'after' }, toolContext({ cwd: h.cwd })), 'echo: after');
  });

  it('a server that cannot start is a warning with its reason; the session keeps its other tools', async () => {
    const h = harness();
    const notes: string[] = [];
    const mcp = attach(h, notes);
    open.push(mcp);
    const dead: McpServerConfig = { name: 'dead', scope: 'user', transport: { kind: 'stdio', command: process.execPath, args: ['-e', 'process.stderr.write("cannot open the widget db\\n"); process.exit(2)'], env: {} }, sandbox: false };
    const missing: McpServerConfig = { name: 'missing', scope: 'user', transport: { kind: 'stdio', command: join(h.cwd, 'no-such-server'), args: [], env: {} }, sandbox: false };
    const [a, b, c] = await Promise.all([mcp.start(dead), mcp.start(missing), mcp.start(stdio('fx'))]);
    assert.equal(a.ok, false);
    assert.match(a.text, /^MCP server 'dead' failed to start: `.+`: .*Connection closed.*; its stderr: cannot open the widget db$/);
    assert.equal(b.ok, false);
    assert.match(b.text, /^MCP server 'missing' failed to start: `.*no-such-server`: .*ENOENT/);
    assert.equal(c.ok, true);
    assert.ok(notes.includes(`warning: ${a.text} — its tools are unavailable`));
    assert.deepEqual(mcp.names(), ['fx']);
    assert.ok(!h.agent.registry.names().some((n) => n.startsWith('dead_') || n.startsWith('missing_')));
    const again = await mcp.start(stdio('fx'));
    assert.deepEqual(again, { ok: false, text: "MCP server 'fx' not started: a server of that name is already attached" });
  });

  it('permission rules apply to MCP tools by name; approval asks, "always allow" persists Mcp(<name>), a server grant covers its tools', async () => {
    const cwd = tempDir();
    const persisted: Array<[string, string]> = [];
    const rules = new PermissionRules({ allow: [], ask: [], deny: ['Mcp(fx_env)', 'fx_fail'] }, cwd);
    const approval = new Approval(true, rules, cwd, (rule, list) => persisted.push([list, rule]));
    const gate = gateAnswering(["always allow 'Mcp(fx_echo)'", "allow all 'fx' tools this session"]);
    const h = harness({ cwd, approval, gate });
    const mcp = attach(h);
    open.push(mcp);
    assert.equal((await mcp.start(stdio('fx'))).ok, true);
    server.script(
      ollamaReply({
        toolCalls: [
          { name: 'fx_env', arguments: {} },
          { name: 'fx_fail', arguments: {} },
          { name: 'fx_echo', arguments: { text: 'a' } },
          { name: 'fx_echo', arguments: { text: 'b' } },
          { name: 'fx_mixed', arguments: {} },
          { name: 'fx_big', arguments: {} },
        ],
      }),
      ollamaReply({ content: 'ok' }),
    );
    await h.run('go');
    const results = toolMessages(chats()[1].body).map((m) => m.content);
    assert.equal(results[0], "ERROR: this call to fx_env was blocked by permission rule 'Mcp(fx_env)'");
    assert.equal(results[1], "ERROR: this call to fx_fail was blocked by permission rule 'fx_fail'");
    assert.equal(results[2], 'echo: a');
    assert.equal(results[3], 'echo: b', 'the persisted allow rule covered the second call');
    assert.equal(results[4], 'before\n[unsupported content block: image]\nafter');
    assert.match(results[5], /^startx+/, 'the server grant covered the rest of its tools');
    assert.equal(gate.asked.length, 2);
    assert.deepEqual(gate.asked[0], {
      question: 'Allow fx_echo',
      detail: ['{', '  "text": "a"', '}'],
      choices: ['allow once', "always allow 'Mcp(fx_echo)'", "allow all 'fx' tools this session", 'deny'],
      meanings: ['allow_once', 'allow_always', 'allow_session', 'deny'],
      rule: 'Mcp(fx_echo)',
    });
    assert.deepEqual(persisted, [['allow', 'Mcp(fx_echo)']]);
  });

  it('ask rules beat allow rules with a one-off question; approval off suppresses them for an attached user; headless they deny', async () => {
    const cwd = tempDir();
    const gate = gateAnswering(['allow once']);
    const h = harness({ cwd, approval: new Approval(true, new PermissionRules({ allow: ['Mcp(*)'], ask: ['Mcp(fx_e*)'], deny: [] }, cwd), cwd), gate });
    const mcp = attach(h);
    open.push(mcp);
    assert.equal((await mcp.start(stdio('fx'))).ok, true);
    server.script(ollamaReply({ toolCalls: [{ name: 'fx_echo', arguments: { text: 'x' } }, { name: 'fx_mixed', arguments: {} }] }), ollamaReply({ content: 'ok' }));
    await h.run('go');
    assert.deepEqual(gate.asked.map((a) => [a.question, a.choices, a.meanings, a.rule]), [["Allow fx_echo ('Mcp(fx_e*)')", ['allow once', 'deny'], ['allow_once', 'deny'], undefined]]);
    assert.deepEqual(toolMessages(chats()[1].body).map((m) => m.content), ['echo: x', 'before\n[unsupported content block: image]\nafter']);

    h.approval.approve = false;
    server.script(ollamaReply({ toolCalls: [{ name: 'fx_echo', arguments: { text: 'y' } }] }), ollamaReply({ content: 'ok' }));
    await h.run('again');
    assert.equal(gate.asked.length, 1, 'approval off: no question');
    assert.equal(toolMessages(chats()[3].body).at(-1)!.content, 'echo: y');

    const headless = harness({ cwd: tempDir(), rules: { ask: ['Mcp(*)'] } });
    const m2 = attach(headless);
    open.push(m2);
    assert.equal((await m2.start(stdio('fx'))).ok, true);
    server.script(ollamaReply({ toolCalls: [{ name: 'fx_echo', arguments: { text: 'x' } }] }), ollamaReply({ content: 'ok' }));
    await headless.run('go');
    assert.equal(toolMessages(chats()[5].body)[0].content, "ERROR: this call to fx_echo requires interactive approval (permission rule 'Mcp(*)') and no user is attached");
  });

  it('Streamable HTTP: headers are sent, the session id is kept, tools work', async () => {
    const remote = await startHttpMcpServer('remote-key');
    try {
      const h = harness();
      const mcp = attach(h);
      const outcome = await mcp.start({ name: 'remote', scope: 'user', transport: { kind: 'http', url: remote.url, headers: { Authorization: 'Bearer remote-key' } }, sandbox: false });
      assert.equal(outcome.text, "mcp 'remote': 1 tool(s) registered (remote_lookup)");
      server.script(ollamaReply({ toolCalls: [{ name: 'remote_lookup', arguments: { key: 'k1' } }] }), ollamaReply({ content: 'ok' }));
      await h.run('look it up');
      assert.equal(toolMessages(chats()[1].body)[0].content, 'value of k1');
      const { seen } = remote;
      assert.ok(seen.every((s) => s.auth === 'Bearer remote-key'));
      assert.equal(seen[0].session, undefined);
      assert.ok(seen.slice(1).every((s) => s.session !== undefined && s.session === seen[1].session), 'the Mcp-Session-Id is echoed');
      await mcp.close();
    } finally {
      await remote.close();
    }
  });

  it('a server is trusted by its identity: name, command, args, environment, url and headers', () => {
    const base = stdio('fx', { B: '2', A: '1' }, 'project');
    assert.equal(mcpIdentity(base), ['fx', process.execPath, FIXTURE, 'A=1\x01B=2', '', ''].join('\0'));
    const key = mcpServerKey(base);
    assert.match(key, /^mcp-server:sha256:[0-9a-f]{64}$/);
    assert.equal(mcpServerKey({ ...base, transport: { ...base.transport, env: { A: '1', B: '2' } } as McpServerConfig['transport'] }), key, 'environment order does not matter');
    for (const changed of [
      { ...base, name: 'fy' },
      { ...base, transport: { kind: 'stdio', command: process.execPath, args: [FIXTURE, '--x'], env: { A: '1', B: '2' } } },
      { ...base, transport: { kind: 'stdio', command: process.execPath, args: [FIXTURE], env: { A: '1', B: '3' } } },
    ] as McpServerConfig[]) {
      assert.notEqual(mcpServerKey(changed), key);
    }
    const remote: McpServerConfig = { name: 'r', scope: 'project', transport: { kind: 'http', url: 'http://127.0.0.1:1/mcp', headers: { X: 'secret' } }, sandbox: true };
    assert.equal(mcpIdentity(remote), ['r', '', '', '', 'http://127.0.0.1:1/mcp', 'X=secret'].join('\0'));
    assert.ok(!mcpServerKey(remote).includes('secret'));
  });
});
