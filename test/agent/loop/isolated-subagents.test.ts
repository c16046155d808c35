import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { mergeConfig } from '../../../src/agent/base/config.ts';
import type { AskRequest, Gate } from '../../../src/agent/policy/gate.ts';
import { Sandbox } from '../../../src/agent/policy/sandbox.ts';
import { agentTool } from '../../../src/agent/loop/subagents.ts';
import { WorkspaceCode } from '../../../src/agent/loop/workspace-code.ts';
import type { CodeServices } from '../../../src/agent/tools/context.ts';
import { VERSION } from '../../../src/cli/version.ts';
import { probeSandbox } from '../../../src/process/sandbox.ts';
import { ollamaReply, type Step } from '../../support/model-server.ts';
import { useModelServer, type Harness, type HarnessOptions } from '../../support/agent-harness.ts';
import { startRift, type RiftMcp } from '../../helpers/mcp.ts';

// Isolated sub-agents (`agent {isolate: true}`): each works in its own projection and publishes
// through publish's checks when its turn ends. Scripted model, real engine, real files, real git
// and (where the machine has it) the real bubblewrap sandbox.

const FILES: Record<string, string> = {
  'src/shared.py': 'x = 1\n',
  'src/config.py': 'def limit():\n    return 10\n',
  'src/app.py': 'from config import limit\n\n\ndef run():\n    return limit()\n',
  'src/old.py': 'def gone():\n    return 0\n',
};

/**
 * A workspace outside /tmp (the sandbox replaces /tmp with its own): the files above in a git
 * repository with one commit.
 */
function workspace(): string {
  const base = existsSync('/var/tmp') ? '/var/tmp' : undefined;
  const dir = realpathSync(mkdtempSync(join(base ?? '/tmp', 'rift-isolated-')));
  for (const [p, c] of Object.entries(FILES)) {
    mkdirSync(join(dir, p, '..'), { recursive: true });
    writeFileSync(join(dir, p), c);
  }
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'core.autocrlf=false', ...args], { cwd: dir, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-q', '-m', 'start');
  return dir;
}

/** Every file of the workspace but its `.rift` state, with its bytes. */
function snapshot(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) {
        if (relative(root, p) !== '.rift') walk(p);
      } else out.set(relative(root, p), readFileSync(p).toString('base64'));
    }
  };
  walk(root);
  return out;
}

const projectionsIn = (root: string) => (existsSync(join(root, '.rift', 'projections')) ? readdirSync(join(root, '.rift', 'projections')).sort() : []);

/** A chat request's body, as far as these tests read it. */
interface Body {
  messages: Array<{ role: string; content: string }>;
}
/** A chat request of the sub-agent given `prompt`. */
const child = (prompt: string) => (b: Body) => b.messages.some((m) => m.role === 'user' && m.content === prompt);
const parent = (b: Body) => !b.messages[0].content.includes('You are a sub-agent');
const step = (s: Step, when: (b: Body) => boolean): Step => ({ ...s, when });
/** A child's request that follows one of its tool results. */
const afterTool = (prompt: string) => (b: Body) => child(prompt)(b) && b.messages.some((m) => m.role === 'tool');
/** The first tool result of the last request `match` picks out. */
const toolResult = (requests: Array<{ body: Body }>, match: (b: Body) => boolean) => requests.filter((q) => match(q.body)).at(-1)!.body.messages.filter((m) => m.role === 'tool')[0].content;

/** Resolves once `check` holds (or after `ms`, so a failed test never leaves a rejection behind). */
function until(check: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  return new Promise((resolve) => {
    const poll = () => (check() || Date.now() > deadline ? resolve() : setTimeout(poll, 20));
    poll();
  });
}

/** The tool results the parent's last request carried. */
function parentToolResults(requests: Array<{ body: Body }>): string[] {
  const last = requests.filter((r) => parent(r.body)).at(-1)!;
  return last.body.messages.filter((m) => m.role === 'tool').map((m) => m.content);
}

function setup(fixture: ReturnType<typeof useModelServer>, code: CodeServices, cwd: string, o: HarnessOptions = {}): Harness {
  const h = fixture.harness({ cwd, code, ...o });
  h.agent.registry.register(agentTool(() => h.agent, mergeConfig(null, null, {}, {}, []), []));
  return h;
}

