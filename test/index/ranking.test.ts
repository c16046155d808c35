import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../../src/services/engine.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// The fused order: `score` orders every page exactly (pages are slices of one order), test code
// ranks below the code it tests unless the query asks for tests, and prose words match their
// inflections while identifiers match only themselves.

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
