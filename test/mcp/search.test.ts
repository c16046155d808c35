import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { serveWorkspace, startRift } from '../helpers/mcp.ts';
import { eventually, removeWorkspace, tempWorkspace, writeFiles } from '../helpers/workspace.ts';

// search over real stdio MCP (reference F.6 rules 59–71, F.3 paging).

type Hit = {
  hit: { target: 'symbol'; symbol: { name: string; kind: string; id: string } } | { target: 'file'; size: number; languages?: string[] };
  matched_by: string[];
  range: { start: number; end: number };
  line: number;
  path: string;
  source?: string;
  score?: number;
};
type Result = { results: Hit[]; pagination: { page_index: number; total_pages: number }; warnings: Array<{ kind: string; reason?: string }> };

const FILES: Record<string, string> = {
  'crates/core/src/identity.rs':
    '/// Encodes a path.\npub fn encode_path(path: &str) -> String {\n    // every literal minted here is percent-encoded\n    path.to_string()\n}\n\npub fn decode_path() {}\n',
  'web/src/parser.ts': 'export class TokenParser {\n  parseLine(line: string): string {\n    return line;\n  }\n}\n\nexport function encodePath(p: string) { return p; }\n',
  'tools/solver.py': 'def fit_model(data):\n    """Fit the solver to data."""\n    return data\n\n\ndef helper():\n    pass\n',
  'README.md': '# Project\n\nTo install, verify the checksum\nof the release archive first.\n\nThen install.\n',
  'docs/guide.mdx': 'The install checksum is printed by the build.\n',
  'justfile': 'install:\n\tcargo install --path . --locked\n',
  'Dockerfile': 'FROM debian\nRUN apt-get install checksum-tools\n',
  'config/app.toml': '[server]\nport = 8080\n',
  'deploy/ci.yaml': 'steps:\n  - run: make install\n',
  'tests/legacy/test_solver.py': 'def test_fit_legacy():\n    assert True\n',
  'tests/test_new.py': 'def test_fit_new():\n    assert True\n',
  'rift.toml': '[source]\nexclude = ["tests/legacy/"]\n',
  'lib/sound.py': 'def safe_MessageBeep(kind):\n    return kind\n',
  'tests/test_sound.py': 'def check_safe_MessageBeep():\n    safe_MessageBeep(1)\n',
  'one.txt': 'hello alpha\n',
};

