import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { serveWorkspace, startRift } from '../helpers/mcp.ts';
import { eventually, removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';
import { ErrorDataSchema } from '../../src/protocol/common.ts';
import { schemaDocument } from '../../src/mcp/schema-export.ts';
import { RIFT_ARGS } from '../support/rift-process.ts';

// Transport and envelope (reference F.1, F.17): frames, lifecycle, wire errors, schemas.

const FILES = {
  'src/lib.rs': '/// Doc.\npub fn beacon() {}\n\npub struct Beacon;\n\nimpl Beacon {\n    pub fn signal(&self) {}\n}\n',
  'app/main.py': 'def beacon_py():\n    return 1\n',
  'justfile': 'build:\n\tcargo build\n',
  'README.md': '# readme\n',
};

describe('MCP envelope', () => {
  const ws = serveWorkspace({ before, after }, FILES);

  test('initialize reports serverInfo name rift and the tools capability; tools are sorted', async () => {
    assert.equal(ws.rift.client.getServerVersion()?.name, 'rift');
    assert.ok(ws.rift.client.getServerCapabilities()?.tools);
    const { tools } = await ws.rift.client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      [
        'execute', 'get_symbol', 'insert_node', 'insert_symbol', 'move_file', 'nodes', 'patch', 'projection_create', 'projection_list', 'projection_remove',
        'projection_restore', 'publish', 'remove_node', 'remove_symbol', 'rename_symbol', 'replace_node', 'replace_symbol', 'search',
      ],
    );
    for (const t of tools) {
      assert.equal(t.inputSchema.type, 'object');
      assert.equal((t.inputSchema as { additionalProperties?: boolean }).additionalProperties, false);
      assert.ok(t.outputSchema, `${t.name} declares an output schema`);
    }
  });

  test('every tool carries a title and annotations: reads are read-only, changes say whether they destroy and repeat safely', async () => {
    const { tools } = await ws.rift.client.listTools();
    const hints = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
    const read = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
    const change = (destructiveHint: boolean, idempotentHint: boolean) => ({ readOnlyHint: false, destructiveHint, idempotentHint, openWorldHint: false });
    const expected: Record<string, object> = {
      get_symbol: read, search: read, nodes: read,
      replace_symbol: change(true, true), replace_node: change(true, true), remove_symbol: change(true, true), remove_node: change(true, true),
      move_file: change(true, true), rename_symbol: change(true, true), patch: change(true, false), insert_symbol: change(false, false), insert_node: change(false, false),
      // The code it runs is the caller's: anything may happen inside the copy, nothing reaches the tree.
      execute: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      projection_list: read, projection_create: change(false, false), projection_remove: change(true, true), projection_restore: change(true, true), publish: change(true, false),
    };
    for (const t of tools) {
      assert.ok(t.title && t.title.length > 0, t.name);
      assert.deepEqual(hints[t.name], { title: t.title, ...expected[t.name] }, t.name);
    }
  });

  test('tools/list states recurring shapes once per schema under $defs, and the SDK client validates results through them', async () => {
    const { tools } = await ws.rift.client.listTools();
    const bytes = Buffer.byteLength(JSON.stringify({ tools }));
    // 118,375 bytes with every shape inlined and 92 KB with $defs, before search.traversal's
    // shapes (≈3 KB), rename_symbol (≈10 KB) and the language engines' change warnings (≈1.4 KB in
    // each change tool's ChangeResult) arrived: 119,540 bytes then; execute (≈5.9 KB) and the
    // projection tools with `projection` on every read and change tool and the confirmations in
    // each ChangeResult (≈16 KB) followed; docs/benchmarks.md keeps the measurement.
    assert.ok(bytes < 150_000, `tools/list is ${bytes} bytes`);
    const out = tools.find((t) => t.name === 'remove_symbol')!.outputSchema as unknown as { $defs: Record<string, unknown> };
    assert.deepEqual(Object.keys(out.$defs).sort(), ['Diagnostic', 'PreconditionValue', 'ProjectPath', 'SourceSpan']);
    assert.doesNotMatch(JSON.stringify(tools), /9007199254740991/, 'no implied integer bounds');
    // The client caches these output schemas at listTools and validates every structured result
    // against them; a refused change exercises the precondition and diagnostic references.
    const refused = await ws.rift.call('remove_symbol', { symbol: 'rift://symbol/rust/src/lib.rs/no_such_fn' });
    assert.equal(refused.status, 'refused');
  });

  test('failures are JSON-RPC -32000 errors whose message is the rendered ErrorData line', async () => {
    const e = await ws.rift.fail('get_symbol', { name: 'beacon', limit: 0 });
    assert.equal(e.code, -32000);
    assert.deepEqual(e.data, {
      code: 'invalid_request',
      message: 'the request does not match the documented form: field limit, violation zero; correct the reported field and resend the request',
      retry: 'never',
      phase: 'read',
      diagnostics: [],
      causes: [],
    });
    assert.ok(e.message.endsWith(e.data.message as string));
  });

  test('every input failure is invalid_request naming the field', async () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['get_symbol', {}, 'field name, violation missing'],
      ['get_symbol', { name: '' }, 'field name, violation empty'],
      ['get_symbol', { name: 5 }, 'field name, violation wrong_type'],
      ['get_symbol', { name: 'a', bogus: 1 }, 'field bogus, violation unknown_field'],
      ['get_symbol', { name: 'a', include: ['body'] }, 'field include[0], violation not_one_of'],
      ['get_symbol', { name: 'a', page_index: -1 }, 'field page_index'],
      ['get_symbol', { name: 'a', rev: '' }, 'field rev, violation empty'],
      ['get_symbol', { name: 'a', rev: 'HEAD~1' }, 'field rev, violation charset_forbidden'],
      ['get_symbol', { name: 'a', rev: 'x'.repeat(129) }, 'field rev, violation too_long'],
      ['nodes', { path: '/etc/passwd', position: 0 }, 'field path, violation absolute'],
      ['nodes', { path: 'a/../b.rs', position: 0 }, 'field path, violation dot_segment'],
      ['nodes', { path: '.rift/rift.db', position: 0 }, 'field path, violation rift_state'],
      ['nodes', { path: 'src\\lib.rs', position: 0 }, 'field path, violation backslash'],
      ['nodes', { path: 'src/lib.rs' }, 'field position, violation missing'],
      ['nodes', { path: 'src/lib.rs', position: 1.5 }, 'field position'],
    ];
    for (const [tool, args, expected] of cases) {
      const e = await ws.rift.fail(tool, args);
      assert.equal(e.data.code, 'invalid_request', JSON.stringify(args));
      assert.ok((e.data.message as string).includes(expected), `${JSON.stringify(args)} → ${e.data.message}`);
    }
  });

  test('limit above 1000 is limit_exceeded carrying which limit and by how much', async () => {
    const e = await ws.rift.fail('get_symbol', { name: 'beacon', limit: 1500 });
    assert.equal(e.data.code, 'limit_exceeded');
    assert.deepEqual(e.data.limit, { field: 'limit', limit: 1000, required: 1500 });
    assert.equal(e.data.retry, 'never');
  });

  test('a corpus of requests: every result validates against the served output schema, every error against ErrorData', async () => {
    const { tools } = await ws.rift.client.listTools();
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const output = new Map(tools.map((t) => [t.name, ajv.compile(t.outputSchema!)]));
    const input = new Map(tools.map((t) => [t.name, ajv.compile(t.inputSchema)]));
    const corpus: Array<[string, Record<string, unknown>]> = [
      ['get_symbol', { name: 'beacon' }],
      ['get_symbol', { name: 'beacon', include: [] }],
      ['get_symbol', { name: 'Beacon::signal', include: ['source'] }],
      ['get_symbol', { name: 'e', limit: 1, page_index: 2 }],
      ['get_symbol', { name: 'e', limit: 1, page_index: 99 }],
      ['get_symbol', { name: 'nothing_matches_this' }],
      ['get_symbol', { name: 'beacon', include: ['history'] }],
      ['get_symbol', { name: 'beacon', rev: 'main' }],
      ['get_symbol', { name: 'beacon', limit: 5000 }],
      ['get_symbol', { name: 'beacon', limit: 0 }],
      ['nodes', { path: 'src/lib.rs', position: 12 }],
      ['nodes', { path: 'src/lib.rs', position: 100000 }],
      ['nodes', { path: 'app/main.py', position: 4 }],
      ['nodes', { path: 'missing.rs', position: 0 }],
      ['nodes', { path: 'justfile', position: 0 }],
      ['nodes', { path: 'README.md', position: 0 }],
      ['nodes', { path: '../x', position: 0 }],
    ];
    let results = 0;
    let errors = 0;
    for (const [tool, args] of corpus) {
      const validInput = input.get(tool)!(args);
      try {
        const result = await ws.rift.call(tool, args);
        assert.ok(validInput, `${tool} ${JSON.stringify(args)} answered but fails the input schema`);
        assert.ok(output.get(tool)!(result), `${tool} ${JSON.stringify(args)}: ${ajv.errorsText(output.get(tool)!.errors)}`);
        assert.doesNotMatch(JSON.stringify(result), /[0-9a-f]{64}/, 'no bare SHA-256 on the wire');
        results++;
      } catch (e) {
        const err = e as { code?: number; data?: unknown };
        assert.equal(err.code, -32000, `${tool} ${JSON.stringify(args)}: ${String(e)}`);
        const parsed = ErrorDataSchema.safeParse(err.data);
        assert.ok(parsed.success, `${tool} ${JSON.stringify(args)}: ${JSON.stringify(err.data)}`);
        errors++;
      }
    }
    assert.ok(results >= 7 && errors >= 7, `both arms produced: ${results} results, ${errors} errors`);
  });

  test('docs/mcp.json equals what the server serves (run `npm run schema` after changing a tool)', async () => {
    const committed = readFileSync(fileURLToPath(new URL('../../docs/mcp.json', import.meta.url)), 'utf8');
    assert.equal(committed, schemaDocument(), 'docs/mcp.json drifted from the served tools');
    const doc = JSON.parse(committed) as { tools: Array<{ name: string; title: string; description: string; annotations: unknown; input_schema: unknown; output_schema: unknown }> };
    const { tools } = await ws.rift.client.listTools();
    assert.deepEqual(
      doc.tools.map((t) => [t.name, t.title, t.description, t.annotations, t.input_schema, t.output_schema]),
      tools.map((t) => [t.name, t.title, t.description, t.annotations, stripSchema(t.inputSchema), stripSchema(t.outputSchema)]),
    );
  });
});

