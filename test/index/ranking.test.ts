import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Engine } from '../../src/services/engine.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';
import { isProse, meaningfulWords } from '../../src/index/rank.ts';
import { identifierLanes, rankedLanes } from '../../src/index/search.ts';
import { declarationDoc, queryWords } from '../../src/index/text.ts';

// The fused order: `score` orders every page exactly (pages are slices of one order), test code
// ranks below the code it tests unless the query asks for tests, private code below its public
// peers unless the query names it, prose words match their inflections while identifiers match
// only themselves, and a sentence weighs documentation over names.

const files: Record<string, string> = {
  'src/urls.py': 'def parse_url(text):\n    """Split a url into scheme, host and path."""\n    return text\n\n\ndef join_url(base, path):\n    """Join a base url and a path."""\n    return base + path\n',
  'tests/test_urls.py': 'from src.urls import parse_url\n\n\ndef test_parse_url():\n    assert parse_url("http://x/") == "http://x/"\n',
  'src/logs.py': 'class RotatingLog:\n    """Rotates the log file when it grows past its limit."""\n\n    def rotate(self):\n        return None\n',
  'README.md': '# urls\n\nParse and join a url; rotation of logs.\n',
};
for (let i = 0; i < 30; i++) files[`src/gen_${i}.py`] = `def url_helper_${i}(path):\n    """Helper ${i} for a url path${i % 3 === 0 ? ' and a log' : ''}."""\n    return path\n`;

