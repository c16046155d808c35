import { describe, it, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ollamaReply } from '../support/model-server.ts';
import { useModelServer } from '../support/agent-harness.ts';
import { loadAgentConfig } from '../../src/agent/base/config.ts';
import { discoverSkills } from '../../src/agent/extensions/skills.ts';
import { Session } from '../../src/agent/session/session.ts';
import { Controller, INIT_PROMPT } from '../../src/tui/controller.ts';
import { Questions } from '../../src/tui/questions.ts';
import type { KeyEvent } from '../../src/tui/keys.ts';
import type { Plugin } from '../../src/agent/extensions/plugins.ts';
import { trustRequests, type TrustRequest } from '../../src/agent/extensions/project-trust.ts';
import { TrustStore } from '../../src/agent/policy/trust.ts';

// The controller without a terminal: keys in, transcript out, against a real agent on the
// scripted model server. The tmux tests cover the same paths through the real program.

describe('TUI controller: slash commands', () => {
  const { server, harness, workspace } = useModelServer({ clearBeforeEach: true });
  let cwd: string;
  let home: string;
  beforeEach(() => ({ cwd, home } = workspace('rift-tui-ctl-')));

  const setup = (o: { skills?: boolean; requests?: TrustRequest[]; trusted?: TrustRequest[]; approve?: boolean } = {}) => {
    const env = { RIFT_HOME: home };
    if (o.skills) {
      mkdirSync(join(cwd, '.rift', 'skills', 'greet'), { recursive: true });
      writeFileSync(join(cwd, '.rift', 'skills', 'greet', 'SKILL.md'), '---\ndescription: say hello\n---\nSay hello politely.\n');
    }
    const h = harness({ cwd, approve: o.approve ?? true, sessionPath: Session.reserve(Session.dir(env)) });
    const questions = new Questions();
    let quit = false;
    const c = new Controller({
      engine: {
        agent: h.agent,
        approval: h.approval,
        config: loadAgentConfig(cwd, { host: server.url, model: 'test-model' }, env).config,
        skills: discoverSkills([join(cwd, '.rift', 'skills')]),
        trustRequests: o.requests ?? [],
        // What AgentAssembly.trust reports; the assembly's own tests cover what trusting does.
        trust: async (r) => {
          o.trusted?.push(r);
          return { info: `trusted ${r.subject.kind}`, persistError: 'disk full' };
        },
      },
      questions,
      cwd,
      version: '0.0.0',
      unusable: null,
      history: [],
      requestFrame: () => {},
      quit: () => (quit = true),
      env,
      historyFile: join(home, 'input-history.json'),
    });
    const key = (name: string) => c.key({ kind: 'key', name } as KeyEvent);
    const type = (text: string) => c.key({ kind: 'text', text });
    const submit = async (text: string) => {
      type(text);
      key('enter');
      const deadline = Date.now() + 20_000;
      while (c.running) {
        assert.ok(Date.now() < deadline, 'the turn finished');
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    const shown = () => c.transcript.lines.map((l) => l.text).join('\n');
    return { c, h, questions, key, type, submit, shown, isQuit: () => quit };
  };

  it('/help, /tools, /skills, /skill:<name>, unknown commands and unknown skills', async () => {
    const { submit, shown } = setup({ skills: true });
    await submit('/help');
    assert.match(shown(), /\/model \[name\] +switch the model live/);
    assert.match(shown(), /Ctrl-C twice \(or \/exit\) quits/);
    await submit('/tools');
    assert.match(shown(), /^ {2}read — /m);
    assert.match(shown(), /^ {2}bash — /m);
    await submit('/skills');
    assert.match(shown(), /greet — say hello/);
    server.script(ollamaReply({ content: 'Hello!' }));
    await submit('/skill:greet the team');
    const sent = server.chatRequests().at(-1)!.body.messages.at(-1).content as string;
    assert.equal(sent, "Follow this skill's instructions.\n\n--- SKILL: greet ---\nSay hello politely.\n--- END SKILL ---\n\nTask: the team", 'expanded exactly like serve');
    await submit('/skill:nope');
    assert.match(shown(), /! unknown skill 'nope'/);
    await submit('/frobnicate');
    assert.match(shown(), /unknown command '\/frobnicate' — \/help lists the commands/);
  });

  it('/approve and /yolo flip the shared approval switch; /plan shows the plan; the prompt history persists', async () => {
    const { c, h, submit, shown, type, key } = setup();
    await submit('/yolo');
    assert.equal(h.approval.approve, false);
    assert.match(shown(), /auto-approve on \(yolo\)/);
    await submit('/approve');
    assert.equal(h.approval.approve, true);
    await submit('/approve off');
    assert.equal(h.approval.approve, false);
    await submit('/approve maybe');
    assert.match(shown(), /\/approve takes 'on' or 'off'/);
    await submit('/plan');
    assert.match(shown(), /no plan yet/);
    h.agent.plan.push({ text: 'read the code', done: true }, { text: 'fix it', done: false });
    await submit('/plan');
    assert.match(shown(), /☑ 1\. read the code\n {2}☐ 2\. fix it/);
    assert.deepEqual(JSON.parse(readFileSync(join(home, 'input-history.json'), 'utf8')).slice(-1), ['/plan']);
    type('draft');
    key('up');
    assert.equal(c.editor.text, '/plan');
  });

  it('/clear starts a new session file; /sessions lists; /resume <n> brings a conversation back', async () => {
    const { c, h, submit, shown } = setup();
    server.script(ollamaReply({ content: 'First answer.' }));
    await submit('first question');
    const firstPath = h.agent.sessionPath!;
    assert.equal(JSON.parse(readFileSync(firstPath, 'utf8')).messages.at(-1).content, 'First answer.');
    await submit('/clear');
    assert.notEqual(h.agent.sessionPath, firstPath);
    assert.equal(h.agent.messages.length, 1, 'only the system prompt is left');
    assert.match(shown(), /new conversation · session .* · the previous one: \/resume /);
    await submit('/sessions');
    assert.match(shown(), /1\. first question · 1 prompt ·/);
    await submit('/resume 1');
    assert.equal(h.agent.sessionPath, firstPath);
    assert.ok(h.agent.messages.some((m) => m.role === 'assistant' && m.content === 'First answer.'));
    assert.match(shown(), /resumed .* \(1 prompts\)\n\n› first question\nFirst answer\./);
    await submit('/resume 9');
    assert.match(shown(), /no session 9 — \/sessions lists 1/);
    await submit('/resume');
    assert.ok(c.frame({ rows: 24, cols: 80 }).rows.some((r) => r.map((s) => s.text).join('').includes('first question')), 'no argument opens a picker');
  });

  it('/compact summarizes the earlier conversation on demand; with nothing earlier it says so', async () => {
    const { h, submit, shown } = setup();
    await submit('/compact');
    assert.match(shown(), /nothing to compact yet/);
    server.script(ollamaReply({ content: 'one' }), ollamaReply({ content: 'two' }), { body: JSON.stringify({ model: 'm', message: { role: 'assistant', content: '## Goal\nsummary text' }, done: true, prompt_eval_count: 5, eval_count: 5 }) });
    await submit('question one');
    await submit('question two');
    await submit('/compact');
    assert.match(shown(), /compacting: summarizing earlier conversation…\ncompacted: history summarized/);
    assert.ok(h.agent.messages.some((m) => m.content.startsWith('[Earlier conversation was compacted. Summary:]\n## Goal')));
    assert.equal(server.chatRequests().at(-1)!.body.stream, false);
  });

  it('/init hands the model the AGENTS.md brief; a prompt or /model mid-turn is refused with the input kept', async () => {
    const { c, submit, type, key, shown } = setup();
    server.script(ollamaReply({ content: 'I would write AGENTS.md now.' }));
    await submit('/init');
    assert.match(shown(), /\/init: the model explores the repository with its tools and writes AGENTS.md/);
    assert.ok(server.chatRequests().at(-1)!.body.messages.some((m: { content: string }) => m.content === INIT_PROMPT));
    server.script({ chunks: [JSON.stringify({ model: 'm', message: { role: 'assistant', content: 'slow' }, done: false }) + '\n'], hang: true });
    type('long one');
    key('enter');
    const deadline = Date.now() + 10_000;
    while (!c.transcript.live().partial.includes('slow')) {
      assert.ok(Date.now() < deadline);
      await new Promise((r) => setTimeout(r, 10));
    }
    type('/model other');
    key('enter');
    assert.match(shown(), /\/model waits for the turn — wait for it to finish or press Esc to cancel it/);
    assert.equal(c.editor.text, '/model other', 'the refused input is kept');
    c.editor.clear();
    type('/help');
    key('enter');
    assert.match(shown(), /commands:/, 'read-only commands run mid-turn');
    key('escape');
    while (c.running) await new Promise((r) => setTimeout(r, 10));
    assert.match(shown(), /! turn cancelled/);
  });

  it('/export writes Markdown inside the workspace and refuses paths that leave it', async () => {
    const { submit, shown } = setup();
    await submit('/export notes/out.md');
    const md = readFileSync(join(cwd, 'notes', 'out.md'), 'utf8');
    assert.match(md, /^# rift transcript — /);
    assert.match(md, /\*\*›\*\* \/export notes\/out\.md/);
    for (const bad of ['../escape.md', '/tmp/abs.md', '.rift/x.md']) {
      await submit(`/export ${bad}`);
      assert.match(shown(), new RegExp(`cannot export to ${bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: `));
    }
    assert.equal(existsSync(join(cwd, '..', 'escape.md')), false);
  });

  it('/exit and Ctrl-C twice quit after the turn settles; Ctrl-C once clears the input', async () => {
    const { c, type, key, isQuit } = setup();
    type('half typed');
    key('ctrl-c');
    assert.equal(c.editor.text, '');
    assert.equal(isQuit(), false);
    key('ctrl-c');
    const deadline = Date.now() + 5000;
    while (!isQuit()) {
      assert.ok(Date.now() < deadline);
      await new Promise((r) => setTimeout(r, 10));
    }
  });

  it('offers what the repository waits to be trusted with at start (trust / skip), in order; with approval off it only notes it', async () => {
    const plugin = (name: string): Plugin => ({
      name, scope: 'project', key: `plugin:${name}:{}`, commands: [], hooks: [],
      tools: [{ name: `${name}_run`, description: 'run it', command: 'make it', parameters: { type: 'object' } }],
    });
    const store = new TrustStore(join(home, 'trusted.json'));
    const requests = trustRequests({ projectConfig: null, hooks: [], engines: [], plugins: [plugin('lint'), plugin('deploy')], mcp: [], trust: store });
    const trusted: TrustRequest[] = [];
    const { c, questions, key, shown } = setup({ requests, trusted });
    c.start();
    const q = questions.head;
    assert.equal(q?.kind, 'ask');
    assert.deepEqual(q?.kind === 'ask' && q.req, {
      question: "Project plugin 'lint' declares 1 tool(s) — each runs a command from this repo when the model calls it. Trust this manifest on this machine?",
      detail: ['lint_run: run it — `make it`'],
      choices: ['trust', 'skip'],
    });
    key('enter');
    assert.equal(questions.head?.kind === 'ask' && questions.head.req.question.includes("'deploy'"), true, 'the next request waits its turn');
    key('down');
    key('enter');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(trusted, [requests[0]], 'only the trusted one is applied');
    assert.match(shown(), /trusted plugin/);
    assert.match(shown(), /! could not persist plugin approval: disk full/);
    assert.match(shown(), /skipped: Project plugin 'deploy' declares 1 tool\(s\) — it stays off this session/);
    const off = setup({ requests: requests.slice(0, 1), approve: false });
    off.c.start();
    assert.equal(off.questions.size, 0);
    assert.match(off.shown(), /project plugin 'lint' left untrusted — its 1 tool\(s\) stay unregistered while auto-approve is on/);
  });
});