test('a standalone server logs its lifecycle on stderr, never the workspace root or request contents', async () => {
  const root = tempWorkspace(FILES);
  const rift = await startRift(root, {}, { standalone: true });
  try {
    await rift.call('get_symbol', { name: 'secret_request_text_xyz' });
    // The build's log line follows its last batch, which the answer does not wait for.
    const stderr = await eventually(() => (/index\.build/.test(rift.stderr()) ? rift.stderr() : undefined));
    assert.match(stderr, /MCP server starting/);
    assert.match(stderr, /MCP server ready/);
    assert.match(stderr, /index\.build/);
    assert.ok(!stderr.includes(root), 'no workspace root in logs');
    assert.ok(!stderr.includes('secret_request_text_xyz'), 'no request contents in logs');
  } finally {
    await rift.close();
    removeWorkspace(root);
  }
});

function stripSchema(s: unknown): unknown {
  return JSON.parse(JSON.stringify(s));
}

test('stdout carries only newline-delimited JSON-RPC frames, and the server logs its stop', async () => {
  const root = tempWorkspace(FILES);
  const child = spawn(process.execPath, [...RIFT_ARGS, 'mcp', '--standalone'], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const send = (msg: unknown) => child.stdin.write(JSON.stringify(msg) + '\n');
  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } } });
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_symbol', arguments: { name: 'beacon' } } });
  const deadline = Date.now() + 20000;
  while (!stdout.includes('"id":2') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  child.stdin.end();
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const lines = stdout.split('\n').filter((l) => l.length > 0);
  assert.ok(lines.length >= 2);
  for (const line of lines) assert.equal(JSON.parse(line).jsonrpc, '2.0');
  const call = lines.map((l) => JSON.parse(l)).find((m) => m.id === 2);
  assert.equal(call.result.structuredContent.hits[0].symbol.name, 'beacon');
  assert.equal(code, 0);
  assert.match(stderr, /MCP server stopped/);
  removeWorkspace(root);
});