describe('search', () => {
  const ws = serveWorkspace({ before, after }, FILES);
  const search = async (args: Record<string, unknown>) => (await ws.rift.call('search', args)) as Result;
  const key = (h: Hit) => (h.hit.target === 'symbol' ? `${h.path}#${h.hit.symbol.name}` : `${h.path}`);

  test('a symbol matched only inside its declaration returns as a symbol hit tagged ranked', async () => {
    const r = await search({ query: 'literal minted', target: 'symbol' });
    const top = r.results[0];
    assert.equal(top.hit.target, 'symbol');
    assert.equal((top.hit as { symbol: { name: string } }).symbol.name, 'encode_path');
    assert.deepEqual(top.matched_by, ['ranked']);
    assert.equal(top.path, 'crates/core/src/identity.rs');
    assert.equal(top.line, 1);
    assert.deepEqual(top.range, { start: 0, end: Buffer.from(FILES['crates/core/src/identity.rs']).indexOf('\n\npub fn decode') });
    assert.equal(top.source, undefined, 'no source unless include names it');
    assert.equal(top.score, undefined, 'no score unless include names it');
  });

  test('file hits cover prose and extensionless files; languages only where a syntax provider claims the path', async () => {
    const r = await search({ query: 'install checksum', target: 'file', limit: 50 });
    const paths = r.results.map((h) => h.path);
    for (const p of ['README.md', 'docs/guide.mdx', 'Dockerfile', 'justfile', 'deploy/ci.yaml']) assert.ok(paths.includes(p), `${p} in ${paths}`);
    for (const h of r.results) {
      assert.equal(h.hit.target, 'file');
      assert.deepEqual(h.matched_by.includes('ranked'), true);
      assert.equal((h.hit as { languages?: string[] }).languages, undefined, `${h.path} has no syntax provider`);
      assert.equal((h.hit as { size: number }).size, Buffer.byteLength(FILES[h.path]));
    }
    const readme = r.results.find((h) => h.path === 'README.md')!;
    assert.equal(readme.line, 3, 'the line carrying the most words');
    assert.deepEqual(readme.range, { start: 11, end: 11 + 'To install, verify the checksum'.length });
    const py = await search({ query: 'solver', target: 'file' });
    assert.deepEqual((py.results.find((h) => h.path === 'tools/solver.py')!.hit as { languages?: string[] }).languages, ['python']);
  });

  test('units carrying more of the query words rank above units carrying fewer', async () => {
    const r = await search({ query: 'install checksum', target: 'file', limit: 50 });
    const both = ['README.md', 'docs/guide.mdx', 'Dockerfile'];
    const one = ['justfile', 'deploy/ci.yaml'];
    const pos = (p: string) => r.results.findIndex((h) => h.path === p);
    for (const b of both) for (const o of one) assert.ok(pos(b) < pos(o), `${b} (${pos(b)}) above ${o} (${pos(o)})`);
  });

  test('identifier tier: exact names tagged name, camelCase and snake_case aware', async () => {
    const exact = await search({ query: 'encode_path' });
    assert.equal(key(exact.results[0]), 'crates/core/src/identity.rs#encode_path');
    assert.ok(exact.results[0].matched_by.includes('name'));
    const camel = await search({ query: 'encodePath', target: 'symbol' });
    const names = camel.results.map((h) => (h.hit as { symbol: { name: string } }).symbol.name);
    assert.equal(names[0], 'encodePath');
    assert.ok(names.includes('encode_path'), 'the snake_case spelling shares the words');
    const part = await search({ query: 'parse', target: 'symbol' });
    assert.ok(part.results.some((h) => key(h) === 'web/src/parser.ts#TokenParser.parseLine'), 'camelCase part of a name');
  });

  test('a word mixing snake_case and camelCase finds itself; test code ranks below the code it tests', async () => {
    const r = await search({ query: 'safe_MessageBeep' });
    assert.equal(key(r.results[0]), 'lib/sound.py#safe_MessageBeep');
    assert.ok(r.results.some((h) => h.path === 'tests/test_sound.py' && h.matched_by.includes('content')), 'the literal is found in the test too');
    const asked = await search({ query: 'test safe_MessageBeep', target: 'symbol' });
    assert.ok(asked.results.some((h) => h.path === 'tests/test_sound.py'));
  });

  test('the literal line matcher tags content and points at the line', async () => {
    const r = await search({ query: 'port = 8080', include: ['source'] });
    const hit = r.results.find((h) => h.path === 'config/app.toml')!;
    assert.deepEqual(hit.matched_by, ['ranked', 'content']);
    assert.equal(hit.line, 2);
    assert.equal(hit.source, 'port = 8080');
  });

  test('include source attaches the excerpt, score the fused value, each independently', async () => {
    const s = await search({ query: 'fit_model', include: ['source'] });
    assert.equal(s.results[0].source, 'def fit_model(data):\n    """Fit the solver to data."""\n    return data');
    assert.equal(s.results[0].score, undefined);
    const sc = await search({ query: 'fit_model', include: ['score'] });
    assert.equal(typeof sc.results[0].score, 'number');
    assert.equal(sc.results[0].source, undefined);
    const scores = sc.results.map((h) => h.score!);
    assert.deepEqual([...scores].sort((a, b) => b - a), scores, 'within one coverage, higher scores first');
  });

  test('paths include/exclude narrow before ranking, so a smaller limit is a prefix of a larger one', async () => {
    const inc = await search({ query: 'install', paths: { include: ['docs/**', '*.md'] }, limit: 50 });
    assert.deepEqual([...new Set(inc.results.map((h) => h.path))].sort(), ['README.md', 'docs/guide.mdx']);
    const exc = await search({ query: 'install', paths: { exclude: ['*.md', 'docs/'] }, limit: 50 });
    assert.ok(exc.results.every((h) => !h.path.endsWith('.md') && !h.path.startsWith('docs/')));
    const star = await search({ query: 'path', paths: { include: ['crates/*.rs'] } });
    assert.deepEqual(star.results, [], '* does not cross /');
    const dstar = await search({ query: 'path', paths: { include: ['crates/**/*.rs'] } });
    assert.ok(dstar.results.length > 0, '** crosses /');
    const big = await search({ query: 'install path parse fit', limit: 40 });
    for (const n of [1, 3, 7]) {
      const small = await search({ query: 'install path parse fit', limit: n });
      assert.deepEqual(small.results.map(key), big.results.slice(0, n).map(key));
    }
    const p1 = await search({ query: 'install path parse fit', limit: 3, page_index: 1 });
    assert.deepEqual(p1.results.map(key), big.results.slice(3, 6).map(key));
    assert.equal(p1.pagination.total_pages, Math.ceil(big.results.length / 3));
  });

  test('target restricts hit kinds', async () => {
    const sym = await search({ query: 'install solver path', target: 'symbol', limit: 100 });
    assert.ok(sym.results.length > 0 && sym.results.every((h) => h.hit.target === 'symbol'));
    const file = await search({ query: 'install solver path', target: 'file', limit: 100 });
    assert.ok(file.results.length > 0 && file.results.every((h) => h.hit.target === 'file'));
  });

  test('force_include reaches excluded files on demand, without duplicating indexed ones; never the floor', async () => {
    const plain = await search({ query: 'test_fit', paths: { include: ['tests/**'] } });
    assert.deepEqual([...new Set(plain.results.map((h) => h.path))], ['tests/test_new.py']);
    const forced = await search({
      query: 'test_fit',
      paths: { include: ['tests/**'], force_include: ['tests/legacy/test_solver.py', 'tests/test_new.py'] },
      limit: 50,
    });
    const keys = forced.results.map(key);
    assert.ok(keys.includes('tests/legacy/test_solver.py#test_fit_legacy'), keys.join(','));
    assert.equal(new Set(keys).size, keys.length, 'no duplicate hits');
    assert.equal(keys.filter((k) => k === 'tests/test_new.py#test_fit_new').length, 1);
    writeFiles(ws.root, { '.git/secret.py': 'def test_fit_git(): pass\n' });
    const floor = await search({ query: 'test_fit_git', paths: { force_include: ['**'] } });
    assert.ok(floor.results.every((h) => !h.path.startsWith('.git/')));
  });

  test('bad input: empty or missing query, bad patterns, limit bounds', async () => {
    assert.match((await ws.rift.fail('search', {})).data.message as string, /field query, violation missing/);
    assert.match((await ws.rift.fail('search', { query: '  ' })).data.message as string, /field query, violation empty/);
    for (const [pattern, label] of [
      ['/abs', 'absolute'],
      ['a\\b', 'backslash'],
      ['a/../b', 'dot_segment'],
      ['', 'empty'],
      ['a\u0007', 'control_character'],
    ]) {
      const e = await ws.rift.fail('search', { query: 'x', paths: { include: [pattern] } });
      assert.equal(e.data.code, 'invalid_request');
      assert.match(e.data.message as string, new RegExp(`field paths, violation ${label}`));
    }
    assert.match((await ws.rift.fail('search', { query: 'x', limit: 0 })).data.message as string, /field limit, violation zero/);
    assert.deepEqual((await ws.rift.fail('search', { query: 'x', limit: 1001 })).data.limit, { field: 'limit', limit: 1000, required: 1001 });
    const rev = await ws.rift.fail('search', { query: 'x', rev: 'main', paths: { force_include: ['tests/**'] } });
    assert.equal(rev.data.code, 'capability_unavailable');
    assert.match(rev.data.message as string, /force_include at a revision/);
  });

  test('rev spelling is judged before the force_include refusal; every selector checks its patterns', async () => {
    const rev = await ws.rift.fail('search', { query: 'x', rev: '', paths: { force_include: ['tests/**'] } });
    assert.equal(rev.data.code, 'invalid_request');
    assert.match(rev.data.message as string, /field rev, violation empty/);
    for (const paths of [{ include: ['['] }, { exclude: ['src/['] }, { force_include: ['x/['] }]) {
      const e = await ws.rift.fail('search', { query: 'x', paths });
      assert.equal(e.data.code, 'invalid_request', JSON.stringify(paths));
      assert.match(e.data.message as string, /field paths, violation invalid_glob/);
    }
    for (const paths of [{ exclude: ['/abs'] }, { force_include: ['a/../b'] }]) {
      const e = await ws.rift.fail('search', { query: 'x', paths });
      assert.match(e.data.message as string, /field paths, violation (absolute|dot_segment)/, JSON.stringify(paths));
    }
  });

  test('every hit: line is the 1-based line of range.start, source the exact bytes of range', async () => {
    for (const query of ['install path parse fit checksum', 'port = 8080', 'safe_MessageBeep']) {
      const r = await search({ query, include: ['source'], limit: 100 });
      assert.ok(r.results.length > 0, query);
      for (const h of r.results) {
        const bytes = Buffer.from(FILES[h.path]);
        assert.equal(h.line, bytes.subarray(0, h.range.start).filter((b) => b === 0x0a).length + 1, `${query}: ${key(h)}`);
        assert.equal(h.source, bytes.subarray(h.range.start, h.range.end).toString('utf8'), `${query}: ${key(h)}`);
      }
    }
  });

  test('path globs are POSIX: [!R]* excludes every path whose name does not start with R', async () => {
    const r = await search({ query: 'checksum', paths: { exclude: ['[!R]*'] } });
    assert.deepEqual([...new Set(r.results.map((h) => h.path))], ['README.md']);
  });

  test('a literal match at offset 0 of a file is on line 1, its range the first line', async () => {
    const r = await search({ query: 'hello', include: ['source'] });
    const hit = r.results.find((h) => h.path === 'one.txt')!;
    assert.deepEqual(hit.range, { start: 0, end: 11 });
    assert.equal(hit.line, 1);
    assert.equal(hit.source, 'hello alpha');
    assert.ok(hit.matched_by.includes('content'));
  });

  test('an empty answer is page 0 of 1; a page past the end is empty with the true total', async () => {
    assert.deepEqual(await search({ query: 'zzzqqq' }), { results: [], pagination: { page_index: 0, total_pages: 1 }, warnings: [] });
    const past = await search({ query: 'install', page_index: 40, limit: 2 });
    assert.deepEqual(past.results, []);
    assert.ok(past.pagination.total_pages > 1);
  });

  test('edits reach the full-text tier in the same snapshot', async () => {
    writeFileSync(join(ws.root, 'notes.txt'), 'the quixotic marmalade\n');
    await eventually(async () => ((await search({ query: 'marmalade' })).results.length === 1 ? true : undefined));
    writeFileSync(join(ws.root, 'notes.txt'), 'nothing here\n');
    await eventually(async () => ((await search({ query: 'marmalade' })).results.length === 0 ? true : undefined));
  });
});

