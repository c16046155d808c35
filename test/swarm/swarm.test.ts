import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ollamaReply } from '../support/model-server.ts';
import { useModelServer } from '../support/agent-harness.ts';
import { gitFixture, type GitFixture } from '../helpers/git.ts';
import { answer, rift, snapshot, TOOLS, write } from './swarm-cli.ts';

// rift swarm / rift merge as processes against the scripted model server: one script per model.
// Candidates in git worktrees (`--trees worktree`) and the git merge path; projections are in
// swarm-projection.test.ts.

describe('rift swarm and rift merge in worktrees', () => {
  const { server, workspace } = useModelServer({ models: { alpha: TOOLS, beta: TOOLS, judge: TOOLS }, clearBeforeEach: true });
  let home: string;
  let repo: string;
  let g: GitFixture;
  before(() => {
    const ws = workspace('rift-swarm-');
    home = ws.home;
    repo = ws.cwd;
    g = gitFixture(repo);
    g.commit('init', { 'stats.py': 'def mean(xs):\n    return sum(xs) / len(xs)\n', 'notes.txt': 'one\ntwo\nthree\n' });
    // The bash tool runs unsandboxed here, so a candidate can kill its own process (a real crash).
    writeFileSync(join(home, 'config.json'), JSON.stringify({ sandbox: { mode: 'off' } }));
  });

  it('--help explains both commands', async () => {
    const s = await rift(['swarm', '--help'], repo, home);
    assert.equal(s.code, 0);
    assert.match(s.stdout, /^rift swarm "<task>" \[--models a,b,…\] \[--explore\] \[--judge MODEL\]/);
    assert.match(s.stdout, /--explore +add a temperature-0\.8 copy <name>-hot/);
    assert.match(s.stdout, /--trees KIND +projection or worktree/);
    const m = await rift(['merge', '--help'], repo, home);
    assert.equal(m.code, 0);
    assert.match(m.stdout, /^rift merge <name> \[--cleanup\]/);
    const none = await rift(['swarm', '--no-tui'], repo, home);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /expected 1 argument, got 0/);
    const kind = await rift(['swarm', 'x', '--trees', 'copy'], repo, home);
    assert.equal(kind.code, 2);
    assert.match(kind.stderr, /--trees is projection or worktree, not 'copy'/);
  });

  it('the judge asks an OpenAI-compatible server for a JSON-schema response_format', async () => {
    const { OpenAIProvider } = await import('../../src/agent/providers/openai.ts');
    const { TEST_HTTP } = await import('../support/agent-harness.ts');
    const { openaiReply } = await import('../support/model-server.ts');
    const { verdictSchema } = await import('../../src/swarm/judge.ts');
    server.scriptFor('judge', openaiReply({ content: '{"winner":"none","reason":"r"}' }));
    const p = new OpenAIProvider(`${server.url}/v1`, undefined, TEST_HTTP);
    const schema = verdictSchema(['a']);
    const out = await p.chat({ model: 'judge', messages: [{ role: 'user', content: 'x' }], tools: [], numCtx: 4096, temperature: 0, format: { name: 'verdict', schema } }, () => {});
    assert.equal(out.message.content, '{"winner":"none","reason":"r"}');
    assert.deepEqual(server.chatRequests().at(-1)!.body.response_format, { type: 'json_schema', json_schema: { name: 'verdict', schema, strict: true } });
  });

  it('refuses outside a repository with a commit', async () => {
    const bare = workspace('rift-swarm-bare-').cwd;
    const r = await rift(['swarm', 'fix it', '--models', 'alpha', '--host', server.url, '--no-tui'], bare, home);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /is not inside a git repository/);
    gitFixture(bare);
    const empty = await rift(['swarm', 'fix it', '--models', 'alpha', '--host', server.url, '--no-tui'], bare, home);
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, /has no commit yet/);
  });

  it('runs two candidates at once, saves both patches, leaves the workspace alone; the judge picks one and merge applies it', async () => {
    const before = snapshot(repo);
    // Each candidate's first reply waits until the other's first request has arrived: a swarm
    // that ran them one after another would never get both (the wait gives up after 120 s).
    const other = (m: string) => Promise.race([server.arrival((b) => b?.model === m), new Promise<void>((r) => setTimeout(r, 120_000).unref())]);
    server.scriptFor('alpha', { ...write('stats.py', 'def mean(xs):\n    return sum(xs) / len(xs) if xs else 0.0\n'), pauseAt: 0, resume: other('beta') }, answer('guarded'));
    server.scriptFor('beta', { ...write('notes.txt', 'one\ntwo\nthree\nfour\n'), pauseAt: 0, resume: other('alpha') }, answer('appended'));
    server.scriptFor('judge', answer(JSON.stringify({ winner: 'alpha', reason: 'it guards the empty list' })));
    const r = await rift(['swarm', 'fix mean for an empty list', '--models', 'alpha,beta', '--judge', 'judge', '--trees', 'worktree', '--host', server.url, '--no-tui'], repo, home);
    assert.equal(r.code, 0, r.stderr + r.stdout);

    const chats = server.chatRequests();
    const first = (m: string) => chats.find((c) => c.body.model === m)!;
    const a = first('alpha');
    const b = first('beta');
    // Overlap: each first request arrived before the other's reply finished.
    assert.ok(a.receivedAt < b.finishedAt! && b.receivedAt < a.finishedAt!, 'the two candidates\' requests overlap in time');

    assert.deepEqual(snapshot(repo), before, 'the workspace is unchanged until a merge');
    const pa = readFileSync(join(repo, '.rift/patches/alpha.patch'), 'utf8');
    const pb = readFileSync(join(repo, '.rift/patches/beta.patch'), 'utf8');
    assert.match(pa, /^diff --git a\/stats\.py b\/stats\.py/m);
    assert.match(pa, /\+    return sum\(xs\) \/ len\(xs\) if xs else 0\.0/);
    assert.match(pb, /^diff --git a\/notes\.txt b\/notes\.txt/m);
    assert.doesNotMatch(pa, /notes\.txt/);
    assert.match(readFileSync(join(repo, '.rift/patches/beta.diffstat'), 'utf8'), /notes\.txt \| 1 \+/);
    assert.ok(existsSync(join(repo, '.rift/worktrees/1-alpha')) && existsSync(join(repo, '.rift/worktrees/2-beta')));
    const exclude = readFileSync(join(repo, '.git/info/exclude'), 'utf8').split('\n');
    assert.ok(exclude.includes('.rift/worktrees/') && exclude.includes('.rift/patches/'));
    assert.equal(g.git('status', '--porcelain'), '', 'git sees nothing new in the workspace');
    assert.match(r.stdout, /^candidates run in git worktrees \(\.rift\/worktrees\/\)$/m);
    assert.equal(JSON.parse(readFileSync(join(repo, '.rift/patches/alpha.json'), 'utf8')).tree, 'worktree');

    assert.match(r.stdout, /^candidate +status +files +iters +tokens +time +tests$/m);
    assert.match(r.stdout, /^alpha +done +1 +2 +120 +\d+\.\ds +-$/m);
    assert.match(r.stdout, /^beta +done +1 +2 +120 +\d+\.\ds +-$/m);
    assert.match(r.stdout, /^JUDGE: winner=alpha\nit guards the empty list$/m);

    const judged = chats.find((c) => c.path === '/api/chat' && c.body.model === 'judge')!;
    assert.deepEqual(judged.body.format, {
      type: 'object',
      properties: { winner: { type: 'string', enum: ['alpha', 'beta', 'none'] }, reason: { type: 'string' } },
      required: ['winner', 'reason'],
      additionalProperties: false,
    });
    const brief = judged.body.messages[1].content as string;
    assert.match(brief, /^Task:\nfix mean for an empty list/);
    assert.match(brief, /Candidate alpha \(model alpha\): done; tests not run; 1 file\(s\) changed/);
    assert.ok(brief.includes(pb), 'the judge sees every diff');

    const m = await rift(['merge', 'alpha'], repo, home);
    assert.equal(m.code, 0, m.stderr);
    assert.equal(readFileSync(join(repo, 'stats.py'), 'utf8'), 'def mean(xs):\n    return sum(xs) / len(xs) if xs else 0.0\n');
    assert.equal(readFileSync(join(repo, 'notes.txt'), 'utf8'), 'one\ntwo\nthree\n');
    assert.match(m.stdout, /^merged alpha: 1 file\(s\): stats\.py\napplied with git apply --3way semantics$/m);
    g.git('checkout', '--', 'stats.py');
  });

  it('a merge that conflicts with a workspace edit refuses and changes nothing; --cleanup removes trees and patches', async () => {
    // beta.patch (from the test before) appends "four" to notes.txt; the workspace now changed that line's context.
    writeFileSync(join(repo, 'notes.txt'), 'one\ntwo\nTHREE\n');
    const before = snapshot(repo);
    const index = readFileSync(join(repo, '.git/index'));
    const r = await rift(['merge', 'beta'], repo, home);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /cannot merge 'beta': it conflicts with the workspace .*notes\.txt.*nothing was changed/);
    assert.deepEqual(snapshot(repo), before);
    assert.ok(readFileSync(join(repo, '.git/index')).equals(index), 'the repository index is untouched');
    const bad = await rift(['merge', '../x'], repo, home);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /invalid_request: .*field name/);
    const missing = await rift(['merge', 'gamma'], repo, home);
    assert.match(missing.stderr, /no saved patch for candidate 'gamma'.*saved: alpha, beta/);
    g.git('checkout', '--', 'notes.txt');
    const ok = await rift(['merge', 'beta', '--cleanup'], repo, home);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(readFileSync(join(repo, 'notes.txt'), 'utf8'), 'one\ntwo\nthree\nfour\n');
    assert.ok(!existsSync(join(repo, '.rift/worktrees')) && !existsSync(join(repo, '.rift/patches')));
    assert.equal(g.git('worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree ')).length, 1);
    g.git('checkout', '--', 'notes.txt');
  });

  it('an off-schema judge is asked once more, then no verdict; a crashing candidate is reported while the other finishes', async () => {
    server.scriptFor('alpha', write('stats.py', 'def mean(xs):\n    return 0\n'), answer('done'));
    server.scriptFor('beta', ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: 'kill -KILL $PPID' } }] }));
    server.scriptFor('judge', answer('alpha looks best'), answer(JSON.stringify({ winner: 'gamma', reason: 'x' })));
    const seen = server.requests.length;
    const r = await rift(['swarm', 'rewrite mean', '--models', 'alpha,beta', '--judge', 'judge', '--trees', 'worktree', '--host', server.url, '--no-tui'], repo, home);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /^alpha +done +1 /m);
    assert.match(r.stdout, /^beta +crashed +0 /m);
    assert.match(r.stdout, /^beta: killed by SIGKILL/m);
    assert.match(r.stdout, /^JUDGE: no verdict: the judge judge answered off the schema twice$/m);
    const judged = server.requests.slice(seen).filter((c) => c.path === '/api/chat' && c.body.model === 'judge');
    assert.equal(judged.length, 2);
    assert.deepEqual(judged[0].body.format.properties.winner.enum, ['alpha', 'none'], 'only candidates with a patch can win');
    assert.match(judged[1].body.messages.at(-1).content, /does not follow the required form/);
    assert.ok(!existsSync(join(repo, '.rift/patches/beta.patch')));
  });

  it('--explore doubles the candidates, the hot copies at temperature 0.8; a failed preflight is reported per candidate', async () => {
    const hot = (b: any) => b?.options?.temperature === 0.8;
    server.scriptFor('alpha', { ...write('notes.txt', 'cold\n'), when: (b) => !hot(b) }, { ...answer('cold'), when: (b) => !hot(b) });
    server.scriptFor('alpha', { ...write('notes.txt', 'hot\n'), when: hot }, { ...answer('hot'), when: hot });
    const seen = server.requests.length;
    const r = await rift(['swarm', 'change notes `test -f notes.txt`', '--models', 'alpha,absent', '--explore', '--trees', 'worktree', '--host', server.url, '--no-tui'], repo, home);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    for (const name of ['alpha', 'absent', 'alpha-hot', 'absent-hot']) assert.match(r.stdout, new RegExp(`^\\[${name}\\] started`, 'm'));
    assert.match(r.stdout, /^alpha +done +1 +2 +120 +\d+\.\ds +passed$/m);
    assert.match(r.stdout, /^alpha-hot +done +1 +2 +120 +\d+\.\ds +passed$/m);
    assert.match(r.stdout, /^absent +preflight_failed /m);
    assert.match(r.stdout, /^absent: model 'absent' is not available/m);
    const temps = server.requests.slice(seen).filter((c) => c.path === '/api/chat').filter((c) => c.body.model === 'alpha').map((c) => c.body.options.temperature);
    assert.deepEqual(temps.filter((t) => t === 0.8).length, 2);
    assert.match(readFileSync(join(repo, '.rift/patches/alpha-hot.patch'), 'utf8'), /^\+hot$/m);
    assert.match(readFileSync(join(repo, '.rift/patches/alpha.patch'), 'utf8'), /^\+cold$/m);
    assert.ok(existsSync(join(repo, '.rift/worktrees/3-alpha-hot')));
  });

  it('Ctrl-C cancels every candidate and leaves no tree behind', async () => {
    server.scriptFor('alpha', { ...answer('never'), hang: true, chunks: [] });
    server.scriptFor('beta', { ...answer('never'), hang: true, chunks: [] });
    let pid = 0;
    const both = Promise.all([server.arrival((b) => b?.model === 'alpha'), server.arrival((b) => b?.model === 'beta')]);
    const run = rift(['swarm', 'fix it', '--models', 'alpha,beta', '--trees', 'worktree', '--host', server.url, '--no-tui'], repo, home, (p) => (pid = p));
    await both;
    process.kill(pid, 'SIGINT');
    const r = await run;
    assert.equal(r.code, 130, r.stderr + r.stdout);
    assert.match(r.stderr, /cancelled; every candidate tree was removed/);
    assert.deepEqual(existsSync(join(repo, '.rift/worktrees')) ? readdirSync(join(repo, '.rift/worktrees')) : [], []);
    assert.equal(g.git('worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree ')).length, 1);
  });
});
