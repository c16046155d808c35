import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENGINE_DIAGNOSTICS_MAX } from '../../src/core/limits.ts';
import type { ChangeResultSeen } from '../helpers/change-result.ts';
import type { RiftMcp } from '../helpers/mcp.ts';
import { serveStubWorkspace } from '../helpers/stub-engine.ts';
import { eventually } from '../helpers/workspace.ts';

// What rift does with an engine that lacks a capability, never confirms readiness, publishes
// duplicate or too many diagnostics, is slow to initialize, or cannot start (reference F.13 rules
// 147, 150–152; docs/languages.md "Readiness", "Diagnostics", "State"), over stdio against the
// stub language server (test/support/stub-lsp.mjs), a real process speaking LSP: no real engine
// does these things on demand.

type Result = ChangeResultSeen;

const goSym = (path: string, name: string) => `rift://symbol/go/${path}/${name}`;
const rustSym = (path: string, name: string) => `rift://symbol/rust/${path}/${name}`;

async function engineStates(rift: RiftMcp): Promise<Record<string, Record<string, unknown>>> {
  const r = await rift.client.readResource({ uri: 'rift://workspace' });
  const page = JSON.parse((r.contents[0] as { text: string }).text) as { languages: Array<{ id: string; lsp: Record<string, unknown> }> };
  return Object.fromEntries(page.languages.map((l) => [l.id, l.lsp]));
}

function unchecked(reason: string) {
  return { kind: 'rift.remove.references_unchecked', message: `references were not checked: ${reason}, so nothing confirmed the declaration is unused`, reason };
}

describe('an engine that advertises neither references, rename nor willRenameFiles (rule 150, 143, 147)', () => {
  // go's engine advertises nothing; rust's is the same stub advertising all three, so each
  // refusal or warning below is the capability's doing, not the stub's.
  const FILES = {
    'rift.toml': '[languages.go.lsp]\ncommand = "stub-lsp"\n\n[languages.rust.lsp]\ncommand = "stub-lsp"\nargs = ["--references", "--rename", "--will-rename"]\n',
    'app/shapes.go': 'package app\n\nfunc Area(w, h int) int {\n\treturn w * h\n}\n\nfunc Spare() int {\n\treturn 0\n}\n',
    'app/report.go': 'package app\n\nfunc Report() int {\n\treturn Area(2, 3)\n}\n',
    'src/lib.rs': 'pub fn area(w: u32, h: u32) -> u32 {\n    w * h\n}\n\npub fn report() -> u32 {\n    area(2, 3)\n}\n',
  };
  const ws = serveStubWorkspace({ before, after }, FILES);
  const read = (p: string) => readFileSync(join(ws.root, p), 'utf8');
  const call = async (tool: string, args: Record<string, unknown>) => (await ws.rift.call(tool, args)) as unknown as Result;

  test('remove_symbol applies although a reference stands, warning that the engine does not advertise textDocument/references', async () => {
    const r = await call('remove_symbol', { symbol: goSym('app/shapes.go', 'Area') });
    assert.equal(r.status, 'applied', JSON.stringify(r));
    assert.equal(read('app/shapes.go'), 'package app\n\nfunc Spare() int {\n\treturn 0\n}\n');
    assert.deepEqual(r.summary!.warnings, [unchecked('stub-lsp does not advertise textDocument/references')]);

    const id = rustSym('src/lib.rs', 'area');
    const checked = await call('remove_symbol', { symbol: id });
    assert.deepEqual(checked.preconditions, [
      { kind: 'no_references', status: 'failed', addresses: [{ kind: 'symbol', symbol: id }], paths: ['src/lib.rs'], expected: { kind: 'count', value: 0 }, observed: { kind: 'count', value: 1 } },
    ]);
    assert.equal(read('src/lib.rs'), FILES['src/lib.rs']);
  });

  test('remove_node on a declaration node goes unchecked the same way', async () => {
    const text = read('app/shapes.go');
    const nodes = ((await ws.rift.call('nodes', { path: 'app/shapes.go', position: text.indexOf('Spare') })) as { nodes: Array<{ id: string; kind: string }> }).nodes;
    const decl = nodes.find((n) => n.kind === 'function_declaration')!;
    const r = await call('remove_node', { node: decl.id });
    assert.equal(r.status, 'applied', JSON.stringify(r));
    assert.equal(read('app/shapes.go'), 'package app\n');
    assert.deepEqual(r.summary!.warnings, [unchecked('stub-lsp does not advertise textDocument/references')]);
  });

  test('rename_symbol refuses unsupported, saying the engine does not advertise textDocument/rename', async () => {
    const r = await call('rename_symbol', { symbol: goSym('app/report.go', 'Report'), new_name: 'Summary' });
    assert.deepEqual(r, {
      status: 'refused',
      reason: 'unsupported',
      preconditions: [],
      diagnostics: [
        {
          severity: 'error', code: 'rift.change.unsupported', message: 'stub-lsp does not advertise textDocument/rename', span: null,
          related: [], tags: [], reliability: 'reliable', continuation: 'unknown', extensions: {}, language: null,
        },
      ],
    });
    assert.equal(read('app/report.go'), FILES['app/report.go']);

    const renamed = await call('rename_symbol', { symbol: rustSym('src/lib.rs', 'area'), new_name: 'surface' });
    assert.equal(renamed.status, 'applied', JSON.stringify(renamed));
    assert.equal(read('src/lib.rs'), FILES['src/lib.rs'].replaceAll('area', 'surface'));
  });

  test('move_file applies with references_not_updated naming the missing workspace/willRenameFiles', async () => {
    const r = await call('move_file', { path: 'app/report.go', destination: 'app/summary.go' });
    assert.equal(r.status, 'applied', JSON.stringify(r));
    assert.deepEqual(r.summary!.files.map((f) => `${f.path}:${f.change}`), ['app/report.go:deleted', 'app/summary.go:created']);
    const reason = 'stub-lsp does not advertise workspace/willRenameFiles';
    assert.deepEqual(r.summary!.warnings, [
      { kind: 'rift.move.references_not_updated', message: `app/report.go moved to app/summary.go; references to it were not updated: ${reason}`, path: 'app/report.go', reason },
    ]);

    const moved = await call('move_file', { path: 'src/lib.rs', destination: 'src/core.rs' });
    assert.equal(moved.status, 'applied', JSON.stringify(moved));
    assert.deepEqual(moved.summary!.warnings, [], 'an engine advertising willRenameFiles answered for the move');
  });
});