test('force_include matching more than 256 files is limit_exceeded, checked before searching', async () => {
  const files: Record<string, string> = { 'rift.toml': '[source]\nexclude = ["gen/"]\n', 'a.py': 'def a(): pass\n' };
  for (let i = 0; i < 257; i++) files[`gen/f${i}.txt`] = 'generated\n';
  const root = tempWorkspace(files);
  const rift = await startRift(root);
  try {
    const e = await rift.fail('search', { query: 'nothing_matches', paths: { force_include: ['gen/**'] } });
    assert.equal(e.data.code, 'limit_exceeded');
    assert.deepEqual(e.data.limit, { field: 'paths.force_include', limit: 256, required: 257 });
  } finally {
    await rift.close();
    removeWorkspace(root);
  }
});

test('force_include reaches a .gitignore-excluded file deep in the tree, and only the files its patterns match', async () => {
  const root = tempWorkspace({
    '.gitignore': 'vendor/\n',
    'vendor/pkg/deep/dep.py': 'def vendored_helper():\n    pass\n',
    'vendor/other/skip.py': 'def vendored_other():\n    pass\n',
    'src/app.py': 'def app():\n    pass\n',
  });
  const rift = await startRift(root);
  try {
    const plain = (await rift.call('search', { query: 'vendored_helper' })) as Result;
    assert.deepEqual(plain.results, [], 'the ignored file is not indexed');
    const paths = { force_include: ['vendor/pkg/**/*.py'] };
    const forced = (await rift.call('search', { query: 'vendored_helper', paths, include: ['source'] })) as Result;
    const top = forced.results[0];
    assert.equal(top.path, 'vendor/pkg/deep/dep.py');
    assert.equal(top.hit.target === 'symbol' && top.hit.symbol.name, 'vendored_helper');
    assert.equal(top.line, 1);
    assert.equal(top.source, 'def vendored_helper():\n    pass');
    const other = (await rift.call('search', { query: 'vendored_other', paths })) as Result;
    assert.deepEqual(other.results, [], 'a file the patterns do not match stays out');
  } finally {
    await rift.close();
    removeWorkspace(root);
  }
});

