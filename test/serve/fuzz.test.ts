import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { ollamaReply } from '../support/model-server.ts';
import { useModelServer } from '../support/agent-harness.ts';
import { ServeClient } from './client.ts';

// 10,000 random and malformed stdin lines: the process never crashes and every stdout line is JSON.

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const CMDS = ['hello', 'prompt', 'answer', 'edit_decision', 'cancel', 'undo', 'list_sessions', 'list_models', 'set_model', 'set_approval', 'bogus', '', 'PROMPT'];
const VALUES: unknown[] = [null, true, false, 0, -1, 1.5, 1e308, 'x', '', '   ', [], {}, [1, 'a'], { a: { b: [] } }, 'test-model', 'absent', '/skill:none', 'text\nwith\nnewlines', '\u0000\u2028'];

function fuzzLines(n: number, seed = 42): string[] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const k = r();
    if (k < 0.15) {
      // malformed JSON: truncations, garbage, control bytes
      const base = JSON.stringify({ cmd: pick(CMDS), text: 'hi' });
      lines.push(pick([base.slice(0, Math.floor(r() * base.length)), '{', '}', 'null', '"str"', '42', '[]', '{"cmd":}', 'ÿþ\u0001', '{"cmd":"prompt","text":"\\ud800"}', '  \t ', '']));
    } else if (k < 0.17) {
      lines.push(JSON.stringify({ cmd: pick(['answer', 'answer', 'answer', 'edit_decision', 'bogus', 'set_approval', 'hello', 'cancel', 'undo', 'bogus']), text: 'z'.repeat(Math.floor(r() * 200_000)), content: 'y'.repeat(Math.floor(r() * 1000)) }));
    } else {
      const cmd: Record<string, unknown> = { cmd: r() < 0.9 ? pick(CMDS) : pick(VALUES) };
      // list_models and set_model reach the model server, list_sessions reads every saved session: keep them rare
      if ((cmd.cmd === 'list_models' || cmd.cmd === 'set_model' || cmd.cmd === 'list_sessions') && r() < 0.97) cmd.cmd = 'cancel';
      for (const f of ['text', 'id', 'apply', 'content', 'model', 'approve', 'edit_review']) if (r() < 0.3) cmd[f] = pick(VALUES);
      if (cmd.cmd === 'prompt' && r() < 0.5) cmd.text = r() < 0.05 ? `big ${'w '.repeat(5000)}` : `task ${i}`;
      lines.push(JSON.stringify(cmd));
    }
  }
  return lines;
}

describe('rift --serve fuzz', () => {
  const { server, workspace } = useModelServer();
  let cwd: string;
  let home: string;
  before(() => ({ cwd, home } = workspace('rift-serve-fuzz-')));

  it('10,000 random and malformed lines never crash it or put a non-JSON line on stdout', async () => {
    for (let i = 0; i < 50; i++) server.script(ollamaReply({ content: `reply ${i}` }));
    const c = new ServeClient(['--host', server.url, '--model', 'test-model', '--no-index', '--approve=false'], cwd, home);
    await c.event('context');
    const lines = fuzzLines(10_000);
    // Written in batches so turns start and get interrupted mid-stream.
    for (let i = 0; i < lines.length; i += 500) {
      c.child.stdin.write(`${lines.slice(i, i + 500).join('\n')}\n`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const from = c.events.length;
    c.send({ cmd: 'list_sessions' });
    await c.waitFor((e) => e.event === 'sessions', { from, timeoutMs: 30_000 });
    assert.equal(await c.close(), 0, c.stderr);
    assert.ok(c.raw.length > 1000, `only ${c.raw.length} lines`);
    for (const l of c.raw) {
      const v = JSON.parse(l);
      assert.equal(typeof v.event, 'string', l.slice(0, 200));
    }
    assert.ok(c.events.some((e) => e.event === 'warning' && e.text.startsWith('bad command json')));
    assert.ok(c.events.some((e) => e.event === 'warning' && e.text.startsWith('unknown cmd')));
    assert.ok(c.events.some((e) => e.event === 'done'));
  });
});
