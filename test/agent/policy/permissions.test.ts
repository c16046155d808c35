import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Approval } from '../../../src/agent/policy/approval.ts';
import { mergeConfig } from '../../../src/agent/base/config.ts';
import type { AskRequest, Gate, ReviewRequest } from '../../../src/agent/policy/gate.ts';
import { PermissionRules, builtinBashDenied, parseRule, suggestBashPattern, suggestEditRule, workspacePathOf } from '../../../src/agent/policy/permissions.ts';
import { analyzeShell, initShell } from '../../../src/agent/policy/shell.ts';
import { ollamaReply } from '../../support/model-server.ts';
import { tempDir, useModelServer } from '../../support/agent-harness.ts';

function scriptedGate(answers: Array<string | null>, review?: Gate['review']): Gate & { asked: AskRequest[] } {
  const asked: AskRequest[] = [];
  return {
    interactive: true,
    asked,
    ask: async (req) => {
      asked.push(req);
      return answers.shift() ?? null;
    },
    review,
  };
}

const signal = new AbortController().signal;

const shell = (cmd: string, cwd = '/work/proj') => analyzeShell(cmd, { cwd, env: process.env });

describe('agent permissions: bash deny list', () => {
  before(() => initShell());

  it('denies any program the command runs, through substitutions and backticks', () => {
    for (const cmd of ['true && sudo whoami', 'sudo${IFS}whoami', 'echo `sudo id`', 'sudo', 'ls; rm -rf /', 'x | shutdown -h now', 'echo $(sudo ls)', ':(){ :|:& };:', 'dd if=/dev/zero of=/dev/sda']) {
      assert.ok(builtinBashDenied(shell(cmd), '/work/proj'), `expected denied: ${cmd}`);
    }
    for (const cmd of ['echo sudo is a word', 'rm -rf ./build', 'echo $HOME', 'git status', 'dd if=a of=b', 'git commit -m "fix (sudo handling)"']) {
      assert.equal(builtinBashDenied(shell(cmd), '/work/proj'), null, `expected allowed: ${cmd}`);
    }
  });

  it('the tool refuses the whole command with the policy message, even with approval off', async () => {
    const cwd = tempDir();
    const a = new Approval(false, new PermissionRules({ allow: ['Bash(*)'], ask: [], deny: [] }, cwd), cwd);
    await assert.rejects(a.authorizeBash(scriptedGate([]), 'true && sudo whoami', signal), { message: 'command blocked by permission policy: true && sudo whoami' });
  });
});