const PATCH_A = '--- a/src/shared.py\n+++ b/src/shared.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n';

describe('isolated sub-agents (the engine in this process)', () => {
  const fixture = useModelServer({ assertConsumed: true });
  const { server } = fixture;

  /** A workspace with its code services (no workspace server: the engine runs here). */
  async function open(): Promise<{ root: string; code: WorkspaceCode; services: CodeServices }> {
    const root = workspace();
    const code = await WorkspaceCode.open(root, 'no-workspace-server');
    assert.equal(await code.remote(), false);
    return { root, code, services: { read: code.read, search: code.search, change: code.change, projections: code.projections } };
  }

  it('two isolated sub-agents edit the same file at once: the first publishes, the second reports the conflict, the workspace holds only the first change', async () => {
    const { root, code, services } = await open();
    try {
      const h = setup(fixture, services, root);
      server.script(
        step(ollamaReply({ toolCalls: [{ name: 'agent', arguments: { isolate: true, tasks: [{ description: 'A', prompt: 'task A' }, { description: 'B', prompt: 'task B' }] } }] }), parent),
        step(ollamaReply({ toolCalls: [{ name: 'patch', arguments: { patch: PATCH_A } }] }), child('task A')),
        step(ollamaReply({ content: 'A done' }), child('task A')),
        // B finishes only once A's change is in the workspace (its command waits for it).
        step(ollamaReply({ toolCalls: [{ name: 'edit', arguments: { path: 'src/shared.py', old_string: 'x = 1', new_string: 'x = 3' } }] }), child('task B')),
        step(ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: `until grep -qx 'x = 2' ${join(root, 'src/shared.py')}; do sleep 0.1; done`, timeout_secs: 240 } }] }), afterTool('task B')),
        step(ollamaReply({ content: 'B done' }), afterTool('task B')),
        step(ollamaReply({ content: 'Both reported.' }), parent),
      );
      const r = await h.run('do both');
      assert.equal(r.outcome, 'answered');
      const [result] = parentToolResults(server.chatRequests());
      const [a, b] = result.split('\n\n### agent 2 — B\n');
      assert.match(a, /^### agent 1 — A\nA done\n\n\[isolated: published to the workspace — src\/shared\.py; projection prj_[a-z2-7]{26} removed\]$/);
      const kept = /The projection is kept: (prj_[a-z2-7]{26}) at (\S+)\n/.exec(b);
      assert.ok(kept, b);
      assert.match(b, /^B done\n\n\[isolated: NOT published; the workspace is unchanged\./);
      assert.match(b, /\nconflicts — the workspace changed these since the sub-agent started: src\/shared\.py\n/);
      assert.equal(kept[2], join(root, '.rift', 'projections', kept[1]));
      // The code tool worked in A's projection (its change recorded there), B's edit in B's copy.
      assert.equal(readFileSync(join(root, 'src/shared.py'), 'utf8'), 'x = 2\n');
      assert.equal(readFileSync(join(kept[2], 'src/shared.py'), 'utf8'), 'x = 3\n');
      assert.deepEqual(projectionsIn(root), [kept[1]], "A's projection is removed, B's kept");
      // The front end sees each outcome as the sub-agent's line.
      const lines = h.of('subagent').filter((e) => e.text.startsWith('[isolated:'));
      assert.deepEqual(lines.map((e) => `${e.tag} ${e.warn} ${e.text.split(' ').slice(0, 3).join(' ')}`).sort(), ['agent 1 false [isolated: published to', 'agent 2 true [isolated: NOT published;']);
      // The children worked in their projections: their system prompts say so.
      const childPrompts = server.chatRequests().filter((q) => !parent(q.body)).map((q) => q.body.messages[0].content as string);
      assert.ok(childPrompts.every((p) => /You work in an isolated copy of the workspace \(projection prj_[a-z2-7]{26}\) at /.test(p)));
    } finally {
      await code.close();
    }
  });

  it("an isolated sub-agent's bash writes land in its projection, not the workspace, until publish; git there does not find the workspace's repository", async () => {
    const { root, code, services } = await open();
    try {
      const h = setup(fixture, services, root);
      let during: { workspace: boolean; projection: string | null } | null = null;
      let opened!: () => void;
      const checked = new Promise<void>((r) => (opened = r));
      void server.arrival(afterTool('write it')).then(() => {
        const dir = projectionsIn(root)[0];
        during = { workspace: existsSync(join(root, 'made.txt')), projection: dir ? readFileSync(join(root, '.rift', 'projections', dir, 'made.txt'), 'utf8') : null };
        opened();
      });
      server.script(
        step(ollamaReply({ toolCalls: [{ name: 'agent', arguments: { isolate: true, tasks: [{ description: 'writer', prompt: 'write it' }] } }] }), parent),
        step(ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: 'echo made > made.txt; echo y = 2 >> src/shared.py; git rev-parse --show-toplevel; git status --short; pwd' } }] }), child('write it')),
        { ...ollamaReply({ content: 'wrote it' }), when: afterTool('write it'), pauseAt: 0, resume: checked },
        step(ollamaReply({ content: 'ok' }), parent),
      );
      const r = await h.run('write a file');
      assert.equal(r.outcome, 'answered');
      assert.deepEqual(during, { workspace: false, projection: 'made\n' });
      const bash = toolResult(server.chatRequests(), afterTool('write it'));
      assert.match(bash, /not a git repository/);
      assert.match(bash, new RegExp(`^${join(root, '.rift', 'projections')}/prj_[a-z2-7]{26}\\n`, 'm'), 'bash ran in the projection');
      // Published: the files the command wrote (its own work, accepted), nothing else.
      const [result] = parentToolResults(server.chatRequests());
      assert.match(result, /^wrote it\n\n\[isolated: published to the workspace — made\.txt, src\/shared\.py; projection prj_[a-z2-7]{26} removed\]$/);
      assert.equal(readFileSync(join(root, 'made.txt'), 'utf8'), 'made\n');
      assert.equal(readFileSync(join(root, 'src/shared.py'), 'utf8'), 'x = 1\ny = 2\n');
      assert.deepEqual(projectionsIn(root), []);
      assert.equal(execFileSync('git', ['status', '--short'], { cwd: root, encoding: 'utf8' }).split('\n').filter((l) => l !== '' && !l.includes('.rift')).sort().join('\n'), ' M src/shared.py\n?? made.txt');
    } finally {
      await code.close();
    }
  });

  const probe = probeSandbox();
  it('in the bash sandbox only the projection is writable: a write to the workspace fails', { skip: probe.available ? false : `no sandbox here: ${probe.reason}` }, async () => {
    const { root, code, services } = await open();
    try {
      const sandbox = Sandbox.create({ mode: 'auto', network: false, writable: [] }, root, []);
      const h = setup(fixture, services, root, { sandbox });
      server.script(
        step(ollamaReply({ toolCalls: [{ name: 'agent', arguments: { isolate: true, tasks: [{ description: 'escape', prompt: 'escape it' }] } }] }), parent),
        step(ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: `echo out > ${join(root, 'escaped.txt')}; echo in > inside.txt` } }] }), child('escape it')),
        step(ollamaReply({ content: 'tried' }), afterTool('escape it')),
        step(ollamaReply({ content: 'ok' }), parent),
      );
      await h.run('try it');
      const bash = toolResult(server.chatRequests(), afterTool('escape it'));
      assert.match(bash, /Read-only file system/);
      const [result] = parentToolResults(server.chatRequests());
      assert.match(result, /published to the workspace — inside\.txt;/);
      assert.equal(existsSync(join(root, 'escaped.txt')), false);
      assert.equal(readFileSync(join(root, 'inside.txt'), 'utf8'), 'in\n');
    } finally {
      await code.close();
    }
  });

  it('a publish the user refuses leaves the workspace byte-identical and keeps the projection; a retry in it publishes once allowed', async () => {
    const { root, code, services } = await open();
    try {
      const asks: AskRequest[] = [];
      let publish = 'deny';
      const gate: Gate = { interactive: true, ask: async (q) => (asks.push(q), q.question.startsWith('Allow bash') ? 'allow once' : publish) };
      const h = setup(fixture, services, root, { approve: true, gate });
      const before = snapshot(root);
      server.script(
        step(ollamaReply({ toolCalls: [{ name: 'agent', arguments: { isolate: true, tasks: [{ description: 'cleanup', prompt: 'delete old' }] } }] }), parent),
        step(ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: 'rm src/old.py && echo z = 0 > src/new.py' } }] }), child('delete old')),
        step(ollamaReply({ content: 'deleted' }), afterTool('delete old')),
        step(ollamaReply({ content: 'refused' }), parent),
      );
      await h.run('clean up');
      const [result] = parentToolResults(server.chatRequests());
      const id = /The projection is kept: (prj_[a-z2-7]{26})/.exec(result)?.[1];
      assert.ok(id, result);
      assert.match(result, /\nnot accepted: chg_[a-z2-7]{26} \(destructive: deletes src\/old\.py\): the user DENIED this publish\./);
      const ask = asks.find((q) => q.question.startsWith('Allow publish'))!;
      assert.equal(ask.question, `Allow publish: ${join(root, 'src/new.py')}, ${join(root, 'src/old.py')}`);
      assert.deepEqual(ask.detail, [`sub-agent 'cleanup' publishes ${/not accepted: (chg_[a-z2-7]{26})/.exec(result)![1]} from its projection ${id}:`, 'Deletes files: deletes src/old.py']);
      assert.deepEqual(snapshot(root), before, 'the workspace is byte-identical');
      assert.deepEqual(projectionsIn(root), [id]);

      // The retry continues in the kept projection; the gate is asked again, and allows.
      publish = 'allow';
      server.script(
        step(ollamaReply({ toolCalls: [{ name: 'agent', arguments: { tasks: [{ description: 'cleanup', prompt: 'finish the cleanup', projection: id }] } }] }), parent),
        step(ollamaReply({ content: 'nothing left' }), child('finish the cleanup')),
        step(ollamaReply({ content: 'published' }), parent),
      );
      await h.run('retry');
      const retry = server.chatRequests().find((q) => child('finish the cleanup')(q.body))!;
      assert.match(retry.body.messages[0].content, /This copy already holds the unpublished work of an earlier sub-agent on this task \(it changed src\/new\.py, src\/old\.py\)/);
      const [second] = parentToolResults(server.chatRequests()).slice(-1);
      assert.equal(second, `nothing left\n\n[isolated: published to the workspace — src/new.py, src/old.py; projection ${id} removed]`);
      assert.equal(existsSync(join(root, 'src/old.py')), false);
      assert.equal(readFileSync(join(root, 'src/new.py'), 'utf8'), 'z = 0\n');
      assert.deepEqual(projectionsIn(root), []);
    } finally {
      await code.close();
    }
  });

  it('a dependency conflict is reported: the sub-agent read a file the workspace changed meanwhile', async () => {
    const { root, code, services } = await open();
    try {
      const h = setup(fixture, services, root);
      let opened!: () => void;
      const changed = new Promise<void>((r) => (opened = r));
      void server.arrival(afterTool('use the limit')).then(() => {
        writeFileSync(join(root, 'src/config.py'), 'def limit():\n    return 20\n');
        opened();
      });
      server.script(
        step(ollamaReply({ toolCalls: [{ name: 'agent', arguments: { isolate: true, tasks: [{ description: 'limit', prompt: 'use the limit' }] } }] }), parent),
        step(ollamaReply({ toolCalls: [{ name: 'get_symbol', arguments: { name: 'limit' } }] }), child('use the limit')),
        { ...ollamaReply({ toolCalls: [{ name: 'edit', arguments: { path: 'src/app.py', old_string: 'return limit()', new_string: 'return limit() * 2' } }] }), when: afterTool('use the limit'), pauseAt: 0, resume: changed },
        step(ollamaReply({ content: 'doubled' }), afterTool('use the limit')),
        step(ollamaReply({ content: 'ok' }), parent),
      );
      await h.run('double it');
      const getSymbol = server.chatRequests().filter((q) => afterTool('use the limit')(q.body))[0].body.messages.filter((m: { role: string }) => m.role === 'tool')[0].content as string;
      assert.match(getSymbol, /^src\/config\.py:1 function limit/, 'the read came from the projection');
      const [result] = parentToolResults(server.chatRequests());
      assert.match(result, /^doubled\n\n\[isolated: NOT published; the workspace is unchanged\. The projection is kept: prj_[a-z2-7]{26} at /);
      assert.match(result, /\ndependency conflicts — files it read that the workspace changed since: src\/config\.py \(read [0-9a-f]{8}, now [0-9a-f]{8}\)\n/);
      assert.equal(readFileSync(join(root, 'src/app.py'), 'utf8'), FILES['src/app.py']);
    } finally {
      await code.close();
    }
  });

  it('isolate without the code index is a tool error, and an unknown projection to continue in is refused before anything starts', async () => {
    const root = workspace();
    const h = setup(fixture, {}, root);
    server.script(
      step(ollamaReply({ toolCalls: [{ name: 'agent', arguments: { isolate: true, tasks: [{ description: 'x', prompt: 'x' }] } }] }), parent),
      step(ollamaReply({ toolCalls: [{ name: 'agent', arguments: { tasks: [{ description: 'x', prompt: 'x', projection: 'prj_aaaaaaaaaaaaaaaaaaaaaaaaaa' }] } }] }), parent),
      step(ollamaReply({ content: 'ok' }), parent),
    );
    await h.run('try');
    const results = parentToolResults(server.chatRequests());
    assert.equal(results[0], "ERROR: agent: isolate needs rift's code index, which this session does not have (yet); run the sub-agents without isolate");
    assert.equal(results[1], "ERROR: agent: task 1: projection 'prj_aaaaaaaaaaaaaaaaaaaaaaaaaa' is not one an isolated sub-agent of this session left unpublished");
  });
});

