import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AskRequest, Gate } from '../../../src/agent/policy/gate.ts';
import { ToolRegistry } from '../../../src/agent/tools/registry.ts';
import { Engine } from '../../../src/services/engine.ts';
import { connectRemote, type RemoteServices } from '../../../src/mcp/remote.ts';
import { findServer } from '../../../src/mcp/discovery.ts';
import { RENAME_REVIEW_META } from '../../../src/mcp/wire.ts';
import { canonicalRoot } from '../../../src/workspace/root.ts';
import { ollamaReply } from '../../support/model-server.ts';
import { startRift, type RiftMcp } from '../../helpers/mcp.ts';
import { eventually, resend } from '../../helpers/workspace.ts';
import { tempDir, useModelServer, type Harness, type HarnessOptions } from '../../support/agent-harness.ts';

// The agent's rename_symbol tool and the language engine's diagnostics after its edits, through
// the real ChangeService and the real typescript-language-server and pyright, driven by the real
// agent loop against the scripted model server. One workspace and one engine serve each group.

const FILES = {
  'tsconfig.json': '{ "compilerOptions": { "strict": true, "noEmit": true }, "include": ["src"] }\n',
  'src/calc.ts': 'export function add(a: number, b: number): number {\n  return a + b;\n}\n',
  'src/use.ts': "import { add } from './calc';\n\nexport const three = add(1, 2);\n",
  'src/globals.ts': 'export {};\ndeclare global {\n  interface Array<T> {\n    first(): T | undefined;\n  }\n}\n',
  'src/free.ts': 'export const n: number = 1;\n',
};

describe('agent code tools: rename_symbol and engine diagnostics', () => {
  const { server, harness } = useModelServer({ assertConsumed: true });
  let cwd = '';
  let engine: Engine;
  before(async () => {
    cwd = tempDir();
    for (const [p, c] of Object.entries(FILES)) {
      mkdirSync(join(cwd, p, '..'), { recursive: true });
      writeFileSync(join(cwd, p), c);
    }
    engine = await Engine.open(cwd, { watch: true });
    await engine.build();
  });
  after(async () => {
    await engine.close();
  });

  const open = (o: HarnessOptions = {}): Harness => harness({ ...o, cwd, code: { read: engine.read, search: engine.search, change: engine.change, engines: engine.engines } });

  /** One tool call, then an answer (a second one after a failed change: the loop nudges once). */
  async function turn(hh: Harness, name: string, args: Record<string, unknown>, fails = false): Promise<string> {
    server.script(ollamaReply({ toolCalls: [{ name, arguments: args }] }), ollamaReply({ content: 'done' }), ...(fails ? [ollamaReply({ content: 'done' })] : []));
    const r = await hh.run(`use ${name}`);
    assert.equal(r.outcome, 'answered');
    const messages = server.chatRequests().at(-1)!.body.messages as Array<{ role: string; content: string }>;
    return messages.filter((m) => m.role === 'tool').at(-1)!.content;
  }

  const read = (p: string) => readFileSync(join(cwd, p), 'utf8');

  it('rename_symbol is offered with the change service, with its aliases', () => {
    const reg = ToolRegistry.standard({ change: {} as never });
    assert.ok(reg.get('rename_symbol')?.mutating);
    assert.equal(reg.resolve('rename'), 'rename_symbol');
  });

  // One harness for the whole story: a harness removes its folder when its test ends, and the
  // engine serves that folder for the group.
  it('rename_symbol, a declined rename, and the engine\'s diagnostics after edits', async () => {
    const asks: AskRequest[] = [];
    const gate: Gate = { interactive: true, ask: async (req) => (asks.push(req), 'allow') };
    const hh = open({ approve: true, gate });

    // The ask names every file the engine will change; they change together; undo restores them all.
    const renamed = await turn(hh, 'rename_symbol', { symbol: 'rift://symbol/typescript/src/calc.ts/add', new_name: 'sum' });
    assert.match(renamed, /^applied chg_[a-z2-7]{26}\n {2}src\/calc\.ts modified \+1 -1\n {2}src\/use\.ts modified \+2 -2$/);
    assert.equal(asks[0].question, `Allow rename_symbol: ${join(cwd, 'src/calc.ts')}, ${join(cwd, 'src/use.ts')}`);
    assert.deepEqual(asks[0].detail, ['rift://symbol/typescript/src/calc.ts/add → sum', 'src/calc.ts', 'src/use.ts']);
    assert.equal(read('src/use.ts'), "import { sum } from './calc';\n\nexport const three = sum(1, 2);\n");
    assert.equal((await hh.agent.undo()).event, 'info');
    assert.equal(read('src/calc.ts'), FILES['src/calc.ts']);
    assert.equal(read('src/use.ts'), FILES['src/use.ts']);

    // A declined rename is an error carrying the engine's words and what to do instead.
    const declined = await turn(hh, 'rename_symbol', { symbol: 'rift://symbol/typescript/src/globals.ts/Array', new_name: 'List' }, true);
    assert.match(declined, /^ERROR: rename_symbol refused \(unmet_precondition\); nothing was written\./);
    assert.equal(
      declined.split('\n')[1],
      '- engine_proposed_edits src/globals.ts: expected "an edit set renaming Array to List", observed "Request textDocument/prepareRename failed with message: You cannot rename elements that are defined in the standard TypeScript library." — the language engine will not make this rename: pick another name or symbol, or edit by hand',
    );

    // After an edit the engine's errors are appended; a clean edit adds nothing.
    const broken = await turn(hh, 'edit', { path: 'src/free.ts', old_string: 'number = 1', new_string: "number = 'one'" });
    assert.equal(
      broken,
      `Edited ${join(cwd, 'src/free.ts')} (1 replacement)\nThe language engine reports:\n  error src/free.ts:1: Type 'string' is not assignable to type 'number'. (typescript-language-server 2322)`,
    );
    const fixed = await turn(hh, 'edit', { path: 'src/free.ts', old_string: "number = 'one'", new_string: 'number = 2' });
    assert.equal(fixed, `Edited ${join(cwd, 'src/free.ts')} (1 replacement)`);

    // replace_symbol shows the engine's errors for what it wrote.
    // The undo above rewrote calc.ts and use.ts outside the change service; the watcher may not
    // have delivered that yet on a loaded machine, so the index re-reads them now.
    await engine.indexer.refresh(['src/calc.ts', 'src/use.ts']);
    const replaced = await turn(hh, 'replace_symbol', { symbol: 'rift://symbol/typescript/src/calc.ts/add', body: 'export function add(a: number, b: number): number {\n  return `${a}${b}`;\n}' });
    assert.match(replaced, /^applied chg_[a-z2-7]{26}\n {2}src\/calc\.ts modified \+1 -1\nerror src\/calc\.ts:2: Type 'string' is not assignable to type 'number'\. \(typescript-language-server 2322\)$/);
  });
});

