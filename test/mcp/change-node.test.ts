import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { serveWorkspace } from '../helpers/mcp.ts';
import { eventually } from '../helpers/workspace.ts';

// Node edits over stdio (reference F.11 rules 126–127, F.13 rule 152 without an engine).

type Node = { id: string; kind: string; symbol?: string; range: { start: number; end: number } };
type Result = { status: string; reason?: string; preconditions?: Array<{ kind: string; addresses: unknown[]; expected: { value: unknown }; observed: { value: unknown } }>; summary?: { warnings: Array<{ kind: string }> } };

const FILES = {
  'src/lib.rs': 'fn main() {\n    let x = compute(1);\n    println!("{}", x);\n}\n\n/// Helper.\nfn helper() {}\n',
  'app/m.py': 'def f():\r\n    a = 1\r\n    return a\r\n',
  'app/u.py': 'x = "é"\n',
};

describe('change tools: nodes', () => {
  const ws = serveWorkspace({ before, after }, FILES);
  const read = (p: string) => readFileSync(join(ws.root, p), 'utf8');
  const nodesAt = async (path: string, position: number) => ((await ws.rift.call('nodes', { path, position })) as { nodes: Node[] }).nodes;
  const call = async (tool: string, args: Record<string, unknown>) => (await ws.rift.call(tool, args)) as Result;

  test('replace_node swaps exactly the node bytes; a stale witness refuses naming both witnesses', async () => {
    const text = read('src/lib.rs');
    const call1 = (await nodesAt('src/lib.rs', text.indexOf('compute'))).find((n) => n.kind === 'call_expression')!;
    const r = await call('replace_node', { node: call1.id, body: 'compute(2)' });
    assert.equal(r.status, 'applied');
    assert.equal(read('src/lib.rs'), text.replace('compute(1)', 'compute(2)'));
    const stale = await call('replace_node', { node: call1.id, body: 'compute(3)' });
    assert.equal(stale.status, 'refused');
    assert.equal(stale.reason, 'unmet_precondition');
    const p = stale.preconditions![0];
    assert.equal(p.kind, 'source_unchanged');
    assert.deepEqual(p.addresses, [{ kind: 'node', node: call1.id }]);
    assert.equal(p.expected.value, call1.id.slice(-8));
    assert.match(String(p.observed.value), /^[0-9a-f]{8}$/);
  });

  test('insert_node lands verbatim at the boundary, with no separator', async () => {
    const text = read('src/lib.rs');
    const stmt = (await nodesAt('src/lib.rs', text.indexOf('println'))).find((n) => n.kind === 'expression_statement')!;
    const r = await call('insert_node', { node: stmt.id, position: 'before', body: 'eprintln!("start");\n    ' });
    assert.equal(r.status, 'applied');
    assert.equal(read('src/lib.rs'), text.replace('    println!', '    eprintln!("start");\n    println!'));
    const after = read('src/lib.rs');
    const stmt2 = (await nodesAt('src/lib.rs', after.indexOf('    println') + 4)).find((n) => n.kind === 'expression_statement')!;
    const r2 = await call('insert_node', { node: stmt2.id, position: 'after', body: ' // done' });
    assert.equal(r2.status, 'applied');
    assert.equal(read('src/lib.rs'), after.replace('x);\n}', 'x); // done\n}'));
  });

  test('remove_node on a statement removes its line and warns node_unchecked; on a declaration takes its doc', async () => {
    const text = read('app/m.py');
    const stmt = (await nodesAt('app/m.py', text.indexOf('a = 1'))).find((n) => n.kind === 'expression_statement')!;
    const r = await call('remove_node', { node: stmt.id });
    assert.equal(r.status, 'applied');
    assert.equal(read('app/m.py'), 'def f():\r\n    return a\r\n');
    assert.deepEqual(r.summary!.warnings.map((w) => w.kind), ['rift.remove.node_unchecked']);
    const rs = read('src/lib.rs');
    const decl = (await nodesAt('src/lib.rs', rs.indexOf('fn helper'))).find((n) => n.kind === 'function_item')!;
    const d = await call('remove_node', { node: decl.id });
    assert.equal(d.status, 'applied');
    assert.ok(read('src/lib.rs').endsWith('}\n'));
    assert.ok(!read('src/lib.rs').includes('Helper'));
    assert.deepEqual(d.summary!.warnings.map((w) => w.kind), ['rift.remove.references_unchecked']);
  });

  test('a node past the end of the file is invalid_request; a missing file refuses target_exists', async () => {
    const big = await ws.rift.fail('replace_node', { node: 'rift://node/rust/src/lib.rs@0-99999#00000000', body: 'x' });
    assert.equal(big.data.code, 'invalid_request');
    assert.match(big.data.message as string, /field node, violation outside the addressed file/);
    const bad = await ws.rift.fail('replace_node', { node: 'rift://node/rust/src/lib.rs@5-1#00000000', body: 'x' });
    assert.match(bad.data.message as string, /field node, violation not a witnessed rift node address/);
    const id = 'rift://node/rust/src/gone.rs@0-1#00000000';
    const gone = await call('remove_node', { node: id });
    assert.equal(gone.status, 'refused');
    assert.equal(gone.preconditions![0].kind, 'target_exists');
    assert.deepEqual(gone.preconditions![0].addresses, [{ kind: 'node', node: id }]);
  });

  test('a range off a UTF-8 character boundary is invalid_request before any witness check (rule 126)', async () => {
    // `é` takes bytes 5–6 of app/u.py; 6 is inside it.
    for (const range of ['6-7', '4-6']) {
      const e = await ws.rift.fail('replace_node', { node: `rift://node/python/app/u.py@${range}#00000000`, body: 'x' });
      assert.equal(e.data.code, 'invalid_request', range);
      assert.match(e.data.message as string, /field node, violation off a UTF-8 character boundary/, range);
    }
    assert.equal(read('app/u.py'), 'x = "é"\n');
  });

  test('an external edit the watcher indexed makes the old witness stale', async () => {
    writeFileSync(join(ws.root, 'src/extra.rs'), 'fn a() { 1 }\n');
    const nodes = await eventually(async () => {
      const n = await nodesAt('src/extra.rs', 9).catch(() => undefined);
      return n && n.length > 0 ? n : undefined;
    });
    const lit = nodes[nodes.length - 1];
    writeFileSync(join(ws.root, 'src/extra.rs'), 'fn a() { 2 }\n');
    const r = await call('replace_node', { node: lit.id, body: '3' });
    assert.equal(r.status, 'refused');
    assert.equal(readFileSync(join(ws.root, 'src/extra.rs'), 'utf8'), 'fn a() { 2 }\n');
  });
});