test('lexical_ranking_unavailable: a full-text tier that cannot load falls back to identifiers; a restart rebuilds it', async () => {
  const root = tempWorkspace({ 'a.py': 'def parse_date(text):\n    """Turn text into a calendar day."""\n' });
  let rift = await startRift(root, {}, { standalone: true });
  try {
    assert.equal(((await rift.call('search', { query: 'calendar' })) as Result).results.length > 0, true);
    const db = new Database(join(root, '.rift/rift.db'));
    db.exec('DROP TABLE chunks_fts; DROP TABLE symbols_fts;');
    db.close();
    const r = (await rift.call('search', { query: 'parse_date' })) as Result;
    assert.equal(r.warnings[0].kind, 'lexical_ranking_unavailable');
    assert.match(String(r.warnings[0].reason), /failed to load/);
    assert.equal((r.results[0].hit as { symbol: { name: string } }).symbol.name, 'parse_date');
    assert.deepEqual(r.results[0].matched_by, ['name']);
    const prose = (await rift.call('search', { query: 'calendar day' })) as Result;
    assert.equal(prose.results.filter((h) => h.matched_by.includes('ranked')).length, 0, 'prose finds nothing ranked');
  } finally {
    await rift.close();
  }
  rift = await startRift(root, {}, { standalone: true });
  try {
    const healed = (await rift.call('search', { query: 'calendar day' })) as Result;
    assert.deepEqual(healed.warnings, []);
    assert.ok(healed.results.some((h) => h.hit.target === 'symbol' && h.hit.symbol.name === 'parse_date' && h.matched_by.includes('ranked')));
  } finally {
    await rift.close();
    removeWorkspace(root);
  }
});
