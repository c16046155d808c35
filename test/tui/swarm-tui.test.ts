import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ollamaReply } from '../support/model-server.ts';
import { useModelServer } from '../support/agent-harness.ts';
import { gitFixture } from '../helpers/git.ts';
import { Pane, tmuxAvailable } from './tmux.ts';

// `/swarm` in the terminal UI: the candidates side by side with live status, the judge's
// verdict, and the merge picker — the real program in tmux against the scripted model server.

const skip = tmuxAvailable() ? false : 'tmux is not installed (.ci/run installs it)';
const TOOLS = { capabilities: ['completion', 'tools'], contextLength: 32768 };

describe('rift terminal UI: /swarm (tmux)', { skip }, () => {
  const { server, workspace } = useModelServer({ models: { 'test-model': TOOLS, alpha: TOOLS, beta: TOOLS, judge: TOOLS } });

  it('shows the candidates side by side while they run, then the verdict, and merges the one picked', async () => {
    const { cwd, home } = workspace('rift-tui-swarm-');
    gitFixture(cwd).commit('init', { 'stats.py': 'def mean(xs):\n    return sum(xs) / len(xs)\n', 'notes.txt': 'one\n' });
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    server.scriptFor('alpha', { ...ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'stats.py', content: 'def mean(xs):\n    return sum(xs) / len(xs) if xs else 0.0\n' } }] }), pauseAt: 0, resume: held }, ollamaReply({ content: 'guarded' }));
    server.scriptFor('beta', ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'notes.txt', content: 'two\n' } }] }), ollamaReply({ content: 'rewrote' }));
    server.scriptFor('judge', ollamaReply({ content: JSON.stringify({ winner: 'alpha', reason: 'it guards the empty list' }) }));
    const alphaAsked = server.arrival((b) => b?.model === 'alpha');
    const p = await Pane.open({ cwd, home, args: ['--host', server.url, '--model', 'test-model'], cols: 100, rows: 30 });
    try {
      await p.waitFor('ask rift, or / for commands');
      await p.type('/swarm --models alpha,beta --judge judge fix mean for an empty list');
      await p.keys('Enter');
      await alphaAsked;
      // alpha is held mid-reply: both columns are on screen, beta finishes while alpha still runs.
      const live = await p.waitFor(/alpha +beta/);
      assert.match(live, /running +done|running +running/);
      await p.waitFor(/running +done/);
      release();
      const picker = await p.waitFor('merge a candidate into the workspace', { timeoutMs: 180_000 });
      assert.match(picker, /JUDGE: winner=alpha — it guards the empty list/);
      assert.match(picker, /alpha +done +1 +2 /);
      assert.match(picker, /beta +done +1 +2 /);
      assert.equal(readFileSync(join(cwd, 'stats.py'), 'utf8'), 'def mean(xs):\n    return sum(xs) / len(xs)\n', 'nothing merged before the pick');
      await p.keys('Enter');
      await p.waitFor('merged alpha: stats.py');
      assert.equal(readFileSync(join(cwd, 'stats.py'), 'utf8'), 'def mean(xs):\n    return sum(xs) / len(xs) if xs else 0.0\n');
      assert.equal(readFileSync(join(cwd, 'notes.txt'), 'utf8'), 'one\n');
    } finally {
      release();
      await p.close();
    }
  });
});
