import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ollamaReply } from '../../support/model-server.ts';
import { spawn } from 'node:child_process';
import { runRift, tempDir, useModelServer } from '../../support/agent-harness.ts';
import { RIFT_ARGS } from '../../support/rift-process.ts';

const rift = (args: string[], cwd: string, home: string) => runRift(args, cwd, home);

describe('headless rift -p', () => {
  const { server, workspace } = useModelServer();
  let cwd: string;
  let home: string;
  before(() => ({ cwd, home } = workspace()));

  it('runs one turn autonomously: answer on stdout, progress on stderr, trace and session written', async () => {
    server.script(
      ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'hello.txt', content: 'hi\n' } }] }),
      ollamaReply({ content: 'Created hello.txt.' }),
    );
    const trace = join(home, 'trace.jsonl');
    const r = await rift(['-p', 'create hello.txt', '--host', server.url, '--model', 'test-model', '--trace', trace], cwd, home);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'Created hello.txt.\n');
    assert.match(r.stderr, /→ write/);
    assert.match(r.stderr, /✓ write Wrote 3 bytes/);
    assert.match(r.stderr, /\[2 iterations, 100 prompt tok, 20 out tok/);
    assert.equal(readFileSync(join(cwd, 'hello.txt'), 'utf8'), 'hi\n');
    const line = JSON.parse(readFileSync(trace, 'utf8').trim());
    assert.equal(line.outcome, 'answered');
    assert.equal(line.iterations, 2);
    assert.deepEqual(line.tools, [{ name: 'write', ok: true, target: 'hello.txt' }]);
    assert.equal(line.failures.textual_recoveries, 0);
    const sessions = readdirSync(join(home, 'sessions'));
    assert.equal(sessions.length, 1);
    const saved = JSON.parse(readFileSync(join(home, 'sessions', sessions[0]), 'utf8'));
    assert.equal(saved.model, 'test-model');
    assert.equal(saved.cwd, cwd);
  });

  it('--json prints the event stream as JSON lines; --continue resumes the newest session', async () => {
    // A headless turn that used no tools is retried once at temperature 0 (a work item).
    server.script(ollamaReply({ content: 'first try' }), ollamaReply({ content: 'second answer' }));
    const r = await rift(['-p', 'and now?', '--json', '--continue', '--host', server.url, '--model', 'test-model'], cwd, home);
    assert.equal(r.code, 0, r.stderr);
    const events = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(events.map((e) => e.event), ['iteration', 'content', 'warning', 'iteration', 'content', 'done', 'context']);
    assert.equal(server.chatRequests().at(-1)!.body.options.temperature, 0);
    const sent = server.chatRequests().at(-1)!.body.messages;
    assert.ok(sent.some((m: { content: string }) => m.content === 'create hello.txt'), 'the earlier turn was resumed');
  });

  it('deny rules hold under auto-approve, and a failed model call exits non-zero', async () => {
    writeFileSync(join(home, 'config.json'), JSON.stringify({ permissions: { deny: ['Bash(rm *)'] } }));
    server.script(ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: 'rm -f keep.txt' } }] }), ollamaReply({ content: 'blocked' }), ollamaReply({ content: 'ok' }));
    writeFileSync(join(cwd, 'keep.txt'), 'k');
    const r = await rift(['-p', 'delete keep.txt', '--host', server.url, '--model', 'test-model'], cwd, home);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(existsSync(join(cwd, 'keep.txt')));
    assert.match(r.stderr, /✗ bash ERROR: this bash command was blocked by permission rule 'Bash\(rm \*\)'/);
    server.script({ status: 500, body: '{"error":"boom"}' });
    const bad = await rift(['-p', 'x', '--host', server.url, '--model', 'test-model'], cwd, home);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /warning: error: model server returned HTTP 500: boom/);
  });

  it('preflight failures are fatal with an actionable message', async () => {
    const r = await rift(['-p', 'x', '--host', server.url, '--model', 'absent:1b'], cwd, home);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /model 'absent:1b' is not available.*ollama pull absent:1b/);
  });

  it('runs trusted post-edit hooks after a write and skips an untrusted project hook with a note', async () => {
    const dir = tempDir();
    const user = tempDir('rift-home-');
    writeFileSync(join(user, 'config.json'), JSON.stringify({ hooks: { post_edit: ['echo user >> hooks.log'] } }));
    writeFileSync(join(dir, '.rift.json'), JSON.stringify({ hooks: { post_edit: ['echo trusted >> hooks.log', 'echo untrusted >> hooks.log'] } }));
    writeFileSync(join(user, 'trusted-hooks.json'), JSON.stringify(['echo trusted >> hooks.log']));
    server.script(ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'a.txt', content: 'hi\n' } }] }), ollamaReply({ content: 'Done.' }));
    const r = await rift(['-p', 'create a.txt', '--json', '--host', server.url, '--model', 'test-model'], dir, user);
    assert.equal(r.code, 0, r.stderr);
    const events = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(events.filter((e) => e.event === 'info'), [
      { event: 'info', text: 'hook ✓ echo user >> hooks.log' },
      { event: 'info', text: 'hook ✓ echo trusted >> hooks.log' },
    ]);
    assert.equal(readFileSync(join(dir, 'hooks.log'), 'utf8'), 'user\ntrusted\n');
    assert.match(r.stderr, /project post_edit hook skipped \(not trusted\): echo untrusted >> hooks\.log/);
    rmSync(dir, { recursive: true, force: true });
    rmSync(user, { recursive: true, force: true });
  });

  it('uses the workspace server when one runs, the engine in-process otherwise, with the same answers', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'core.py'), 'def beacon():\n    return 1\n');
    const turn = async () => {
      server.script(ollamaReply({ toolCalls: [{ name: 'get_symbol', arguments: { name: 'beacon' } }] }), ollamaReply({ content: 'found it' }));
      const r = await rift(['-p', 'where is beacon?', '--json', '--host', server.url, '--model', 'test-model'], dir, home);
      assert.equal(r.code, 0, r.stderr);
      const result = r.stdout.trim().split('\n').map((l) => JSON.parse(l)).find((e) => e.event === 'tool_result');
      return result.preview as string;
    };
    const local = await turn();
    assert.match(local, /^core\.py:1 function beacon \(rift:\/\/symbol\/python\/core\.py\/beacon\)/);
    const srv = spawn(process.execPath, [...RIFT_ARGS, 'server', '--idle-timeout', '60s'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    srv.stderr.on('data', (d: Buffer) => (log += d));
    try {
      const deadline = Date.now() + 30_000;
      while (!log.includes('serving on') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      assert.equal(await turn(), local);
      assert.match(log, /client connected client=rift-agent/);
    } finally {
      srv.kill('SIGTERM');
      await new Promise((r) => srv.on('close', r));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
