import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startRift, type RiftMcp } from '../helpers/mcp.ts';
import { fixtureTime, gitFixture } from '../helpers/git.ts';
import { eventually, removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// include: ["history"] (reference F.5 rule 56): first parents from the served revision along
// the declaration's current path, each touching commit classified, newest first.

interface Version {
  revision: string;
  path: string;
  kind: string;
  timestamp: string;
  author: string;
  summary: string | null;
}
interface Hit {
  symbol: { id: string; name: string };
  history: { symbol: string; versions: Version[]; complete: boolean };
}
interface Page {
  hits: Hit[];
  warnings: Array<{ kind: string; [k: string]: unknown }>;
}

const PY = {
  intro: 'def fetch(url):\n    return url\n',
  body: 'def fetch(url):\n    return url.strip()\n',
  decorated: '@cache\ndef fetch(url):\n    return url.strip()\n',
  signature: '@cache\ndef fetch(url, timeout):\n    return url.strip()\n',
  unrelated: '@cache\ndef fetch(url, timeout):\n    return url.strip()\n\n\ndef other():\n    pass\n',
  broken: '@cache\ndef fetch(url, timeout:\n    return url.strip(\n',
  fixed: '@cache\ndef fetch(url, timeout):\n    return url.strip().lower()\n\n\ndef other():\n    pass\n',
  renamed: '@cache\ndef get(url, timeout):\n    return url.strip().lower()\n\n\ndef other():\n    pass\n',
  back: 'def fetch(url):\n    return url\n\n\ndef other():\n    pass\n',
};

describe('symbol history', () => {
  let root: string;
  let rift: RiftMcp;
  /** Commit ids by name; `n` is the fixture's commit number (its timestamp). */
  const c = new Map<string, { id: string; n: number }>();

  before(async () => {
    root = tempWorkspace();
    const repo = gitFixture(root);
    const steps: Array<[string, Record<string, string>]> = [
      ['py intro', { 'app/svc.py': PY.intro }],
      ['rs intro', { 'core/lib.rs': 'pub fn hash(x: u64) -> u64 {\n    x\n}\n' }],
      ['ts intro', { 'web/api.ts': 'export class Api {\n  load(id: string): string {\n    return id;\n  }\n}\n' }],
      ['go intro', { 'srv/srv.go': 'package srv\n\nfunc Serve(addr string) error {\n\treturn nil\n}\n' }],
      ['py body', { 'app/svc.py': PY.body }],
      ['rs attribute', { 'core/lib.rs': '#[inline]\npub fn hash(x: u64) -> u64 {\n    x\n}\n' }],
      ['ts decorator', { 'web/api.ts': 'export class Api {\n  @memo\n  load(id: string): string {\n    return id;\n  }\n}\n' }],
      ['py decorator', { 'app/svc.py': PY.decorated }],
      ['go signature', { 'srv/srv.go': 'package srv\n\nfunc Serve(addr string, port int) error {\n\treturn nil\n}\n' }],
      ['rs body', { 'core/lib.rs': '#[inline]\npub fn hash(x: u64) -> u64 {\n    x * 31\n}\n' }],
      ['ts signature', { 'web/api.ts': 'export class Api {\n  @memo\n  load(id: string): number {\n    return id;\n  }\n}\n' }],
      ['py signature', { 'app/svc.py': PY.signature }],
      ['docs only', { 'README.md': '# svc\n' }],
      ['py unrelated', { 'app/svc.py': PY.unrelated }],
      ['go body', { 'srv/srv.go': 'package srv\n\nfunc Serve(addr string, port int) error {\n\treturn listen(addr, port)\n}\n' }],
      ['rs signature', { 'core/lib.rs': '#[inline]\npub fn hash(x: u64, seed: u64) -> u64 {\n    x * 31\n}\n' }],
      ['ts body', { 'web/api.ts': 'export class Api {\n  @memo\n  load(id: string): number {\n    return Number(id);\n  }\n}\n' }],
      ['py broken', { 'app/svc.py': PY.broken }],
      ['py fixed', { 'app/svc.py': PY.fixed }],
      ['py renamed', { 'app/svc.py': PY.renamed }],
      ['py back', { 'app/svc.py': PY.back }],
    ];
    for (const [i, [message, files]] of steps.entries()) c.set(message, { id: repo.commit(message, files), n: i + 1 });
    rift = await startRift(root);
  });
  after(async () => {
    await rift.close();
    removeWorkspace(root);
  });

  const history = async (name: string, extra: Record<string, unknown> = {}) => {
    const page = (await rift.call('get_symbol', { name, include: ['history'], ...extra })) as unknown as Page;
    return { page, hit: page.hits[0] };
  };
  const kinds = (h: Hit) => h.history.versions.map((v) => `${v.kind} ${v.summary}`);

  test('python: renamed and reintroduced, a decorator added, signature vs body; an unparseable revision and an unrelated edit contribute nothing', async () => {
    const { page, hit } = await history('fetch');
    assert.equal(hit.symbol.id, 'rift://symbol/python/app/svc.py/fetch');
    assert.deepEqual(kinds(hit), [
      'introduced py back',
      'removed py renamed',
      'body_changed py fixed',
      'signature_changed py signature',
      'decorators_changed py decorator',
      'body_changed py body',
      'introduced py intro',
    ]);
    assert.equal(hit.history.complete, true);
    assert.equal(hit.history.symbol, hit.symbol.id);
    assert.deepEqual(page.warnings, []);
    const back = c.get('py back')!;
    assert.deepEqual(hit.history.versions[0], {
      revision: back.id,
      path: 'app/svc.py',
      kind: 'introduced',
      timestamp: fixtureTime(back.n),
      author: 'Ada Lovelace',
      summary: 'py back',
    });
    // include history alone carries no source.
    assert.equal((hit as unknown as { source?: unknown }).source, undefined);
  });

  test('rust: an attribute added is decorators_changed; parameters are the signature', async () => {
    const { hit } = await history('hash');
    assert.deepEqual(kinds(hit), ['signature_changed rs signature', 'body_changed rs body', 'decorators_changed rs attribute', 'introduced rs intro']);
  });

  test('typescript: a method decorator, a return type, a body', async () => {
    const { hit } = await history('Api.load');
    assert.deepEqual(kinds(hit), ['body_changed ts body', 'signature_changed ts signature', 'decorators_changed ts decorator', 'introduced ts intro']);
  });

  test('go: signature and body', async () => {
    const { hit } = await history('Serve');
    assert.deepEqual(kinds(hit), ['body_changed go body', 'signature_changed go signature', 'introduced go intro']);
  });

  test('the walk starts at the served revision', async () => {
    const at = c.get('py signature')!;
    const { page, hit } = await history('fetch', { rev: at.id });
    assert.equal((page as unknown as { revision: string }).revision, at.id);
    assert.deepEqual(kinds(hit), ['signature_changed py signature', 'decorators_changed py decorator', 'body_changed py body', 'introduced py intro']);
  });

  test('max_revisions bounds the walk: complete false and a history_truncated warning', async () => {
    writeFileSync(join(root, 'rift.toml'), '[providers.history]\nmax_revisions = 3\n');
    const { page, hit } = await eventually(async () => {
      const r = await history('fetch');
      return r.hit.history.complete ? undefined : r;
    });
    // Three commits walked: the third's "before" (the unparseable one, then past the bound) is unknown.
    assert.deepEqual(kinds(hit), ['introduced py back', 'removed py renamed']);
    assert.deepEqual(page.warnings, [
      {
        kind: 'history_truncated',
        message: `the history of ${hit.symbol.id} stopped after 3 revisions ([providers.history] max_revisions) before its introduction`,
        symbol: hit.symbol.id,
        max_revisions: 3,
      },
    ]);
    writeFileSync(join(root, 'rift.toml'), '');
  });
});

describe('symbol history: methods, merges, a workspace below the repository root', () => {
  let top: string;
  let rift: RiftMcp;
  const c = new Map<string, string>();
  const store = (get: string, put = '        self.items[key] = value') =>
    `import os\n\n\nclass Store:\n    def __init__(self):\n        self.items = {}\n\n${get}\n\n    def put(self, key, value):\n${put}\n\n\ndef helper():\n    return 1\n`;
  const GET = {
    intro: '    def get(self, key):\n        return self.items[key]',
    body: '    def get(self, key):\n        return self.items.get(key)',
    longer: '    def get(self, key):\n        found = self.items.get(key)\n        return found',
    signature: '    def get(self, key, default=None):\n        found = self.items.get(key)\n        return found',
    merged: '    def get(self, key, default=None):\n        found = self.items.get(key, default)\n        return found',
  };

  before(async () => {
    top = tempWorkspace();
    const repo = gitFixture(top);
    const file = 'pkg/app/store.py';
    const step = (message: string, text: string) => c.set(message, repo.commit(message, { [file]: text }));
    step('get intro', store(GET.intro));
    step('put body', store(GET.intro, '        self.items[key] = value\n        return value'));
    step('get body', store(GET.body, '        self.items[key] = value\n        return value'));
    // A line added at the end of the method, below its old last line.
    step('get longer', store(GET.longer, '        self.items[key] = value\n        return value'));
    // Lines added above the class move the method without changing it.
    step('imports', 'import sys\n' + store(GET.longer, '        self.items[key] = value\n        return value'));
    step('get signature', 'import sys\n' + store(GET.signature, '        self.items[key] = value\n        return value'));
    // A topic branch changes the method and is merged with a merge commit: only the merge is on
    // the first-parent line.
    repo.git('checkout', '-q', '-b', 'topic');
    step('topic get', 'import sys\n' + store(GET.merged, '        self.items[key] = value\n        return value'));
    repo.git('checkout', '-q', 'main');
    step('helper body', 'import sys\n' + store(GET.signature, '        self.items[key] = value\n        return value').replace('return 1', 'return 2'));
    repo.git('merge', '-q', '--no-ff', '-m', 'Merge branch topic', 'topic');
    c.set('merge', repo.git('rev-parse', 'HEAD'));
    // The class renamed: its methods are new names from here on.
    const merged = repo.git('show', `HEAD:${file}`) + '\n';
    step('rename class', merged.replace('class Store:', 'class Cache:'));
    // The method's last line removed: the older version holds the newer text and more.
    step('get shorter', (repo.git('show', `HEAD:${file}`) + '\n').replace('        found = self.items.get(key, default)\n        return found', '        return self.items.get(key, default)'));
    rift = await startRift(join(top, 'pkg'));
  });
  after(async () => {
    await rift.close();
    removeWorkspace(top);
  });

  const walk = async (name: string, extra: Record<string, unknown> = {}) => {
    const page = (await rift.call('get_symbol', { name, include: ['history'], ...extra })) as unknown as Page;
    return page.hits[0];
  };

  test('a method: edits elsewhere in its class and file and lines moving it contribute nothing; a merge is one first-parent revision', async () => {
    const hit = await walk('Store.get', { rev: c.get('merge') });
    assert.equal(hit.symbol.id, 'rift://symbol/python/app/store.py/Store.get');
    assert.deepEqual(kinds(hit), [
      'body_changed Merge branch topic',
      'signature_changed get signature',
      'body_changed get longer',
      'body_changed get body',
      'introduced get intro',
    ]);
    assert.ok(!hit.history.versions.some((v) => v.revision === c.get('topic get')), 'the topic commit is not a first parent');
    assert.ok(hit.history.versions.every((v) => v.path === 'app/store.py'), 'paths are workspace-relative');
    assert.equal(hit.history.complete, true);
  });

  test('a renamed container makes its methods new; a line removed at the end of a method is a body change', async () => {
    const hit = await walk('Cache.get');
    assert.deepEqual(kinds(hit), ['body_changed get shorter', 'introduced rename class']);
    const helper = await walk('helper');
    assert.deepEqual(kinds(helper), ['body_changed helper body', 'introduced get intro']);
  });
});

function kinds(h: Hit): string[] {
  return h.history.versions.map((v) => `${v.kind} ${v.summary}`);
}
