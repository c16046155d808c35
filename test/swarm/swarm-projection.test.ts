import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { useModelServer } from '../support/agent-harness.ts';
import { gitFixture, type GitFixture } from '../helpers/git.ts';
import { answer, bash, rift, snapshot, TOOLS, write } from './swarm-cli.ts';

// rift swarm with its candidates in projections (the default on a workspace at HEAD), and
// rift merge publishing from them, against the scripted model server: one script per model.

describe('rift swarm and rift merge in projections', () => {
  const { server, workspace } = useModelServer({ models: { alpha: TOOLS, beta: TOOLS }, clearBeforeEach: true });
  let home: string;
  let repo: string;
  let g: GitFixture;
  before(() => {
    const ws = workspace('rift-swarm-prj-');
    home = ws.home;
    repo = ws.cwd;
    g = gitFixture(repo);
    g.commit('init', { 'stats.py': 'def mean(xs):\n    return sum(xs) / len(xs)\n', 'notes.txt': 'one\ntwo\nthree\n' });
    writeFileSync(join(home, 'config.json'), JSON.stringify({ sandbox: { mode: 'off' } }));
  });

  /** The projections the workspace store records, by id. */
  const recorded = (): string[] => {
    const db = new Database(join(repo, '.rift/rift.db'), { readonly: true });
    try {
      return (db.prepare('SELECT id FROM projections ORDER BY id').all() as Array<{ id: string }>).map((r) => r.id);
    } finally {
      db.close();
    }
  };
  const projectionDirs = () => (existsSync(join(repo, '.rift/projections')) ? readdirSync(join(repo, '.rift/projections')).sort() : []);
  const commits = () => g.git('rev-list', '--all', '--count');

  it('runs two candidates at once in projections, saves both patches, leaves the workspace alone; merge publishes one', async () => {
    const before = snapshot(repo);
    const index = readFileSync(join(repo, '.git/index'));
    // Each candidate's first reply waits until the other's first request has arrived.
    const other = (m: string) => Promise.race([server.arrival((b) => b?.model === m), new Promise<void>((r) => setTimeout(r, 120_000).unref())]);
    server.scriptFor(
      'alpha',
      { ...write('stats.py', 'def mean(xs):\n    return sum(xs) / len(xs) if xs else 0.0\n'), pauseAt: 0, resume: other('beta') },
      // A run leaves cache files behind: neither the patch nor the publish carries them.
      bash('mkdir -p __pycache__ && printf x > __pycache__/stats.cpython-312.pyc'),
      answer('guarded'),
    );
    server.scriptFor('beta', { ...write('notes.txt', 'one\ntwo\nthree\nfour\n'), pauseAt: 0, resume: other('alpha') }, answer('appended'));
    const r = await rift(['swarm', 'fix mean for an empty list', '--models', 'alpha,beta', '--host', server.url, '--no-tui'], repo, home);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /^candidates run in projections \(\.rift\/projections\/\)$/m);
    assert.match(r.stdout, /^\[alpha\] started \(alpha\) in .*\/\.rift\/projections\/prj_[a-z2-7]{26}$/m);

    const chats = server.chatRequests();
    const a = chats.find((c) => c.body.model === 'alpha')!;
    const b = chats.find((c) => c.body.model === 'beta')!;
    assert.ok(a.receivedAt < b.finishedAt! && b.receivedAt < a.finishedAt!, "the two candidates' requests overlap in time");

    assert.deepEqual(snapshot(repo), before, 'the workspace is unchanged until a merge');
    assert.ok(readFileSync(join(repo, '.git/index')).equals(index));
    assert.equal(g.git('status', '--porcelain'), '', 'git sees nothing new in the workspace');
    const pa = readFileSync(join(repo, '.rift/patches/alpha.patch'), 'utf8');
    const pb = readFileSync(join(repo, '.rift/patches/beta.patch'), 'utf8');
    assert.match(pa, /^diff --git a\/stats\.py b\/stats\.py$/m);
    assert.match(pa, /^\+    return sum\(xs\) \/ len\(xs\) if xs else 0\.0$/m);
    assert.doesNotMatch(pa, /notes\.txt|__pycache__/);
    assert.match(pb, /^diff --git a\/notes\.txt b\/notes\.txt$/m);
    assert.match(readFileSync(join(repo, '.rift/patches/beta.diffstat'), 'utf8'), /notes\.txt \| 1 \+/);
    const rec = JSON.parse(readFileSync(join(repo, '.rift/patches/alpha.json'), 'utf8'));
    assert.equal(rec.tree, 'projection');
    assert.match(rec.projection, /^prj_/);
    assert.deepEqual(projectionDirs(), recorded());
    assert.equal(recorded().length, 2);
    assert.ok(!existsSync(join(repo, '.rift/worktrees')));
    assert.match(r.stdout, /^alpha +done +1 +3 /m);
    assert.match(r.stdout, /^beta +done +1 +2 /m);

    const m = await rift(['merge', 'alpha'], repo, home);
    assert.equal(m.code, 0, m.stderr);
    assert.match(m.stdout, new RegExp(`^merged alpha: 1 file\\(s\\): stats\\.py\\npublished from projection ${rec.projection}$`, 'm'));
    assert.equal(readFileSync(join(repo, 'stats.py'), 'utf8'), 'def mean(xs):\n    return sum(xs) / len(xs) if xs else 0.0\n');
    assert.equal(readFileSync(join(repo, 'notes.txt'), 'utf8'), 'one\ntwo\nthree\n');
    assert.ok(!existsSync(join(repo, '__pycache__')), 'cache files stay behind');
    assert.ok(readFileSync(join(repo, '.git/index')).equals(index), 'the change lands as unstaged edits');
    g.git('checkout', '--', 'stats.py');
  });

  it('a merge that conflicts with a workspace edit refuses and changes nothing; --cleanup removes the projections', async () => {
    // beta (from the test before) appended "four" to notes.txt; the workspace now changed its first line.
    // `git apply --3way` would merge the two; publish refuses any file the workspace changed.
    writeFileSync(join(repo, 'notes.txt'), 'ONE\ntwo\nthree\n');
    const before = snapshot(repo);
    const index = readFileSync(join(repo, '.git/index'));
    const r = await rift(['merge', 'beta'], repo, home);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stderr, /^rift merge: cannot merge 'beta': it conflicts with the workspace \(the workspace changed notes\.txt since the swarm started, and so did the candidate\); nothing was changed/m);
    assert.deepEqual(snapshot(repo), before);
    assert.ok(readFileSync(join(repo, '.git/index')).equals(index), 'the repository index is untouched');
    assert.equal(recorded().length, 2, 'the projections stay for another try');

    g.git('checkout', '--', 'notes.txt');
    const ok = await rift(['merge', 'beta', '--cleanup'], repo, home);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /published from projection prj_/);
    assert.equal(readFileSync(join(repo, 'notes.txt'), 'utf8'), 'one\ntwo\nthree\nfour\n');
    assert.deepEqual(projectionDirs(), []);
    assert.deepEqual(recorded(), []);
    assert.ok(!existsSync(join(repo, '.rift/patches')));
    g.git('checkout', '--', 'notes.txt');
  });

  it("a candidate's git finds no repository: it cannot touch the workspace's", async () => {
    const head = g.git('rev-parse', 'HEAD');
    const count = commits();
    server.scriptFor(
      'alpha',
      bash('(git rev-parse --show-toplevel; git commit --allow-empty -qm evil; git stash; (cd .. && git status); (cd ../.. && git log -1)) > where.txt 2>&1; true'),
      answer('tried'),
    );
    const r = await rift(['swarm', 'commit something', '--models', 'alpha', '--host', server.url, '--no-tui'], repo, home);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.equal(g.git('rev-parse', 'HEAD'), head);
    assert.equal(commits(), count);
    assert.equal(g.git('stash', 'list'), '');
    const patch = readFileSync(join(repo, '.rift/patches/alpha.patch'), 'utf8');
    const lines = patch.split('\n').filter((l) => l.startsWith('+fatal'));
    assert.equal(lines.length, 5, patch);
    for (const l of lines) assert.match(l, /^\+fatal: not a git repository/);
  });

  it('Ctrl-C cancels every candidate and leaves no projection behind', async () => {
    server.scriptFor('alpha', { ...answer('never'), hang: true, chunks: [] });
    server.scriptFor('beta', { ...answer('never'), hang: true, chunks: [] });
    let pid = 0;
    const both = Promise.all([server.arrival((b) => b?.model === 'alpha'), server.arrival((b) => b?.model === 'beta')]);
    const run = rift(['swarm', 'fix it', '--models', 'alpha,beta', '--trees', 'projection', '--host', server.url, '--no-tui'], repo, home, (p) => (pid = p));
    await both;
    assert.equal(projectionDirs().length, 2);
    process.kill(pid, 'SIGINT');
    const r = await run;
    assert.equal(r.code, 130, r.stderr + r.stdout);
    assert.match(r.stderr, /cancelled; every candidate tree was removed/);
    assert.deepEqual(projectionDirs(), []);
    assert.deepEqual(recorded(), []);
    assert.ok(!existsSync(join(repo, '.rift/patches')));
  });

  it('with uncommitted changes, --trees projection refuses and the default runs in worktrees', async () => {
    writeFileSync(join(repo, 'scratch.txt'), 'mine\n');
    try {
      const refused = await rift(['swarm', 'fix it', '--models', 'alpha', '--trees', 'projection', '--host', server.url, '--no-tui'], repo, home);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /^rift swarm: the workspace has uncommitted changes \(scratch\.txt\), and candidates start from HEAD while a projection copies the workspace as it is — commit or stash them, or run with --trees worktree$/m);
      server.scriptFor('alpha', write('notes.txt', 'changed\n'), answer('changed'));
      const r = await rift(['swarm', 'fix it', '--models', 'alpha', '--host', server.url, '--no-tui'], repo, home);
      assert.equal(r.code, 0, r.stderr + r.stdout);
      assert.match(r.stdout, /^candidates run in git worktrees \(\.rift\/worktrees\/\): the workspace has uncommitted changes \(scratch\.txt\), and candidates start from HEAD$/m);
      assert.match(r.stdout, /^\[alpha\] started \(alpha\) in .*\/\.rift\/worktrees\/1-alpha$/m);
      assert.deepEqual(projectionDirs(), []);
    } finally {
      rmSync(join(repo, 'scratch.txt'));
    }
  });

  it('a HEAD a projection cannot hold (a symlink) refuses with --trees projection and falls back to worktrees by default', async () => {
    symlinkSync('notes.txt', join(repo, 'link'));
    g.commit('a link', {});
    server.scriptFor('alpha', write('notes.txt', 'changed\n'), answer('changed'));
    const refused = await rift(['swarm', 'fix it', '--models', 'alpha', '--trees', 'projection', '--host', server.url, '--no-tui'], repo, home);
    assert.equal(refused.code, 1, refused.stdout);
    assert.match(refused.stderr, /^rift swarm: a projection of the workspace differs from HEAD at link \(rift does not copy symlinks/m);
    assert.deepEqual(projectionDirs(), []);
    assert.deepEqual(recorded(), []);
    const r = await rift(['swarm', 'fix it', '--models', 'alpha', '--host', server.url, '--no-tui'], repo, home);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /^candidates run in git worktrees \(\.rift\/worktrees\/\): a projection of the workspace differs from HEAD at link /m);
    assert.deepEqual(projectionDirs(), []);
  });
});