// The same story against the real pyright: Python's rename edits, pyright's own words when it
// declines, and its diagnostics after the agent's edits.

const PY_FILES = {
  'pkg/__init__.py': '',
  'pkg/calc.py': 'def add(a: int, b: int) -> int:\n    return a + b\n',
  'pkg/use.py': 'from pkg.calc import add\n\nTHREE = add(1, 2)\n',
  'pkg/compat.py': 'try:\n    from json import dumps\nexcept ImportError:\n    def dumps(obj):\n        return str(obj)\n',
  'pkg/free.py': 'N: int = 1\n',
};

describe('agent code tools: rename_symbol and engine diagnostics (pyright)', () => {
  const { server, harness } = useModelServer({ assertConsumed: true });
  let cwd = '';
  let engine: Engine;
  before(async () => {
    cwd = tempDir();
    for (const [p, c] of Object.entries(PY_FILES)) {
      mkdirSync(join(cwd, p, '..'), { recursive: true });
      writeFileSync(join(cwd, p), c);
    }
    engine = await Engine.open(cwd, { watch: true });
    await engine.build();
  });
  after(async () => {
    await engine.close();
  });

  async function turn(hh: Harness, name: string, args: Record<string, unknown>, fails = false): Promise<string> {
    server.script(ollamaReply({ toolCalls: [{ name, arguments: args }] }), ollamaReply({ content: 'done' }), ...(fails ? [ollamaReply({ content: 'done' })] : []));
    const r = await hh.run(`use ${name}`);
    assert.equal(r.outcome, 'answered');
    const messages = server.chatRequests().at(-1)!.body.messages as Array<{ role: string; content: string }>;
    return messages.filter((m) => m.role === 'tool').at(-1)!.content;
  }

  const read = (p: string) => readFileSync(join(cwd, p), 'utf8');

  it('rename_symbol, a declined rename, and pyright\'s diagnostics after edits', async () => {
    const asks: AskRequest[] = [];
    const gate: Gate = { interactive: true, ask: async (req) => (asks.push(req), 'allow') };
    const hh = harness({ approve: true, gate, cwd, code: { read: engine.read, search: engine.search, change: engine.change, engines: engine.engines } });

    // The ask names every file the engine will change; they change together; undo restores them all.
    const renamed = await turn(hh, 'rename_symbol', { symbol: 'rift://symbol/python/pkg/calc.py/add', new_name: 'total' });
    assert.match(renamed, /^applied chg_[a-z2-7]{26}\n {2}pkg\/calc\.py modified \+1 -1\n {2}pkg\/use\.py modified \+2 -2$/);
    assert.equal(asks[0].question, `Allow rename_symbol: ${join(cwd, 'pkg/calc.py')}, ${join(cwd, 'pkg/use.py')}`);
    assert.deepEqual(asks[0].detail, ['rift://symbol/python/pkg/calc.py/add → total', 'pkg/calc.py', 'pkg/use.py']);
    assert.equal(read('pkg/calc.py'), 'def total(a: int, b: int) -> int:\n    return a + b\n');
    assert.equal(read('pkg/use.py'), 'from pkg.calc import total\n\nTHREE = total(1, 2)\n');
    assert.equal((await hh.agent.undo()).event, 'info');
    assert.equal(read('pkg/calc.py'), PY_FILES['pkg/calc.py']);
    assert.equal(read('pkg/use.py'), PY_FILES['pkg/use.py']);

    // A declined rename is an error carrying what pyright answered and what to do instead.
    const declined = await turn(hh, 'rename_symbol', { symbol: 'rift://symbol/python/pkg/compat.py/dumps', new_name: 'serialize' }, true);
    assert.match(declined, /^ERROR: rename_symbol refused \(unmet_precondition\); nothing was written\./);
    assert.equal(
      declined.split('\n')[1],
      '- engine_proposed_edits pkg/compat.py: expected "an edit set renaming dumps to serialize", observed "pyright found nothing it can rename at pkg/compat.py:4:9 (prepareRename answered null)" — the language engine will not make this rename: pick another name or symbol, or edit by hand',
    );
    assert.equal(read('pkg/compat.py'), PY_FILES['pkg/compat.py']);

    // After an edit pyright's errors are appended; a clean edit adds nothing.
    const broken = await turn(hh, 'edit', { path: 'pkg/free.py', old_string: 'int = 1', new_string: 'int = "one"' });
    assert.equal(
      broken,
      `Edited ${join(cwd, 'pkg/free.py')} (1 replacement)\nThe language engine reports:\n  error pkg/free.py:1: Type "Literal['one']" is not assignable to declared type "int" (pyright reportAssignmentType)`,
    );
    const fixed = await turn(hh, 'edit', { path: 'pkg/free.py', old_string: 'int = "one"', new_string: 'int = 2' });
    assert.equal(fixed, `Edited ${join(cwd, 'pkg/free.py')} (1 replacement)`);

    // replace_symbol shows pyright's errors for what it wrote (the index first re-reads the files
    // the undo restored behind the change service).
    await engine.indexer.refresh(['pkg/calc.py', 'pkg/use.py']);
    const replaced = await turn(hh, 'replace_symbol', { symbol: 'rift://symbol/python/pkg/calc.py/add', body: 'def add(a: int, b: int) -> int:\n    return f"{a}{b}"' });
    assert.match(replaced, /^applied chg_[a-z2-7]{26}\n {2}pkg\/calc\.py modified \+1 -1\nerror pkg\/calc\.py:2: Type "str" is not assignable to return type "int" \(pyright reportReturnType\)$/);
  });
});