describe('an engine that never confirms readiness (rule 151, 152)', () => {
  // The stub begins a work-done progress when initialized and never ends it; rift waits
  // `ready_timeout` before it asks, then asks anyway.
  const FILES = {
    'rift.toml': '[languages.go.lsp]\ncommand = "stub-lsp"\nargs = ["--references", "--never-ready"]\nready_timeout = "200ms"\n',
    'app/shapes.go': 'package app\n\nfunc Area(w, h int) int {\n\treturn w * h\n}\n\nfunc Spare() int {\n\treturn 0\n}\n\nfunc Extra() int {\n\treturn 1\n}\n',
    'app/report.go': 'package app\n\nfunc Report() int {\n\treturn Area(2, 3)\n}\n',
  };
  const ws = serveStubWorkspace({ before, after }, FILES);
  const read = (p: string) => readFileSync(join(ws.root, p), 'utf8');
  const call = async (tool: string, args: Record<string, unknown>) => (await ws.rift.call(tool, args)) as unknown as Result;

  const MESSAGE =
    'the server cannot serve this request yet: engine stub-lsp, detail the engine answered no references before confirming its readiness (still loading); resend once it has loaded, or set force; resend the same request after a short delay';
  const WIRE = {
    code: -32000,
    message: `MCP error -32000: ${MESSAGE}`,
    data: { code: 'temporarily_unavailable', message: MESSAGE, retry: 'same_request', phase: 'check', diagnostics: [], causes: [] },
  };

  test('an empty answer is temporarily_unavailable on the wire, retry same_request; resending meets the same answer; nothing is written', async () => {
    assert.deepEqual(await ws.rift.fail('remove_symbol', { symbol: goSym('app/shapes.go', 'Spare') }), WIRE);
    assert.deepEqual((await engineStates(ws.rift)).go, { engine: 'stub-lsp', state: 'starting', detail: 'loading the project' });
    assert.deepEqual(await ws.rift.fail('remove_symbol', { symbol: goSym('app/shapes.go', 'Spare') }), WIRE);
    assert.equal(read('app/shapes.go'), FILES['app/shapes.go']);
  });

  test('remove_node on a declaration node is checked like remove_symbol: the same refusal', async () => {
    const text = read('app/shapes.go');
    const nodes = ((await ws.rift.call('nodes', { path: 'app/shapes.go', position: text.indexOf('Extra') })) as { nodes: Array<{ id: string; kind: string }> }).nodes;
    const decl = nodes.find((n) => n.kind === 'function_declaration')!;
    assert.deepEqual(await ws.rift.fail('remove_node', { node: decl.id }), WIRE);
    assert.equal(read('app/shapes.go'), FILES['app/shapes.go']);
  });

  test('a standing reference in the answer refuses no_references, ready or not', async () => {
    const id = goSym('app/shapes.go', 'Area');
    const r = await call('remove_symbol', { symbol: id });
    assert.deepEqual(r.preconditions, [
      { kind: 'no_references', status: 'failed', addresses: [{ kind: 'symbol', symbol: id }], paths: ['app/report.go'], expected: { kind: 'count', value: 0 }, observed: { kind: 'count', value: 1 } },
    ]);
  });

  test('force removes anyway, carrying exactly the readiness_unconfirmed warning', async () => {
    const r = await call('remove_symbol', { symbol: goSym('app/shapes.go', 'Spare'), force: true });
    assert.equal(r.status, 'applied', JSON.stringify(r));
    assert.equal(read('app/shapes.go'), FILES['app/shapes.go'].replace('func Spare() int {\n\treturn 0\n}\n\n', ''));
    assert.deepEqual(r.summary!.warnings, [
      { kind: 'rift.remove.readiness_unconfirmed', message: 'stub-lsp answered no references before confirming it had loaded the project; removed because force was set' },
    ]);
    assert.deepEqual(r.summary!.diagnostics, [], 'diagnostics do not wait for readiness');
  });
});

