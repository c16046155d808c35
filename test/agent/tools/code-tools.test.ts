import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AskRequest, Gate } from '../../../src/agent/policy/gate.ts';
import { ToolRegistry } from '../../../src/agent/tools/registry.ts';
import { Engine } from '../../../src/services/engine.ts';
import { ollamaReply } from '../../support/model-server.ts';
import { tempDir, useModelServer, type Harness, type HarnessOptions } from '../../support/agent-harness.ts';

// replace_symbol and patch through the real ChangeService over a temp workspace, driven by the
// real agent loop against the scripted model server.

const CALC = 'export function add(a: number, b: number): number {\n  return a + b;\n}\n\nexport const zero = 0;\n';
const ADD_ID = 'rift://symbol/typescript/src/calc.ts/add';
const NEW_ADD = 'export function add(a: number, b: number): number {\n  return b + a;\n}';

describe('agent code tools: replace_symbol and patch', () => {
  let engine: Engine | undefined;
  // Registered first, so the engine closes before the fixture's afterEach removes the workspace.
  afterEach(async () => {
    await engine?.close();
    engine = undefined;
  });
  const { server, harness } = useModelServer({ assertConsumed: true });

  async function workspace(files: Record<string, string>, o: HarnessOptions = {}): Promise<Harness> {
    const cwd = tempDir();
    for (const [p, c] of Object.entries(files)) {
      mkdirSync(join(cwd, p, '..'), { recursive: true });
      writeFileSync(join(cwd, p), c);
    }
    engine = await Engine.open(cwd, { watch: false });
    await engine.build();
    return harness({ ...o, cwd, code: { read: engine.read, search: engine.search, change: engine.change } });
  }

  /** One tool call, then an answer; returns the tool result text the model saw. */
  async function turn(hh: Harness, name: string, args: Record<string, unknown>): Promise<string> {
    server.script(ollamaReply({ toolCalls: [{ name, arguments: args }] }), ollamaReply({ content: 'done' }));
    const r = await hh.run(`use ${name}`);
    assert.equal(r.outcome, 'answered');
    const msg = server.chatRequests().at(-1)!.body.messages.at(-1);
    assert.equal(msg.role, 'tool');
    return msg.content as string;
  }

  const read = (hh: Harness, p: string) => readFileSync(join(hh.cwd, p), 'utf8');

  it('are offered only with the change service', () => {
    assert.equal(ToolRegistry.standard({}).get('replace_symbol'), undefined);
    assert.equal(ToolRegistry.standard({}).get('patch'), undefined);
    const reg = ToolRegistry.standard({ change: {} as never });
    assert.ok(reg.get('replace_symbol')?.mutating);
    assert.ok(reg.get('patch')?.mutating);
    assert.equal(reg.resolve('apply_patch'), 'patch');
  });

  it('replace_symbol applies: exact bytes, a compact result, an edit_diff', async () => {
    const hh = await workspace({ 'src/calc.ts': CALC });
    const text = await turn(hh, 'replace_symbol', { symbol: ADD_ID, body: NEW_ADD });
    assert.match(text, /^applied chg_[a-z2-7]{26}\n {2}src\/calc\.ts modified \+1 -1$/);
    assert.equal(read(hh, 'src/calc.ts'), `${NEW_ADD}\n\nexport const zero = 0;\n`);
    assert.deepEqual(hh.of('tool_result').map((e) => e.ok), [true]);
    const diff = hh.of('edit_diff');
    assert.equal(diff.length, 1);
    assert.equal(diff[0].path, join(hh.cwd, 'src/calc.ts'));
    assert.deepEqual([diff[0].added, diff[0].removed], [1, 1]);
  });

  it('replace_symbol on a stale symbol refuses, writes nothing, and tells the model how to recover', async () => {
    const hh = await workspace({ 'src/calc.ts': CALC });
    const edited = CALC.replace('function add', 'function plus');
    writeFileSync(join(hh.cwd, 'src/calc.ts'), edited);
    const text = await turn(hh, 'replace_symbol', { symbol: ADD_ID, body: NEW_ADD });
    assert.match(text, /^ERROR: replace_symbol refused \(unmet_precondition\); nothing was written\.\n- (target_exists|source_unchanged) src\/calc\.ts: expected .+, observed .+ — .*get_symbol/);
    assert.equal(read(hh, 'src/calc.ts'), edited);
    assert.deepEqual(hh.of('tool_result').map((e) => e.ok), [false]);
  });

  it('request errors come back as tool results, never thrown', async () => {
    const hh = await workspace({ 'src/calc.ts': CALC });
    assert.match(await turn(hh, 'replace_symbol', { symbol: 'add', body: NEW_ADD }), /^ERROR: replace_symbol: 'add' is not a symbol id; get one .* from get_symbol$/);
    assert.match(await turn(hh, 'patch', { patch: 'not a diff at all\n' }), /^ERROR: patch failed: invalid_request: /);
    assert.equal(read(hh, 'src/calc.ts'), CALC);
  });

  it('patch applies a two-file diff', async () => {
    const hh = await workspace({ 'src/a.ts': 'export const a = 1;\n', 'src/b.ts': 'export const b = 1;\nexport const c = 1;\n' });
    const diff = [
      '--- a/src/a.ts', '+++ b/src/a.ts', '@@ -1 +1 @@', '-export const a = 1;', '+export const a = 2;',
      '--- a/src/b.ts', '+++ b/src/b.ts', '@@ -1,2 +1,3 @@', ' export const b = 1;', '-export const c = 1;', '+export const c = 3;', '+export const d = 4;', '',
    ].join('\n');
    const text = await turn(hh, 'patch', { patch: diff });
    assert.match(text, /^applied chg_[a-z2-7]{26}\n {2}src\/a\.ts modified \+1 -1\n {2}src\/b\.ts modified \+2 -1$/);
    assert.equal(read(hh, 'src/a.ts'), 'export const a = 2;\n');
    assert.equal(read(hh, 'src/b.ts'), 'export const b = 1;\nexport const c = 3;\nexport const d = 4;\n');
  });

  it('a patch that does not match the file refuses with the hunk evidence', async () => {
    const hh = await workspace({ 'src/a.ts': 'export const a = 1;\n' });
    const text = await turn(hh, 'patch', { patch: '--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1 @@\n-export const a = 9;\n+export const a = 2;\n' });
    assert.match(text, /^ERROR: patch refused \(unmet_precondition\); nothing was written\.\n- source_unchanged src\/a\.ts: .*regenerate the diff/);
    assert.equal(read(hh, 'src/a.ts'), 'export const a = 1;\n');
  });

  it('deny rules refuse without writing, for every file a patch names', async () => {
    const hh = await workspace({ 'src/calc.ts': CALC, 'src/a.ts': 'export const a = 1;\n' }, { rules: { deny: ['Edit(src/calc.ts)'] } });
    assert.match(await turn(hh, 'replace_symbol', { symbol: ADD_ID, body: NEW_ADD }), /^ERROR: this replace_symbol was blocked by permission rule 'Edit\(src\/calc\.ts\)'/);
    const diff = [
      '--- a/src/a.ts', '+++ b/src/a.ts', '@@ -1 +1 @@', '-export const a = 1;', '+export const a = 2;',
      '--- a/src/calc.ts', '+++ b/src/calc.ts', '@@ -5 +5 @@', '-export const zero = 0;', '+export const zero = -0;', '',
    ].join('\n');
    assert.match(await turn(hh, 'patch', { patch: diff }), /^ERROR: this patch was blocked by permission rule 'Edit\(src\/calc\.ts\)'/);
    assert.equal(read(hh, 'src/calc.ts'), CALC);
    assert.equal(read(hh, 'src/a.ts'), 'export const a = 1;\n');
    assert.equal(hh.agent.journal.canUndo, false);
  });

  it('under approval it asks naming the files; a deny answer writes nothing', async () => {
    const asks: AskRequest[] = [];
    let answer = 'deny';
    const gate: Gate = { interactive: true, ask: async (req) => (asks.push(req), answer) };
    const hh = await workspace({ 'src/calc.ts': CALC }, { approve: true, gate });
    assert.match(await turn(hh, 'replace_symbol', { symbol: ADD_ID, body: NEW_ADD }), /^ERROR: the user DENIED this replace_symbol/);
    assert.equal(read(hh, 'src/calc.ts'), CALC);
    assert.equal(asks[0].question, `Allow replace_symbol: ${join(hh.cwd, 'src/calc.ts')}`);
    assert.deepEqual(asks[0].choices, ['allow', 'always allow edit this session', 'deny']);
    assert.equal(asks[0].detail[0], ADD_ID);
    answer = 'always allow edit this session';
    assert.match(await turn(hh, 'replace_symbol', { symbol: ADD_ID, body: NEW_ADD }), /^applied /);
    // The session grant covers the next edit-family change without asking.
    assert.match(await turn(hh, 'patch', { patch: '--- a/src/calc.ts\n+++ b/src/calc.ts\n@@ -5 +5 @@\n-export const zero = 0;\n+export const zero = 1;\n' }), /^applied /);
    assert.equal(asks.length, 2);
  });

  it('undo restores the exact prior bytes after replace_symbol', async () => {
    const crlf = CALC.replace(/\n/g, '\r\n');
    const hh = await workspace({ 'src/calc.ts': crlf });
    assert.match(await turn(hh, 'replace_symbol', { symbol: ADD_ID, body: NEW_ADD }), /^applied /);
    assert.notEqual(read(hh, 'src/calc.ts'), crlf);
    const ev = (await hh.agent.undo());
    assert.equal(ev.event, 'info');
    assert.ok(readFileSync(join(hh.cwd, 'src/calc.ts')).equals(Buffer.from(crlf)));
  });

  it('undo after a patch that created a file removes it and restores the rest', async () => {
    const hh = await workspace({ 'src/a.ts': 'export const a = 1;\n' });
    const diff = [
      '--- a/src/a.ts', '+++ b/src/a.ts', '@@ -1 +1 @@', '-export const a = 1;', '+export const a = 2;',
      '--- /dev/null', '+++ b/src/new.ts', '@@ -0,0 +1 @@', '+export const n = 1;', '',
    ].join('\n');
    const text = await turn(hh, 'patch', { patch: diff });
    assert.match(text, /^applied chg_[a-z2-7]{26}\n {2}src\/a\.ts modified \+1 -1\n {2}src\/new\.ts created \+1 -0$/);
    assert.equal(read(hh, 'src/new.ts'), 'export const n = 1;\n');
    const ev = (await hh.agent.undo());
    assert.equal(ev.event, 'info');
    assert.equal(existsSync(join(hh.cwd, 'src/new.ts')), false);
    assert.equal(read(hh, 'src/a.ts'), 'export const a = 1;\n');
  });
});
