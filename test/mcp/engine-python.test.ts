import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChangeResultSeen } from '../helpers/change-result.ts';
import { serveWorkspace } from '../helpers/mcp.ts';
import { resend } from '../helpers/workspace.ts';

// rename_symbol, reference-checked removals, moves and engine diagnostics against the real
// pyright language server (reference F.13 rules 142–152), over stdio. One server and one engine
// serve the whole group.

type Result = ChangeResultSeen;

const sym = (path: string, name: string) => `rift://symbol/python/${path}/${name}`;

const FILES = {
  // Named explicitly: a configured engine is the one used (the zero-config default is the same).
  'rift.toml': '[languages.python]\nlsp = "pyright"\n',
  'pkg/__init__.py': '',
  'pkg/shapes.py': '# area is computed here\ndef area(w, h):\n    return w * h\n\n\ndef unused():\n    return 0\n',
  'pkg/report.py': 'from pkg.shapes import area\n\n\ndef report():\n    return "total " + str(area(2, 3))\n',
  'pkg/main.py': 'from pkg import shapes\n\nprint(shapes.area(1, 1))\n',
  'pkg/compat.py': 'try:\n    from json import dumps\nexcept ImportError:\n    def dumps(obj):\n        return str(obj)\n',
  'pkg/typed.py': 'def double(n: int) -> int:\n    return n * 2\n',
  'pkg/util/__init__.py': '',
  'pkg/util/strings.py': 'def shout(s):\n    return s.upper()\n',
  'pkg/cli.py': 'from pkg.util.strings import shout\n\nLOUD = shout("hi")\n',
};

describe('language engine: pyright', () => {
  const ws = serveWorkspace({ before, after }, FILES);
  const read = (p: string) => readFileSync(join(ws.root, p), 'utf8');
  const call = async (tool: string, args: Record<string, unknown>) => (await resend(() => ws.rift.call(tool, args))) as unknown as Result;

  test('rename_symbol renames the function, its import and its uses across modules as one change', async () => {
    const r = await call('rename_symbol', { symbol: sym('pkg/shapes.py', 'area'), new_name: 'surface' });
    assert.equal(r.status, 'applied', JSON.stringify(r));
    assert.deepEqual(r.summary!.files.map((f) => `${f.path}:${f.change}`), ['pkg/main.py:modified', 'pkg/report.py:modified', 'pkg/shapes.py:modified']);
    assert.equal(read('pkg/shapes.py'), '# area is computed here\ndef surface(w, h):\n    return w * h\n\n\ndef unused():\n    return 0\n');
    assert.equal(read('pkg/report.py'), 'from pkg.shapes import surface\n\n\ndef report():\n    return "total " + str(surface(2, 3))\n');
    assert.equal(read('pkg/main.py'), 'from pkg import shapes\n\nprint(shapes.surface(1, 1))\n');
    assert.deepEqual(r.summary!.warnings, [
      { kind: 'rift.rename.surviving_occurrence', message: 'area still occurs at pkg/shapes.py:1 after the rename', path: 'pkg/shapes.py', line: 1 },
    ]);
    assert.deepEqual(r.summary!.diagnostics, []);
  });

  test('a rename the engine declines refuses engine_proposed_edits, saying what the engine answered', async () => {
    const id = sym('pkg/compat.py', 'dumps');
    const r = await call('rename_symbol', { symbol: id, new_name: 'serialize' });
    assert.equal(r.status, 'refused');
    assert.equal(r.reason, 'unmet_precondition');
    assert.deepEqual(r.preconditions, [
      {
        kind: 'engine_proposed_edits',
        status: 'failed',
        addresses: [{ kind: 'symbol', symbol: id }],
        paths: ['pkg/compat.py'],
        expected: { kind: 'text', value: 'an edit set renaming dumps to serialize' },
        observed: { kind: 'text', value: 'pyright found nothing it can rename at pkg/compat.py:4:9 (prepareRename answered null)' },
      },
    ]);
    assert.equal(read('pkg/compat.py'), FILES['pkg/compat.py']);
  });

  test('remove_symbol refuses while a reference stands, then force removes it and names the references', async () => {
    const id = sym('pkg/shapes.py', 'surface');
    const refused = await call('remove_symbol', { symbol: id });
    assert.deepEqual(refused.preconditions, [
      { kind: 'no_references', status: 'failed', addresses: [{ kind: 'symbol', symbol: id }], paths: ['pkg/main.py', 'pkg/report.py'], expected: { kind: 'count', value: 0 }, observed: { kind: 'count', value: 3 } },
    ]);
    assert.ok(read('pkg/shapes.py').includes('def surface'));
    const forced = await call('remove_symbol', { symbol: id, force: true });
    assert.equal(forced.status, 'applied');
    assert.equal(read('pkg/shapes.py'), '# area is computed here\n\n\ndef unused():\n    return 0\n');
    assert.deepEqual(forced.summary!.warnings.map((w) => [w.kind, w.references]), [
      ['rift.remove.references_forced', [{ path: 'pkg/main.py', line: 3 }, { path: 'pkg/report.py', line: 1 }, { path: 'pkg/report.py', line: 5 }]],
    ]);
  });

  test('move_file without willRenameFiles support moves and says the imports were not updated', async () => {
    const r = await call('move_file', { path: 'pkg/util/strings.py', destination: 'pkg/text.py' });
    assert.equal(r.status, 'applied');
    assert.equal(read('pkg/text.py'), FILES['pkg/util/strings.py']);
    assert.equal(existsSync(join(ws.root, 'pkg/util/strings.py')), false);
    assert.equal(read('pkg/cli.py'), FILES['pkg/cli.py'], 'pyright proposes no import updates');
    assert.deepEqual(r.summary!.warnings, [
      {
        kind: 'rift.move.references_not_updated',
        message: 'pkg/util/strings.py moved to pkg/text.py; references to it were not updated: pyright does not advertise workspace/willRenameFiles',
        path: 'pkg/util/strings.py',
        reason: 'pyright does not advertise workspace/willRenameFiles',
      },
    ]);
  });

  test('an applied change carries pyright\'s diagnostics of what it wrote, naming the engine', async () => {
    const r = await call('replace_symbol', { symbol: sym('pkg/typed.py', 'double'), body: 'def double(n: int) -> int:\n    return str(n)' });
    assert.equal(r.status, 'applied');
    const diagnostics = r.summary!.diagnostics;
    assert.equal(diagnostics.length, 1, JSON.stringify(diagnostics));
    const start = read('pkg/typed.py').indexOf('str(n)');
    assert.deepEqual({ ...diagnostics[0], message: diagnostics[0].message.split('\n')[0] }, {
      severity: 'error',
      code: 'reportReturnType',
      message: 'Type "str" is not assignable to return type "int"',
      span: { unit: 'rift://file/pkg/typed.py', range: { start, end: start + 'str(n)'.length } },
      related: [],
      tags: [],
      reliability: 'reliable',
      continuation: 'unknown',
      extensions: { engine: 'pyright', source: 'Pyright' },
      language: 'python',
    });
    const fixed = await call('replace_symbol', { symbol: sym('pkg/typed.py', 'double'), body: 'def double(n: int) -> int:\n    return n + n' });
    assert.deepEqual(fixed.summary!.diagnostics, []);
  });
});
