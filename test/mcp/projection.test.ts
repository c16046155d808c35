import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, lstatSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { treeRevision } from '../../src/core/digest.ts';
import { startRift, type RiftMcp } from '../helpers/mcp.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// Projections over the MCP SDK client against real `rift mcp` processes (reference F.15, rules
// 157–167): isolated trees that record their changes and read set, and publish atomically.

const d8 = (s: string | Buffer) => createHash('sha256').update(s).digest('hex').slice(0, 8);

const FILES: Record<string, string> = {
  'src/config.py': 'def limit():\n    return 10\n',
  'src/app.py': 'from config import limit\n\ndef run():\n    return limit() + 1\n',
  'src/util/strings.py': 'def shout(s):\n    return s.upper()\n',
  'README.md': '# demo\n',
};

/** Every file below `root` with its bytes, `.rift` and `.git` excepted. */
function tree(root: string, dir = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
    const p = dir ? `${dir}/${e.name}` : e.name;
    if (p === '.rift' || p === '.git') continue;
    if (e.isDirectory()) Object.assign(out, tree(root, p));
    else out[p] = readFileSync(join(root, p), 'utf8');
  }
  return out;
}

interface Proj {
  id: string;
  path: string;
  state: { dirty: boolean; unaccepted: boolean };
  base_revision: string;
  reason: string | null;
}

async function create(rift: RiftMcp, reason: string | null = null): Promise<Proj> {
  return (await rift.call('projection_create', reason === null ? {} : { reason })) as unknown as Proj;
}

async function resource(rift: RiftMcp, uri: string): Promise<Record<string, unknown>> {
  const r = await rift.client.readResource({ uri });
  return JSON.parse((r.contents[0] as { text: string }).text) as Record<string, unknown>;
}

/** One standalone `rift mcp` over a temporary workspace for a `describe` block; `set` receives both. */
function serveStandalone(files: Record<string, string>, set: (root: string, rift: RiftMcp) => void): void {
  let root = '';
  let rift: RiftMcp | null = null;
  before(async () => {
    root = tempWorkspace(files);
    rift = await startRift(root, {}, { standalone: true });
    set(root, rift);
  });
  after(async () => {
    await rift?.close();
    removeWorkspace(root);
  });
}

const patchOf = (path: string, from: string, to: string) => `--- a/${path}\n+++ b/${path}\n@@ -1 +1 @@\n-${from}\n+${to}\n`;

