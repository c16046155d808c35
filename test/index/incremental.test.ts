import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Engine } from '../../src/services/engine.ts';
import { assertNamesCounted } from '../helpers/names.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// Re-indexing an edited file keeps the rows of declarations and chunks whose full-text input
// did not change (their offsets and lines are rewritten), replaces the rest, and leaves the
// full-text tables exactly in step with what the file now holds.

const filler = (n: number, word: string) => Array.from({ length: n }, (_, i) => `# ${word} filler line ${i}`).join('\n');
const fn = (name: string, word: string) => `def ${name}():\n    """Docs mention ${word}."""\n    return 1\n`;

test('an edited file keeps unchanged rows, rewrites moved ones and drops what left', async () => {
  const before = [fn('alpha', 'aardvark'), filler(50, 'lemur'), fn('beta', 'walrus'), filler(50, 'ocelot'), fn('gamma', 'gazelle')].join('\n');
  const root = tempWorkspace({ 'a.py': before });
  const engine = await Engine.open(root, { watch: false });
  const db = new Database(join(root, '.rift', 'rift.db'), { readonly: true });
  const rows = () =>
    new Map((db.prepare(`SELECT s.id, s.qname, s.line, s.span_start AS start FROM symbols s JOIN files f ON f.blob_id = s.blob_id WHERE f.path = 'a.py'`).all() as Array<{ id: number; qname: string; line: number; start: number }>).map((r) => [r.qname, r]));
  const lines = async (query: string) => (await engine.search.search({ query, include: ['source'] })).results.map((h) => `${h.path}:${h.line}`).sort();
  const count = (table: string) => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  try {
    await engine.build();
    const was = rows();
    const ownedBy = (id: number) => (db.prepare(`SELECT id FROM chunks WHERE symbol_id = ?`).all(id) as Array<{ id: number }>).map((r) => r.id);
    const wasOwned = { alpha: ownedBy(was.get('alpha')!.id), beta: ownedBy(was.get('beta')!.id) };
    assert.ok(wasOwned.alpha.length > 0 && wasOwned.beta.length > 0, 'each function owns the chunk of its text');

    // A new function above everything shifts every offset; beta's text changes; gamma goes.
    const after = [fn('delta', 'zebrafish'), fn('alpha', 'aardvark'), filler(50, 'lemur'), fn('beta', 'narwhal'), filler(50, 'ocelot')].join('\n');
    writeFileSync(join(root, 'a.py'), after);
    await engine.indexer.refresh(['a.py']);
    const now = rows();

    assert.deepEqual([...now.keys()].sort(), ['alpha', 'beta', 'delta']);
    assert.equal(now.get('alpha')!.id, was.get('alpha')!.id, 'unchanged text keeps its row');
    // A declaration's full-text input is its name; its text lives in the chunks it owns, so a
    // changed body keeps the row and replaces the chunk.
    assert.equal(now.get('beta')!.id, was.get('beta')!.id, 'an unchanged name keeps its row');
    assert.deepEqual(ownedBy(now.get('alpha')!.id), wasOwned.alpha, 'an unchanged body keeps its chunk');
    assert.notDeepEqual(ownedBy(now.get('beta')!.id), wasOwned.beta, 'a changed body gets a new chunk');
    const at = (name: string) => after.indexOf(`def ${name}(`);
    for (const name of ['alpha', 'beta', 'delta']) {
      assert.equal(now.get(name)!.start, at(name), `${name} offset`);
      assert.equal(now.get(name)!.line, after.slice(0, at(name)).split('\n').length, `${name} line`);
    }
    // Full text follows the file: removed words are gone, new ones found, kept chunks found at their new lines.
    assert.deepEqual(await lines('walrus'), []);
    assert.deepEqual(await lines('gazelle'), []);
    assert.ok((await lines('narwhal')).includes(`a.py:${now.get('beta')!.line}`));
    assert.ok((await lines('zebrafish')).includes(`a.py:${now.get('delta')!.line}`));
    const lemur = after.split('\n').findIndex((l) => l.includes('lemur filler line 30')) + 1;
    assert.ok((await lines('lemur filler line 30')).includes(`a.py:${lemur}`));
    assert.equal(count('symbols_fts'), count('symbols'));
    assertNamesCounted(join(root, '.rift', 'rift.db'));
    assert.equal(count('chunks_fts'), count('chunks'));
    // Documentation follows too, for a row kept by its name (beta) as for a new one (delta).
    const documented = (word: string) => (db.prepare(`SELECT rowid AS id FROM docs_fts WHERE docs_fts MATCH ?`).all(word) as Array<{ id: number }>).map((r) => r.id);
    assert.deepEqual(documented('walrus'), []);
    assert.deepEqual(documented('narwhal'), [now.get('beta')!.id]);
    assert.deepEqual(documented('zebrafish'), [now.get('delta')!.id]);
    assert.equal(count('docs_fts'), count('symbols'), 'every function here is documented');

    // Chunks are line-aligned: an append keeps every earlier chunk's row.
    const chunkIds = () => (db.prepare(`SELECT c.id FROM chunks c JOIN files f ON f.blob_id = c.blob_id WHERE f.path = 'a.py' ORDER BY c.start`).all() as Array<{ id: number }>).map((r) => r.id);
    const ids = chunkIds();
    writeFileSync(join(root, 'a.py'), `${after}\n${fn('omega', 'okapi')}`);
    await engine.indexer.refresh(['a.py']);
    assert.deepEqual(chunkIds().slice(0, ids.length - 1), ids.slice(0, -1));
    assert.ok((await lines('okapi')).length > 0);
    assert.equal(count('chunks_fts'), count('chunks'));
  } finally {
    db.close();
    await engine.close();
    removeWorkspace(root);
  }
});