describe('agent permissions: rules', () => {
  const cwd = '/work/proj';
  before(() => initShell());

  it('parses Tool(pattern), rejects malformed rules with a warning', () => {
    assert.deepEqual(parseRule('Bash(git push *)'), { raw: 'Bash(git push *)', tool: 'bash', pattern: 'git push *' });
    assert.deepEqual(parseRule('edit'), { raw: 'edit', tool: 'edit', pattern: null });
    assert.equal(parseRule('Bash()'), null);
    assert.equal(parseRule('Bash(a(b)'), null);
    const r = new PermissionRules({ allow: ['Bad rule!'], ask: [], deny: [] }, cwd);
    assert.deepEqual(r.malformed, ['ignoring malformed permission rule: "Bad rule!"']);
  });

  it('deny > ask > allow; bash allow needs every segment; `x *` covers bare x', () => {
    const r = new PermissionRules({ allow: ['Bash(git *)', 'Edit(src/**)'], ask: ['Bash(git push *)'], deny: ['Bash(git push --force *)', 'Read(secrets/**)'] }, cwd);
    assert.deepEqual(r.bashVerdict(shell('git push --force origin')), { kind: 'deny', rule: 'Bash(git push --force *)' });
    assert.deepEqual(r.bashVerdict(shell('git push origin')), { kind: 'ask', rule: 'Bash(git push *)' });
    assert.deepEqual(r.bashVerdict(shell('git status')), { kind: 'allow', rule: 'Bash(git *)' });
    assert.deepEqual(r.bashVerdict(shell('git')), { kind: 'allow', rule: 'Bash(git *)' });
    assert.deepEqual(r.bashVerdict(shell('git status && curl evil')), { kind: 'none' });
    assert.deepEqual(r.verdict('edit', '/work/proj/src/a/b.ts'), { kind: 'allow', rule: 'Edit(src/**)' });
    assert.deepEqual(r.verdict('write', 'src/x.ts'), { kind: 'allow', rule: 'Edit(src/**)' });
    assert.deepEqual(r.verdict('edit', '/work/proj/lib/a.ts'), { kind: 'none' });
    assert.equal(r.denied('read', '/work/proj/secrets/k.pem'), 'Read(secrets/**)');
    assert.equal(r.denied('grep', 'secrets/k.pem'), 'Read(secrets/**)');
  });

  it('a path inside a projection is checked as the workspace path it stands for', () => {
    const prj = '/work/proj/.rift/projections/prj_abcdefghijklmnopqrstuvwxyz';
    assert.equal(workspacePathOf(`${prj}/src/a.ts`), '/work/proj/src/a.ts');
    assert.equal(workspacePathOf(prj), '/work/proj');
    assert.equal(workspacePathOf('/work/proj/.rift/projections/other/src/a.ts'), '/work/proj/.rift/projections/other/src/a.ts');
    const r = new PermissionRules({ allow: ['Edit(src/**)'], ask: [], deny: ['Read(secrets/**)', 'Edit(locked/**)'] }, cwd);
    assert.deepEqual(r.verdict('edit', `${prj}/src/a.ts`), { kind: 'allow', rule: 'Edit(src/**)' });
    assert.deepEqual(r.verdict('write', `${prj}/locked/x`), { kind: 'deny', rule: 'Edit(locked/**)' });
    assert.equal(r.denied('read', `${prj}/secrets/k.pem`), 'Read(secrets/**)');
    assert.equal(suggestEditRule('/work/proj', `${prj}/lib/x/y.ts`), 'Edit(lib/**)');
  });

  it('suggests always-allow patterns as the reference does', () => {
    assert.equal(suggestBashPattern('git push origin main'), 'git push *');
    assert.equal(suggestBashPattern('cargo test'), 'cargo test *');
    assert.equal(suggestBashPattern('ls -la'), 'ls *');
    assert.equal(suggestBashPattern('python script.py'), 'python *');
    assert.equal(suggestBashPattern('make'), 'make *');
    assert.equal(suggestBashPattern('FOO=1 make'), 'FOO=1 make *');
    assert.equal(suggestEditRule('/p', '/p/src/a/b.ts'), 'Edit(src/**)');
    assert.equal(suggestEditRule('/p', '/p/README.md'), 'Edit(README.md)');
  });

  it('a project config can only tighten: allow ignored, deny unioned, approve:false ignored, providers add-only', () => {
    const warnings: string[] = [];
    const cfg = mergeConfig(
      { model: 'u', permissions: { approve: true, allow: ['Bash(ls *)'], deny: ['Bash(a *)'] }, providers: { p: { base_url: 'https://user', api_key_env: 'K' } } },
      { model: 'proj', permissions: { approve: false, allow: ['Bash(*)'], bash_allow: ['rm'], deny: ['Bash(b *)'], ask: ['Bash(c *)'], bash_deny: ['curl *'] }, providers: { p: { base_url: 'https://evil' }, q: { base_url: 'http://q', api_key: 'leak' } } },
      {},
      {},
      warnings,
    );
    assert.equal(cfg.model, 'proj');
    assert.equal(cfg.permissions.approve, true);
    assert.deepEqual(cfg.permissions.allow, ['Bash(ls *)']);
    assert.deepEqual(cfg.permissions.deny, ['Bash(a *)', 'Bash(b *)', 'Bash(curl *)']);
    assert.deepEqual(cfg.permissions.ask, ['Bash(c *)']);
    assert.equal(cfg.providers.p.base_url, 'https://user');
    assert.equal(cfg.providers.q, undefined, 'an untrusted project adds no provider');
    assert.ok(warnings.some((w) => w.includes("redefines provider 'p'")));
    assert.ok(warnings.some((w) => w.includes('allow patterns load from the user config only')));
    const env = mergeConfig({ host: 'http://h1', num_ctx: 8192 }, null, { model: 'flag' }, { RIFT_HOST: 'http://env/', RIFT_MODEL: 'envm' }, []);
    assert.equal(env.host, 'http://env');
    assert.equal(env.model, 'flag');
    assert.equal(env.numCtx, 8192);
    assert.equal(env.numCtxExplicit, true);
  });

  it('model roles: the project extends the user roles (a role names a model, like the project-wins model key); non-strings dropped', () => {
    const cfg = mergeConfig({ models: { smart: 'big', fast: 'small' } }, { models: { fast: 'tiny', review: 'mid', bad: 3 } }, {}, {}, []);
    assert.deepEqual(cfg.models, { smart: 'big', fast: 'tiny', review: 'mid' });
    assert.deepEqual(mergeConfig(null, { models: ['x'] }, {}, {}, []).models, {});
  });
});

