import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startRift, type RiftMcp } from '../helpers/mcp.ts';
import { gitEnv, gitFixture, type GitFixture } from '../helpers/git.ts';
import { eventually, removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// Revision-addressed reads (reference F.4 rules 40–52) on deterministic git fixtures.

type Hit = { symbol: { name: string; id: string }; path: string; line: number; node?: { id: string }; source?: { text: string } };
type Page = { hits: Hit[]; revision?: string; warnings: unknown[] };

const NOT_FOUND = (rev: string) =>
  `the requested resource does not exist in the current snapshot: rev ${rev}, requires a revision the repository resolves - a branch, tag, or commit id; search or list first, then retry with an identity that answer returned`;

describe('revision reads', () => {
  let root: string;
  let repo: GitFixture;
  let rift: RiftMcp;
  const c: string[] = [];

  before(async () => {
    root = tempWorkspace();
    repo = gitFixture(root);
    c.push(
      repo.commit('add parser', {
        'src/parse.py': 'def parse(text):\n    return text\n',
        'vendor/lib.py': 'def vendored(): pass\n',
        'notes.txt': 'parse notes\n',
        '.gitignore': 'gen/\n',
        'rift.toml': '[source]\nexclude = ["vendor/"]\n',
      }),
    );
    repo.git('tag', 'v1');
    repo.git('tag', '-a', '-m', 'release one', 'v1-annotated');
    repo.git('tag', 'blob-tag', repo.git('rev-parse', 'HEAD:src/parse.py'));
    repo.git('tag', 'tree-tag', repo.git('rev-parse', 'HEAD^{tree}'));
    // Committed although .gitignore names it: a revision reads what is tracked.
    mkdirSync(join(root, 'gen'));
    writeFileSync(join(root, 'gen/out.py'), 'def generated(): pass\n');
    repo.git('add', '-f', 'gen/out.py');
    symlinkSync('src/parse.py', join(root, 'link.py'));
    c.push(repo.commit('strip input', { 'src/parse.py': 'def parse(text):\n    return text.strip()\n' }));
    // A submodule entry (a gitlink) in the index, committed with the rest.
    repo.git('update-index', '--add', '--cacheinfo', `160000,${c[0]},sub`);
    c.push(repo.commit('add submodule link', {}));
    repo.git('gc', '-q'); // objects and refs packed: both kinds are read below
    c.push(repo.commit('add helper', { 'src/help.py': 'def helper():\n    return 1\n' }));
    // Uncommitted edits: never part of a revision read.
    writeFileSync(join(root, 'src/parse.py'), 'def parse(text, strict):\n    return text\n\n\ndef uncommitted(): pass\n');
    rift = await startRift(root);
  });
  after(async () => {
    await rift.close();
    removeWorkspace(root);
  });

  const get = async (args: Record<string, unknown>) => (await rift.call('get_symbol', args)) as Page;

  test('rule 43, 52: a revision read serves committed bytes and echoes the full commit id; the working tree keeps its edits', async () => {
    const atMain = await get({ name: 'parse', rev: 'main' });
    assert.equal(atMain.revision, c[3]);
    assert.deepEqual(atMain.warnings, []);
    assert.equal(atMain.hits[0].source?.text, 'def parse(text):\n    return text.strip()');
    assert.equal((await get({ name: 'uncommitted', rev: 'main' })).hits.length, 0);
    const current = await get({ name: 'parse' });
    assert.equal(current.revision, undefined);
    assert.equal(current.hits[0].source?.text, 'def parse(text, strict):\n    return text');
    assert.equal((await get({ name: 'uncommitted' })).hits.length, 1);
  });

  test('rule 41: branch, lightweight and annotated tag, short and full commit ids resolve in place; loose and packed objects', async () => {
    for (const [rev, commit] of [
      ['main', c[3]],
      ['v1', c[0]],
      ['v1-annotated', c[0]],
      [c[1], c[1]],
      [c[1].slice(0, 7), c[1]],
      [c[3].slice(0, 10), c[3]],
    ] as const) {
      const r = await get({ name: 'parse', rev });
      assert.equal(r.revision, commit, rev);
    }
    assert.equal((await get({ name: 'parse', rev: 'v1' })).hits[0].source?.text, 'def parse(text):\n    return text');
    // The newest commit's objects are loose, the rest packed.
    assert.equal((await get({ name: 'helper', rev: 'main' })).hits.length, 1);
    assert.equal((await get({ name: 'helper', rev: c[2] })).hits.length, 0);
  });

  test('rule 46: an unknown revision and a revision naming a non-commit refuse resource_not_found', async () => {
    for (const rev of ['nope', 'deadbeef', 'a'.repeat(40), 'refs/heads/nope']) {
      const e = await rift.fail('get_symbol', { name: 'parse', rev });
      assert.equal(e.data.code, 'resource_not_found', rev);
      assert.equal(e.data.message, NOT_FOUND(rev));
      assert.equal(e.data.retry, 'operator_action');
      assert.equal(e.data.phase, 'read');
    }
    for (const [rev, kind] of [['blob-tag', 'blob'], ['tree-tag', 'tree']]) {
      const e = await rift.fail('nodes', { path: 'src/parse.py', position: 0, rev });
      assert.equal(e.data.code, 'resource_not_found');
      assert.equal(
        e.data.message,
        `the requested resource does not exist in the current snapshot: rev ${rev}, resolved_kind ${kind}, requires a revision that names a commit; search or list first, then retry with an identity that answer returned`,
      );
    }
  });

  test('rule 44: forbidden spellings are invalid_request naming rev, before any git lookup', async () => {
    for (const [rev, violation] of [['HEAD~1', 'charset_forbidden'], ['main^', 'charset_forbidden'], ['@{u}', 'charset_forbidden'], ['', 'empty'], ['x'.repeat(129), 'too_long']]) {
      const e = await rift.fail('search', { query: 'parse', rev });
      assert.equal(e.data.code, 'invalid_request');
      assert.equal(e.data.message, `the request does not match the documented form: field rev, violation ${violation}; correct the reported field and resend the request`);
    }
    // `-`-led spellings are revisions, never options to git.
    const e = await rift.fail('get_symbol', { name: 'parse', rev: '--all' });
    assert.equal(e.data.code, 'resource_not_found');
  });

  test('rule 42, 51: the revision tree under [source] policy and language selection, tracked files ignored or not, no links or submodules', async () => {
    const names = async (rev?: string) =>
      (await get({ name: 'e', limit: 100, include: [], ...(rev ? { rev } : {}) })).hits.map((h) => `${h.path}:${h.symbol.name}`).sort();
    // [source].exclude applies at a revision as on the working tree; .gitignore does not.
    assert.deepEqual(await names('main'), ['gen/out.py:generated', 'src/help.py:helper', 'src/parse.py:parse']);
    assert.deepEqual(await names(), ['src/help.py:helper', 'src/parse.py:parse', 'src/parse.py:uncommitted']);
    const link = await rift.fail('nodes', { path: 'link.py', position: 0, rev: 'main' });
    assert.equal(link.data.code, 'resource_not_found');
    const vendored = await rift.fail('nodes', { path: 'vendor/lib.py', position: 0, rev: 'main' });
    assert.equal(vendored.data.code, 'resource_not_found');
    const sub = await rift.fail('nodes', { path: 'sub', position: 0, rev: 'main' });
    assert.equal(sub.data.code, 'resource_not_found');
    // A committed file no provider parses: searchable text, no syntax nodes.
    const txt = await rift.fail('nodes', { path: 'notes.txt', position: 0, rev: 'main' });
    assert.equal(txt.data.code, 'capability_unavailable');
    assert.match(txt.data.message as string, /capability syntax nodes, path notes\.txt, extension txt/);
  });

  test('rule 40: nodes and search read the revision too', async () => {
    const n = (await rift.call('nodes', { path: 'src/parse.py', position: 30, rev: c[0] })) as {
      nodes: Array<{ kind: string; range: { start: number; end: number }; symbol?: string }>;
      revision: string;
    };
    assert.equal(n.revision, c[0]);
    // The committed file is 33 bytes; the working tree's holds more.
    assert.deepEqual(n.nodes.slice(0, 2).map((x) => [x.kind, x.range.end, x.symbol ?? null]), [
      ['module', 33, null],
      ['function_definition', 32, 'rift://symbol/python/src/parse.py/parse'],
    ]);
    const now = (await rift.call('nodes', { path: 'src/parse.py', position: 30 })) as { nodes: Array<{ kind: string; range: { end: number } }> };
    assert.equal(now.nodes[0].range.end, 67);

    type Search = { results: Array<{ path: string; hit: { symbol?: { name: string } }; source?: string }>; revision?: string };
    const committed = (await rift.call('search', { query: 'uncommitted', rev: 'main' })) as Search;
    assert.equal(committed.revision, c[3]);
    assert.deepEqual(committed.results, []);
    const strip = (await rift.call('search', { query: 'strip', rev: 'main', include: ['source'] })) as Search;
    assert.equal(strip.results[0].path, 'src/parse.py');
    assert.match(strip.results[0].source!, /text\.strip\(\)/);
    const working = (await rift.call('search', { query: 'uncommitted' })) as Search;
    assert.equal(working.results[0].hit.symbol?.name, 'uncommitted');
  });

  test('rule 48, 49: a revision search refuses force_include and traversal', async () => {
    const forced = await rift.fail('search', { query: 'parse', rev: 'main', paths: { force_include: ['vendor/**'] } });
    assert.equal(forced.data.code, 'capability_unavailable');
    assert.match(forced.data.message as string, /capability force_include at a revision;/);
    const walk = await rift.fail('search', { rev: 'main', traversal: { seed: 'rift://symbol/python/src/parse.py/parse' } });
    assert.equal(walk.data.code, 'capability_unavailable');
    assert.match(walk.data.message as string, /capability relationship traversal at a revision, rev main;/);
  });
});

describe('revision reads: repository shapes', () => {
  test('rule 41: a workspace below the repository root reads workspace-relative paths; worktrees and shallow clones resolve', async () => {
    const top = tempWorkspace();
    try {
      const repo = gitFixture(join(top, 'repo'));
      const first = repo.commit('add', { 'pkg/src/a.py': 'def alpha():\n    return 1\n', 'other/b.py': 'def beta(): pass\n' });
      const second = repo.commit('edit', { 'pkg/src/a.py': 'def alpha():\n    return 2\n' });
      const below = await startRift(join(top, 'repo/pkg'));
      try {
        const r = (await below.call('get_symbol', { name: 'alpha', rev: first })) as Page;
        assert.equal(r.hits[0].path, 'src/a.py');
        assert.equal(r.hits[0].symbol.id, 'rift://symbol/python/src/a.py/alpha');
        assert.equal(r.hits[0].source?.text, 'def alpha():\n    return 1');
        assert.equal(((await below.call('get_symbol', { name: 'beta', rev: 'main' })) as Page).hits.length, 0);
        const n = (await below.call('nodes', { path: 'src/a.py', position: 0, rev: 'main' })) as { revision: string };
        assert.equal(n.revision, second);
      } finally {
        await below.close();
      }

      repo.git('worktree', 'add', '-q', '-b', 'side', join(top, 'worktree'), first);
      const wt = await startRift(join(top, 'worktree'));
      try {
        const r = (await wt.call('get_symbol', { name: 'alpha', rev: 'main' })) as Page;
        assert.equal(r.revision, second);
        assert.equal(r.hits[0].path, 'pkg/src/a.py');
        assert.equal(((await wt.call('get_symbol', { name: 'alpha', rev: 'side' })) as Page).revision, first);
      } finally {
        await wt.close();
      }

      execFileSync('git', ['clone', '-q', '--depth', '1', `file://${join(top, 'repo')}`, join(top, 'shallow')], { env: gitEnv() });
      const shallow = await startRift(join(top, 'shallow'));
      try {
        const r = (await shallow.call('get_symbol', { name: 'alpha', rev: 'main', include: ['source', 'history'] })) as Page & {
          hits: Array<{ history: { versions: Array<{ kind: string; revision: string }>; complete: boolean } }>;
        };
        assert.equal(r.revision, second);
        assert.equal(r.hits[0].source?.text, 'def alpha():\n    return 2');
        // The shallow boundary is where the clone's history begins.
        assert.deepEqual(r.hits[0].history.versions.map((v) => [v.kind, v.revision]), [['introduced', second]]);
        const e = await shallow.fail('get_symbol', { name: 'alpha', rev: first });
        assert.equal(e.data.code, 'resource_not_found');
      } finally {
        await shallow.close();
      }
    } finally {
      removeWorkspace(top);
    }
  });

  test('rule 45: no repository names the remedy, byte for byte; an unborn HEAD is an unknown revision', async () => {
    const root = tempWorkspace({ 'a.py': 'def alpha(): pass\n' });
    const rift = await startRift(root);
    try {
      for (const [tool, args] of [
        ['get_symbol', { name: 'alpha', rev: 'main' }],
        ['search', { query: 'alpha', rev: 'main' }],
        ['nodes', { path: 'a.py', position: 0, rev: 'main' }],
      ] as const) {
        const e = await rift.fail(tool, args);
        assert.deepEqual(
          { code: e.data.code, message: e.data.message, retry: e.data.retry, phase: e.data.phase },
          {
            code: 'capability_unavailable',
            message: `no configured provider serves this request: workspace ${root}, requires a git repository - run \`git init\`, or omit \`rev\` to read the current tree; adjust the request to a served capability, or configure a provider that serves it`,
            retry: 'operator_action',
            phase: 'read',
          },
        );
      }
      gitFixture(root);
      const unborn = await rift.fail('get_symbol', { name: 'alpha', rev: 'HEAD' });
      assert.equal(unborn.data.message, NOT_FOUND('HEAD'));
    } finally {
      await rift.close();
      removeWorkspace(root);
    }
  });

  test('rule 51: a committed blob over the file bound, a tree over 65,536 entries and a non-UTF-8 path refuse', async () => {
    const root = tempWorkspace();
    const rift = { current: null as RiftMcp | null };
    try {
      const repo = gitFixture(root);
      repo.commit('small', { 'a.py': 'def alpha(): pass\n', 'rift.toml': '[source]\nmax_file_bytes = "1kb"\n' });
      repo.git('branch', 'big');
      repo.git('checkout', '-q', 'big');
      repo.commit('big', { 'big.py': `# ${'x'.repeat(2000)}\n` });
      repo.git('checkout', '-q', 'main');
      // 65,537 entries naming one blob, committed without a checkout.
      const blob = repo.git('rev-parse', 'HEAD:a.py');
      const listing = Array.from({ length: 65_537 }, (_, i) => `100644 blob ${blob}\tf${i}.py`).join('\n') + '\n';
      const tree = execFileSync('git', ['mktree'], { cwd: root, env: gitEnv(), input: listing, encoding: 'utf8' }).trim();
      const wide = execFileSync('git', ['commit-tree', '-m', 'wide', tree], { cwd: root, env: gitEnv(), encoding: 'utf8' }).trim();
      repo.git('branch', 'wide', wide);
      const badName = Buffer.concat([Buffer.from('bad-'), Buffer.from([0xff]), Buffer.from('.py')]);
      const badListing = `100644 blob ${blob}\t${badName.toString('latin1')}\n`;
      const badTree = execFileSync('git', ['mktree'], { cwd: root, env: gitEnv(), input: Buffer.from(badListing, 'latin1') }).toString().trim();
      repo.git('branch', 'badpath', execFileSync('git', ['commit-tree', '-m', 'bad', badTree], { cwd: root, env: gitEnv(), encoding: 'utf8' }).trim());
      rift.current = await startRift(root);
      const big = await rift.current.fail('get_symbol', { name: 'alpha', rev: 'big' });
      assert.equal(big.data.code, 'limit_exceeded');
      assert.deepEqual(big.data.limit, { field: 'source.max_file_bytes', limit: 1024, required: 2003 });
      const w = await rift.current.fail('get_symbol', { name: 'alpha', rev: 'wide' });
      assert.equal(w.data.code, 'limit_exceeded');
      assert.deepEqual(w.data.limit, { field: 'revision_tree_entries', limit: 65_536, required: 65_537 });
      const bad = await rift.current.fail('search', { query: 'alpha', rev: 'badpath' });
      assert.equal(bad.data.code, 'unsupported_path');
      assert.match(bad.data.message as string, /violation not_utf8/);
      assert.equal(((await rift.current.call('get_symbol', { name: 'alpha', rev: 'main' })) as Page).hits.length, 1);
      // The same refusals when each starts from main's snapshot (its tree compared, not listed),
      // and main's snapshot, taken to move forward, is kept after each failed build.
      for (let round = 0; round < 2; round++) {
        assert.deepEqual((await rift.current.fail('get_symbol', { name: 'alpha', rev: 'big' })).data.limit, { field: 'source.max_file_bytes', limit: 1024, required: 2003 });
        assert.deepEqual((await rift.current.fail('get_symbol', { name: 'alpha', rev: 'wide' })).data.limit, { field: 'revision_tree_entries', limit: 65_536, required: 65_537 });
        const again = await rift.current.fail('search', { query: 'alpha', rev: 'badpath' });
        assert.equal(again.data.code, 'unsupported_path');
        assert.match(again.data.message as string, /violation not_utf8/);
        assert.equal(((await rift.current.call('get_symbol', { name: 'alpha', rev: 'main' })) as Page).hits.length, 1);
      }
    } finally {
      await rift.current?.close();
      removeWorkspace(root);
    }
  });
});

describe('revision reads: parse results addressed by content', () => {
  test('a revision shares the working tree\'s parses and the next revision parses only what differs; snapshots are evicted least recently used', async () => {
    const root = tempWorkspace();
    const rift = { current: null as RiftMcp | null };
    try {
      const repo = gitFixture(root);
      const first = repo.commit('three files', {
        'a.py': 'def alpha():\n    return "first"\n',
        'b.py': 'def beta():\n    return "original"\n',
        'c.py': 'def gamma(): pass\n',
      });
      const second = repo.commit('edit beta', { 'b.py': 'def beta():\n    return "rewritten"\n' });
      rift.current = await startRift(root, {}, { standalone: true });
      const r = rift.current;
      const events = () =>
        [...r.stderr().matchAll(/revision\.snapshot: revision indexed commit=(\w+) files=(\d+) changed=(\d+) parsed=(\d+) shared=(\d+) cached=(\d+) from_snapshot=(\w+)/g)].map(
          (m) => ({ commit: m[1], files: +m[2], changed: +m[3], parsed: +m[4], shared: +m[5], cached: +m[6], from_snapshot: m[7] === 'true' }),
        );
      await r.call('get_symbol', { name: 'alpha' }); // the working-tree index is built
      // main's bytes are the working tree's: nothing is parsed, every row is shared.
      // main's tree is the working tree's, so a revision search answers exactly as the working tree does.
      const query = { query: 'rewritten', include: ['source', 'score'] };
      const atMain = (await r.call('search', { ...query, rev: 'main' })) as { results: Array<{ path: string }>; revision: string };
      const current = (await r.call('search', query)) as { results: unknown[] };
      assert.ok(atMain.results.length > 0 && atMain.results.every((x) => x.path === 'b.py'));
      assert.deepEqual(atMain.results, current.results);
      assert.deepEqual(events(), [{ commit: second.slice(0, 12), files: 3, changed: 3, parsed: 0, shared: 3, cached: 0, from_snapshot: false }]);
      // The previous commit starts from main's snapshot and parses the one blob that differs.
      const old = (await r.call('get_symbol', { name: 'beta', rev: first })) as Page;
      assert.equal(old.hits[0].source?.text, 'def beta():\n    return "original"');
      assert.deepEqual(events()[1], { commit: first.slice(0, 12), files: 3, changed: 1, parsed: 1, shared: 0, cached: 0, from_snapshot: true });
      await r.call('get_symbol', { name: 'beta', rev: first });
      assert.equal(events().length, 2, 'a kept snapshot is not rebuilt');

      // Eight more revisions, each read twice (a snapshot read once moves forward to the next
      // revision instead of being kept), push the first out (REVISION_SNAPSHOTS_MAX = 8).
      for (let i = 0; i < 8; i++) repo.commit(`alpha ${i}`, { 'a.py': `def alpha():\n    return ${i}\n` });
      await eventually(async () => {
        const now = (await r.call('get_symbol', { name: 'alpha' })) as Page;
        return now.hits[0].source?.text.endsWith('return 7') ? true : undefined;
      }, 20_000);
      for (let i = 7; i >= 0; i--) {
        for (let read = 0; read < 2; read++) await r.call('get_symbol', { name: 'alpha', rev: repo.git('rev-parse', `HEAD~${i}`) });
      }
      assert.equal(events().length, 10);
      // Each parses only its new a.py (the first also takes main's b.py, known by content); the
      // newest holds the working tree's bytes, which the working-tree index parsed already.
      assert.deepEqual(
        events().slice(2).map((e) => [e.changed, e.parsed, e.cached, e.shared]),
        [[2, 1, 1, 0], ...Array(6).fill([1, 1, 0, 0]), [1, 0, 0, 1]],
      );
      // Rebuilt after eviction: its blobs are still known by content, so nothing is parsed.
      const again = (await r.call('get_symbol', { name: 'beta', rev: first })) as Page;
      assert.equal(again.hits[0].source?.text, 'def beta():\n    return "original"');
      const rebuilt = events()[10];
      assert.deepEqual({ ...rebuilt, changed: undefined }, { commit: first.slice(0, 12), files: 3, changed: undefined, parsed: 0, shared: 0, cached: 2, from_snapshot: true });
    } finally {
      await rift.current?.close();
      removeWorkspace(root);
    }
  });
});

test('rule 42: committed files under .rift/ (at any depth) stay invisible at a revision, as on the working tree', async () => {
  const root = tempWorkspace();
  const repo = gitFixture(root);
  // Committed before rift ever ran here (so no .rift/.gitignore kept them out).
  repo.commit('commit the floor', {
    'app.py': 'def visible_fn(): pass\n',
    '.rift/planted.py': 'def planted_top(): pass\n',
    'pkg/.rift/deep.py': 'def planted_deep(): pass\n',
  });
  const rift = await startRift(root);
  try {
    const names = async (name: string) =>
      ((await rift.call('get_symbol', { name, rev: 'main', include: [] })) as Page).hits.map((h) => h.path);
    assert.deepEqual(await names('visible_fn'), ['app.py']);
    assert.deepEqual(await names('planted_top'), []);
    assert.deepEqual(await names('planted_deep'), []);
    const found = (await rift.call('search', { query: 'planted', rev: 'main' })) as { results: unknown[] };
    assert.deepEqual(found.results, []);
    for (const path of ['.rift/planted.py', 'pkg/.rift/deep.py']) {
      const atRev = await rift.fail('nodes', { path, position: 0, rev: 'main' });
      const now = await rift.fail('nodes', { path, position: 0 });
      assert.equal(atRev.data.code, 'invalid_request', path);
      assert.equal(atRev.data.message, now.data.message, `${path}: the revision answers as the working tree does`);
    }
  } finally {
    await rift.close();
    removeWorkspace(root);
  }
});

test('rule 41: refs are read afresh on every request: a branch that moves (loose, then packed) and a tag made after the first read', async () => {
  const root = tempWorkspace();
  const repo = gitFixture(root);
  repo.commit('one', { 'app.py': 'def version():\n    return 1\n' });
  const rift = await startRift(root);
  try {
    const at = async (rev: string) => {
      const page = (await rift.call('get_symbol', { name: 'version', rev })) as Page;
      return { source: page.hits[0]?.source?.text, revision: page.revision };
    };
    assert.equal((await at('main')).source, 'def version():\n    return 1');
    const two = repo.commit('two', { 'app.py': 'def version():\n    return 2\n' });
    assert.deepEqual(await at('main'), { source: 'def version():\n    return 2', revision: two });
    repo.git('pack-refs', '--all');
    const three = repo.commit('three', { 'app.py': 'def version():\n    return 3\n' });
    repo.git('pack-refs', '--all');
    assert.deepEqual(await at('main'), { source: 'def version():\n    return 3', revision: three });
    repo.git('tag', 'late', two);
    assert.deepEqual(await at('late'), { source: 'def version():\n    return 2', revision: two });
    // A leading dash is a ref name to look up, never an option.
    const dash = await rift.fail('get_symbol', { name: 'version', rev: '--all' });
    assert.equal(dash.data.code, 'resource_not_found');
  } finally {
    await rift.close();
    removeWorkspace(root);
  }
});

test('rules 40, 43: TypeScript, Rust and Go read at a revision as committed, with their nodes', async () => {
  const root = tempWorkspace();
  const repo = gitFixture(root);
  const first = repo.commit('three languages', {
    'web/api.ts': 'export class Api {\n  load(id: string): string {\n    return id;\n  }\n}\n',
    'core/lib.rs': 'pub fn hash(x: u64) -> u64 {\n    x\n}\n',
    'srv/srv.go': 'package srv\n\nfunc Serve(addr string) error {\n\treturn nil\n}\n',
  });
  const second = repo.commit('change them', {
    'web/api.ts': 'export class Api {\n  load(id: string): number {\n    return Number(id);\n  }\n}\n',
    'core/lib.rs': 'pub fn hash(x: u64, seed: u64) -> u64 {\n    x ^ seed\n}\n',
    'srv/srv.go': 'package srv\n\nfunc Serve(addr string, port int) error {\n\treturn nil\n}\n',
  });
  writeFileSync(join(root, 'core/lib.rs'), 'pub fn hash() -> u64 {\n    0\n}\n');
  const rift = await startRift(root);
  try {
    const source = async (name: string, rev?: string) => {
      const page = (await rift.call('get_symbol', { name, ...(rev ? { rev } : {}) })) as Page;
      return { text: page.hits[0]?.source?.text, path: page.hits[0]?.path, revision: page.revision };
    };
    assert.deepEqual(await source('Api.load', first), { text: 'load(id: string): string {\n    return id;\n  }', path: 'web/api.ts', revision: first });
    assert.deepEqual(await source('Api.load', 'main'), { text: 'load(id: string): number {\n    return Number(id);\n  }', path: 'web/api.ts', revision: second });
    assert.deepEqual(await source('hash', first), { text: 'pub fn hash(x: u64) -> u64 {\n    x\n}', path: 'core/lib.rs', revision: first });
    assert.equal((await source('hash', 'main')).text, 'pub fn hash(x: u64, seed: u64) -> u64 {\n    x ^ seed\n}');
    assert.equal((await source('hash')).text, 'pub fn hash() -> u64 {\n    0\n}', 'the working tree keeps its uncommitted edit');
    assert.deepEqual(await source('Serve', first), { text: 'func Serve(addr string) error {\n\treturn nil\n}', path: 'srv/srv.go', revision: first });
    type Nodes = { nodes: Array<{ kind: string; symbol?: string }>; revision: string };
    const rs = (await rift.call('nodes', { path: 'core/lib.rs', position: 8, rev: first })) as Nodes;
    assert.equal(rs.revision, first);
    assert.ok(rs.nodes.some((n) => n.kind === 'function_item' && n.symbol === 'rift://symbol/rust/core/lib.rs/hash'));
    const go = (await rift.call('nodes', { path: 'srv/srv.go', position: 20, rev: 'main' })) as Nodes;
    assert.ok(go.nodes.some((n) => n.kind === 'function_declaration' && n.symbol === 'rift://symbol/go/srv/srv.go/Serve'));
    const ts = (await rift.call('search', { query: 'Number', rev: first })) as { results: unknown[] };
    assert.deepEqual(ts.results, [], 'the older revision holds no Number(id)');
  } finally {
    await rift.close();
    removeWorkspace(root);
  }
});

test('a committed file rift leaves out is content_unavailable at a revision, naming why, as on the working tree', async () => {
  const root = tempWorkspace();
  const repo = gitFixture(root);
  const first = repo.commit('text', { 'a.py': 'def a():\n    pass\n', 'b.py': 'def b():\n    pass\n' });
  // b.py gains a NUL byte; then a.py changes, so the third revision starts from the second's snapshot.
  writeFileSync(join(root, 'b.py'), Buffer.from('def b():\n    pass\n\0'));
  const second = repo.commit('nul byte', {});
  const third = repo.commit('edit a', { 'a.py': 'def a():\n    return 1\n' });
  const rift = await startRift(root);
  try {
    assert.equal(((await rift.call('nodes', { path: 'b.py', position: 0, rev: first })) as { nodes: unknown[] }).nodes.length > 0, true);
    for (const rev of [second, third]) {
      const e = await rift.fail('nodes', { path: 'b.py', position: 0, rev });
      assert.equal(e.data.code, 'content_unavailable', rev);
      assert.match(e.data.message as string, /path b\.py, rev [0-9a-f]{40}, reason the file contains a NUL byte/);
    }
    // Back to the first, built again from the third's snapshot: b.py is text there.
    assert.equal(((await rift.call('get_symbol', { name: 'b', rev: first })) as Page).hits[0]?.path, 'b.py');
    assert.equal(((await rift.call('get_symbol', { name: 'b', rev: third })) as Page).hits.length, 0);
  } finally {
    await rift.close();
    removeWorkspace(root);
  }
});