describe('projections (F.15)', () => {
  let root: string;
  let rift: RiftMcp;
  serveStandalone(FILES, (r, m) => ((root = r), (rift = m)));

  test('rule 157: projection_create materializes a byte-identical tree with a manifest; rift://projection/{id} returns its path and base revision', async () => {
    const p = await create(rift, 'first');
    assert.match(p.id, /^prj_[a-z2-7]{26}$/);
    assert.equal(p.path, join(root, '.rift', 'projections', p.id));
    assert.deepEqual(p.state, { dirty: false, unaccepted: false });
    assert.equal(p.reason, 'first');
    assert.deepEqual(tree(p.path), tree(root));
    // A copy, never a hard link: a write inside the projection leaves the workspace file alone.
    assert.equal(lstatSync(join(p.path, 'src/app.py')).nlink, 1);
    const ws = (await resource(rift, 'rift://workspace')) as { revision?: string; configuration?: { revision: string } };
    assert.ok(ws);
    const r = await resource(rift, `rift://projection/${p.id}`);
    assert.deepEqual(r, { uri: `rift://projection/${p.id}`, projection: p, workspace: root });
    const listed = (await rift.call('projection_list', {})) as { projections: Proj[]; pagination: unknown };
    assert.ok(listed.projections.some((x) => x.id === p.id));
    assert.deepEqual(listed.pagination, { page_index: 0, total_pages: 1 });
    const removed = await rift.call('projection_remove', { projection: p.id });
    assert.deepEqual(removed, { projection: p.id, state: { dirty: false, unaccepted: false } });
    assert.equal(existsSync(p.path), false);
    const gone = await rift.fail('publish', { projection: p.id });
    assert.equal(gone.data.code, 'resource_not_found');
  });

  test('rule 50: rev together with projection is invalid_request naming rev, on every read tool', async () => {
    const p = await create(rift);
    try {
      for (const [tool, args] of [
        ['get_symbol', { name: 'x' }],
        ['search', { query: 'x' }],
        ['nodes', { path: 'src/app.py', position: 0 }],
      ] as const) {
        const e = await rift.fail(tool, { ...args, projection: p.id, rev: 'HEAD' });
        assert.equal(e.data.code, 'invalid_request', tool);
        assert.match(String(e.data.message), /field rev, violation cannot be combined with projection/, tool);
      }
    } finally {
      await rift.call('projection_remove', { projection: p.id });
    }
  });

  test('projection_list pages with page_index and limit; bad ids are invalid_request naming the field', async () => {
    const a = await create(rift);
    const b = await create(rift);
    const page0 = (await rift.call('projection_list', { limit: 1 })) as { projections: Proj[]; pagination: { total_pages: number } };
    const page1 = (await rift.call('projection_list', { limit: 1, page_index: 1 })) as { projections: Proj[] };
    assert.deepEqual([page0.projections[0].id, page1.projections[0].id], [a.id, b.id]);
    assert.equal(page0.pagination.total_pages, 2);
    const bad = await rift.fail('publish', { projection: 'prj_nope' });
    assert.equal(bad.data.code, 'invalid_request');
    assert.match(bad.message, /projection/);
    await rift.call('projection_remove', { projection: a.id });
    await rift.call('projection_remove', { projection: b.id });
  });

  test('rules 158, 159, 162, 166: a shell write becomes one filesystem change with an external confirmation; accepting it publishes; the projection rebuilds', async () => {
    const p = await create(rift);
    appendFileSync(join(p.path, 'src/util/strings.py'), '\ndef whisper(s):\n    return s.lower()\n');
    rmSync(join(p.path, 'README.md'));
    writeFileSync(join(p.path, 'src/new.py'), 'X = 1\n');
    const before = tree(root);
    const refused = (await rift.call('publish', { projection: p.id })) as { published: boolean; unaccepted: string[]; conflicts: string[]; dependency_conflicts: unknown[]; state: unknown };
    assert.equal(refused.published, false);
    assert.equal(refused.unaccepted.length, 1);
    assert.deepEqual(refused.conflicts, []);
    assert.deepEqual(refused.state, { dirty: true, unaccepted: true });
    assert.deepEqual(tree(root), before, 'a refused publish writes nothing');
    const changes = (await resource(rift, `rift://changes?projection=${p.id}`)) as { changes: Array<Record<string, unknown>>; state: unknown };
    assert.equal(changes.changes.length, 1);
    const change = changes.changes[0] as { id: string; origin: string; paths: string[]; confirmations: Array<{ kind: string }> };
    assert.equal(change.id, refused.unaccepted[0]);
    assert.equal(change.origin, 'filesystem');
    assert.deepEqual(change.paths, ['README.md', 'src/new.py', 'src/util/strings.py']);
    assert.deepEqual(change.confirmations.map((c) => c.kind), ['external', 'destructive']);
    const ok = (await rift.call('publish', { projection: p.id, accept: [change.id] })) as Record<string, unknown>;
    assert.deepEqual(ok, { state: { dirty: false, unaccepted: false }, published: true, conflicts: [], dependency_conflicts: [], unaccepted: [] });
    assert.equal(existsSync(join(root, 'README.md')), false);
    assert.equal(readFileSync(join(root, 'src/new.py'), 'utf8'), 'X = 1\n');
    assert.match(readFileSync(join(root, 'src/util/strings.py'), 'utf8'), /whisper/);
    assert.deepEqual(tree(p.path), tree(root));
    const after = (await resource(rift, `rift://projection/${p.id}`)) as { projection: Proj };
    assert.notEqual(after.projection.base_revision, p.base_revision, 'the base revision advanced');
    const empty = (await resource(rift, `rift://changes?projection=${p.id}`)) as { changes: unknown[] };
    assert.deepEqual(empty.changes, []);
    // The workspace's index sees the published bytes.
    const hits = (await rift.call('get_symbol', { name: 'whisper' })) as { hits: unknown[] };
    assert.equal(hits.hits.length, 1);
    await rift.call('projection_remove', { projection: p.id });
  });

  test('change tools in a projection work on its tree and carry confirmations; direct workspace changes carry none', async () => {
    const p = await create(rift);
    const applied = (await rift.call('patch', { projection: p.id, patch: patchOf('src/config.py', 'def limit():', 'def limit(n=10):') })) as {
      status: string;
      summary: { id: string; confirmations: unknown[] };
    };
    assert.equal(applied.status, 'applied');
    assert.deepEqual(applied.summary.confirmations, []);
    assert.match(readFileSync(join(p.path, 'src/config.py'), 'utf8'), /limit\(n=10\)/);
    assert.doesNotMatch(readFileSync(join(root, 'src/config.py'), 'utf8'), /n=10/, 'the workspace is untouched');
    // Reads in the projection see its tree; the workspace does not.
    const inProj = (await rift.call('search', { projection: p.id, query: 'limit', include: ['source'] })) as { results: Array<{ path: string }> };
    assert.ok(inProj.results.length > 0);
    const deletion = (await rift.call('patch', { projection: p.id, patch: `--- a/src/app.py\n+++ /dev/null\n@@ -1,4 +0,0 @@\n${FILES['src/app.py'].replace(/^/gm, '-').slice(0, -1)}` })) as {
      summary: { id: string; confirmations: Array<{ kind: string }> };
    };
    assert.deepEqual(deletion.summary.confirmations.map((c) => c.kind), ['destructive']);
    const config = (await rift.call('patch', { projection: p.id, patch: '--- /dev/null\n+++ b/rift.toml\n@@ -0,0 +1 @@\n+[projections]\n' })) as {
      summary: { confirmations: Array<{ kind: string }> };
    };
    assert.deepEqual(config.summary?.confirmations.map((c) => c.kind), ['configuration'], JSON.stringify(config));
    const direct = (await rift.call('patch', { patch: patchOf('src/util/strings.py', 'def shout(s):', 'def shout(s: str):') })) as { summary: Record<string, unknown> };
    assert.equal('confirmations' in direct.summary, false);
    // Rule 159: only the unaccepted changes come back; accepting the destructive one is not enough.
    const partial = (await rift.call('publish', { projection: p.id, accept: [deletion.summary.id] })) as { unaccepted: string[]; published: boolean };
    assert.equal(partial.published, false);
    assert.equal(partial.unaccepted.length, 1);
    await rift.call('projection_remove', { projection: p.id });
  });

  test('rule 160: two projections change the same path; the second to publish gets conflicts and writes nothing', async () => {
    const a = await create(rift);
    const b = await create(rift);
    await rift.call('patch', { projection: a.id, patch: patchOf('src/app.py', 'from config import limit', 'from config import limit  # a') });
    await rift.call('patch', { projection: b.id, patch: patchOf('src/app.py', 'from config import limit', 'from config import limit  # b') });
    await rift.call('patch', { projection: b.id, patch: patchOf('src/config.py', 'def limit():', 'def limit():  # b') });
    const first = (await rift.call('publish', { projection: a.id })) as { published: boolean };
    assert.equal(first.published, true);
    const before = tree(root);
    const second = (await rift.call('publish', { projection: b.id })) as { published: boolean; conflicts: string[] };
    assert.equal(second.published, false);
    assert.deepEqual(second.conflicts, ['src/app.py']);
    assert.deepEqual(tree(root), before, 'rule 158: nothing written, not even the path without a conflict');
    assert.match(readFileSync(join(b.path, 'src/app.py'), 'utf8'), /# b/, 'rule 165: the projection is unchanged too');
    await rift.call('projection_remove', { projection: a.id });
    await rift.call('projection_remove', { projection: b.id });
  });
});

describe('projection read dependencies (rules 161, 163, 164) and restore (rule 167)', () => {
  let root: string;
  let rift: RiftMcp;
  serveStandalone(FILES, (r, m) => ((root = r), (rift = m)));

  test('rules 161, 164: files a projection read returned that the workspace changed come back as dependency conflicts; an exact acceptance passes, a stale one stays', async () => {
    const p = await create(rift);
    const read = (await rift.call('get_symbol', { projection: p.id, name: 'limit' })) as { hits: unknown[] };
    assert.equal(read.hits.length, 1);
    const found = (await rift.call('search', { projection: p.id, query: 'shout', target: 'symbol' })) as { results: Array<{ path: string }> };
    assert.deepEqual([...new Set(found.results.map((r) => r.path))], ['src/util/strings.py']);
    // Rule 163: an empty search records nothing.
    const none = (await rift.call('search', { projection: p.id, query: 'zzqqxxvv' })) as { results: unknown[] };
    assert.deepEqual(none.results, []);
    await rift.call('patch', { projection: p.id, patch: patchOf('src/app.py', 'from config import limit', 'from config import limit as cap') });
    const configOld = FILES['src/config.py'];
    // The workspace changes both files the projection read, never the one it changed.
    await rift.call('patch', { patch: patchOf('src/config.py', 'def limit():', 'def limit(n):') });
    await rift.call('patch', { patch: patchOf('src/util/strings.py', 'def shout(s):', 'def shout(s, n):') });
    const refused = (await rift.call('publish', { projection: p.id })) as { published: boolean; dependency_conflicts: Array<{ path: string; observed: string; current: string | null }>; conflicts: string[] };
    assert.equal(refused.published, false);
    assert.deepEqual(refused.conflicts, []);
    const strings1 = FILES['src/util/strings.py'].replace('def shout(s):', 'def shout(s, n):');
    assert.deepEqual(refused.dependency_conflicts, [
      { path: 'src/config.py', observed: d8(configOld), current: d8(configOld.replace('def limit():', 'def limit(n):')) },
      { path: 'src/util/strings.py', observed: d8(FILES['src/util/strings.py']), current: d8(strings1) },
    ]);
    const [configConflict, stringsConflict] = refused.dependency_conflicts;
    // The workspace moves strings.py again: the earlier acceptance no longer matches.
    await rift.call('patch', { patch: patchOf('src/util/strings.py', 'def shout(s, n):', 'def shout(s, n, m):') });
    const stale = (await rift.call('publish', { projection: p.id, accept_dependencies: [configConflict, stringsConflict] })) as {
      published: boolean;
      dependency_conflicts: unknown[];
    };
    assert.equal(stale.published, false);
    assert.deepEqual(stale.dependency_conflicts, [{ path: 'src/util/strings.py', observed: d8(FILES['src/util/strings.py']), current: d8(strings1.replace('def shout(s, n):', 'def shout(s, n, m):')) }]);
    assert.equal(readFileSync(join(root, 'src/app.py'), 'utf8'), FILES['src/app.py'], 'nothing published');
    const ok = (await rift.call('publish', { projection: p.id, accept_dependencies: [configConflict, stale.dependency_conflicts[0]] })) as { published: boolean };
    assert.equal(ok.published, true);
    assert.match(readFileSync(join(root, 'src/app.py'), 'utf8'), /limit as cap/);
    // Rule 166: the read set is cleared with the changeset.
    await rift.call('patch', { patch: patchOf('src/config.py', 'def limit(n):', 'def limit(n, m):') });
    await rift.call('patch', { projection: p.id, patch: patchOf('README.md', '# demo', '# demo 2') });
    const clean = (await rift.call('publish', { projection: p.id })) as { published: boolean };
    assert.equal(clean.published, true);
    await rift.call('projection_remove', { projection: p.id });
  });

  test('rule 167: restoring one path drops its whole change and restores every path of it from the workspace; other paths keep their baselines', async () => {
    const p = await create(rift);
    const both = (await rift.call('patch', {
      projection: p.id,
      patch: patchOf('src/app.py', 'from config import limit as cap', 'import config') + patchOf('src/util/strings.py', 'def shout(s, n, m):', 'def shout():'),
    })) as { summary: { id: string } };
    const other = (await rift.call('patch', { projection: p.id, patch: patchOf('README.md', '# demo 2', '# other') })) as { summary: { id: string } };
    // The workspace moves strings.py and README.md meanwhile.
    await rift.call('patch', { patch: patchOf('src/util/strings.py', 'def shout(s, n, m):', 'def shout(t):') });
    await rift.call('patch', { patch: patchOf('README.md', '# demo 2', '# demo 3') });
    const state = await rift.call('projection_restore', { projection: p.id, paths: ['src/app.py'] });
    assert.deepEqual(state, { dirty: true, unaccepted: false });
    assert.equal(readFileSync(join(p.path, 'src/app.py'), 'utf8'), readFileSync(join(root, 'src/app.py'), 'utf8'));
    assert.equal(readFileSync(join(p.path, 'src/util/strings.py'), 'utf8'), readFileSync(join(root, 'src/util/strings.py'), 'utf8'), 'the whole change is restored');
    assert.equal(readFileSync(join(p.path, 'README.md'), 'utf8'), '# other\n');
    const changes = (await resource(rift, `rift://changes?projection=${p.id}`)) as { changes: Array<{ id: string }> };
    assert.deepEqual(changes.changes.map((c) => c.id), [other.summary.id]);
    assert.notEqual(both.summary.id, other.summary.id);
    // README.md kept its old baseline, so the workspace's edit conflicts; strings.py took the new one.
    const refused = (await rift.call('publish', { projection: p.id })) as { conflicts: string[] };
    assert.deepEqual(refused.conflicts, ['README.md']);
    const all = await rift.call('projection_restore', { projection: p.id });
    assert.deepEqual(all, { dirty: false, unaccepted: false });
    assert.deepEqual(tree(p.path), tree(root));
    await rift.call('projection_remove', { projection: p.id });
  });
});

// A path longer than the read set's byte bound on its own (a read-set entry is its path and digest).
const BIG = `${['a', 'b', 'c', 'd', 'e'].map((c) => c.repeat(220)).join('/')}/big.py`;

describe('projection read-set bounds (rule 163)', () => {
  let rift: RiftMcp;
  const bounded = { ...FILES, 'rift.toml': '[projections]\nmax_dependencies = 2\nmax_dependency_bytes = "1kb"\n', [BIG]: 'def big():\n    return 1\n' };
  serveStandalone(bounded, (_root, m) => (rift = m));

  test('a read that would cross max_projection_dependencies or max_projection_dependency_bytes fails before returning data, and records nothing', async () => {
    const p = await create(rift);
    await rift.call('get_symbol', { projection: p.id, name: 'limit' });
    await rift.call('get_symbol', { projection: p.id, name: 'shout' });
    const count = await rift.fail('get_symbol', { projection: p.id, name: 'run' });
    assert.equal(count.data.code, 'limit_exceeded');
    assert.deepEqual(count.data.limit, { field: 'max_projection_dependencies', limit: 2, required: 3 });
    // The same read again is within bounds when it returns a file already in the set.
    const again = (await rift.call('get_symbol', { projection: p.id, name: 'limit' })) as { hits: unknown[] };
    assert.equal(again.hits.length, 1);
    const q = await create(rift);
    const bytes = await rift.fail('get_symbol', { projection: q.id, name: 'big' });
    assert.equal(bytes.data.code, 'limit_exceeded');
    assert.equal((bytes.data.limit as { field: string }).field, 'max_projection_dependency_bytes');
    // Nothing recorded: the workspace changing app.py and big.py raises no dependency conflict.
    await rift.call('patch', { patch: patchOf('src/app.py', 'from config import limit', 'from config import limit  # w') });
    await rift.call('patch', { patch: patchOf(BIG, 'def big():', 'def big(n):') });
    await rift.call('patch', { projection: p.id, patch: patchOf('README.md', '# demo', '# p') });
    const ok = (await rift.call('publish', { projection: p.id })) as { published: boolean; dependency_conflicts: unknown[] };
    assert.deepEqual(ok.dependency_conflicts, []);
    assert.equal(ok.published, true);
    const okq = (await rift.call('publish', { projection: q.id })) as { published: boolean };
    assert.equal(okq.published, true);
  });
});


const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');
/** The tree revision of a tree (every file below it, `.rift` and `.git` excepted), as the index computes it. */
const revisionOf = (root: string) => {
  const files = tree(root);
  return treeRevision(Object.keys(files).sort().map((path) => ({ path, sha256: sha(files[path]) })));
};

interface Applied {
  status: string;
  summary: { id: string; confirmations: Array<{ kind: string; title: string; detail: string; spans: unknown[] }>; warnings: Array<{ kind: string; message: string }> };
}

const MODELS = [
  'class Model:',
  '    """A model."""',
  '',
  '    def save(self):',
  '        return 1',
  '',
  '',
  'def helper():',
  '    return 2',
  '',
  '',
  'def unused():',
  '    return 3',
  '',
  '',
  'def value():',
  '    return 40 + 2',
  '',
].join('\n');

// A validation hook that fails, quoting the changed paths it was given, for files under checked/;
// no Python engine, so a removal is unchecked (and warns) on every machine.
const CHECK_HOOK = ['[languages.python]', 'lsp = false', '', '[[hooks]]', 'id = "check"', 'role = "validation"', 'kind = "lint"', 'program = "sh"', `arguments = ['-c', 'echo "$@" >&2; exit 3', 'check']`, 'changed_paths = "append"', 'include = ["checked/*"]', ''].join('\n');

describe('every change tool in a projection, and the hook and advisory confirmations (rules 158, 159, 162)', () => {
  let root: string;
  let rift: RiftMcp;
  serveStandalone({ 'rift.toml': CHECK_HOOK, 'pkg/models.py': MODELS, 'notes/todo.txt': 'move me\n', 'checked/a.txt': 'a\n', 'README.md': '# demo\n' }, (r, m) => ((root = r), (rift = m)));

  test('replace_symbol, insert_symbol, remove_symbol, replace_node, insert_node, remove_node and move_file change only the projection until publish lands them all', async () => {
    const p = await create(rift);
    const original = tree(root);
    const models = () => readFileSync(join(p.path, 'pkg/models.py'), 'utf8');
    const symbol = async (name: string) => ((await rift.call('get_symbol', { projection: p.id, name })) as { hits: Array<{ symbol: { id: string } }> }).hits[0].symbol.id;
    const node = async (needle: string, kind: string) => {
      const position = Buffer.from(models()).indexOf(needle);
      const listed = (await rift.call('nodes', { projection: p.id, path: 'pkg/models.py', position })) as { nodes: Array<{ id: string; kind: string }> };
      return listed.nodes.find((n) => n.kind === kind)!.id;
    };
    const applied: Record<string, Applied> = {};
    const step = async (tool: string, args: Record<string, unknown>) => {
      const r = (await rift.call(tool, { ...args, projection: p.id })) as unknown as Applied;
      assert.equal(r.status, 'applied', `${tool}: ${JSON.stringify(r)}`);
      assert.deepEqual(tree(root), original, `${tool}: the workspace is untouched until publish`);
      applied[tool] = r;
    };
    await step('replace_symbol', { symbol: await symbol('helper'), body: 'def helper():\n    return 20' });
    await step('insert_symbol', { anchor: await symbol('helper'), position: 'after', body: 'def added():\n    return 5' });
    await step('remove_symbol', { symbol: await symbol('unused') });
    await step('replace_node', { node: await node('40 + 2', 'binary_operator'), body: '42' });
    await step('insert_node', { node: await node('return 1', 'return_statement'), position: 'before', body: '# saving\n        ' });
    await step('remove_node', { node: await node('"""A model."""', 'expression_statement') });
    await step('move_file', { path: 'notes/todo.txt', destination: 'notes/done/todo.txt' });

    for (const tool of ['replace_symbol', 'insert_symbol', 'replace_node', 'insert_node']) assert.deepEqual(applied[tool].summary.confirmations, [], tool);
    // Advisory: a change that carries warnings, quoted in the confirmation.
    const advisory = (r: Applied) => ({ kind: 'advisory', title: 'The change carries warnings', detail: r.summary.warnings.map((w) => w.message).join('\n'), spans: [] });
    assert.deepEqual(applied.remove_symbol.summary.warnings.map((w) => w.kind), ['rift.remove.references_unchecked']);
    assert.deepEqual(applied.remove_symbol.summary.confirmations, [advisory(applied.remove_symbol)]);
    assert.deepEqual(applied.remove_node.summary.warnings.map((w) => w.kind), ['rift.remove.node_unchecked']);
    assert.deepEqual(applied.remove_node.summary.confirmations, [advisory(applied.remove_node)]);
    assert.deepEqual(applied.move_file.summary.warnings.map((w) => w.kind), ['rift.move.references_not_updated']);
    assert.deepEqual(applied.move_file.summary.confirmations, [
      { kind: 'destructive', title: 'Deletes files', detail: 'deletes notes/todo.txt', spans: [] },
      advisory(applied.move_file),
    ]);

    const listed = (await resource(rift, `rift://changes?projection=${p.id}`)) as { changes: Array<{ id: string; origin: string; confirmations: unknown[] }> };
    assert.deepEqual(listed.changes.map((c) => c.id), Object.values(applied).map((r) => r.summary.id));
    assert.ok(listed.changes.every((c) => c.origin === 'rift'));
    const refused = (await rift.call('publish', { projection: p.id })) as { published: boolean; unaccepted: string[] };
    assert.deepEqual(refused.unaccepted, [applied.remove_symbol, applied.remove_node, applied.move_file].map((r) => r.summary.id));
    assert.deepEqual(tree(root), original);
    const published = (await rift.call('publish', { projection: p.id, accept: refused.unaccepted })) as { published: boolean };
    assert.equal(published.published, true);
    const landed = readFileSync(join(root, 'pkg/models.py'), 'utf8');
    assert.match(landed, /def helper\(\):\n {4}return 20\n\n\ndef added\(\):\n {4}return 5\n/);
    assert.doesNotMatch(landed, /unused|A model/);
    assert.match(landed, / {8}# saving\n {8}return 1\n/);
    assert.match(landed, /return 42\n/);
    assert.equal(readFileSync(join(root, 'notes/done/todo.txt'), 'utf8'), 'move me\n');
    assert.equal(existsSync(join(root, 'notes/todo.txt')), false);
    assert.deepEqual(tree(root), tree(p.path), 'the projection is rebuilt from the new workspace');
    await rift.call('projection_remove', { projection: p.id });
  });

  test('hook: a failing validation hook mints a hook confirmation, for a rift change and (rule 162) for reconciled filesystem writes, run over exactly their paths', async () => {
    const p = await create(rift);
    const patched = (await rift.call('patch', { projection: p.id, patch: patchOf('checked/a.txt', 'a', 'a2') })) as unknown as Applied;
    assert.deepEqual(patched.summary.confirmations, [
      { kind: 'hook', title: 'A hook did not pass', detail: 'hook check did not pass: exited 3; stderr (14 of 14 bytes): checked/a.txt\n', spans: [] },
    ]);
    // A shell writes two checked files and one the hook does not select.
    writeFileSync(join(p.path, 'checked/a.txt'), 'a3, from a shell\n');
    writeFileSync(join(p.path, 'checked/b.txt'), 'b\n');
    writeFileSync(join(p.path, 'other.txt'), 'other\n');
    const first = (await resource(rift, `rift://changes?projection=${p.id}`)) as { changes: Array<{ id: string; origin: string; paths: string[]; confirmations: unknown[] }> };
    const written = first.changes[1];
    assert.deepEqual({ origin: written.origin, paths: written.paths }, { origin: 'filesystem', paths: ['checked/a.txt', 'checked/b.txt', 'other.txt'] });
    assert.deepEqual(written.confirmations, [
      { kind: 'external', title: 'Files written outside rift', detail: 'another process wrote 3 file(s) in the projection directory: checked/a.txt, checked/b.txt, other.txt', spans: [] },
      { kind: 'hook', title: 'A hook did not pass', detail: 'hook check did not pass: exited 3; stderr (28 of 28 bytes): checked/a.txt checked/b.txt\n', spans: [] },
    ]);
    // Writes the hook does not select carry no hook evidence.
    writeFileSync(join(p.path, 'other.txt'), 'other, again\n');
    const second = (await resource(rift, `rift://changes?projection=${p.id}`)) as typeof first;
    assert.equal(second.changes.length, 3);
    assert.deepEqual(second.changes[2].confirmations, [
      { kind: 'external', title: 'Files written outside rift', detail: 'another process wrote 1 file(s) in the projection directory: other.txt', spans: [] },
    ]);
    const refused = (await rift.call('publish', { projection: p.id, accept: [patched.summary.id, second.changes[2].id] })) as { published: boolean; unaccepted: string[] };
    assert.deepEqual(refused, { ...refused, published: false, unaccepted: [written.id] });
    await rift.call('projection_remove', { projection: p.id });
  });
});

describe('publication prunes what it emptied (rule 166); read dependencies of nodes and of deleted files (rules 161, 163)', () => {
  let root: string;
  let rift: RiftMcp;
  const files = { ...FILES, 'keep/other.py': 'Y = 2\n', 'keep/sub/only.py': 'X = 1\n', 'gone/deep/last.py': 'Z = 3\n' };
  serveStandalone(files, (r, m) => ((root = r), (rift = m)));

  test('rule 166: deletions that empty directories remove them, up to the first that still holds something', async () => {
    const p = await create(rift);
    const deleted = (await rift.call('patch', {
      projection: p.id,
      patch: '--- a/gone/deep/last.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-Z = 3\n--- a/keep/sub/only.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-X = 1\n',
    })) as unknown as Applied;
    assert.deepEqual(deleted.summary.confirmations.map((c) => c.kind), ['destructive']);
    assert.equal(existsSync(join(root, 'gone/deep/last.py')), true, 'the workspace waits for publish');
    const ok = (await rift.call('publish', { projection: p.id, accept: [deleted.summary.id] })) as { published: boolean };
    assert.equal(ok.published, true);
    for (const t of [root, p.path]) {
      assert.equal(existsSync(join(t, 'gone')), false, `${t}: gone/deep and gone emptied`);
      assert.equal(existsSync(join(t, 'keep/sub')), false, `${t}: keep/sub emptied`);
      assert.deepEqual(readdirSync(join(t, 'keep')), ['other.py'], `${t}: keep still holds a file`);
    }
    await rift.call('projection_remove', { projection: p.id });
  });

  test('rule 163: nodes with projection records the file it listed; a listing with no node records nothing', async () => {
    const p = await create(rift);
    const listed = (await rift.call('nodes', { projection: p.id, path: 'src/config.py', position: 4 })) as { nodes: unknown[] };
    assert.ok(listed.nodes.length > 0);
    const none = (await rift.call('nodes', { projection: p.id, path: 'src/app.py', position: 10_000 })) as { nodes: unknown[] };
    assert.deepEqual(none.nodes, []);
    const configNow = FILES['src/config.py'].replace('def limit():', 'def limit(n):');
    await rift.call('patch', { patch: patchOf('src/config.py', 'def limit():', 'def limit(n):') });
    await rift.call('patch', { patch: patchOf('src/app.py', 'from config import limit', 'from config import limit  # w') });
    const refused = (await rift.call('publish', { projection: p.id })) as { published: boolean; dependency_conflicts: unknown[]; conflicts: string[] };
    assert.deepEqual(refused, {
      state: { dirty: false, unaccepted: false },
      published: false,
      conflicts: [],
      dependency_conflicts: [{ path: 'src/config.py', observed: d8(FILES['src/config.py']), current: d8(configNow) }],
      unaccepted: [],
    });
    const ok = (await rift.call('publish', { projection: p.id, accept_dependencies: refused.dependency_conflicts })) as { published: boolean };
    assert.equal(ok.published, true);
    await rift.call('projection_remove', { projection: p.id });
  });

  test('rule 161: a file a projection read returned that the workspace deleted conflicts with current null; that exact acceptance publishes', async () => {
    const p = await create(rift);
    const found = (await rift.call('get_symbol', { projection: p.id, name: 'shout' })) as { hits: unknown[] };
    assert.equal(found.hits.length, 1);
    await rift.call('patch', { projection: p.id, patch: patchOf('README.md', '# demo', '# demo, from the projection') });
    await rift.call('patch', { patch: `--- a/src/util/strings.py\n+++ /dev/null\n@@ -1,2 +0,0 @@\n${FILES['src/util/strings.py'].replace(/^/gm, '-').slice(0, -1)}` });
    assert.equal(existsSync(join(root, 'src/util')), false, 'the direct deletion pruned src/util');
    const refused = (await rift.call('publish', { projection: p.id })) as { published: boolean; dependency_conflicts: Array<Record<string, unknown>> };
    assert.equal(refused.published, false);
    assert.deepEqual(refused.dependency_conflicts, [{ path: 'src/util/strings.py', observed: d8(FILES['src/util/strings.py']), current: null }]);
    assert.equal(readFileSync(join(root, 'README.md'), 'utf8'), '# demo\n', 'nothing published');
    const ok = (await rift.call('publish', { projection: p.id, accept_dependencies: refused.dependency_conflicts })) as { published: boolean };
    assert.equal(ok.published, true);
    assert.equal(readFileSync(join(root, 'README.md'), 'utf8'), '# demo, from the projection\n');
    assert.equal(existsSync(join(p.path, 'src/util/strings.py')), false, 'the projection follows the workspace');
    await rift.call('projection_remove', { projection: p.id });
  });
});

describe('rift://changes: the workspace form, paging and snapshot; the root is never pruned (rule 166)', () => {
  let root: string;
  let rift: RiftMcp;
  serveStandalone({ 'a/b/c.py': 'X = 1\n' }, (r, m) => ((root = r), (rift = m)));

  test('without projection: state null, no changes, one page, under the workspace index revision', async () => {
    assert.deepEqual(await resource(rift, 'rift://changes'), {
      uri: 'rift://changes',
      state: null,
      changes: [],
      pagination: { page_index: 0, total_pages: 1 },
      snapshot: { tree_revision: revisionOf(root) },
    });
    const past = await resource(rift, 'rift://changes?page_index=3');
    assert.deepEqual(past.pagination, { page_index: 3, total_pages: 1 });
  });

  test('a projection\'s changes page by 100, oldest first, under the projection index revision', async () => {
    const p = await create(rift);
    // 101 shell writes, each reconciled by a read into a filesystem change of its own.
    for (let i = 0; i <= 100; i++) {
      writeFileSync(join(p.path, `n${String(i).padStart(3, '0')}.txt`), `note ${i}\n`);
      await resource(rift, `rift://changes?projection=${p.id}&page_index=9`);
    }
    const page0 = (await resource(rift, `rift://changes?projection=${p.id}`)) as { uri: string; state: unknown; changes: Array<{ origin: string; paths: string[] }>; pagination: unknown; snapshot: unknown };
    assert.equal(page0.uri, `rift://changes?projection=${p.id}`);
    assert.deepEqual(page0.state, { dirty: true, unaccepted: true });
    assert.equal(page0.changes.length, 100);
    assert.deepEqual(page0.changes[0].paths, ['n000.txt']);
    assert.deepEqual(page0.changes[99].paths, ['n099.txt']);
    assert.ok(page0.changes.every((c) => c.origin === 'filesystem'));
    assert.deepEqual(page0.pagination, { page_index: 0, total_pages: 2 });
    assert.deepEqual(page0.snapshot, { tree_revision: revisionOf(p.path) });
    assert.notEqual(revisionOf(p.path), revisionOf(root));
    const page1 = (await resource(rift, `rift://changes?projection=${p.id}&page_index=1`)) as typeof page0;
    assert.deepEqual([page1.changes.map((c) => c.paths), page1.pagination], [[['n100.txt']], { page_index: 1, total_pages: 2 }]);
    const past = (await resource(rift, `rift://changes?projection=${p.id}&page_index=2`)) as typeof page0;
    assert.deepEqual([past.changes, past.pagination], [[], { page_index: 2, total_pages: 2 }]);
    const malformed = await rift.client.readResource({ uri: 'rift://changes?projection=nope' }).catch((e: { data: { code: string } }) => e.data.code);
    assert.equal(malformed, 'invalid_request');
    await rift.call('projection_remove', { projection: p.id });
  });

  test('a publication that deletes the last file below the root prunes every directory it emptied and keeps the root', async () => {
    const p = await create(rift);
    const deleted = (await rift.call('patch', { projection: p.id, patch: '--- a/a/b/c.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-X = 1\n' })) as unknown as Applied;
    const ok = (await rift.call('publish', { projection: p.id, accept: [deleted.summary.id] })) as { published: boolean };
    assert.equal(ok.published, true);
    assert.deepEqual(readdirSync(root), ['.rift'], 'a/b and a are gone; the root stays, holding only rift\'s state');
    assert.deepEqual(readdirSync(p.path), ['.rift']);
    await rift.call('projection_remove', { projection: p.id });
  });
});