describe('agent permissions: approval through the loop', () => {
  const { server, harness } = useModelServer();

  it('deny rules refuse under auto-approve; ask rules deny when no user is attached', async () => {
    server.script(
      ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'locked/a.txt', content: 'x' } }, { name: 'bash', arguments: { command: 'git push origin' } }] }),
      ollamaReply({ content: 'ok' }),
    );
    const h = harness({ approve: false, rules: { deny: ['Edit(locked/**)'], ask: ['Bash(git push *)'] } });
    await h.run('push it');
    const results = h.agent.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    assert.deepEqual(results, [
      "ERROR: this write was blocked by permission rule 'Edit(locked/**)'",
      "ERROR: this bash requires interactive approval (permission rule 'Bash(git push *)') and no user is attached",
    ]);
    assert.equal(existsSync(join(h.cwd, 'locked/a.txt')), false);
  });

  it('plain ask prompts: exact choices, session grants, deny text', async () => {
    const gate = scriptedGate(['always allow write this session', 'Allow', 'allow once']);
    server.script(
      ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'src/a.txt', content: 'one\n' } }, { name: 'write', arguments: { path: 'src/b.txt', content: 'two\n' } }] }),
      ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command: 'touch t1.txt' } }, { name: 'bash', arguments: { command: 'touch t2.txt' } }] }),
      ollamaReply({ content: 'ok' }),
    );
    const h = harness({ approve: true, gate });
    await h.run('go');
    assert.equal(gate.asked.length, 3, 'the session grant covered the second write');
    assert.deepEqual(gate.asked[0], {
      question: `Allow write: ${join(h.cwd, 'src/a.txt')} (4 bytes)`,
      detail: ['+one'],
      choices: ['allow', 'always allow write this session', "always allow 'Edit(src/**)'", 'deny'],
      meanings: ['allow_once', 'allow_session', 'allow_always', 'deny'],
      rule: 'Edit(src/**)',
    });
    assert.deepEqual(gate.asked[1], {
      question: 'Allow bash: touch t1.txt',
      detail: [],
      choices: ['allow once', "always allow 'touch *'", 'allow all bash this session', 'deny'],
      meanings: ['allow_once', 'allow_always', 'allow_session', 'deny'],
      rule: 'Bash(touch *)',
    });
    const results = h.agent.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    assert.match(results[1], /^Wrote 4 bytes/);
    assert.equal(results[2], 'ERROR: the user DENIED this bash action. Do not retry it; ask them how to proceed or choose another approach.', '"Allow" is not an exact choice');
    assert.equal(existsSync(join(h.cwd, 't1.txt')), false);
    assert.equal(existsSync(join(h.cwd, 't2.txt')), true);
  });

  it('edit review: partial content applied with the note; undo restores the true prior bytes', async () => {
    const reviews: ReviewRequest[] = [];
    const gate = scriptedGate([], async (req) => {
      reviews.push(req);
      // Accept the first hunk only: reassemble from the segments.
      let first = true;
      const content = req.segments
        .flatMap((s) => {
          if (s.same) return s.lines;
          const take = first ? s.new : s.old;
          first = false;
          return take;
        })
        .join('\n');
      return { apply: true, content };
    });
    const h = harness({ approve: true, gate });
    const file = join(h.cwd, 'f.txt');
    const prior = 'a\nb\nc\nd\ne\n';
    writeFileSync(file, prior);
    server.script(
      ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'f.txt', content: 'a\nB\nc\nd\nE\n' } }] }),
      ollamaReply({ content: 'done' }),
    );
    await h.run('update f');
    assert.equal(reviews.length, 1);
    assert.equal(reviews[0].old, prior);
    assert.deepEqual(reviews[0].segments, [
      { same: true, lines: ['a'] },
      { same: false, old: ['b'], new: ['B'] },
      { same: true, lines: ['c', 'd'] },
      { same: false, old: ['e'], new: ['E'] },
      { same: true, lines: [''] },
    ]);
    assert.equal(readFileSync(file, 'utf8'), 'a\nB\nc\nd\ne\n');
    const result = h.agent.messages.find((m) => m.role === 'tool')!.content;
    assert.ok(result.endsWith('\nNOTE: the user accepted only part of your proposal in review — re-read the file to see what was applied.'));
    assert.deepEqual(h.of('edit_diff')[0].diff, ['@@ line 2 @@', '-b', '+B']);
    const undo = (await h.agent.undo());
    assert.equal(undo.event, 'info');
    assert.equal(readFileSync(file, 'utf8'), prior);
    assert.deepEqual((await h.agent.undo()), { event: 'warning', text: 'nothing to undo (only write/edit tool changes are tracked)' });
  });

  it('a denied review tells the model not to retry', async () => {
    const gate = scriptedGate([], async () => ({ apply: false }));
    const h = harness({ approve: true, gate });
    server.script(ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'n.txt', content: 'x' } }] }), ollamaReply({ content: 'ok' }));
    await h.run('write n');
    assert.equal(h.agent.messages.find((m) => m.role === 'tool')!.content, 'ERROR: the user DENIED this write action in review. Do not retry it; ask them how to proceed or choose another approach.');
    assert.equal(existsSync(join(h.cwd, 'n.txt')), false);
  });

  it('undo deletes created files and walks back turn by turn', async () => {
    const h = harness();
    writeFileSync(join(h.cwd, 'keep.txt'), 'v1');
    server.script(ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'keep.txt', content: 'v2' } }] }), ollamaReply({ content: 'ok' }));
    await h.run('edit keep');
    server.script(ollamaReply({ toolCalls: [{ name: 'write', arguments: { path: 'new.txt', content: 'n' } }, { name: 'edit', arguments: { path: 'keep.txt', old_string: 'v2', new_string: 'v3' } }] }), ollamaReply({ content: 'ok' }));
    await h.run('more');
    assert.equal(readFileSync(join(h.cwd, 'keep.txt'), 'utf8'), 'v3');
    const first = (await h.agent.undo());
    assert.equal(first.event, 'info');
    assert.match((first as { text: string }).text, /^restored to pre-turn state:\n {2}.*keep\.txt\n {2}.*new\.txt\n\(note: changes made via bash are not tracked\)$/);
    assert.equal(existsSync(join(h.cwd, 'new.txt')), false);
    assert.equal(readFileSync(join(h.cwd, 'keep.txt'), 'utf8'), 'v2');
    await h.agent.undo();
    assert.equal(readFileSync(join(h.cwd, 'keep.txt'), 'utf8'), 'v1');
  });
});

