import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { symbolId } from '../../src/core/ids.ts';
import { serveWorkspace } from '../helpers/mcp.ts';

// Which file a Python absolute import names, seen through search.traversal over real stdio MCP:
// an absolute import starts at a directory on Python's path, never inside a package; and where
// many files carry the module's name (a monorepo's services, vendored copies), the nearest ones
// are the candidates, the crowd behind them is not searched for a name they lack.

type Hit = { hit: { symbol: { id: string } } };

const SERVICES = 6;
const files: Record<string, string> = {
  // A package holding a module named like a top-level one, declaring the same class: `import abc`
  // inside the package is the top-level one.
  'abc.py': 'class ABC:\n    pass\n',
  'pkg/__init__.py': '',
  'pkg/abc.py': 'class ABC:\n    pass\n',
  'pkg/simple.py': 'import abc\n\n\nclass Reader(abc.ABC):\n    pass\n',
  // A module no file outside a package carries: the one inside the package is still its candidate.
  'lib/__init__.py': '',
  'lib/only.py': 'def solo():\n    return 1\n',
  'use_only.py': 'import only\n\n\ndef run():\n    return only.solo()\n',
  // Two places carrying `shared`: the nearer lacks `extra`, the farther one is still looked into.
  'two/a/shared.py': 'def base():\n    return 1\n',
  'two/b/shared.py': 'def extra():\n    return 2\n',
  'two/a/main.py': 'import shared\n\n\ndef go():\n    return shared.base() + shared.extra()\n',
};
for (let i = 0; i < SERVICES; i++) {
  // Each service's config declares `load`; only service 0's also declares `reset`.
  files[`svc${i}/config.py`] = `def load():\n    return ${i}\n${i === 0 ? '\n\ndef reset():\n    return 0\n' : ''}`;
  files[`svc${i}/main.py`] = 'import config\n\n\ndef start():\n    config.load()\n    return config.reset()\n';
}

describe('Python absolute imports', () => {
  const ws = serveWorkspace({ before, after }, files);
  const callees = async (path: string, qname: string, facets = ['calls']) => {
    const r = (await ws.rift.call('search', { traversal: { seed: symbolId('python', path, qname), facets }, limit: 100 })) as { results: Hit[] };
    return r.results.map((h) => h.hit.symbol.id).sort();
  };

  test('an absolute import inside a package names the top-level module, not the package\'s own of that name', async () => {
    assert.deepEqual(await callees('pkg/simple.py', 'Reader', ['extends']), [symbolId('python', 'abc.py', 'ABC')]);
  });

  test('a module only a package carries is still found', async () => {
    assert.deepEqual(await callees('use_only.py', 'run'), [symbolId('python', 'lib/only.py', 'solo')]);
  });

  test('a few farther modules of the name are looked into for a name the nearest lacks', async () => {
    assert.deepEqual(await callees('two/a/main.py', 'go'), [symbolId('python', 'two/a/shared.py', 'base'), symbolId('python', 'two/b/shared.py', 'extra')].sort());
  });

  test('among many modules of the name, each service calls its own, and a name its own lacks is not taken from another', async () => {
    for (let i = 0; i < SERVICES; i++) {
      const own = [symbolId('python', `svc${i}/config.py`, 'load'), ...(i === 0 ? [symbolId('python', 'svc0/config.py', 'reset')] : [])].sort();
      assert.deepEqual(await callees(`svc${i}/main.py`, 'start'), own, `svc${i}`);
    }
  });
});