describe('engine diagnostics after a change', () => {
  // The stub publishes every diagnostic twice: an error per FIXME, a hint per NOTE.
  const FILES = {
    'rift.toml': '[languages.go.lsp]\ncommand = "stub-lsp"\nargs = ["--duplicate-diagnostics"]\n',
    'app/dedup.go': 'package app\n\nfunc Dedup() int {\n\treturn 0\n}\n',
    'app/many.go': 'package app\n\nfunc Many() int {\n\treturn 0\n}\n',
    'app/broken.go': 'package app\n\nfunc Broken() int {\n\treturn 0\n}\n',
  };
  const ws = serveStubWorkspace({ before, after }, FILES);
  const read = (p: string) => readFileSync(join(ws.root, p), 'utf8');
  const call = async (tool: string, args: Record<string, unknown>) => (await ws.rift.call(tool, args)) as unknown as Result;

  /** The engine's error for the FIXME at `start` in `path`. */
  const fixme = (path: string, start: number) => ({
    severity: 'error',
    code: 'stub.fixme',
    message: 'FIXME left in the code',
    span: { unit: `rift://file/${path}`, range: { start, end: start + 'FIXME'.length } },
    related: [],
    tags: [],
    reliability: 'reliable',
    continuation: 'unknown',
    extensions: { engine: 'stub-lsp', source: 'stub' },
    language: 'go',
  });
  const offsets = (text: string, word: string) => [...text.matchAll(new RegExp(`\\b${word}\\b`, 'g'))].map((m) => m.index);

  test('each diagnostic is reported once however often the engine publishes it; hints are left out', async () => {
    const r = await call('replace_symbol', { symbol: goSym('app/dedup.go', 'Dedup'), body: 'func Dedup() int {\n\t// FIXME one\n\t// NOTE aside\n\treturn 0 // FIXME two\n}' });
    assert.equal(r.status, 'applied', JSON.stringify(r));
    const text = read('app/dedup.go');
    assert.deepEqual(r.summary!.diagnostics, offsets(text, 'FIXME').map((at) => fixme('app/dedup.go', at)));
    assert.equal(r.summary!.diagnostics.length, 2);
  });

  test(`a change carries at most ${ENGINE_DIAGNOSTICS_MAX} engine diagnostics, the first by position, counted after de-duplication; the last place counts the rest`, async () => {
    const lines = Array.from({ length: ENGINE_DIAGNOSTICS_MAX + 6 }, (_, i) => `\t_ = ${i} // FIXME`).join('\n');
    const r = await call('replace_symbol', { symbol: goSym('app/many.go', 'Many'), body: `func Many() int {\n${lines}\n\treturn 0\n}` });
    assert.equal(r.status, 'applied', JSON.stringify(r));
    const all = offsets(read('app/many.go'), 'FIXME');
    assert.equal(all.length, ENGINE_DIAGNOSTICS_MAX + 6);
    assert.equal(r.summary!.diagnostics.length, ENGINE_DIAGNOSTICS_MAX);
    assert.deepEqual(r.summary!.diagnostics.slice(0, -1), all.slice(0, ENGINE_DIAGNOSTICS_MAX - 1).map((at) => fixme('app/many.go', at)));
    assert.deepEqual(r.summary!.diagnostics.at(-1), {
      severity: 'info',
      code: 'rift.engine.diagnostics_truncated',
      message: `7 more engine diagnostics (in 1 file) are not listed: a change carries at most ${ENGINE_DIAGNOSTICS_MAX}; run the engine on the changed files to see them all`,
      span: { unit: 'rift://file/app/many.go', range: { start: 0, end: 0 } },
      related: [],
      tags: [],
      reliability: 'reliable',
      continuation: 'unknown',
      extensions: { omitted: 7 },
      language: 'go',
    });
  });

  test("the engine's diagnostics come after rift's own syntax diagnostics in one result", async () => {
    const r = await call('replace_symbol', { symbol: goSym('app/broken.go', 'Broken'), body: 'func Broken() int {\n\treturn 0 // FIXME\n\tif {\n}' });
    assert.equal(r.status, 'applied', JSON.stringify(r));
    const text = read('app/broken.go');
    const start = text.indexOf('if {');
    assert.deepEqual(r.summary!.diagnostics, [
      {
        severity: 'error',
        code: 'rift.syntax.error',
        message: 'the parser marked this region erroneous after the change',
        span: { unit: 'rift://file/app/broken.go', range: { start, end: start + 'if {'.length } },
        related: [],
        tags: [],
        reliability: 'recovered',
        continuation: 'unknown',
        extensions: {},
        language: 'go',
      },
      fixme('app/broken.go', text.indexOf('FIXME')),
    ]);
  });
});

