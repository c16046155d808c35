import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { pythonModuleOf, rewritePythonImports, type ModuleMove } from '../../src/syntax/python-imports.ts';
import { initSyntax } from '../../src/syntax/runtime.ts';

before(() => initSyntax());

const mv = (from: string, to: string): ModuleMove => ({ from: from.split('.'), to: to.split('.') });
const pkg = (p: string) => (p === '' ? [] : p.split('.'));

/** The rewritten text (or the source when nothing changed) and the occurrences left as they were. */
function rewrite(src: string, move: ModuleMove, before: string | null, after = before, init = false) {
  const r = rewritePythonImports(Buffer.from(src, 'utf8'), before === null ? null : pkg(before), after === null ? null : pkg(after), move, init);
  return { text: r.after === null ? null : r.after.toString('utf8'), unrewritten: r.unrewritten };
}

describe('python module names', () => {
  it('names a module from the workspace root, or from src/ when src/ is a root; __init__.py names its package', () => {
    assert.deepEqual(pythonModuleOf('a/b/m.py', false), { name: ['a', 'b', 'm'], package: ['a', 'b'] });
    assert.deepEqual(pythonModuleOf('src/app/m.py', true), { name: ['app', 'm'], package: ['app'] });
    assert.deepEqual(pythonModuleOf('src/app/m.py', false), { name: ['src', 'app', 'm'], package: ['src', 'app'] });
    assert.deepEqual(pythonModuleOf('a/b/__init__.py', false), { name: ['a', 'b'], package: ['a', 'b'] });
    assert.deepEqual(pythonModuleOf('m.py', false), { name: ['m'], package: [] });
  });

  it('names nothing for a path Python cannot import', () => {
    for (const p of ['my-dir/m.py', 'a/m.txt', '__init__.py', 'a/1m.py', 'a/m.pyc']) assert.equal(pythonModuleOf(p, false), null, p);
  });
});

describe('python import rewrites', () => {
  it('a top-level module keeps its binding through an alias, and a moved submodule becomes a plain import at the top level', () => {
    assert.deepEqual(rewrite('import m\nm.f()\nfrom m import g\n', mv('m', 'lib.m2'), ''), { text: 'import lib.m2 as m\nm.f()\nfrom lib.m2 import g\n', unrewritten: [] });
    assert.deepEqual(rewrite('from lib import m2\nfrom lib import m2 as q, x\n', mv('lib.m2', 'm'), ''), { text: 'import m as m2\nfrom lib import x\nimport m as q\n', unrewritten: [] });
  });

  it('splits a parenthesized import across lines, keeping its indentation and CRLF endings', () => {
    const src = 'def f():\r\n    from a.b import (\r\n        m,\r\n        other,\r\n    )\r\n    return m\r\n';
    assert.deepEqual(rewrite(src, mv('a.b.m', 'c.m'), 'x'), { text: 'def f():\r\n    from a.b import other\r\n    from c import m\r\n    return m\r\n', unrewritten: [] });
  });

  it('an import it would have to split but cannot keep intact is reported, never half-rewritten', () => {
    const comments = 'from a.b import (  # the helpers\n    m,\n    other,\n)\n';
    assert.deepEqual(rewrite(comments, mv('a.b.m', 'c.m'), 'x'), { text: null, unrewritten: [{ line: 1, reason: 'the import holds comments rift would lose rewriting it' }] });
    const shared = 'x = 1; from a.b import m\n';
    assert.deepEqual(rewrite(shared, mv('a.b.m', 'c.m'), 'x'), { text: null, unrewritten: [{ line: 1, reason: 'the import shares its line with other code, so rift cannot split it' }] });
  });

  it('reports strings naming the module, __all__ of its package, and dotted uses with no import of the module', () => {
    assert.deepEqual(rewrite('import importlib\nmod = importlib.import_module("a.b.m")\n', mv('a.b.m', 'c.m'), 'x').unrewritten, [
      { line: 2, reason: 'the string "a.b.m" names the module (importlib, __import__, configuration); rift does not rewrite strings' },
    ]);
    assert.deepEqual(rewrite('__all__ = ["m", "n"]\n', mv('a.b.m', 'c.m'), 'a.b').unrewritten, [{ line: 1, reason: '__all__ lists "m"; rift does not rewrite __all__' }]);
    assert.deepEqual(rewrite('__all__ = ["m"]\n', mv('a.b.m', 'c.m'), 'other').unrewritten, [], 'another package\'s __all__ names its own m');
    assert.deepEqual(rewrite('import a.b\n\na.b.m.f()\n', mv('a.b.m', 'c.m'), 'x'), {
      text: null,
      unrewritten: [{ line: 3, reason: 'the dotted use a.b.m is not tied to an `import a.b.m` in this file' }],
    });
  });

  it('leaves relative imports it does not need to touch as they were spelled, and never resolves one past the top-level package', () => {
    const src = 'from ..b import x\nfrom ... import y\nfrom . import m\n';
    assert.deepEqual(rewrite(src, mv('a.b.m', 'a.c.m'), 'a.b'), { text: 'from ..b import x\nfrom ... import y\nfrom ..c import m\n', unrewritten: [] });
  });

  it('a file that is no module keeps its relative imports and has its absolute ones rewritten', () => {
    assert.deepEqual(rewrite('from . import m\nfrom a.b import m\n', mv('a.b.m', 'c.m'), null), { text: 'from . import m\nfrom c import m\n', unrewritten: [] });
  });

  it('the moved file\'s relative imports become absolute when its new place shares no package with them', () => {
    assert.deepEqual(rewrite('from . import sibling\nfrom .helpers import h\n', mv('a.b.m', 'top'), 'a.b', ''), { text: 'from a.b import sibling\nfrom a.b.helpers import h\n', unrewritten: [] });
  });

  it('the old package\'s __init__.py keeps the name a submodule import bound implicitly, when it uses it', () => {
    const src = 'from .queues import *\nfrom .tasks import *\n\n__all__ = queues.__all__ + tasks.__all__\n';
    const move = mv('aio.queues', 'aio.moved.queues');
    assert.deepEqual(rewrite(src, move, 'aio', 'aio', true), {
      text: 'from .moved.queues import *\nfrom .moved import queues\nfrom .tasks import *\n\n__all__ = queues.__all__ + tasks.__all__\n',
      unrewritten: [],
    });
    assert.deepEqual(rewrite('from .queues import Queue\n', move, 'aio', 'aio', true).text, 'from .moved.queues import Queue\n', 'no use of the name: nothing is added');
    assert.deepEqual(rewrite(src, move, 'aio', 'aio', false).text, 'from .moved.queues import *\nfrom .tasks import *\n\n__all__ = queues.__all__ + tasks.__all__\n', 'only a package\'s __init__.py');
  });

  it('edits land on the right bytes after multi-byte characters and a BOM', () => {
    const src = '\uFEFF# café ☕ — naïve\nfrom a.b.m import x  # ünïcode\n';
    assert.deepEqual(rewrite(src, mv('a.b.m', 'c.m'), 'x'), { text: '\uFEFF# café ☕ — naïve\nfrom c.m import x  # ünïcode\n', unrewritten: [] });
  });
});
