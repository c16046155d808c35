import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ollamaReply, type Step } from '../support/model-server.ts';
import { useModelServer } from '../support/agent-harness.ts';
import { CANCEL_NOTE } from '../../src/agent/loop/agent.ts';
import { Pane, tmuxAvailable } from './tmux.ts';

// `rift` (the terminal UI) end to end: the real program in a tmux pane, typed at with
// send-keys and read with capture-pane, against the scripted model server.

const skip = tmuxAvailable() ? false : 'tmux is not installed (.ci/run installs it)';

/** The content of the last user message in a recorded chat request. */
function lastUser(body: any): string {
  return [...body.messages].reverse().find((m: any) => m.role === 'user').content;
}

function toolMessages(body: any): string[] {
  return body.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.content);
}

/** A reply streamed as `lines` lines, `perChunk` lines a chunk. */
function longReply(lines: number, perChunk: number): Step & { chunks: string[] } {
  const all = Array.from({ length: lines }, (_, i) => `line ${String(i + 1).padStart(4, '0')} of the long reply`);
  const pieces: string[] = [];
  for (let i = 0; i < all.length; i += perChunk) pieces.push(`${all.slice(i, i + perChunk).join('\n')}${i + perChunk < all.length ? '\n' : ''}`);
  return ollamaReply({ content: pieces }) as Step & { chunks: string[] };
}