describe('agent rename_symbol through the workspace server', () => {
  const { server, harness } = useModelServer({ assertConsumed: true });
  let cwd = '';
  let rift: RiftMcp;
  let remote: RemoteServices;
  before(async () => {
    cwd = tempDir();
    for (const [p, c] of Object.entries(FILES)) {
      mkdirSync(join(cwd, p, '..'), { recursive: true });
      writeFileSync(join(cwd, p), c);
    }
    rift = await startRift(cwd); // the proxy starts the workspace server
    const found = await findServer(canonicalRoot(cwd));
    assert.ok(found, 'a workspace server runs');
    remote = await connectRemote(found.lock, { name: 'engine-tools-test', version: '0' });
  });
  after(async () => {
    await remote.close();
    await rift.close();
  });

  const read = (p: string) => readFileSync(join(cwd, p), 'utf8');
  const add = 'rift://symbol/typescript/src/calc.ts/add';

  it('_meta rift/rename-review that is neither "propose" nor {approved} is a bad request naming it', async () => {
    const r = (await rift.client
      .callTool({ name: 'rename_symbol', arguments: { symbol: add, new_name: 'x' }, _meta: { [RENAME_REVIEW_META]: { approved: 'all' } } })
      .catch((e: unknown) => e)) as { message: string; data: { code: string } };
    assert.equal(r.data.code, 'invalid_request');
    assert.match(r.message, /_meta\.rift\/rename-review/);
  });

  it('the server proposes, the agent asks its user about exactly those files, then the server applies what was approved; a file changed after approval refuses', async () => {
    const asks: AskRequest[] = [];
    const gate: Gate = { interactive: true, ask: async (req) => (asks.push(req), asks.length === 1 ? 'deny' : 'allow') };
    const hh = harness({ approve: true, gate, cwd, code: { read: remote.read, search: remote.search, change: remote.change } });
    const run = async (fails: boolean) => {
      server.script(ollamaReply({ toolCalls: [{ name: 'rename_symbol', arguments: { symbol: add, new_name: 'sum' } }] }), ollamaReply({ content: 'done' }), ...(fails ? [ollamaReply({ content: 'done' })] : []));
      await hh.run('rename add');
      const messages = server.chatRequests().at(-1)!.body.messages as Array<{ role: string; content: string }>;
      return messages.filter((m) => m.role === 'tool').at(-1)!.content;
    };
    // Denied: the proposal wrote nothing and nothing is applied.
    const denied = await run(true);
    assert.match(denied, /denied|not allowed|declined/i, denied);
    assert.deepEqual(asks[0].detail, [`${add} → sum`, 'src/calc.ts', 'src/use.ts']);
    assert.equal(read('src/calc.ts'), FILES['src/calc.ts']);
    assert.equal(read('src/use.ts'), FILES['src/use.ts']);
    // Allowed: both files change together, and undo restores them.
    const applied = await run(false);
    assert.match(applied, /^applied chg_[a-z2-7]{26}\n {2}src\/calc\.ts modified \+1 -1\n {2}src\/use\.ts modified \+2 -2$/);
    assert.equal(asks[1].question, `Allow rename_symbol: ${join(cwd, 'src/calc.ts')}, ${join(cwd, 'src/use.ts')}`);
    assert.equal(read('src/use.ts'), "import { sum } from './calc';\n\nexport const three = sum(1, 2);\n");
    assert.equal((await hh.agent.undo()).event, 'info');
    assert.equal(read('src/use.ts'), FILES['src/use.ts']);

    // A file changed between approval and apply refuses source_unchanged; nothing is written.
    // (The undo wrote behind the server: its index has the old name again once its watcher saw it.)
    await eventually(async () => ((await remote.read.getSymbol({ name: 'add', include: [] })).hits.length === 1 ? true : undefined), 30_000);
    const before = read('src/calc.ts');
    const r = await resend(() =>
      remote.change.renameSymbol({ symbol: add, new_name: 'total' }, {}, async (writes) => {
        assert.deepEqual(writes.map((w) => w.path), ['src/calc.ts', 'src/use.ts']);
        writeFileSync(join(cwd, 'src/use.ts'), `${read('src/use.ts')}// touched\n`);
      }),
    );
    assert.equal(r.status, 'refused', JSON.stringify(r));
    assert.deepEqual(r.status === 'refused' && r.preconditions.map((p) => [p.kind, p.paths]), [['source_unchanged', ['src/use.ts']]]);
    assert.equal(read('src/calc.ts'), before, 'nothing written');
    assert.match(read('src/use.ts'), /add\(1, 2\);\n\/\/ touched\n$/);
  });
});
