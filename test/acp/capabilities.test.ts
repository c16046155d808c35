import { describe, it, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { McpServer, SessionUpdate } from '@agentclientprotocol/sdk';
import { PARTIAL_NOTE } from '../../src/agent/policy/approval.ts';
import { probeSandbox } from '../../src/process/sandbox.ts';
import { startHttpMcpServer } from '../support/mcp-http.ts';
import { ollamaReply } from '../support/model-server.ts';
import { pick, useAcp } from './client.ts';
import { RIFT_ARGS } from '../support/rift-process.ts';

// What rift does with what an ACP client offers — its terminal, its MCP servers, rift's own
// extensions (`_rift/undo`, `_rift/edit_review`) — and the repository trust questions over
// ACP. Every transcript is checked against the ACP schema.

type U = SessionUpdate;
const of = <K extends U['sessionUpdate']>(us: U[], kind: K) => us.filter((u) => u.sessionUpdate === kind) as Array<Extract<U, { sessionUpdate: K }>>;
const FIXTURE = fileURLToPath(new URL('../agent/extensions/fixtures/tool-server.mjs', import.meta.url));

describe('rift acp: client capabilities and extensions', () => {
  const { server, dirs, chats, open, done: finish } = useAcp('rift-acp-caps-');
  let cwd: string;
  let home: string;
  beforeEach(() => ({ cwd, home } = dirs()));
  const toolResults = () => chats().at(-1)!.body.messages.filter((m: { role: string }) => m.role === 'tool').map((m: { content: string }) => m.content);

  it("the client's terminal runs bash (inside rift's sandbox wrapper where there is one); the tool call embeds it", async () => {
    const c = open({ args: ['--no-index', '--approve=false'], caps: { terminal: true } });
    await c.initialize();
    const { sessionId } = await c.agent.request('session/new', { cwd, mcpServers: [] });
    server.script(ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: 'echo from-the-terminal; exit 3' } }] }), ollamaReply({ content: 'ok' }));
    await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'run it' }] });
    const created = c.transcript.find((m) => m.message.method === 'terminal/create')!.message.params as { command: string; args: string[]; cwd: string };
    assert.equal(created.cwd, cwd);
    assert.equal(created.args.at(-1), 'echo from-the-terminal; exit 3');
    const sandbox = probeSandbox();
    // Wrapped, the shell is the sandbox's argument; without a sandbox it is the command itself.
    if (sandbox.available) assert.deepEqual(created.args.slice(-3, -1), ['sh', '-c']);
    else assert.deepEqual(created.args, ['-c', 'echo from-the-terminal; exit 3']);
    assert.equal(created.command, sandbox.available ? sandbox.binary : 'sh', 'the editor runs rift\'s sandbox wrapper, not the bare shell');
    assert.equal(toolResults()[0], 'from-the-terminal\n\n[exit code: 3]');
    const term = of(c.updatesOf(sessionId), 'tool_call_update').find((u) => u.content?.some((x) => x.type === 'terminal'));
    assert.deepEqual(term!.content, [{ type: 'terminal', terminalId: 'term-1' }]);
    const methods = c.transcript.filter((m) => m.from === 'agent').map((m) => m.message.method).filter(Boolean);
    assert.ok(methods.indexOf('terminal/release') > methods.indexOf('terminal/output'), 'released after its output was read');
  });

  it('_rift/undo and the /undo command restore what the last turn changed', async () => {
    writeFileSync(join(cwd, 'f.txt'), 'one\n');
    const c = open({ args: ['--no-index', '--approve=false'] });
    await c.initialize();
    const { sessionId } = await c.agent.request('session/new', { cwd, mcpServers: [] });
    server.script(ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'f.txt', content: 'two\n' } }] }), ollamaReply({ content: 'ok' }));
    await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'change f' }] });
    assert.equal(readFileSync(join(cwd, 'f.txt'), 'utf8'), 'two\n');
    const undone = await c.agent.request<{ ok: boolean; message: string }>('_rift/undo', { sessionId });
    assert.deepEqual(undone, { ok: true, message: `restored to pre-turn state:\n  ${join(cwd, 'f.txt')}\n(note: changes made via bash are not tracked)` });
    assert.equal(readFileSync(join(cwd, 'f.txt'), 'utf8'), 'one\n');
    assert.deepEqual(await c.agent.request('_rift/undo', { sessionId }), { ok: false, message: 'nothing to undo (only write/edit tool changes are tracked)' });

    server.script(ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'g.txt', content: 'g\n' } }] }), ollamaReply({ content: 'ok' }));
    await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'make g' }] });
    const mark = c.updates.length;
    assert.deepEqual(await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: '/undo' }] }), { stopReason: 'end_turn' });
    assert.equal(existsSync(join(cwd, 'g.txt')), false);
    assert.match((of(c.updatesOf(sessionId, mark), 'agent_message_chunk')[0].content as { text: string }).text, /^restored to pre-turn state:/);
    await assert.rejects(c.agent.request('_rift/undo', { sessionId: 'nope' }), (e: { code: number }) => e.code === -32002);
  });

  it('_rift/edit_review, for a client that opts in: the hunks go out, a partial assembly is written and the model told', async () => {
    writeFileSync(join(cwd, 'f.txt'), 'a\nb\nc\nd\ne\n');
    const c = open({
      caps: { _meta: { rift: { editReview: true } } },
      review: (p) => {
        let first = true;
        const content = (p.segments as Array<{ same: boolean; lines?: string[]; old?: string[]; new?: string[] }>)
          .flatMap((s) => {
            if (s.same) return s.lines!;
            const take = first ? s.new! : s.old!;
            first = false;
            return take;
          })
          .join('\n');
        return { apply: true, content };
      },
    });
    await c.initialize();
    const { sessionId } = await c.agent.request('session/new', { cwd, mcpServers: [] });
    server.script(ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'f.txt', content: 'a\nB\nc\nd\nE\n' } }] }), ollamaReply({ content: 'ok' }));
    await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'capitalize' }] });
    assert.equal(c.permissions.length, 0, 'the review replaces the plain question');
    assert.equal(c.reviews.length, 1);
    const r = c.reviews[0];
    const call = of(c.updatesOf(sessionId), 'tool_call')[0];
    assert.deepEqual({ ...r, segments: undefined }, { sessionId, toolCallId: call.toolCallId, tool: 'write', path: join(cwd, 'f.txt'), old: 'a\nb\nc\nd\ne\n', new: 'a\nB\nc\nd\nE\n', segments: undefined });
    assert.deepEqual(r.segments, [
      { same: true, lines: ['a'] },
      { same: false, old: ['b'], new: ['B'] },
      { same: true, lines: ['c', 'd'] },
      { same: false, old: ['e'], new: ['E'] },
      { same: true, lines: [''] },
    ]);
    assert.equal(readFileSync(join(cwd, 'f.txt'), 'utf8'), 'a\nB\nc\nd\ne\n');
    assert.ok(toolResults()[0].endsWith(PARTIAL_NOTE));
  });

  it('MCP servers the client passes in session/new are the session’s tools; a dead one is a warning, not a failed turn', async () => {
    const c = open({ args: ['--no-index', '--approve=false'] });
    await c.initialize();
    const { sessionId } = await c.agent.request('session/new', {
      cwd,
      mcpServers: [
        { name: 'fx', command: process.execPath, args: [FIXTURE], env: [{ name: 'FIXTURE_TOKEN', value: 'from-the-editor' }] },
        { name: 'gone', command: join(cwd, 'no-such-server'), args: [], env: [] },
      ],
    });
    server.script(ollamaReply({ toolCalls: [{ name: 'fx_env', arguments: {} }] }), ollamaReply({ content: 'ok' }));
    const mark = c.updates.length;
    assert.deepEqual(await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'token?' }] }), { stopReason: 'end_turn' });
    assert.ok(chats()[0].body.tools.some((t: { function: { name: string } }) => t.function.name === 'fx_env'));
    assert.equal(toolResults()[0], 'from-the-editor');
    const thoughts = of(c.updatesOf(sessionId, mark), 'agent_thought_chunk').map((t) => (t.content as { text: string }).text).join('');
    assert.match(thoughts, /warning: MCP server 'gone' failed to start: .*ENOENT.* — its tools are unavailable/);
    await assert.rejects(
      c.agent.request('session/new', { cwd, mcpServers: [{ type: 'sse', name: 'old', url: 'http://127.0.0.1:1/sse', headers: [] }] }),
      (e: { code: number; message: string }) => e.code === -32602 && /uses SSE/.test(e.message),
    );
  });

  it('the editor\'s servers over stdio (rift mcp itself) and Streamable HTTP: the model calls both; session/load attaches them again', async () => {
    mkdirSync(join(cwd, 'src'));
    writeFileSync(join(cwd, 'src', 'greet.ts'), 'export function greet(name: string): string {\n  return `hello ${name}`;\n}\n');
    const remote = await startHttpMcpServer('editor-key');
    try {
      const mcpServers: McpServer[] = [
        { name: 'rift', command: process.execPath, args: [...RIFT_ARGS, 'mcp', '--standalone'], env: [{ name: 'RIFT_HOME', value: home }, { name: 'RIFT_LOG', value: 'error' }] },
        { type: 'http', name: 'remote', url: remote.url, headers: [{ name: 'Authorization', value: 'Bearer editor-key' }] },
      ];
      const c = open({ args: ['--no-index', '--approve=false'] });
      await c.initialize();
      const { sessionId } = await c.agent.request('session/new', { cwd, mcpServers });
      server.script(
        ollamaReply({ toolCalls: [{ name: 'rift_get_symbol', arguments: { name: 'greet' } }, { name: 'remote_lookup', arguments: { key: 'greet' } }] }),
        ollamaReply({ content: 'ok' }),
      );
      const mark = c.updates.length;
      assert.deepEqual(await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'what is greet?' }] }), { stopReason: 'end_turn' });
      const offered = chats()[0].body.tools.map((t: { function: { name: string } }) => t.function.name);
      assert.ok(offered.includes('rift_get_symbol') && offered.includes('remote_lookup'), JSON.stringify(offered));
      const [symbol, looked] = toolResults();
      const hits = JSON.parse(symbol).hits;
      assert.equal(hits.length, 1);
      assert.equal(hits[0].source.text, 'export function greet(name: string): string {\n  return `hello ${name}`;\n}');
      assert.equal(looked, 'value of greet');
      assert.ok(remote.seen.length > 0 && remote.seen.every((r) => r.auth === 'Bearer editor-key'), 'the editor\'s headers are sent');
      const calls = of(c.updatesOf(sessionId, mark), 'tool_call');
      assert.deepEqual(calls.map((t) => [t.title, t.kind, t.status]), [
        ['rift_get_symbol', 'other', 'pending'],
        ['remote_lookup', 'other', 'pending'],
      ]);
      const finals = of(c.updatesOf(sessionId, mark), 'tool_call_update').filter((u) => u.status === 'completed');
      assert.deepEqual(finals.map((u) => u.toolCallId), calls.map((t) => t.toolCallId));
      await finish(c);

      // A reloaded session gets the servers the editor passes again.
      const before = remote.seen.length;
      const d = open({ args: ['--no-index', '--approve=false'] });
      await d.initialize();
      await d.agent.request('session/load', { sessionId, cwd, mcpServers: [mcpServers[1]] });
      assert.ok(remote.seen.length > before, 'reconnected on load');
      server.script(ollamaReply({ toolCalls: [{ name: 'remote_lookup', arguments: { key: 'again' } }] }), ollamaReply({ content: 'ok' }));
      await d.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'once more' }] });
      assert.equal(toolResults().at(-1), 'value of again');
      assert.ok(!chats().at(-1)!.body.tools.some((t: { function: { name: string } }) => t.function.name === 'rift_get_symbol'), 'only the servers passed to this load');
    } finally {
      await remote.close();
    }
  });

  it('the editor\'s stdio servers end with rift acp: when the editor closes stdin, and when rift acp is killed', async () => {
    const gone = async (pid: number) => {
      for (let i = 0; i < 200; i++) {
        try {
          process.kill(pid, 0);
        } catch {
          return true;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      return false;
    };
    for (const end of ['stdin closed', 'SIGKILL'] as const) {
      const marker = join(cwd, `mcp-pid-${end === 'SIGKILL' ? 'kill' : 'eof'}`);
      const c = open({ args: ['--no-index', '--approve=false'] });
      await c.initialize();
      await c.agent.request('session/new', { cwd, mcpServers: [{ name: 'fx', command: process.execPath, args: [FIXTURE], env: [{ name: 'TOOL_SERVER_MARKER', value: marker }] }] });
      const pid = Number(readFileSync(marker, 'utf8'));
      process.kill(pid, 0);
      if (end === 'SIGKILL') {
        c.child.kill('SIGKILL');
        await c.exit;
      } else {
        await finish(c);
      }
      assert.ok(await gone(pid), `the MCP server (pid ${pid}) outlived rift acp (${end})`);
    }
  });

  it('trust over ACP: a project MCP server is asked about before the first turn; skip keeps it off, trust starts it and persists', async () => {
    const marker = join(cwd, 'mcp-started');
    writeFileSync(join(cwd, '.rift.json'), JSON.stringify({ mcp: { fx: { command: process.execPath, args: [FIXTURE], env: { TOOL_SERVER_MARKER: marker } } } }));
    const skip = open({ permission: (req) => pick(req, 'reject_once') });
    await skip.initialize();
    const first = await skip.agent.request('session/new', { cwd, mcpServers: [] });
    server.script(ollamaReply({ content: 'ok' }));
    await skip.agent.request('session/prompt', { sessionId: first.sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    assert.equal(skip.permissions.length, 1);
    const ask = skip.permissions[0];
    assert.deepEqual(ask.options, [
      { optionId: 'trust', name: 'trust', kind: 'allow_always' },
      { optionId: 'skip', name: 'skip', kind: 'reject_once' },
    ]);
    const card = of(skip.updatesOf(first.sessionId), 'tool_call').find((t) => t.toolCallId === ask.toolCall.toolCallId)!;
    assert.match(card.title, /^Project MCP server 'fx' runs `.*tool-server\.mjs` — a program from this repo/);
    assert.equal(existsSync(marker), false);
    assert.ok(!chats()[0].body.tools.some((t: { function: { name: string } }) => t.function.name.startsWith('fx_')));
    await finish(skip);

    const trust = open({ permission: (req) => pick(req, req.options.some((o) => o.optionId === 'trust') ? 'allow_always' : 'allow_once') });
    await trust.initialize();
    const second = await trust.agent.request('session/new', { cwd, mcpServers: [] });
    server.script(ollamaReply({ toolCalls: [{ name: 'fx_echo', arguments: { text: 'trusted' } }] }), ollamaReply({ content: 'ok' }));
    await trust.agent.request('session/prompt', { sessionId: second.sessionId, prompt: [{ type: 'text', text: 'echo' }] });
    assert.ok(existsSync(marker));
    assert.equal(toolResults()[0], 'echo: trusted');
    const done = of(trust.updatesOf(second.sessionId), 'tool_call_update').find((u) => u.toolCallId === trust.permissions[0].toolCall.toolCallId && u.status === 'completed')!;
    assert.match((done.content![0] as { content: { text: string } }).content.text, /^MCP server 'fx' trusted — mcp 'fx': 7 tool\(s\) registered/);
    assert.ok(JSON.parse(readFileSync(join(home, 'trusted-hooks.json'), 'utf8')).some((k: string) => k.startsWith('mcp-server:sha256:')));
  });

  it('embedded resources reach the model whole; a prompt with no text is refused naming the field', async () => {
    mkdirSync(join(cwd, 'src'));
    const c = open({ args: ['--no-index', '--approve=false'] });
    await c.initialize();
    const { sessionId } = await c.agent.request('session/new', { cwd, mcpServers: [] });
    server.script(ollamaReply({ content: 'seen' }));
    await c.agent.request('session/prompt', {
      sessionId,
      prompt: [
        { type: 'text', text: 'explain' },
        { type: 'resource', resource: { uri: `file://${join(cwd, 'src', 'x.ts')}`, text: 'const unsaved = 1;', mimeType: 'text/plain' } },
      ],
    });
    assert.equal(chats()[0].body.messages.at(-1).content, `explain \n<context file="${join(cwd, 'src', 'x.ts')}">\nconst unsaved = 1;\n</context>`);
    await assert.rejects(c.agent.request('session/prompt', { sessionId, prompt: [] }), (e: { code: number; message: string }) => e.code === -32602 && /'prompt' holds no text/.test(e.message));
  });
});
