import { describe, it, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ollamaReply } from '../support/model-server.ts';
import { useModelServer } from '../support/agent-harness.ts';

// scripts/serve-client.mjs, the client integrators copy, driven the way a person types into it:
// commands win over answers, several questions can be pending, a review can accept some hunks.

const CLIENT = fileURLToPath(new URL('../../scripts/serve-client.mjs', import.meta.url));

class Typist {
  readonly child: ChildProcessWithoutNullStreams;
  out = '';
  exit: Promise<number | null>;
  constructor(args: string[], cwd: string, home: string) {
    this.child = spawn(process.execPath, [CLIENT, '--raw', ...args], { cwd, env: { PATH: process.env.PATH, HOME: home, RIFT_HOME: home, RIFT_LOG: 'error' } });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (d: string) => (this.out += d));
    this.child.stderr.resume();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 60_000);
    this.exit = new Promise((r) => this.child.on('close', (code) => (clearTimeout(timer), r(code))));
  }
  type(line: string): void {
    this.child.stdin.write(`${line}\n`);
  }
  /** The commands the client sent rift, in order (a reply may follow its open `apply?` prompt on one line). */
  sent(): Array<Record<string, any>> {
    return this.out.split('\n').filter((l) => l.includes('→ {')).map((l) => JSON.parse(l.slice(l.indexOf('→ {') + 2)));
  }
  events(): Array<Record<string, any>> {
    return this.out.split('\n').filter((l) => l.startsWith('← {')).map((l) => JSON.parse(l.slice(2)));
  }
  async until(pred: (t: Typist) => boolean, what: string): Promise<void> {
    const deadline = Date.now() + 20_000;
    while (!pred(this)) {
      if (Date.now() > deadline || this.child.exitCode !== null) throw new Error(`timed out waiting for ${what}; output:\n${this.out.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  count(event: string): number {
    return this.events().filter((e) => e.event === event).length;
  }
}

describe('the reference serve client', () => {
  const { server, workspace, killAtEnd } = useModelServer({ clearBeforeEach: true });
  let cwd: string;
  let home: string;
  beforeEach(() => ({ cwd, home } = workspace('rift-serve-client-')));
  const start = (extra: string[] = []) => {
    const t = new Typist(['--host', server.url, '--model', 'test-model', '--no-index', ...extra], cwd, home);
    killAtEnd(t.child);
    return t;
  };

  it('/cancel and /quit are commands even while an ask is pending, never answers', async () => {
    server.script(
      ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'a.txt', content: 'a\n' } }] }),
      ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'b.txt', content: 'b\n' } }] }),
    );
    const t = start();
    await t.until((x) => x.count('context') === 1, 'ready');
    t.type('write a');
    await t.until((x) => x.count('ask') === 1, 'the first ask');
    t.type('/cancel');
    await t.until((x) => x.count('done') === 1, 'the cancelled turn');
    t.type('write b');
    await t.until((x) => x.count('ask') === 2, 'the second ask');
    t.type('/quit');
    assert.equal(await t.exit, 0);
    assert.deepEqual(t.sent().map((c) => c.cmd), ['prompt', 'cancel', 'prompt']);
    assert.ok(t.events().some((e) => e.event === 'warning' && e.text === 'turn cancelled'));
  });

  it('several reviews pending at once (parallel sub-agents): each reply decides one, by age or by #id', async () => {
    const child = (b: any) => b.messages[0].content.includes('You are a sub-agent');
    const task = (b: any, word: string) => child(b) && b.messages.some((m: any) => m.role === 'user' && m.content.includes(word));
    const first = (b: any) => b.messages.at(-1).role === 'user';
    server.script(
      { ...ollamaReply({ toolCalls: [{ name: 'agent', arguments: { tasks: [{ description: 'one', prompt: 'write one' }, { description: 'two', prompt: 'write two' }] } }] }), when: (b) => !child(b) },
      { ...ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'one.txt', content: '1\n' } }] }), when: (b) => task(b, 'write one') && first(b) },
      { ...ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'two.txt', content: '2\n' } }] }), when: (b) => task(b, 'write two') && first(b) },
      { ...ollamaReply({ content: 'wrote one' }), when: (b) => task(b, 'write one') },
      { ...ollamaReply({ content: 'wrote two' }), when: (b) => task(b, 'write two') },
      { ...ollamaReply({ content: 'Both written.' }), when: (b) => !child(b) },
    );
    const t = start(['--review']);
    await t.until((x) => x.count('capabilities') === 1, 'the hello');
    t.type('write both files');
    await t.until((x) => x.count('edit_review') === 2, 'two reviews');
    const reviews = t.events().filter((e) => e.event === 'edit_review');
    t.type(`#${reviews[1].id} y`);
    t.type('y');
    await t.until((x) => x.count('done') === 1, 'the turn');
    t.type('/quit');
    assert.equal(await t.exit, 0);
    const decisions = t.sent().filter((c) => c.cmd === 'edit_decision');
    assert.deepEqual(decisions, [{ cmd: 'edit_decision', id: reviews[1].id, apply: true }, { cmd: 'edit_decision', id: reviews[0].id, apply: true }]);
    assert.equal(readFileSync(join(cwd, 'one.txt'), 'utf8'), '1\n');
    assert.equal(readFileSync(join(cwd, 'two.txt'), 'utf8'), '2\n');
  });

  it('a review reply of one y/n per hunk sends the accepted hunks as content', async () => {
    writeFileSync(join(cwd, 'f.txt'), 'a\nb\nc\nd\ne\n');
    server.script(ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'f.txt', content: 'a\nB\nc\nd\nE\n' } }] }), ollamaReply({ content: 'ok' }));
    const t = start(['--review']);
    await t.until((x) => x.count('capabilities') === 1, 'the hello');
    t.type('capitalize');
    await t.until((x) => x.count('edit_review') === 1, 'the review');
    t.type('yn');
    await t.until((x) => x.count('done') === 1, 'the turn');
    t.type('/quit');
    assert.equal(await t.exit, 0);
    const id = t.events().find((e) => e.event === 'edit_review')!.id;
    assert.deepEqual(t.sent().find((c) => c.cmd === 'edit_decision'), { cmd: 'edit_decision', id, apply: true, content: 'a\nB\nc\nd\ne\n' });
    assert.equal(readFileSync(join(cwd, 'f.txt'), 'utf8'), 'a\nB\nc\nd\ne\n');
    const result = t.events().find((e) => e.event === 'tool_result')!;
    assert.match(result.preview, /accepted only part of your proposal/);
  });
});
