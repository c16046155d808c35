import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
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
  'pkg/__init__.py': 'from .util.strings import shout\n',
  'pkg/shapes.py': '# area is computed here\ndef area(w, h):\n    return w * h\n\n\ndef unused():\n    return 0\n',
  'pkg/report.py': 'from pkg.shapes import area\n\n\ndef report():\n    return "total " + str(area(2, 3))\n',
  'pkg/main.py': 'from pkg import shapes\n\nprint(shapes.area(1, 1))\n',
  'pkg/compat.py': 'try:\n    from json import dumps\nexcept ImportError:\n    def dumps(obj):\n        return str(obj)\n',
  'pkg/typed.py': 'def double(n: int) -> int:\n    return n * 2\n',
  'pkg/util/__init__.py': '',
  // The move group: pkg/util/strings.py is imported every way Python spells it.
  'pkg/util/helpers.py': 'def exclaim(s):\n    return s + "!"\n',
  'pkg/util/strings.py': 'from .helpers import exclaim\n\n\ndef shout(s):\n    return exclaim(s.upper())\n',
  'pkg/util/user.py': 'from . import strings\nfrom .strings import shout as s\n\nNAME = strings.shout("n") + s("m")\n',
  'pkg/cli.py': 'from pkg.util.strings import shout\n\nLOUD = shout("hi")\n',
  'pkg/banner.py': 'import pkg.util.strings\n\n\ndef banner():\n    return pkg.util.strings.shout("b")\n',
  'pkg/aliased.py': 'import pkg.util.strings as st\nfrom pkg.util import helpers, strings\n\nBOTH = st.shout("a") + strings.shout(helpers.exclaim("c"))\n',
  // A src/ layout (src/ holds no __init__.py) with a namespace package (app/core has none either).
  'src/app/__init__.py': '',
  'src/app/core/config.py': 'VALUE = 41\n',
  'src/app/main.py': 'from app.core.config import VALUE\nfrom app.core import config\n\nRESULT = VALUE + config.VALUE\n',
  // A module named only by a string: rift cannot rewrite it.
  'pkg/plugins/extra.py': 'X = 1\n',
  'pkg/loader.py': 'import importlib\n\n\ndef load():\n    return importlib.import_module("pkg.plugins.extra").X\n',
  // remove_node on a declaration with a standing reference.
  'pkg/counter.py': 'import functools\n\n\n@functools.cache\ndef tally(n):\n    return n + 1\n\n\nLIMIT = 3\n',
  'pkg/stats.py': 'from pkg.counter import tally\n\nTOTAL = tally(2)\n',
};