describe('rift://workspace engine states: starting and failed', () => {
  // go's engine answers `initialize` only once release-initialize exists; rust's exits at once.
  const FILES = {
    'rift.toml': '[languages.go.lsp]\ncommand = "stub-lsp"\nargs = ["--hold-initialize=release-initialize"]\n\n[languages.rust.lsp]\ncommand = "stub-lsp"\nargs = ["--exit=3"]\n',
    'app/main.go': 'package app\n\nfunc Run() {}\n',
    'src/lib.rs': 'pub fn run() {}\n\npub fn walk() {}\n',
  };
  const ws = serveStubWorkspace({ before, after }, FILES);

  test('an engine still in initialize is starting ("process starting"); once it answers it serves the change and is ready', async () => {
    assert.deepEqual((await engineStates(ws.rift)).go, { engine: 'stub-lsp', state: 'configured' });
    const removal = ws.rift.call('remove_symbol', { symbol: goSym('app/main.go', 'Run') });
    removal.catch(() => {}); // awaited below
    const starting = await eventually(async () => {
      const s = (await engineStates(ws.rift)).go;
      return s.state === 'starting' ? s : undefined;
    }, 60_000);
    assert.deepEqual(starting, { engine: 'stub-lsp', state: 'starting', detail: 'process starting' });
    writeFileSync(join(ws.root, 'release-initialize'), '');
    const r = (await removal) as unknown as Result;
    assert.equal(r.status, 'applied', JSON.stringify(r));
    assert.deepEqual(r.summary!.warnings, [unchecked('stub-lsp does not advertise textDocument/references')]);
    const ready = await eventually(async () => {
      const s = (await engineStates(ws.rift)).go;
      return s.state === 'ready' ? s : undefined;
    }, 60_000);
    assert.deepEqual(ready, { engine: 'stub-lsp', state: 'ready' });
  });

  test('an engine that exits while starting is failed after its restarts, naming the exit', async () => {
    const r = (await ws.rift.call('remove_symbol', { symbol: rustSym('src/lib.rs', 'run') })) as unknown as Result;
    assert.equal(r.status, 'applied', JSON.stringify(r));
    assert.deepEqual(r.summary!.warnings, [unchecked('stub-lsp is unavailable: exited while starting (code 3)')]);
    const failed = await eventually(async () => {
      const s = (await engineStates(ws.rift)).rust;
      return s.state === 'failed' ? s : undefined;
    }, 60_000);
    assert.deepEqual(failed, {
      engine: 'stub-lsp',
      state: 'failed',
      detail: 'exited while starting (code 3); gave up after 5 restarts — fix the engine, then edit rift.toml or restart rift',
    });
    // A request that needs the engine now is refused as something waiting will not mend.
    const refused = await ws.rift.fail('rename_symbol', { symbol: rustSym('src/lib.rs', 'walk'), new_name: 'stroll' });
    assert.equal(refused.data.code, 'temporarily_unavailable');
    assert.equal(refused.data.retry, 'operator_action');
    assert.equal(
      refused.data.message,
      'the server cannot serve this request yet: engine stub-lsp, detail exited while starting (code 3); gave up after 5 restarts — fix the engine, then edit rift.toml or restart rift; resend once the cause named above is fixed; waiting alone does not help',
    );
  });
});
