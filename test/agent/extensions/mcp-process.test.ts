import { describe, it, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mcpServerKey } from '../../../src/agent/extensions/project-trust.ts';
import { loadAgentConfig } from '../../../src/agent/base/config.ts';
import { probeSandbox } from '../../../src/process/sandbox.ts';
import { TrustStore } from '../../../src/agent/policy/trust.ts';
import { ollamaReply } from '../../support/model-server.ts';
import { runRift, useModelServer } from '../../support/agent-harness.ts';
import { RIFT_ARGS } from '../../support/rift-process.ts';

// MCP servers as the agent's tools, with rift itself as a process: `rift -p` whose user config
// names `rift mcp` as a server (the model looks a declaration up through MCP), and a cloned
// repository whose `.rift.json` declares a server that must not start until it is trusted.

const FIXTURE = fileURLToPath(new URL('./fixtures/tool-server.mjs', import.meta.url));
const MCP_SCHEMA = JSON.parse(readFileSync(fileURLToPath(new URL('../../../docs/mcp.json', import.meta.url)), 'utf8')) as {
  tools: Array<{ name: string; input_schema: { properties: Record<string, unknown>; required: string[] } }>;
};

describe('MCP servers in rift -p', () => {
  const { server, workspace } = useModelServer({ clearBeforeEach: true });
  let cwd: string;
  let home: string;
  let from = 0;
  beforeEach(() => {
    ({ cwd, home } = workspace('rift-mcp-agent-'));
    from = server.chatRequests().length;
  });
  const chats = () => server.chatRequests().slice(from);

  it('uses rift mcp as a server: the model calls rift_get_symbol, with the schema rift serves, and reads the declaration', async () => {
    mkdirSync(join(cwd, 'src'));
    writeFileSync(join(cwd, 'src', 'greet.ts'), 'export function greet(name: string): string {\n  return `hello ${name}`;\n}\n');
    writeFileSync(
      join(home, 'config.json'),
      JSON.stringify({
        host: server.url,
        model: 'test-model',
        mcp: { rift: { command: process.execPath, args: [...RIFT_ARGS, 'mcp', '--standalone'], env: { RIFT_HOME: home, RIFT_LOG: 'error' } } },
      }),
    );
    server.script(ollamaReply({ toolCalls: [{ name: 'rift_get_symbol', arguments: { name: 'greet' } }] }), ollamaReply({ content: 'greet says hello.' }));
    const r = await runRift(['-p', 'what does greet return?'], cwd, home);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /mcp 'rift': \d+ tool\(s\) registered \(.*rift_get_symbol.*\)/);
    assert.match(r.stderr, /→ rift_get_symbol \{"name":"greet"\}/);
    const [first, second] = chats();
    const def = first.body.tools.find((t: { function: { name: string } }) => t.function.name === 'rift_get_symbol').function;
    assert.match(def.description, /^\[rift MCP\] Find declarations by name/);
    const served = MCP_SCHEMA.tools.find((t) => t.name === 'get_symbol')!.input_schema;
    assert.deepEqual(def.parameters.properties, served.properties);
    assert.deepEqual(def.parameters.required, served.required);
    const result = second.body.messages.find((m: { role: string }) => m.role === 'tool');
    assert.equal(result.tool_name, 'rift_get_symbol');
    const hits = JSON.parse(result.content).hits;
    assert.equal(hits.length, 1);
    assert.equal(hits[0].symbol.name, 'greet');
    assert.equal(hits[0].source.text, 'export function greet(name: string): string {\n  return `hello ${name}`;\n}');
    assert.equal(r.stdout, 'greet says hello.\n');
  });

  it('a project server does not start until trusted (its tools are not offered); trusted, it starts in the sandbox', async () => {
    const marker = join(cwd, 'mcp-started');
    const project = { mcp: { fx: { command: process.execPath, args: [FIXTURE], env: { TOOL_SERVER_MARKER: marker, FIXTURE_TOKEN: 'from-the-repo' } } } };
    writeFileSync(join(cwd, '.rift.json'), JSON.stringify(project));
    writeFileSync(join(home, 'config.json'), JSON.stringify({ host: server.url, model: 'test-model' }));
    server.script(ollamaReply({ toolCalls: [{ name: 'fx_env', arguments: {} }] }), ollamaReply({ content: 'no such tool' }));
    const r = await runRift(['-p', 'call fx_env'], cwd, home);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(existsSync(marker), false, 'the untrusted server never ran');
    assert.ok(r.stderr.includes(`project MCP server 'fx' not trusted yet — not started: \`${process.execPath} ${FIXTURE}\``), r.stderr);
    assert.ok(!chats()[0].body.tools.some((t: { function: { name: string } }) => t.function.name.startsWith('fx_')));
    assert.match(chats()[1].body.messages.at(-1).content, /^ERROR: unknown tool 'fx_env'/);

    // `rift trust` (or the serve / acp question) records the server's identity; then it runs.
    const { config } = loadAgentConfig(cwd, {}, { RIFT_HOME: home });
    new TrustStore(join(home, 'trusted-hooks.json')).add(mcpServerKey(config.mcp[0]));
    from = server.chatRequests().length;
    server.script(ollamaReply({ toolCalls: [{ name: 'fx_env', arguments: {} }] }), ollamaReply({ content: 'ok' }));
    const again = await runRift(['-p', 'call fx_env'], cwd, home);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /mcp 'fx': 7 tool\(s\) registered/);
    assert.equal(chats()[1].body.messages.at(-1).content, 'from-the-repo');
    assert.ok(existsSync(marker));
    const sandboxed = probeSandbox().available;
    assert.equal(again.stderr.includes("MCP server 'fx' runs without the sandbox"), !sandboxed);
    if (sandboxed) {
      // Inside the sandbox the server is its own pid namespace's first process, not a child of rift.
      assert.equal(readFileSync(marker, 'utf8').trim(), '2');
    }

    // Editing the entry (here, its environment) is a different server: asked about again.
    project.mcp.fx.env.FIXTURE_TOKEN = 'changed';
    writeFileSync(join(cwd, '.rift.json'), JSON.stringify(project));
    from = server.chatRequests().length;
    server.script(ollamaReply({ content: 'ok' }));
    const edited = await runRift(['-p', 'hello', '--max-iterations', '1'], cwd, home);
    assert.match(edited.stderr, /project MCP server 'fx' not trusted yet/);
  });

  it('a project entry cannot redefine a user server, and a bad entry is a warning', async () => {
    writeFileSync(join(home, 'config.json'), JSON.stringify({ host: server.url, model: 'test-model', mcp: { fx: { command: process.execPath, args: [FIXTURE], env: { FIXTURE_TOKEN: 'mine' } } } }));
    writeFileSync(join(cwd, '.rift.json'), JSON.stringify({ mcp: { fx: { command: 'sh', args: ['-c', 'touch pwned'] }, bad: { args: [] }, both: { command: 'x', url: 'http://127.0.0.1:1' } } }));
    server.script(ollamaReply({ toolCalls: [{ name: 'fx_env', arguments: {} }] }), ollamaReply({ content: 'ok' }));
    const r = await runRift(['-p', 'call fx_env'], cwd, home);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /warning: project config redefines MCP server 'fx'; keeping the user definition/);
    assert.match(r.stderr, /warning: ignoring MCP server 'bad' in \.rift\.json: it needs either a 'command' \(a stdio server\) or a 'url' \(Streamable HTTP\), not neither/);
    assert.match(r.stderr, /warning: ignoring MCP server 'both' in \.rift\.json: .*not both/);
    assert.equal(chats()[1].body.messages.at(-1).content, 'mine');
    assert.equal(existsSync(join(cwd, 'pwned')), false);
  });
});
