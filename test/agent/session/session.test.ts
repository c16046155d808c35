import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Session, capMessages, resumeBrief } from '../../../src/agent/session/session.ts';
import { openSession } from '../../../src/agent/loop/setup.ts';
import { KEEP_USER_TURNS, SUMMARY_PREFIX, estimate, pruneOldOutputs, usableBudget } from '../../../src/agent/session/compaction.ts';
import { projectGuides } from '../../../src/agent/loop/prompt.ts';
import type { Message } from '../../../src/agent/base/types.ts';
import { ollamaReply } from '../../support/model-server.ts';
import { tempDir, useModelServer } from '../../support/agent-harness.ts';

const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const SESSION_MODULE = pathToFileURL(new URL('../../../src/agent/session/session.ts', import.meta.url).pathname).href;

describe('agent sessions', () => {
  const dirs: string[] = [];
  const dir = () => {
    const d = tempDir('rift-sessions-');
    dirs.push(d);
    return d;
  };
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('reserves unique names with an exclusive create', () => {
    const d = dir();
    const a = Session.reserve(d, 1_700_000_000_000);
    const b = Session.reserve(d, 1_700_000_000_000);
    assert.equal(a, join(d, '1700000000.json'));
    assert.equal(b, join(d, '1700000000-1.json'));
    assert.equal(statSync(a).size, 0);
  });

  it('saves atomically, lists an index newest first, continues the newest non-empty one', () => {
    const d = dir();
    const p1 = Session.reserve(d, 1_000_000);
    const p2 = Session.reserve(d, 2_000_000);
    const empty = Session.reserve(d, 3_000_000);
    Session.save(p1, { model: 'm1', saved_at: 10, cwd: '/a', messages: [{ role: 'system', content: 's' }, { role: 'user', content: '[system] note' }, { role: 'user', content: '\nfirst task\nmore' }, { role: 'user', content: 'second' }] });
    Session.save(p2, { model: 'm2', saved_at: 20, cwd: '/b', messages: [{ role: 'system', content: 's' }] });
    utimesSync(p1, new Date(5_000), new Date(5_000));
    utimesSync(p2, new Date(9_000), new Date(9_000));
    writeFileSync(join(d, 'broken.json'), '{not json');
    assert.deepEqual(Session.list(d), [
      { path: p2, title: '(empty session)', saved_at: 20, cwd: '/b', model: 'm2', turns: 0 },
      { path: p1, title: 'first task', saved_at: 10, cwd: '/a', model: 'm1', turns: 2 },
    ]);
    assert.ok(existsSync(empty));
    assert.equal(Session.newest(d), join(d, 'broken.json'), 'newest by mtime among non-empty files');
    assert.ok(!readdirSync(d).some((n) => n.endsWith('.tmp')), 'no temp files left behind');
  });

  it('loads leniently: missing, empty and corrupt files start fresh; corrupt ones are set aside', () => {
    const d = dir();
    assert.equal(Session.load(join(d, 'nope.json')).note, 'session file not found — starting fresh');
    const empty = Session.reserve(d);
    assert.equal(Session.load(empty).note, 'session has no saved turns yet — starting fresh');
    const bad = join(d, 'bad.json');
    writeFileSync(bad, '{"messages": [tru');
    const r = Session.load(bad);
    assert.deepEqual(r.messages, []);
    assert.match(r.note!, /corrupt/);
    assert.ok(existsSync(`${bad}.corrupt`));
    assert.ok(!existsSync(bad));
  });

  it('normalizes old histories: ids for calls, results paired by name', () => {
    const d = dir();
    const p = join(d, 'old.json');
    writeFileSync(p, JSON.stringify({ model: 'm', saved_at: 1, cwd: '/', messages: [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: '', tool_calls: [{ function: { name: 'read', arguments: { path: 'a' } } }, { function: { name: 'ls', arguments: {} } }] },
      { role: 'tool', content: 'x', tool_name: 'ls' },
      { role: 'tool', content: 'y', tool_name: 'read' },
      { role: 'user', content: '[system] session resumed — stale brief' },
    ] }));
    const { messages } = Session.load(p);
    assert.deepEqual(messages[1].tool_calls!.map((c) => c.id), ['call_1_0', 'call_1_1']);
    assert.deepEqual(messages.slice(2).map((m) => m.tool_call_id), ['call_1_1', 'call_1_0']);
    assert.equal(messages.length, 4, 'the stale resume brief is stripped');
  });

  it('the resume brief lists what earlier turns read, changed and ran; none without tool use', () => {
    const call = (name: string, args: Record<string, unknown>) => ({ role: 'assistant' as const, content: '', tool_calls: [{ id: `c_${name}`, function: { name, arguments: args } }] });
    assert.equal(resumeBrief([{ role: 'system', content: 's' }, { role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }]), null);
    const reads = Array.from({ length: 23 }, (_, i) => call('read', { path: `src/f${i}.ts` }));
    const brief = resumeBrief([
      { role: 'user', content: 'go' },
      ...reads,
      call('read', { path: 'src/f0.ts' }),
      call('edit', { path: 'a.txt' }),
      call('patch', { patch: '--- a/b.txt\t2026-01-01\n+++ b/b.txt\t2026-01-02\n@@ -1 +1 @@\n-x\n+y\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-z\n' }),
      call('replace_symbol', { symbol: 'rift://symbol/python/pkg/mod.py/Greeter.hello', body: 'x' }),
      call('grep', { pattern: 'x' }),
      call('ls', {}),
      call('bash', { command: 'make' }),
      { role: 'tool', content: 'abc\n[... elided 900 bytes to save context; re-run the tool if you need this again]', tool_name: 'read', tool_call_id: 'c_read' },
    ])!;
    const lines = brief.split('\n');
    assert.ok(lines[0].startsWith('[system] session resumed — the conversation above is your own earlier work'));
    assert.match(lines[0], /do NOT re-explore/);
    assert.equal(lines[1], `Files you read: ${Array.from({ length: 20 }, (_, i) => `src/f${i}.ts`).join(', ')} (+3 more)`);
    assert.equal(lines[2], 'Files you wrote or edited: a.txt, b.txt, gone.txt, pkg/mod.py');
    assert.equal(lines[3], 'Earlier lookups: 2; shell commands: 1.');
    assert.match(lines[4], /elided/);
    assert.equal(lines.length, 5);
  });

  it('opening a session with tool use appends one hidden brief; the next load strips it again', () => {
    const d = dir();
    const p = join(d, 'tools.json');
    const brief = '[system] session resumed — stale';
    writeFileSync(p, JSON.stringify({ model: 'm', saved_at: 1, cwd: '/', messages: [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'look' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'c1', function: { name: 'read', arguments: { path: 'x.md' } } }] },
      { role: 'tool', content: 'text', tool_name: 'read', tool_call_id: 'c1' },
      { role: 'assistant', content: 'Read it.' },
      { role: 'user', content: brief },
    ] }));
    const opened = openSession({ resume: p }, d);
    const last = opened.messages!.at(-1)!;
    assert.equal(last.role, 'user');
    assert.ok(last.content.startsWith('[system] session resumed — the conversation'));
    assert.match(last.content, /Files you read: x\.md/);
    assert.equal(opened.messages!.filter((m) => m.content.startsWith('[system] session resumed')).length, 1, 'the stale brief is replaced, not stacked');
    const plain = join(d, 'plain.json');
    writeFileSync(plain, JSON.stringify({ model: 'm', saved_at: 1, cwd: '/', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }] }));
    assert.equal(openSession({ resume: plain }, d).messages!.length, 2, 'no brief without tool use');
  });

  it('caps the size by dropping whole old turns, keeping system messages and the last turn', () => {
    const big = 'x'.repeat(400);
    const messages: Message[] = [{ role: 'system', content: 'sys' }];
    for (let t = 0; t < 10; t++) messages.push({ role: 'user', content: `turn ${t}` }, { role: 'assistant', content: big });
    const kept = capMessages({ model: 'm', saved_at: 0, cwd: '/', messages }, 2000);
    assert.equal(kept[0].content, 'sys');
    assert.equal(kept[1].role, 'user', 'cut only at user messages');
    assert.equal(kept.at(-2)!.content, 'turn 9');
    assert.ok(kept.length < messages.length);
  });

  it('a session killed mid-save is never half-written', async () => {
    const d = dir();
    const path = join(d, 's.json');
    // The child rewrites a ~4 MB session as fast as it can until it is killed.
    const code = `
      import { Session } from ${JSON.stringify(SESSION_MODULE)};
      const path = ${JSON.stringify(path)};
      const body = 'y'.repeat(4 * 1024 * 1024);
      for (let i = 0; ; i++) {
        Session.save(path, { model: 'm', saved_at: i, cwd: '/', messages: [{ role: 'user', content: String(i) }, { role: 'assistant', content: body }] });
        if (i === 0) process.stdout.write('saved\\n');
      }`;
    for (let round = 0; round < 3; round++) {
      const child = spawn(process.execPath, ['--import', TSX, '--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      await new Promise((r) => setTimeout(r, 20 + round * 37));
      child.kill('SIGKILL');
      await new Promise((r) => child.once('close', r));
      const data = JSON.parse(readFileSync(path, 'utf8'));
      assert.equal(data.messages[1].content.length, 4 * 1024 * 1024);
      assert.equal(data.messages[0].content, String(data.saved_at));
    }
  });
});