describe('rift terminal UI (tmux)', { skip }, () => {
  const { server, workspace } = useModelServer({
    models: {
      'test-model': { capabilities: ['completion', 'tools'], contextLength: 32768 },
      'small-model': { capabilities: ['completion', 'tools'], contextLength: 8192 },
      'no-tools': { capabilities: ['completion'], contextLength: 8192 },
    },
    clearBeforeEach: true,
  });
  let cwd: string;
  let home: string;
  let pane: Pane | null = null;
  beforeEach(() => ({ cwd, home } = workspace('rift-tui-')));
  afterEach(async () => {
    await pane?.close();
    pane = null;
  });
  const open = async (args: string[] = [], o: { cols?: number; rows?: number; env?: Record<string, string> } = {}) => {
    pane = await Pane.open({ cwd, home, args: ['--host', server.url, '--model', 'test-model', ...args], ...o });
    await pane.waitFor('ask rift, or / for commands');
    return pane;
  };
  // Requests of this test only (the server outlives each test).
  let first = 0;
  beforeEach(() => (first = server.chatRequests().length));
  const chats = () => server.chatRequests().slice(first);

  it('reviews an edit hunk by hunk, applies the accepted one, shows it in /diff and reverts it with /undo', async () => {
    const original = 'alpha\nbeta\ngamma\ndelta\nepsilon\n';
    writeFileSync(join(cwd, 'a.txt'), original);
    server.script(
      ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'a.txt', content: 'alpha\nBETA\ngamma\ndelta\nEPSILON\n' } }] }),
      ollamaReply({ content: 'Applied what you accepted.' }),
    );
    const p = await open();
    await p.type('capitalize beta and epsilon');
    await p.keys('Enter');
    let screen = await p.waitFor('hunk 1/2');
    assert.match(screen, /Review write: a\.txt {2}hunk 1\/2/, 'a path inside the workspace shows relative');
    assert.match(screen, /-beta/);
    assert.match(screen, /\+BETA/);
    assert.match(screen, /\(2\/2 accepted\)/);
    assert.equal(readFileSync(join(cwd, 'a.txt'), 'utf8'), original, 'nothing is written before the decision');
    await p.type('n');
    screen = await p.waitFor('hunk 2/2');
    assert.match(screen, /\(1\/2 accepted\)/);
    assert.match(screen, /\+EPSILON/);
    await p.keys('Enter');
    await p.waitFor('Applied what you accepted.');
    await p.waitFor(/─ 2 iterations/);
    assert.equal(readFileSync(join(cwd, 'a.txt'), 'utf8'), 'alpha\nbeta\ngamma\ndelta\nEPSILON\n');
    const screenAfter = await p.history();
    assert.match(screenAfter, /edit partly accepted in review: .*a\.txt \(1\/2 hunks\)/);
    assert.ok(toolMessages(chats()[1].body).some((t) => t.includes('accepted only part of your proposal')), 'the model learns the edit was partial');

    await p.type('/diff');
    await p.keys('Enter');
    screen = await p.waitFor('changes the next /undo reverts');
    assert.match(screen, /± a\.txt/);
    assert.match(screen, /-epsilon/);
    assert.match(screen, /\+EPSILON/);

    await p.type('/undo');
    await p.keys('Enter');
    await p.waitFor('restored to pre-turn state');
    assert.equal(readFileSync(join(cwd, 'a.txt'), 'utf8'), original);
    await p.type('/undo');
    await p.keys('Enter');
    await p.waitFor('nothing to undo');
  });

  it('Esc cancels a reply mid-stream; the next prompt tells the model the turn was abandoned', async () => {
    server.script(
      { chunks: [JSON.stringify({ model: 'm', message: { role: 'assistant', content: 'streaming a partial ans' }, done: false }) + '\n'], hang: true },
      ollamaReply({ content: 'Fresh start.' }),
    );
    const p = await open();
    await p.type('write a long essay');
    await p.keys('Enter');
    await p.waitFor('streaming a partial ans');
    await p.waitFor('esc cancels');
    await p.keys('Escape');
    const screen = await p.waitFor('turn cancelled');
    assert.match(screen, /streaming a partial ans/, 'what streamed stays on screen');
    await p.waitFor((s) => !s.includes('esc cancels'));
    await p.type('something else');
    await p.keys('Enter');
    await p.waitFor('Fresh start.');
    assert.equal(lastUser(chats()[1].body), `${CANCEL_NOTE}something else`);
  });

  it('--continue replays the saved conversation and continues it; paste keeps newlines; Up recalls; Ctrl-C twice quits', async () => {
    const sessions = join(home, 'sessions');
    mkdirSync(sessions, { recursive: true });
    const saved = join(sessions, '1700000000.json');
    writeFileSync(
      saved,
      JSON.stringify({
        model: 'test-model',
        saved_at: 1700000000,
        cwd,
        messages: [
          { role: 'system', content: 'old system prompt' },
          { role: 'user', content: 'what is the capital of France?' },
          { role: 'assistant', content: 'Paris, as ever.' },
        ],
      }),
    );
    server.script(ollamaReply({ content: 'Noted both lines.' }), ollamaReply({ content: 'Again.' }));
    const p = await open(['--continue'], { env: { NO_COLOR: '1' } });
    let screen = await p.waitFor('Paris, as ever.');
    assert.match(screen, /resumed conversation \(1 prompts\)/);
    assert.match(screen, /› what is the capital of France\?/);
    assert.match(screen, new RegExp(`session ${saved.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`));

    await p.paste('first line\nsecond line');
    screen = await p.waitFor('second line');
    assert.match(screen, /› first line\n {2}second line/, 'a paste is one multi-line prompt, not two submissions');
    assert.equal(chats().length, 0);
    await p.keys('Enter');
    await p.waitFor('Noted both lines.');
    const body = chats()[0].body;
    assert.equal(lastUser(body), 'first line\nsecond line');
    assert.ok(body.messages.some((m: any) => m.role === 'user' && m.content === 'what is the capital of France?'), 'the resumed history reaches the model');
    assert.notEqual(body.messages[0].content, 'old system prompt', 'a resumed session runs under the current system prompt');
    const saved2 = JSON.parse(readFileSync(saved, 'utf8'));
    assert.equal(saved2.messages.at(-1).content, 'Noted both lines.', 'the same session file keeps growing');

    // NO_COLOR: structure by weight and inverse only, never a colour.
    const sgr = [...(await p.screen(true)).matchAll(/\x1b\[([0-9;]*)m/g)].flatMap((m) => m[1].split(';').map(Number));
    const colours = sgr.filter((n) => (n >= 30 && n <= 38) || (n >= 40 && n <= 48) || (n >= 90 && n <= 97) || (n >= 100 && n <= 107));
    assert.deepEqual(colours, [], 'no colour escapes under NO_COLOR');
    assert.ok(sgr.includes(7), 'the status line is still drawn in inverse');

    await p.keys('Up');
    await p.waitFor(/› first line\n {2}second line/);
    await p.keys('Enter');
    await p.waitFor('Again.');
    await p.keys('C-c');
    await p.waitFor('press Ctrl-C again to quit');
    await p.keys('C-c');
    await p.waitFor('session saved:');
    let code: number | null = null;
    for (let i = 0; i < 300 && code === null; i++) {
      code = await p.exited();
      if (code === null) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(code, 0, await p.history());
  });

  it('/model switches live with the serve preflight, completes model names, refuses a model without tools, survives a resize', async () => {
    server.script(ollamaReply({ content: 'Small model here.' }));
    const p = await open([], { cols: 100, rows: 30 });
    await p.type('/model sm');
    let screen = await p.waitFor('❯ small-model');
    await p.keys('Tab');
    screen = await p.waitFor('› /model small-model');
    await p.keys('Enter');
    await p.waitFor('model → small-model (num_ctx 8192) (num_ctx clamped 32768 → 8192)');
    // The status line follows within a frame of the transcript line.
    screen = await p.waitFor(/ small-model .*approval on.*8\.2k/);

    await p.type('/model no-tools');
    await p.keys('Enter');
    screen = await p.waitFor('model switch failed:');
    assert.match(screen, /model switch failed: .*tool/);
    screen = await p.waitFor((s) => !s.includes('esc cancels'));
    assert.match(screen, / small-model .*approval on/, 'a failed switch keeps the current model');

    await p.resize(80, 24);
    await p.type('who are you');
    await p.keys('Enter');
    screen = await p.waitFor('Small model here.');
    assert.equal(chats().at(-1)!.body.model, 'small-model');
    assert.equal(chats().at(-1)!.body.options.num_ctx, 8192);
    const lines = screen.split('\n');
    assert.ok(lines.every((l) => [...l].length <= 80), 'nothing wider than the resized terminal');
    assert.equal(lines.filter((l) => l.includes('approval on ·')).length, 1, 'one status line after the resize');
  });

  it('an approval picker: a digit allows the command once; Esc denies the next one', async () => {
    server.script(
      ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: 'echo picked > out.txt' } }] }),
      ollamaReply({ content: 'Ran it.' }),
      ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: 'echo second > out2.txt' } }] }),
      ollamaReply({ content: 'Understood, not running it.' }),
    );
    const p = await open([], { cols: 200, rows: 50 });
    await p.type('run the script');
    await p.keys('Enter');
    let screen = await p.waitFor('Allow bash: echo picked > out.txt');
    assert.match(screen, /❯ 1\. allow once/);
    assert.match(screen, /2\. always allow 'echo picked \*'/);
    assert.match(screen, /3\. allow all bash this session/);
    assert.match(screen, /4\. deny/);
    await p.keys('Down');
    await p.waitFor("❯ 2. always allow 'echo picked *'");
    await p.type('1');
    await p.waitFor('Ran it.');
    assert.equal(readFileSync(join(cwd, 'out.txt'), 'utf8'), 'picked\n');

    await p.type('and the second one');
    await p.keys('Enter');
    await p.waitFor('Allow bash: echo second > out2.txt');
    await p.keys('Escape');
    screen = await p.waitFor('Understood, not running it.');
    assert.match(screen, /✗ bash echo second > out2\.txt — ERROR: the user DENIED this bash action/);
    assert.equal(existsSync(join(cwd, 'out2.txt')), false);
  });

  it('sub-agent and background-task panes: live while they run, their milestones in the transcript', async () => {
    let releaseChild!: () => void;
    const child: Step = { ...ollamaReply({ content: ['Looked around: ', 'two files.'] }), pauseAt: 1, resume: new Promise<void>((r) => (releaseChild = r)) };
    child.when = (b) => String(b.messages[0].content).includes('sub-agent');
    server.script(
      ollamaReply({ toolCalls: [{ name: 'agent', arguments: { tasks: [{ description: 'survey the repo', prompt: 'list what is here' }] } }] }),
      child,
      ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: 'while [ ! -f go ]; do sleep 0.05; done; echo background-done', run_in_background: true } }] }),
      ollamaReply({ content: 'Started it.' }),
    );
    const p = await open();
    await p.type('/yolo');
    await p.keys('Enter');
    await p.waitFor('auto-approve on (yolo)');
    await p.type('survey, then start the watcher');
    await p.keys('Enter');
    let screen = await p.waitFor(/◆ agent 1 survey the repo · test-model/);
    assert.match(screen, /◆ agent 1 started: survey the repo \(test-model\)/);
    releaseChild();
    screen = await p.waitFor('⚙ task #1 while');
    await p.waitFor('Started it.');
    screen = await p.waitFor((s) => /^⚙ task #1 while/m.test(s) && s.includes('auto-approve'));
    assert.match(await p.history(), /◆ agent 1 finished \(1 step\)/);
    writeFileSync(join(cwd, 'go'), '');
    screen = await p.waitFor('⚙ task #1 finished: while');
    assert.match(screen, /— background-done/);
    assert.ok(!/^⚙ task #1 while/m.test(await p.screen()), 'the pane closes with the task');
  });

  it('streams a 5,000-line reply: every line lands in the scrollback once, and the screen is never cleared or redrawn', async () => {
    let release!: () => void;
    const step = longReply(5000, 50);
    step.pauseAt = 50;
    step.resume = new Promise<void>((r) => (release = r));
    server.script(step);
    const p = await open();
    const raw = join(home, 'pane-output.bin');
    await p.record(raw);
    await p.type('print the long reply');
    await p.keys('Enter');
    await p.waitFor('line 2500 of the long reply', { history: true, timeoutMs: 90_000 });
    const midway = (await p.history()).split('\n').filter((l) => /^line \d{4} of the long reply$/.test(l)).length;
    assert.equal(midway, 2500, 'finished lines reach the scrollback while the reply still streams');
    release();
    await p.waitFor(/─ 1 iteration/, { timeoutMs: 120_000 });
    const history = await p.history();
    const got = history.split('\n').filter((l) => /^line \d{4} of the long reply$/.test(l));
    assert.equal(got.length, 5000, 'each streamed line is in the scrollback once: nothing redrawn, nothing lost');
    got.forEach((l, i) => assert.equal(l, `line ${String(i + 1).padStart(4, '0')} of the long reply`));

    // What the terminal received: no clear-screen or clear-scrollback and no absolute cursor
    // jumps (which would move a reader's view), and never more rows rewritten per update than
    // the live region holds — the transcript above it is written once.
    const out = readFileSync(raw, 'latin1');
    assert.ok(!/\x1b\[[23]J|\x1bc|\x1b\[\d*;\d*[Hf]/.test(out), 'no clear or cursor jump');
    const updates = out.split('\x1b[?2026h');
    const maxUp = Math.max(...updates.map((u) => (u.match(/\x1b\[1A/g) ?? []).length + [...u.matchAll(/\x1b\[(\d+)A/g)].reduce((n, m) => n + (m[1] === '1' ? 0 : Number(m[1])), 0)));
    assert.ok(maxUp < 24, `an update moves up at most the live region (${maxUp} rows)`);
    const replyBytes = step.chunks.reduce((n, c) => n + c.length, 0);
    assert.ok(out.length < replyBytes * 3, `bytes sent to the terminal (${out.length}) stay proportional to the reply (${replyBytes})`);
  });
});