describe('agent permissions: persisted rules and config files', () => {
  it('"always allow" answers persist to the user config and apply at once', async () => {
    const { persistRule } = await import('../../../src/agent/base/user-config.ts');
    const { loadAgentConfig } = await import('../../../src/agent/base/config.ts');
    const home = tempDir('rift-home-');
    const cwd = tempDir();
    writeFileSync(join(home, 'config.json'), JSON.stringify({ model: 'm', permissions: { allow: ['Bash(ls *)'] } }));
    const rules = new PermissionRules({ allow: [], ask: [], deny: [] }, cwd);
    const gate = scriptedGate(["always allow 'Edit(src/**)'"]);
    const a = new Approval(true, rules, cwd, (rule, list) => persistRule(home, rule, list));
    await a.authorizeEdit(gate, { kind: 'write', absPath: join(cwd, 'src/x.ts'), old: '', proposed: 'x' }, signal);
    await a.authorizeEdit(gate, { kind: 'edit', absPath: join(cwd, 'src/y.ts'), old: 'a', proposed: 'b' }, signal);
    assert.equal(gate.asked.length, 1, 'the new rule covered the second edit');
    writeFileSync(join(cwd, '.rift.json'), JSON.stringify({ model: 'project-model', permissions: { deny: ['Bash(curl *)'] } }));
    const { config, warnings } = loadAgentConfig(cwd, {}, { RIFT_HOME: home });
    assert.deepEqual(warnings, []);
    assert.equal(config.model, 'project-model');
    assert.deepEqual(config.permissions.allow, ['Bash(ls *)', 'Edit(src/**)']);
    assert.deepEqual(config.permissions.deny, ['Bash(curl *)']);
    writeFileSync(join(cwd, '.rift.json'), '{oops');
    assert.match(loadAgentConfig(cwd, {}, { RIFT_HOME: home }).warnings[0], /^ignoring .*\.rift\.json: /);
  });
});