test('score orders every page, and the pages of one query are slices of one order', async () => {
  const root = tempWorkspace(files);
  const engine = await Engine.open(root, { watch: false });
  try {
    await engine.build();
    for (const query of ['url path', 'parse a url', 'log url helper', 'url']) {
      const whole = await engine.search.search({ query, include: ['score'], limit: 100 });
      assert.ok(whole.results.length > 10, `${query}: enough hits to page`);
      const scores: number[] = [];
      const keys: string[] = [];
      for (let page = 0; page * 7 < whole.results.length; page++) {
        const r = await engine.search.search({ query, include: ['score'], limit: 7, page_index: page });
        for (const h of r.results) {
          assert.equal(typeof h.score, 'number');
          scores.push(h.score!);
          keys.push(`${h.path}:${h.range.start}:${h.hit.target}`);
        }
      }
      for (let i = 1; i < scores.length; i++) assert.ok(scores[i - 1] >= scores[i], `${query}: hit ${i} scores ${scores[i]} above hit ${i - 1} (${scores[i - 1]})`);
      assert.deepEqual(keys, whole.results.map((h) => `${h.path}:${h.range.start}:${h.hit.target}`), `${query}: pages are slices of the whole`);
    }
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});

test('test code ranks below the code it tests unless the query asks for tests', async () => {
  const root = tempWorkspace(files);
  const engine = await Engine.open(root, { watch: false });
  try {
    await engine.build();
    const plain = (await engine.search.search({ query: 'parse_url', target: 'symbol' })).results.map((h) => h.path);
    assert.equal(plain[0], 'src/urls.py');
    assert.ok(plain.indexOf('tests/test_urls.py') > 0);
    const asked = (await engine.search.search({ query: 'parse_url tests', target: 'symbol' })).results.map((h) => h.path);
    assert.equal(asked[0], 'tests/test_urls.py');
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});

test('prose words match their inflections; identifiers match only themselves', async () => {
  const root = tempWorkspace(files);
  const engine = await Engine.open(root, { watch: false });
  try {
    await engine.build();
    // `rotating` → stem `rotat` → `rotates`, `rotate`, `rotation` in the index.
    const prose = await engine.search.search({ query: 'rotating', target: 'symbol' });
    assert.deepEqual(prose.results.map((h) => (h.hit.target === 'symbol' ? h.hit.symbol.name : '')).sort(), ['RotatingLog', 'RotatingLog.rotate']);
    // An identifier is not stemmed: `rotate_log` matches no `rotates`.
    const ident = await engine.search.search({ query: 'rotate_log', target: 'symbol' });
    assert.deepEqual(ident.results.map((h) => (h.hit.target === 'symbol' ? h.hit.symbol.name : '')), []);
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});

test('a prose word matches the short forms declaration names write it with; a short form in a body or typed alone does not', async () => {
  const root = tempWorkspace({
    'fsutil.py': 'def make_tmp_dir(parent):\n    return parent\n\n\ndef copy_file(src, dst):\n    return dst\n\n\ndef dst_path(name):\n    return name\n',
    'notes.py': 'def temporary_directory_notes():\n    return None\n',
  });
  const engine = await Engine.open(root, { watch: false });
  try {
    await engine.build();
    const names = async (query: string) =>
      (await engine.search.search({ query, target: 'symbol' })).results.map((h) => (h.hit.target === 'symbol' ? h.hit.symbol.name : '')).sort();
    // "temporary" → tmp, "directory" → dir: both words match make_tmp_dir as well as the spelled-out name.
    assert.deepEqual(await names('temporary directory'), ['make_tmp_dir', 'temporary_directory_notes']);
    // "destination" → dst in a name; copy_file's parameter `dst` is a local, not a match.
    assert.deepEqual(await names('destination'), ['dst_path']);
    // The short form typed is an identifier: `tmp` does not expand to "temporary".
    assert.deepEqual(await names('tmp'), ['make_tmp_dir']);
    // Each query word counts once toward the words a declaration carries, though its name form
    // (with `tmp`, `dir`) and its body form (without) are asked apart.
    const words = meaningfulWords(queryWords('temporary directory'));
    const q = { words, identifierWords: words, literal: 'temporary directory', prose: true, pathOk: () => true, symbols: true, files: false };
    const coverage = new Map(rankedLanes(engine.indexer.store, q).rankedSymbols.map((r) => [r.row.qname, r.coverage]));
    assert.equal(coverage.get('make_tmp_dir'), 2);
    assert.equal(coverage.get('temporary_directory_notes'), 2);
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});

test('a declaration documentation is its comments before it and a docstring opening it, not its decorators or later strings', () => {
  const doc = (src: string, item: string) => {
    const bytes = new TextEncoder().encode(src);
    const at = src.indexOf(item);
    return declarationDoc(bytes, { start: 0, end: bytes.length }, { start: at, end: bytes.length });
  };
  assert.equal(doc('@cache\ndef f(x: int) -> int:  # note\n    """Square a number."""\n    return x\n', 'def f').trim(), 'Square a number.');
  assert.equal(doc("class C:\n    r'''Raw docstring\n    over lines.'''\n", 'class C').trim(), 'Raw docstring\n    over lines.');
  assert.equal(doc('def g():\n    x = "not a docstring"\n', 'def g'), '');
  assert.equal(doc('/**\n * Parses a urlString.\n */\n@Decorated()\nexport function parse(s: string) {}\n', 'export function').trim(), '/**\n * Parses a urlString url String .\n */');
  assert.equal(doc('#[derive(Debug)]\n/// Holds a point.\nstruct P;\n', 'struct P'), '/// Holds a point.');
});

test('a query of several plain lowercase words reads as prose; names and short queries do not', () => {
  const prose = (q: string) => isProse(queryWords(q));
  assert.equal(prose('rotate log files when they get too large'), true);
  assert.equal(prose('build a set-cookie header'), true);
  for (const q of ['shutil copytree', 'ArgumentParser add_argument', 'parse_url tests now', 'JSON parse', 'getLogger', 'HTTPConnection.request x y']) assert.equal(prose(q), false, q);
});

// A name carrying the sentence's words and a docstring saying the same: for prose the ranked
// lane weighs the documentation, for names the name (both carry every word, so only the
// field weights decide).
const collision: Record<string, string> = {
  'logs/naming.py': 'def rotate_log(files):\n    return files\n',
  'logs/rolling.py': 'def roll_over(paths):\n    """Rotate the log files once they grow too large."""\n    return paths\n',
};
for (let i = 0; i < 20; i++) collision[`other/m${i}.py`] = `def helper_${i}(value):\n    """Unrelated helper ${i}: rotate nothing, log nothing."""\n    return value\n`;

test('for prose the ranked lane puts a docstring match above a name match; for names the reverse', async () => {
  const root = tempWorkspace(collision);
  const engine = await Engine.open(root, { watch: false });
  try {
    await engine.build();
    const lane = (query: string, prose: boolean) => {
      const words = meaningfulWords(queryWords(query));
      const q = { words, identifierWords: words, literal: query, prose, pathOk: (p: string) => p.startsWith('logs/'), symbols: true, files: false };
      return rankedLanes(engine.indexer.store, q).rankedSymbols.map((r) => r.row.qname);
    };
    assert.deepEqual(lane('rotate the log files', true), ['roll_over', 'rotate_log']);
    assert.deepEqual(lane('rotate log files', false), ['rotate_log', 'roll_over']);
    // Through search, the sentence is recognised as prose by itself.
    const hits = await engine.search.search({ query: 'rotate the log files once they grow', target: 'symbol' });
    assert.equal(hits.results[0]?.path, 'logs/rolling.py');
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});

test('a private declaration ranks below its public peer unless the query names one', async () => {
  const root = tempWorkspace({
    'lib/a_impl.py': 'def _merge_sorted(left, right):\n    """Merge two sorted lists into one sorted list."""\n    return left + right\n',
    'lib/b_api.py': 'def merge_sorted(left, right):\n    """Merge two sorted lists into one sorted list."""\n    return left + right\n',
    'lib/c_cls.py': 'class Merger:\n    def __init__(self):\n        """Merge two sorted lists into one sorted list."""\n        self.left = []\n',
  });
  const engine = await Engine.open(root, { watch: false });
  try {
    await engine.build();
    const order = async (query: string) => (await engine.search.search({ query, target: 'symbol', include: ['score'] })).results.map((h) => (h.hit.target === 'symbol' ? h.hit.symbol.name : ''));
    // Identical text: only privacy separates them. A `__dunder__` is not private.
    const prose = await order('merge two sorted lists');
    assert.ok(prose.indexOf('merge_sorted') < prose.indexOf('_merge_sorted'), prose.join(', '));
    assert.ok(prose.indexOf('Merger.__init__') < prose.indexOf('_merge_sorted'), prose.join(', '));
    const named = await order('_merge_sorted');
    assert.equal(named[0], '_merge_sorted');
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});

test("the identifier tier's prefix level is the first declarations by name length, qualified name, path and place, across batches of names and under a path filter", async () => {
  // 700 distinct names, more than one batch, in two files; a third declares only the last 100
  // of them, which a filter keeping only it reaches through the second batch of names.
  const declared: Record<string, number[]> = { a: range(0, 700), b: range(0, 700), c: range(600, 700) };
  const source = (ks: number[]) => ks.map((k) => `def widget_${k}():\n    pass\n`).join('');
  const root = tempWorkspace({ 'a/m.py': source(declared.a), 'b/m.py': source(declared.b), 'c/m.py': source(declared.c) });
  const engine = await Engine.open(root, { watch: false });
  try {
    await engine.build();
    const store = engine.indexer.store;
    const words = queryWords('widget');
    const lane = (pathOk: ((p: string) => boolean) | null) =>
      identifierLanes(store, { words, identifierWords: words, literal: 'widget', prose: false, pathOk, symbols: true, files: false }).names.map(
        (h) => `${h.score} ${h.row.path}#${h.row.qname}`,
      );
    const expected = (keep: (p: string) => boolean) =>
      ['a', 'b', 'c']
        .filter((d) => keep(`${d}/m.py`))
        .flatMap((d) => declared[d].map((k) => ({ path: `${d}/m.py`, qname: `widget_${k}` })))
        .sort((x, y) => x.qname.length - y.qname.length || (x.qname < y.qname ? -1 : x.qname > y.qname ? 1 : 0) || (x.path < y.path ? -1 : 1))
        .slice(0, 500)
        .map((d) => `2 ${d.path}#${d.qname}`); // level 2: a prefix of the name
    const notA = (p: string) => !p.startsWith('a/');
    const onlyC = (p: string) => p.startsWith('c/');
    assert.equal(expected(onlyC).length, 100);
    // Counted names, then (as while another process's cold build has the name triggers dropped)
    // the declarations themselves: the same lane.
    for (const counted of [true, false]) {
      if (!counted) {
        const db = new Database(join(root, '.rift', 'rift.db'));
        db.exec('DROP TRIGGER names_symbol_insert');
        db.close();
      }
      assert.equal(store.namesCounted(), counted);
      assert.deepEqual(lane(null), expected(() => true));
      assert.deepEqual(lane(notA), expected(notA));
      assert.deepEqual(lane(onlyC), expected(onlyC));
    }
  } finally {
    await engine.close();
    removeWorkspace(root);
  }
});

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, i) => from + i);
}