describe('isolated sub-agents through the workspace server', () => {
  const fixture = useModelServer({ assertConsumed: true });
  const { server } = fixture;
  let root = '';
  let rift: RiftMcp;
  let code: WorkspaceCode;
  before(async () => {
    root = workspace();
    rift = await startRift(root); // the proxy starts the workspace server
    code = await WorkspaceCode.open(root, VERSION);
  });
  after(async () => {
    await code.close();
    await rift.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('a background isolated sub-agent works in a projection the server made and publishes through it', async () => {
    assert.equal(await code.remote(), true, 'the code tools use the workspace server');
    const h = fixture.harness({ cwd: root, code: { read: code.read, search: code.search, change: code.change, projections: code.projections } });
    h.agent.registry.register(agentTool(() => h.agent, mergeConfig(null, null, {}, {}, []), []));
    // The harness removes its folder after the test; the server's workspace outlives it here.
    h.cleanup = () => h.agent.tasks.killAll();
    server.script(
      step(ollamaReply({ toolCalls: [{ name: 'agent', arguments: { isolate: true, background: true, tasks: [{ description: 'remote', prompt: 'change it remotely' }] } }] }), parent),
      step(ollamaReply({ content: 'launched' }), parent),
      step(ollamaReply({ toolCalls: [{ name: 'get_symbol', arguments: { name: 'limit' } }] }), child('change it remotely')),
      step(ollamaReply({ toolCalls: [{ name: 'patch', arguments: { patch: PATCH_A } }] }), afterTool('change it remotely')),
      step(ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: 'echo remote > remote.txt' } }] }), afterTool('change it remotely')),
      step(ollamaReply({ content: 'changed remotely' }), afterTool('change it remotely')),
    );
    await h.run('go');
    const finished = await until(() => h.events.some((e) => e.event === 'task_finished'), 180_000).then(() => h.of('task_finished')[0]);
    assert.ok(finished, 'the background agent finished');
    assert.equal(finished.ok, true);
    assert.match(finished.preview, /^changed remotely\n\n\[isolated: published to the workspace — remote\.txt, src\/shared\.py; projection prj_[a-z2-7]{26} removed\]$/);
    assert.equal(readFileSync(join(root, 'src/shared.py'), 'utf8'), 'x = 2\n');
    assert.equal(readFileSync(join(root, 'remote.txt'), 'utf8'), 'remote\n');
    const listed = (await rift.call('projection_list', {})) as { projections: unknown[] };
    assert.deepEqual(listed.projections, [], 'the projection is removed');
  });
});