/** What python3 prints running `code` in the workspace, with src/ on the path. */
function python(root: string, code: string): string {
  return execFileSync('python3', ['-B', '-c', code], { cwd: root, env: { ...process.env, PYTHONPATH: 'src', PYTHONDONTWRITEBYTECODE: '1' }, encoding: 'utf8' });
}

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

  test('remove_node on a declaration node is checked like remove_symbol: refused while a reference stands, then forced', async () => {
    const text = read('pkg/counter.py');
    const nodes = ((await ws.rift.call('nodes', { path: 'pkg/counter.py', position: text.indexOf('tally') })) as { nodes: Array<{ id: string; kind: string }> }).nodes;
    const node = nodes.find((n) => n.kind === 'function_definition')!.id;
    const refused = await call('remove_node', { node });
    assert.deepEqual(refused, {
      status: 'refused',
      reason: 'unmet_precondition',
      preconditions: [
        { kind: 'no_references', status: 'failed', addresses: [{ kind: 'node', node }], paths: ['pkg/stats.py'], expected: { kind: 'count', value: 0 }, observed: { kind: 'count', value: 2 } },
      ],
      diagnostics: [],
    });
    assert.equal(read('pkg/counter.py'), text, 'nothing was removed');

    const forced = await call('remove_node', { node, force: true });
    assert.equal(forced.status, 'applied', JSON.stringify(forced));
    assert.equal(read('pkg/counter.py'), 'import functools\n\n\nLIMIT = 3\n', 'the definition with its decorator');
    assert.deepEqual(forced.summary!.warnings, [
      {
        kind: 'rift.remove.references_forced',
        message: 'removed although pyright reports 2 standing references: pkg/stats.py:1, pkg/stats.py:3',
        references: [{ path: 'pkg/stats.py', line: 1 }, { path: 'pkg/stats.py', line: 3 }],
      },
    ]);
  });

  const RUN_PKG = 'import pkg, pkg.cli, pkg.banner, pkg.util.user, pkg.aliased; print(pkg.shout("p"), pkg.cli.LOUD, pkg.banner.banner(), pkg.util.user.NAME, pkg.aliased.BOTH)';

  test('move_file rewrites absolute, from, dotted, relative and package imports of the moved module, and its own relative imports, in one change', async () => {
    const ran = python(ws.root, RUN_PKG);
    assert.equal(ran, 'P! HI! B! N!M! A!C!!\n');
    const r = await call('move_file', { path: 'pkg/util/strings.py', destination: 'pkg/text.py' });
    assert.equal(r.status, 'applied', JSON.stringify(r));
    assert.deepEqual(r.summary!.files.map((f) => `${f.path}:${f.change}`), [
      'pkg/__init__.py:modified',
      'pkg/aliased.py:modified',
      'pkg/banner.py:modified',
      'pkg/cli.py:modified',
      'pkg/text.py:created',
      'pkg/util/strings.py:deleted',
      'pkg/util/user.py:modified',
    ]);
    assert.equal(existsSync(join(ws.root, 'pkg/util/strings.py')), false);
    assert.equal(read('pkg/text.py'), 'from .util.helpers import exclaim\n\n\ndef shout(s):\n    return exclaim(s.upper())\n', 'its own relative import is re-based');
    assert.equal(read('pkg/cli.py'), 'from pkg.text import shout\n\nLOUD = shout("hi")\n');
    assert.equal(read('pkg/banner.py'), 'import pkg.text\n\n\ndef banner():\n    return pkg.text.shout("b")\n', 'the dotted use follows the import');
    assert.equal(read('pkg/aliased.py'), 'import pkg.text as st\nfrom pkg.util import helpers\nfrom pkg import text as strings\n\nBOTH = st.shout("a") + strings.shout(helpers.exclaim("c"))\n');
    assert.equal(read('pkg/__init__.py'), 'from .text import shout\n', 'the package __init__.py import');
    assert.equal(read('pkg/util/user.py'), 'from .. import text as strings\nfrom ..text import shout as s\n\nNAME = strings.shout("n") + s("m")\n');
    assert.deepEqual(r.summary!.warnings, []);
    assert.deepEqual(r.summary!.diagnostics, [], 'pyright resolves every rewritten import');
    assert.equal(python(ws.root, RUN_PKG), ran, 'the moved module runs from its new place');
  });

  test('move_file in a src/ layout names modules from src/, through a namespace package', async () => {
    const run = 'import app.main; print(app.main.RESULT)';
    assert.equal(python(ws.root, run), '82\n');
    const r = await call('move_file', { path: 'src/app/core/config.py', destination: 'src/app/config.py' });
    assert.equal(r.status, 'applied', JSON.stringify(r));
    assert.deepEqual(r.summary!.files.map((f) => `${f.path}:${f.change}`), ['src/app/config.py:created', 'src/app/core/config.py:deleted', 'src/app/main.py:modified']);
    assert.equal(read('src/app/main.py'), 'from app.config import VALUE\nfrom app import config\n\nRESULT = VALUE + config.VALUE\n');
    assert.deepEqual(r.summary!.warnings, []);
    assert.equal(python(ws.root, run), '82\n');
  });

  test('a reference rift cannot rewrite stays as it was and is named in a references_not_updated warning', async () => {
    const r = await call('move_file', { path: 'pkg/plugins/extra.py', destination: 'pkg/extra.py' });
    assert.equal(r.status, 'applied', JSON.stringify(r));
    assert.deepEqual(r.summary!.files.map((f) => `${f.path}:${f.change}`), ['pkg/extra.py:created', 'pkg/plugins/extra.py:deleted']);
    assert.equal(read('pkg/loader.py'), FILES['pkg/loader.py']);
    const reason = 'pkg/loader.py:5: the string "pkg.plugins.extra" names the module (importlib, __import__, configuration); rift does not rewrite strings';
    assert.deepEqual(r.summary!.warnings, [
      { kind: 'rift.move.references_not_updated', message: `pkg/plugins/extra.py moved to pkg/extra.py; a reference was not updated at ${reason}`, path: 'pkg/loader.py', reason },
    ]);
  });

  test('a move rift cannot name as a module keeps the engine\'s reason and its own', async () => {
    const r = await call('move_file', { path: 'pkg/typed.py', destination: 'scripts/typed-tool.py' });
    assert.equal(r.status, 'applied', JSON.stringify(r));
    const reason = 'pyright does not advertise workspace/willRenameFiles, and scripts/typed-tool.py names no importable Python module';
    assert.deepEqual(r.summary!.warnings, [
      { kind: 'rift.move.references_not_updated', message: `pkg/typed.py moved to scripts/typed-tool.py; references to it were not updated: ${reason}`, path: 'pkg/typed.py', reason },
    ]);
    const back = await call('move_file', { path: 'scripts/typed-tool.py', destination: 'pkg/typed.py' });
    assert.equal(back.status, 'applied', JSON.stringify(back));
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