describe('agent context: estimate, compaction, guides', () => {
  const { server, harness } = useModelServer({ assertConsumed: true });

  function history(turns: number, outputChars: number): Message[] {
    const m: Message[] = [{ role: 'system', content: 'sys' }];
    for (let t = 0; t < turns; t++) {
      m.push({ role: 'user', content: `task ${t}` });
      m.push({ role: 'assistant', content: '', thinking: 'hmm', tool_calls: [{ id: `c${t}`, function: { name: 'read', arguments: { path: `f${t}` } } }] });
      m.push({ role: 'tool', content: 'o'.repeat(outputChars), tool_name: 'read', tool_call_id: `c${t}` });
      m.push({ role: 'assistant', content: `answer ${t}` });
    }
    return m;
  }

  it('stage 1 prunes old tool outputs but keeps the last two user turns intact', () => {
    const m = history(4, 5000);
    const touched = pruneOldOutputs(m);
    assert.equal(touched, 4, 'two old outputs and two old thinkings');
    const tools = m.filter((x) => x.role === 'tool');
    assert.match(tools[0].content, /^o{200}\n\[\.\.\. elided 4800 bytes to save context; re-run the tool if you need this again\]$/);
    assert.equal(tools[2].content.length, 5000);
    assert.equal(tools[3].content.length, 5000);
    assert.equal(KEEP_USER_TURNS, 2);
  });

  it('compacts before the call in two stages with its events, keeping the current turn', async () => {
    // num_ctx 8192 → usable 4096 tokens; even pruned, the last old turn's 20 kB output is over it.
    const h = harness({ numCtx: 8192, messages: history(3, 20_000) });
    h.agent.messages[0].content = 'sys';
    server.script(
      { body: JSON.stringify({ message: { role: 'assistant', content: '## Goal\nread files' }, done: true, prompt_eval_count: 50, eval_count: 20 }) },
      ollamaReply({ content: 'ok' }),
    );
    await h.run('next task');
    const infos = h.of('info').map((e) => e.text);
    assert.match(infos[0], /^compacted: pruned \d+ old outputs \(~\d+ → ~\d+ tok, budget 4096\)$/);
    assert.equal(infos[1], 'compacting: summarizing earlier conversation…');
    assert.match(infos[2], /^compacted: history summarized \(~\d+ tok\)$/);
    const summaryReq = server.chatRequests().at(-2)!.body;
    assert.equal(summaryReq.stream, false);
    assert.equal(summaryReq.think, false);
    assert.equal(summaryReq.tools, undefined);
    assert.deepEqual(summaryReq.options, { num_ctx: 8192, temperature: 0, num_predict: 1500 });
    assert.match(summaryReq.messages[0].content, /^You compress coding-agent conversations/);
    const msgs = h.agent.messages;
    assert.equal(msgs[0].role, 'system');
    assert.equal(msgs[1].content, `${SUMMARY_PREFIX}## Goal\nread files`);
    assert.equal(msgs[2].content, 'next task');
    assert.ok(estimate(msgs, 0, 1) < usableBudget(8192));
    assert.equal(h.kinds().at(-1), 'context');
  });

  it('a failed summary continues pruned with a warning', async () => {
    const h = harness({ numCtx: 8192, messages: history(3, 40_000) });
    server.script({ status: 500, body: '{"error":"nope"}' }, ollamaReply({ content: 'ok' }));
    await h.run('go');
    assert.ok(h.of('warning').some((w) => /^summarization failed \(model server returned HTTP 500: nope\); continuing pruned$/.test(w.text)));
  });

  it('context usage is the calibrated estimate against num_ctx; calibration follows the server', async () => {
    const h = harness({ numCtx: 16384 });
    const before = h.agent.contextUsage();
    assert.equal(before.limit, 16384);
    server.script(ollamaReply({ content: 'ok', promptEvalCount: 5000 }));
    await h.run('hi');
    assert.ok(h.agent.calibration > 1, 'the server counted more tokens than the estimate');
    const ctx = h.of('context')[0];
    assert.equal(ctx.limit, 16384);
    assert.ok(ctx.used > before.used);
  });

  it('project guides join the system prompt in order within 6000 chars', () => {
    const d = tempDir();
    writeFileSync(join(d, 'RIFT.md'), 'rift rules');
    writeFileSync(join(d, 'CLAUDE.md'), 'c'.repeat(7000));
    const g = projectGuides(d);
    assert.ok(g.startsWith('\n\nProject guide (from RIFT.md — instructions for agents working in this repo):\nrift rules'));
    assert.match(g, /\n\[CLAUDE\.md truncated\]$/);
    assert.equal((g.match(/c/g) ?? []).length >= 5990, true);
    rmSync(d, { recursive: true, force: true });
  });

  it('autosaves after every turn, including failed ones', async () => {
    const d = tempDir();
    const path = Session.reserve(d);
    const h = harness({ sessionPath: path });
    server.script({ status: 500, body: '{"error":"down"}' });
    await h.run('first');
    const saved = JSON.parse(readFileSync(path, 'utf8'));
    assert.equal(saved.messages.at(-1).content, 'first');
    assert.equal(saved.model, 'test-model');
    rmSync(d, { recursive: true, force: true });
  });

  it('resetConversation swaps the conversation and its autosave target under the current system prompt; refused mid-turn', async () => {
    const d = tempDir();
    const first = Session.reserve(d);
    const h = harness({ sessionPath: first, systemPrompt: 'current prompt' });
    server.script(ollamaReply({ content: 'a1' }), ollamaReply({ content: 'a2' }));
    await h.run('q1');
    h.agent.plan.push({ text: 'step', done: false });
    const second = Session.reserve(d, Date.now() + 5000);
    const resumed: Message[] = [{ role: 'system', content: 'stale prompt' }, { role: 'user', content: 'old q' }, { role: 'assistant', content: 'old a' }];
    h.agent.resetConversation(resumed, second);
    assert.deepEqual(h.agent.messages, [{ role: 'system', content: 'current prompt' }, { role: 'user', content: 'old q' }, { role: 'assistant', content: 'old a' }]);
    assert.equal(resumed[0].content, 'stale prompt', "the caller's list is not mutated");
    assert.deepEqual(h.agent.plan, []);
    await h.run('q2');
    assert.equal(JSON.parse(readFileSync(second, 'utf8')).messages.length, 5, 'the turn saves to the new target');
    assert.equal(JSON.parse(readFileSync(first, 'utf8')).messages.at(-1).content, 'a1', 'the old session is left as it was');
    h.agent.resetConversation(undefined, null);
    assert.deepEqual(h.agent.messages, [{ role: 'system', content: 'current prompt' }]);
    server.script({ chunks: [JSON.stringify({ model: 'm', message: { role: 'assistant', content: 'x' }, done: false }) + '\n'], hang: true });
    const ctl = new AbortController();
    const running = h.run('q3', ctl.signal);
    while (!h.events.some((e) => e.event === 'content' && e.text === 'x')) await new Promise((r) => setTimeout(r, 5));
    assert.throws(() => h.agent.resetConversation(undefined, null), /cannot change while a turn is running/);
    ctl.abort();
    await running;
    rmSync(d, { recursive: true, force: true });
  });
});
