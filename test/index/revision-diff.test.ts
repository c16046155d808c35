import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigLoader } from '../../src/config/loader.ts';
import { RevisionIndex, type RevisionSnapshot } from '../../src/index/revision.ts';
import { Store } from '../../src/index/store.ts';
import { initSyntax } from '../../src/syntax/runtime.ts';
import { gitFixture } from '../helpers/git.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// A revision built from the previous snapshot (the trees compared object by object, the store
// moved forward or copied) holds exactly what a revision built from nothing holds: the same
// files, bytes, declarations and skipped files, through additions, deletions, renames, a file
// becoming a directory and back, symbolic links, bytes that are left out, and a workspace below
// the repository's root.

/** Everything a revision read can see of a snapshot, in a comparable form. */
function contents(s: RevisionSnapshot): unknown {
  const files = s.store.files().map((f) => ({
    path: f.path,
    sha256: f.sha256,
    bytes: Buffer.from(s.store.indexedBytes(f.path) ?? []).toString('utf8'),
    symbols: s.store.symbolsOfFile(f.path).map((r) => `${r.qname}@${r.span_start}-${r.span_end}`),
  }));
  return { files, skipped: [...s.store.skippedFiles().values()].map((k) => `${k.path}:${k.reason}`), counts: s.store.counts() };
}

/** Commits exercising every kind of tree change under `dir` ('' or 'sub/') of the repository at `repo`. */
function history(repo: string, dir: string): string[] {
  const g = gitFixture(repo);
  const at = (p: string) => join(repo, dir, p);
  const commits: string[] = [];
  commits.push(g.commit('start', { [`${dir}a.py`]: 'def a():\n    return 1\n', [`${dir}pkg/b.py`]: 'class B:\n    def m(self):\n        pass\n', 'outside.py': 'def outside():\n    pass\n' }));
  commits.push(g.commit('edit and add', { [`${dir}a.py`]: 'def a():\n    return 2\n\ndef a2():\n    pass\n', [`${dir}pkg/deep/c.ts`]: 'export function c(): number { return 1; }\n' }));
  renameSync(at('a.py'), at('renamed.py'));
  commits.push(g.commit('rename', {}));
  // A file becomes a directory, a symbolic link appears, bytes rift leaves out arrive.
  rmSync(at('renamed.py'));
  mkdirSync(at('renamed.py'));
  writeFileSync(at('renamed.py/inner.py'), 'def inner():\n    pass\n');
  symlinkSync('pkg/b.py', at('link.py'));
  writeFileSync(at('blob.py'), Buffer.from([0x64, 0x65, 0x66, 0x00, 0x01]));
  commits.push(g.commit('file to directory, link, binary', { 'outside.py': 'def outside2():\n    pass\n' }));
  // And back: the directory becomes a file, the link a regular file, the binary text.
  rmSync(at('renamed.py'), { recursive: true });
  rmSync(at('link.py'));
  commits.push(g.commit('directory to file, link to file, binary to text', { [`${dir}renamed.py`]: 'def back():\n    pass\n', [`${dir}link.py`]: 'def link():\n    pass\n', [`${dir}blob.py`]: 'def blob():\n    pass\n' }));
  commits.push(g.commit('delete a package', { [`${dir}pkg/b.py`]: null, [`${dir}pkg/deep/c.ts`]: null }));
  return commits;
}

for (const dir of ['', 'sub/']) {
  test(`revisions built from the previous snapshot equal revisions built from nothing (workspace ${dir ? 'below' : 'at'} the repository root)`, async () => {
    await initSyntax();
    const repo = tempWorkspace();
    try {
      const commits = history(repo, dir);
      const root = join(repo, dir);
      const config = new ConfigLoader(root).current().config;
      const chained = new RevisionIndex(root, () => Store.memory(root));
      try {
        const step = async (c: string) => {
          const fresh = new RevisionIndex(root, () => Store.memory(root));
          try {
            const s = await chained.snapshot(c, config);
            assert.deepEqual(contents(s), contents(await fresh.snapshot(c, config)), `commit ${commits.indexOf(c)}`);
            // Bytes left out are remembered as skipped, with their reason (a read says why).
            if (c === commits[3]) assert.equal(s.store.skippedFile('blob.py')?.reason, 'nul_byte');
          } finally {
            fresh.close();
          }
        };
        // Forward: every step starts from the previous one, read once, so each moves forward.
        for (const c of commits) await step(c);
        assert.equal(chained.kept, 1);
        // Back over the same commits: each is returned to, so each is kept and the next starts
        // from a copy of it (the first step back moves the newest, read once).
        for (const c of [...commits].reverse().slice(1)) await step(c);
        assert.equal(chained.kept, commits.length - 1);
      } finally {
        chained.close();
      }
    } finally {
      removeWorkspace(repo);
    }
  });
}

test('a snapshot read once moves forward to the next revision; one read again is copied and kept', async () => {
  await initSyntax();
  const repo = tempWorkspace();
  try {
    const commits = history(repo, '');
    const config = new ConfigLoader(repo).current().config;
    const index = new RevisionIndex(repo, () => Store.memory(repo));
    try {
      const first = await index.snapshot(commits[0], config);
      const names = (s: RevisionSnapshot) => s.store.files().map((f) => f.path);
      assert.deepEqual(names(first), ['a.py', 'outside.py', 'pkg/b.py']);
      await index.snapshot(commits[1], config);
      assert.equal(index.kept, 1, 'the first snapshot became the second');
      // Read again, the first revision is built once more, and answers as it did.
      const again = await index.snapshot(commits[0], config);
      assert.notEqual(again, first);
      assert.deepEqual(names(again), ['a.py', 'outside.py', 'pkg/b.py']);
      assert.equal(again.store.findSymbols({ query: 'a2', offset: 0, limit: 5 }).total, 0);
      // Read a second time (or built a second time), it is kept beside the next revision, which starts from a copy.
      assert.equal(await index.snapshot(commits[0], config), again);
      const next = await index.snapshot(commits[1], config);
      assert.equal(index.kept, 2);
      assert.equal(await index.snapshot(commits[0], config), again);
      assert.equal(await index.snapshot(commits[1], config), next, 'two revisions read in turn are both kept');
      assert.equal(again.store.findSymbols({ query: 'a2', offset: 0, limit: 5 }).total, 0, 'the copy changed, not the kept snapshot');
      assert.equal(next.store.findSymbols({ query: 'a2', offset: 0, limit: 5 }).rows[0]?.qname, 'a2');
    } finally {
      index.close();
    }
  } finally {
    removeWorkspace(repo);
  }
});
