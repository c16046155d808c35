import { describe, it, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ollamaReply } from '../support/model-server.ts';
import { useModelServer } from '../support/agent-harness.ts';
import { ServeClient } from './client.ts';

const COMMANDS = ['hello', 'prompt', 'answer', 'edit_decision', 'cancel', 'undo', 'list_sessions', 'list_models', 'set_model', 'set_approval'];
const ZERO = { iterations: 0, prompt_tokens: 0, billed_prompt_tokens: 0, output_tokens: 0, duration_ms: 0, tokens_per_sec: 0 };

describe('rift --serve', () => {
  const { server, workspace, killAtEnd } = useModelServer({
    models: {
      'test-model': { capabilities: ['completion', 'tools'], contextLength: 32768 },
      'small-model': { capabilities: ['completion', 'tools'], contextLength: 8192 },
      'no-tools': { capabilities: ['completion'], contextLength: 8192 },
    },
    // A failed test must not leave its unconsumed replies to the next one.
    clearBeforeEach: true,
  });
  let cwd: string;
  let home: string;
  beforeEach(() => ({ cwd, home } = workspace('rift-serve-')));
  const open = (args: string[] = [], index = false) => {
    const c = new ServeClient(['--host', server.url, '--model', 'test-model', ...(index ? [] : ['--no-index']), ...args], cwd, home);
    killAtEnd(c.child);
    return c;
  };

  it('starts with ready (every field) then context; blank lines ignored; bad lines warn; EOF exits 0', async () => {
    const c = open([], true);
    const ready = await c.event('ready');
    assert.deepEqual(Object.keys(ready).sort(), ['approve', 'commands', 'cwd', 'event', 'model', 'num_ctx', 'protocol_version', 'session', 'skills', 'version']);
    assert.equal(ready.model, 'test-model');
    assert.equal(ready.protocol_version, 1);
    assert.equal(ready.num_ctx, 32768);
    assert.equal(ready.approve, true);
    assert.equal(ready.cwd, cwd);
    assert.match(ready.session, /sessions\/\d+(-\d+)?\.json$/);
    assert.deepEqual(ready.commands, COMMANDS);
    assert.deepEqual(ready.skills, []);
    assert.equal(c.events[0].event, 'ready');
    const ctx = await c.event('context');
    assert.equal(ctx.limit, 32768);
    assert.ok(ctx.used > 0);
    c.send('');
    c.send('   ');
    c.send('{not json');
    c.send({ cmd: 'nope' });
    c.send({ nocmd: true });
    c.send('[1,2]');
    c.send({ cmd: 'hello', edit_review: true });
    await c.event('capabilities');
    assert.deepEqual(c.events.slice(2).map((e) => e.event), ['warning', 'warning', 'warning', 'warning', 'capabilities']);
    assert.match(c.events[2].text, /^bad command json: /);
    for (const w of c.events.slice(3, 6)) {
      assert.equal(w.text, `unknown cmd (expected ${COMMANDS.join('/')})`);
      assert.ok(w.text.includes('hello'));
    }
    assert.deepEqual(c.events[6], { event: 'capabilities', protocol_version: 1, edit_review: true, approve: true });
    assert.equal(await c.close(), 0);
    assert.ok(c.raw.every((l) => JSON.parse(l)));
  });

  it('streams a turn with exact v1 shapes and done.stats arithmetic over a multi-call turn', async () => {
    server.script(
      ollamaReply({ thinking: 'hmm', content: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'a.txt', content: 'a\nb\n' } }], promptEvalCount: 100, evalCount: 10 }),
      ollamaReply({ toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }], promptEvalCount: 150, evalCount: 20 }),
      ollamaReply({ content: ['Do', 'ne.'], promptEvalCount: 200, evalCount: 30, evalDurationNs: 500_000_000 }),
    );
    const c = open(['--approve=false']);
    const ready = await c.event('ready');
    await c.event('context');
    assert.equal(ready.approve, false);
    const ev = await c.turn('create a.txt');
    assert.deepEqual(ev.map((e) => e.event), [
      'iteration', 'thinking', 'content', 'tool_start', 'tool_result', 'edit_diff',
      'iteration', 'tool_start', 'tool_result',
      'iteration', 'content', 'content', 'done',
    ]);
    assert.deepEqual(ev[0], { event: 'iteration', n: 1 });
    assert.deepEqual(ev[1], { event: 'thinking', text: 'hmm' });
    assert.deepEqual(ev[2], { event: 'content', text: 'Writing.' });
    assert.deepEqual(ev[3], { event: 'tool_start', name: 'write', args: { path: 'a.txt', content: 'a\nb\n' } });
    assert.equal(ev[4].event, 'tool_result');
    assert.deepEqual(Object.keys(ev[4]).sort(), ['event', 'name', 'ok', 'preview']);
    assert.equal(ev[4].ok, true);
    assert.deepEqual(ev[5], { event: 'edit_diff', path: join(cwd, 'a.txt'), added: 2, removed: 0, diff: ['+a', '+b'] });
    assert.equal(ev[7].name, 'read', 'aliases resolve to the canonical name');
    const stats = ev.at(-1)!.stats;
    assert.deepEqual(Object.keys(stats).sort(), Object.keys(ZERO).sort());
    assert.equal(stats.iterations, 3);
    assert.equal(stats.prompt_tokens, 200);
    assert.equal(stats.billed_prompt_tokens, 450);
    assert.equal(stats.output_tokens, 60);
    assert.equal(stats.tokens_per_sec, 60);
    assert.ok(stats.duration_ms >= 0);
    const after = await c.event('context', c.events.indexOf(ev.at(-1)!));
    assert.equal(after.limit, 32768);
    assert.equal(await c.close(), 0);
  });

  it('prompt while busy warns; cancel mid-stream ends with turn cancelled then done', async () => {
    server.script({ chunks: [JSON.stringify({ model: 'm', message: { role: 'assistant', content: 'partial' }, done: false }) + '\n'], hang: true });
    const c = open();
    await c.event('context');
    const from = c.events.length;
    c.send({ cmd: 'prompt', text: 'long task' });
    await c.waitFor((e) => e.event === 'content', { from });
    c.send({ cmd: 'prompt', text: 'again' });
    c.send({ cmd: 'undo' });
    c.send({ cmd: 'set_model', model: 'small-model' });
    await c.waitFor((e) => e.event === 'warning' && e.text.includes('before switching'), { from });
    c.send({ cmd: 'cancel' });
    await c.waitFor((e) => e.event === 'done', { from });
    const kinds = c.since(from).map((e) => (e.event === 'warning' ? `warning:${e.text}` : e.event));
    assert.deepEqual(kinds.slice(0, 7), [
      'iteration', 'content',
      'warning:turn in progress — cancel it or wait for done',
      'warning:turn in progress — cancel it or wait before undoing',
      'warning:turn in progress — cancel it or wait before switching models',
      'warning:turn cancelled', 'done',
    ]);
    assert.equal(await c.close(), 0);
  });

  it('approval asks: ask/answer round trip, one id space with edit_review, segments per A.9, partial apply and undo', async () => {
    writeFileSync(join(cwd, 'f.txt'), 'a\nb\nc\nd\ne');
    server.script(
      ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: 'ls -la' } }] }),
      ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'f.txt', content: 'a\nB\nc\nd\nE' } }] }),
      ollamaReply({ content: 'ok' }),
    );
    const c = open();
    await c.event('context');
    await c.hello({ edit_review: true });
    const from = c.events.length;
    c.send({ cmd: 'prompt', text: 'go' });
    const ask = await c.event('ask', from);
    assert.deepEqual(ask, { event: 'ask', id: 1, question: 'Allow bash: ls -la', detail: [], choices: ['allow once', "always allow 'ls *'", 'allow all bash this session', 'deny'] });
    c.send({ cmd: 'answer', id: 99, text: 'allow once' });
    c.send({ cmd: 'answer', id: 1, text: 'allow once' });
    const review = await c.event('edit_review', from);
    assert.equal(review.id, 2);
    assert.equal(review.tool, 'write');
    assert.equal(review.path, join(cwd, 'f.txt'));
    assert.equal(review.old, 'a\nb\nc\nd\ne');
    assert.equal(review.new, 'a\nB\nc\nd\nE');
    assert.deepEqual(review.segments, [
      { same: true, lines: ['a'] }, { same: false, old: ['b'], new: ['B'] }, { same: true, lines: ['c', 'd'] }, { same: false, old: ['e'], new: ['E'] },
    ]);
    assert.equal(readFileSync(join(cwd, 'f.txt'), 'utf8'), 'a\nb\nc\nd\ne', 'nothing written before the decision');
    c.send({ cmd: 'edit_decision', id: 2, apply: true, content: 'a\nB\nc\nd\ne' });
    const done = await c.event('done', from);
    const turn = c.since(from).slice(0, c.events.indexOf(done) - from + 1);
    const wr = turn.find((e) => e.event === 'tool_result' && e.name === 'write')!;
    assert.equal(wr.ok, true);
    assert.match(wr.preview, /accepted only part/);
    assert.deepEqual(turn.find((e) => e.event === 'edit_diff')!.diff, ['@@ line 2 @@', '-b', '+B']);
    assert.equal(readFileSync(join(cwd, 'f.txt'), 'utf8'), 'a\nB\nc\nd\ne');
    await c.event('context', c.events.indexOf(done));
    const u = c.events.length;
    c.send({ cmd: 'undo' });
    const info = await c.event('info', u);
    assert.equal(info.text, `restored to pre-turn state:\n  ${join(cwd, 'f.txt')}\n(note: changes made via bash are not tracked)`);
    assert.equal(readFileSync(join(cwd, 'f.txt'), 'utf8'), 'a\nb\nc\nd\ne');
    c.send({ cmd: 'undo' });
    const w = await c.event('warning', u);
    assert.equal(w.text, 'nothing to undo (only write/edit tool changes are tracked)');
    assert.equal(await c.close(), 0);
  });

  it('cancel mid-tool closes pending reviews before done; deny via edit_decision apply:false', async () => {
    server.script(
      ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'n.txt', content: 'x' } }] }),
      ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'm.txt', content: 'y' } }] }),
      ollamaReply({ content: 'gave up' }),
    );
    const c = open();
    await c.event('context');
    await c.hello({ edit_review: true });
    let from = c.events.length;
    c.send({ cmd: 'prompt', text: 'make n' });
    const r1 = await c.event('edit_review', from);
    assert.deepEqual(r1.segments, [{ same: false, old: [''], new: ['x'] }]);
    c.send({ cmd: 'edit_decision', id: r1.id, apply: false });
    const r2 = await c.event('edit_review', c.events.indexOf(r1) + 1);
    assert.equal(r2.id, r1.id + 1);
    c.send({ cmd: 'cancel' });
    const done = await c.event('done', from);
    await c.event('context', c.events.indexOf(done));
    const tail = c.since(from).map((e) => e.event);
    const closedAt = tail.indexOf('edit_review_closed');
    assert.ok(closedAt >= 0 && closedAt < tail.indexOf('done'), tail.join(','));
    assert.deepEqual(c.since(from).find((e) => e.event === 'edit_review_closed'), { event: 'edit_review_closed', id: r2.id });
    assert.ok(!existsSync(join(cwd, 'n.txt')) && !existsSync(join(cwd, 'm.txt')));
    const denied = c.since(from).find((e) => e.event === 'tool_result')!;
    assert.match(denied.preview, /DENIED this write action in review/);
    c.send({ cmd: 'edit_decision', id: r2.id, apply: true });
    from = c.events.length;
    c.send({ cmd: 'list_sessions' });
    await c.event('sessions', from);
    assert.equal(c.since(from).length, 1, 'a late decision is a silent no-op');
    assert.equal(await c.close(), 0);
  });

  it('set_approval and hello approve:false suppress every prompt; deny rules still refuse', async () => {
    writeFileSync(join(home, 'config.json'), JSON.stringify({ permissions: { deny: ['Bash(rm *)'], ask: ['Bash(echo *)'] } }));
    server.script(
      ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: 'echo yes' } }, { name: 'bash', arguments: { command: 'rm -f k.txt' } }, { name: 'write', arguments: { path: 'w.txt', content: 'w' } }] }),
      ollamaReply({ content: 'fine' }),
    );
    writeFileSync(join(cwd, 'k.txt'), 'k');
    const c = open();
    await c.event('context');
    c.send({ cmd: 'set_approval' });
    c.send({ cmd: 'set_approval', approve: 'no' });
    c.send({ cmd: 'hello', edit_review: true, approve: false });
    const caps = await c.event('capabilities');
    assert.deepEqual(caps, { event: 'capabilities', protocol_version: 1, edit_review: true, approve: false });
    assert.deepEqual(c.events.slice(2, 4).map((e) => e.text), ["set_approval needs a boolean 'approve' field", "set_approval needs a boolean 'approve' field"]);
    const ev = await c.turn('do it');
    assert.ok(!ev.some((e) => e.event === 'ask' || e.event === 'edit_review'));
    const results = ev.filter((e) => e.event === 'tool_result');
    assert.deepEqual(results.map((r) => r.ok), [true, false, true]);
    assert.match(results[1].preview, /blocked by permission rule 'Bash\(rm \*\)'/);
    assert.ok(existsSync(join(cwd, 'k.txt')));
    assert.equal(readFileSync(join(cwd, 'w.txt'), 'utf8'), 'w');
    const from = c.events.length;
    c.send({ cmd: 'set_approval', approve: true });
    assert.deepEqual(await c.event('approval_changed', from), { event: 'approval_changed', approve: true });
    assert.equal(await c.close(), 0);
  });

  it('mid-turn: list_models and set_approval answer while an ask waits; plan and ask_user on the wire; EOF with an ask pending denies it', async () => {
    server.script(
      ollamaReply({ toolCalls: [{ name: 'plan', arguments: { set: ['pick', 'write'] } }, { name: 'ask_user', arguments: { question: 'which color?', choices: ['blue', 'red'] } }] }),
      ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'color.txt', content: 'red\n' } }] }),
      ollamaReply({ content: 'Wrote red.' }),
      ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: 'touch ran.txt' } }] }),
    );
    const c = open();
    const ready = await c.event('ready');
    await c.event('context');
    let from = c.events.length;
    c.send({ cmd: 'prompt', text: 'pick a color and write it' });
    const ask = await c.event('ask', from);
    assert.deepEqual(ask, { event: 'ask', id: 1, question: 'which color?', detail: [], choices: ['blue', 'red'] });
    assert.deepEqual(c.since(from).find((e) => e.event === 'plan'), { event: 'plan', items: [{ text: 'pick', done: false }, { text: 'write', done: false }] });
    c.send({ cmd: 'list_models' });
    const models = await c.event('models', from);
    assert.deepEqual(models, { event: 'models', models: ['test-model', 'small-model', 'no-tools'], current: 'test-model' });
    c.send({ cmd: 'set_approval', approve: false });
    await c.event('approval_changed', from);
    assert.ok(!c.since(from).some((e) => e.event === 'done'), 'both answered while the turn waits');
    c.send({ cmd: 'answer', id: 1, text: 'red' });
    const done = await c.event('done', from);
    const turn = c.since(from).slice(0, c.events.indexOf(done) - from + 1);
    assert.equal(turn.find((e) => e.event === 'tool_result' && e.name === 'ask_user')!.preview, 'User answered: red');
    assert.equal(turn.filter((e) => e.event === 'ask').length, 1, 'approval turned off mid-turn: the write did not ask');
    assert.equal(readFileSync(join(cwd, 'color.txt'), 'utf8'), 'red\n');
    await c.event('context', c.events.indexOf(done));

    c.send({ cmd: 'set_approval', approve: true });
    from = c.events.length;
    c.send({ cmd: 'prompt', text: 'run it' });
    await c.event('ask', from);
    assert.equal(await c.close(), 0);
    assert.ok(!existsSync(join(cwd, 'ran.txt')), 'a dropped answer is a deny');
    const saved = JSON.parse(readFileSync(ready.session, 'utf8'));
    assert.ok(saved.messages.some((m: { content: string }) => m.content === 'run it'), 'the interrupted turn was saved');
  });

  it('EOF mid-turn saves the session; --resume replays history without tool or system traffic; list_sessions', async () => {
    server.script(
      ollamaReply({ toolCalls: [{ name: 'read', arguments: { path: 'nope.txt' } }], content: '' }),
      ollamaReply({ content: 'The file is missing.' }),
      { chunks: [JSON.stringify({ model: 'm', message: { role: 'assistant', content: 'thinking about it' }, done: false }) + '\n'], hang: true },
    );
    const c = open();
    const ready = await c.event('ready');
    await c.event('context');
    await c.turn('read nope.txt');
    const from = c.events.length;
    c.send({ cmd: 'prompt', text: 'second question' });
    await c.event('content', from);
    assert.equal(await c.close(), 0);
    const saved = JSON.parse(readFileSync(ready.session, 'utf8'));
    assert.ok(saved.messages.some((m: { content: string }) => m.content === 'second question'), 'the partial turn was saved');

    // System traffic (a hidden [system] note, an assistant message carrying tool calls) stays out of history.
    saved.messages.push({ role: 'user', content: '[system] hidden note' }, { role: 'assistant', content: 'calling', tool_calls: [{ id: 'c1', function: { name: 'ls', arguments: {} } }] }, { role: 'tool', content: 'x', tool_name: 'ls', tool_call_id: 'c1' });
    writeFileSync(ready.session, JSON.stringify(saved));
    const r = open(['--resume', ready.session]);
    const ready2 = await r.event('ready');
    assert.equal(ready2.session, ready.session);
    const hist = await r.event('history');
    assert.deepEqual(r.events.map((e) => e.event).slice(0, 3), ['ready', 'context', 'history']);
    assert.deepEqual(hist.messages, [
      { role: 'user', text: 'read nope.txt' },
      { role: 'assistant', text: 'The file is missing.' },
      { role: 'user', text: 'second question' },
    ]);
    // The resumed conversation carries a hidden brief (it used tools); history never shows it.
    server.script(ollamaReply({ content: 'Continuing.' }));
    await r.turn('go on');
    const sent = server.chatRequests().at(-1)!.body.messages as Array<{ role: string; content: string }>;
    assert.equal(sent.at(-1)!.content, 'go on');
    assert.equal(sent.at(-2)!.role, 'user');
    assert.match(sent.at(-2)!.content, /^\[system\] session resumed — .*\nFiles you read: nope\.txt\nEarlier lookups: 1; shell commands: 0\./s);
    const f = r.events.length;
    r.send({ cmd: 'list_sessions' });
    const s = await r.event('sessions', f);
    const item = s.items.find((i: { path: string }) => i.path === ready.session);
    assert.deepEqual(Object.keys(item).sort(), ['cwd', 'model', 'path', 'saved_at', 'title', 'turns']);
    assert.equal(item.title, 'read nope.txt');
    assert.equal(item.turns, 3);
    assert.equal(item.model, 'test-model');
    assert.equal(await r.close(), 0);
  });

  it('set_model: no-tools refused with a warning, clamp noted, then model_changed and context; list_models merges hosts', async () => {
    writeFileSync(join(home, 'config.json'), JSON.stringify({ providers: { mirror: { base_url: `${server.url}/v1` }, dead: { base_url: 'http://127.0.0.1:9/v1' } } }));
    const c = open();
    await c.event('context');
    let from = c.events.length;
    c.send({ cmd: 'set_model' });
    c.send({ cmd: 'set_model', model: 'no-tools' });
    const w = await c.waitFor((e) => e.event === 'warning' && e.text.startsWith('model switch failed'), { from });
    assert.match(w.text, /no-tools/);
    assert.equal(c.events[from].text, "set_model needs a 'model' field");
    from = c.events.length;
    c.send({ cmd: 'set_model', model: 'small-model' });
    const changed = await c.event('model_changed', from);
    assert.deepEqual(changed, { event: 'model_changed', model: 'small-model', num_ctx: 8192, note: '(num_ctx clamped 32768 → 8192)' });
    const ctx = await c.event('context', from);
    assert.equal(ctx.limit, 8192);
    assert.ok(c.events.indexOf(changed) < c.events.indexOf(ctx));
    from = c.events.length;
    // The host lists test-model twice and an Ollama-style name with a slash that the mirror
    // provider lists too: every duplicate goes, first position kept; the dead provider is skipped.
    server.extraListed.push('test-model', 'mirror/test-model');
    c.send({ cmd: 'list_models' });
    const models = await c.event('models', from);
    server.extraListed.length = 0;
    assert.deepEqual(models, {
      event: 'models',
      models: ['test-model', 'small-model', 'no-tools', 'mirror/test-model', 'mirror/small-model', 'mirror/no-tools', 'mirror/mirror/test-model'],
      current: 'small-model',
    });
    assert.equal(await c.close(), 0);
  });

  it('an unreachable model server still gives ready, then a warning; prompts fail with zero-stats done', async () => {
    const c = new ServeClient(['--host', 'http://127.0.0.1:9', '--model', 'test-model', '--no-index'], cwd, home);
    killAtEnd(c.child);
    await c.event('ready');
    const w = await c.event('warning');
    assert.deepEqual(c.events.map((e) => e.event).slice(0, 3), ['ready', 'context', 'warning']);
    const ev = await c.turn('hi');
    assert.deepEqual(ev.map((e) => e.event), ['warning', 'done']);
    assert.equal(ev[0].text, w.text);
    assert.deepEqual(ev[1].stats, ZERO);
    assert.equal(await c.close(), 0);
  });

  it('/skill: expands project skills listed in ready; unknown skills warn without a turn', async () => {
    mkdirSync(join(cwd, '.rift', 'skills', 'tidy'), { recursive: true });
    writeFileSync(join(cwd, '.rift', 'skills', 'tidy', 'SKILL.md'), '---\nname: tidy\ndescription: Tidy the imports\n---\nSort every import.\n');
    server.script(ollamaReply({ content: 'sorted' }));
    const c = open();
    const ready = await c.event('ready');
    await c.event('context');
    assert.deepEqual(ready.skills, [{ name: 'tidy', description: 'Tidy the imports' }]);
    const from = c.events.length;
    c.send({ cmd: 'prompt', text: '/skill:nope do it' });
    const w = await c.event('warning', from);
    assert.equal(w.text, "unknown skill 'nope'");
    await c.turn('/skill:tidy src/');
    const sent = server.chatRequests().at(-1)!.body.messages.at(-1).content;
    assert.equal(sent, "Follow this skill's instructions.\n\n--- SKILL: tidy ---\nSort every import.\n--- END SKILL ---\n\nTask: src/");
    const tools = server.chatRequests().at(-1)!.body.tools.map((t: { function: { name: string } }) => t.function.name);
    assert.ok(tools.includes('skill'), tools.join(','));
    assert.match(server.chatRequests().at(-1)!.body.messages[0].content, /- tidy: Tidy the imports/);
    assert.equal(await c.close(), 0);
    const s = readdirSync(join(home, 'sessions'));
    assert.ok(s.length >= 1);
    rmSync(cwd, { recursive: true, force: true });
  });

  it('hello toggles inline review: off gives plain approval asks, on gives edit_review; apply without content writes the proposal', async () => {
    server.script(
      ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'p.txt', content: 'plain\n' } }] }),
      ollamaReply({ content: 'ok' }),
      ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'p.txt', content: 'reviewed\n' } }] }),
      ollamaReply({ content: 'ok' }),
    );
    const c = open();
    await c.event('context');
    c.send({ cmd: 'hello', edit_review: true });
    c.send({ cmd: 'hello', edit_review: 'yes' });
    const caps = await c.waitFor((e) => e.event === 'capabilities' && e.edit_review === false);
    assert.equal(caps.approve, true);
    let from = c.events.length;
    c.send({ cmd: 'prompt', text: 'write p' });
    const ask = await c.event('ask', from);
    assert.equal(ask.question, `Allow write: ${join(cwd, 'p.txt')} (6 bytes)`);
    assert.deepEqual(ask.detail, ['+plain']);
    assert.equal(ask.choices[0], 'allow');
    assert.equal(ask.choices.at(-1), 'deny');
    c.send({ cmd: 'answer', id: ask.id, text: 'allow' });
    const d1 = await c.event('done', from);
    await c.event('context', c.events.indexOf(d1));
    assert.equal(readFileSync(join(cwd, 'p.txt'), 'utf8'), 'plain\n');
    c.send({ cmd: 'hello', edit_review: true });
    from = c.events.length;
    c.send({ cmd: 'prompt', text: 'rewrite p' });
    const review = await c.event('edit_review', from);
    assert.equal(review.id, ask.id + 1);
    assert.deepEqual(review.segments, [{ same: false, old: ['plain'], new: ['reviewed'] }, { same: true, lines: [''] }]);
    c.send({ cmd: 'edit_decision', id: review.id, apply: true });
    await c.event('done', from);
    assert.equal(readFileSync(join(cwd, 'p.txt'), 'utf8'), 'reviewed\n');
    assert.equal(await c.close(), 0);
  });

  it('quiet by contract: cancel with no turn, unknown answer/edit_decision ids and empty prompts emit nothing; hello is idempotent', async () => {
    const c = open();
    await c.event('context');
    const from = c.events.length;
    c.send({ cmd: 'cancel' });
    c.send({ cmd: 'answer', id: 7, text: 'allow once' });
    c.send({ cmd: 'answer', text: 'no id' });
    c.send({ cmd: 'edit_decision', id: 7, apply: true });
    c.send({ cmd: 'edit_decision', apply: false });
    c.send({ cmd: 'prompt', text: '  \t ' });
    c.send({ cmd: 'prompt' });
    c.send({ cmd: 'hello', edit_review: true });
    c.send({ cmd: 'hello', edit_review: true });
    c.send({ cmd: 'list_sessions' });
    await c.event('sessions', from);
    const ev = c.since(from);
    assert.deepEqual(ev.map((e) => e.event), ['capabilities', 'capabilities', 'sessions']);
    assert.deepEqual(ev[1], ev[0]);
    assert.deepEqual(ev[0], { event: 'capabilities', protocol_version: 1, edit_review: true, approve: true });
    assert.equal(await c.close(), 0);
  });

  it('one id space, never reused: an ask dropped by cancel keeps its id, answering it late is a no-op, the next ask counts on', async () => {
    server.script(
      ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: 'touch first.txt' } }] }),
      ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: 'touch second.txt' } }] }),
      ollamaReply({ content: 'skipped' }),
    );
    const c = open();
    await c.event('context');
    let from = c.events.length;
    c.send({ cmd: 'prompt', text: 'first' });
    const first = await c.event('ask', from);
    assert.equal(first.id, 1);
    c.send({ cmd: 'cancel' });
    await c.event('done', from);
    c.send({ cmd: 'answer', id: first.id, text: 'allow once' });
    from = c.events.length;
    c.send({ cmd: 'prompt', text: 'second' });
    const second = await c.event('ask', from);
    assert.equal(second.id, 2);
    assert.equal(second.question, 'Allow bash: touch second.txt');
    c.send({ cmd: 'answer', id: second.id, text: 'deny' });
    await c.event('done', from);
    assert.ok(!existsSync(join(cwd, 'first.txt')) && !existsSync(join(cwd, 'second.txt')));
    assert.equal(await c.close(), 0);
  });
});
