import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { Approval } from '../../../src/agent/policy/approval.ts';
import type { AskRequest, Gate } from '../../../src/agent/policy/gate.ts';
import { PermissionRules } from '../../../src/agent/policy/permissions.ts';
import { ollamaReply } from '../../support/model-server.ts';
import { tempDir, useModelServer } from '../../support/agent-harness.ts';
import { BYPASS_ATTEMPTS, LOOKALIKES, ORDINARY_ALLOW, ORDINARY_COMMANDS } from './bypass-corpus.ts';

// The bash boundary through the real agent loop: every disguised run of a denied program is
// refused or asked (and none runs), while everyday commands run without a prompt under allow
// rules. Each attempt would create its own marker file if it ran; the control test shows that
// a plain `sh -c` does create it, so an absent marker is proof the agent did not run it.

const RUNS_AS_CALLER = `#!/bin/sh
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; break ;;
    -u|-g|-C|-D) shift 2 ;;
    -*) shift ;;
    *=*) export "$1"; shift ;;
    *) break ;;
  esac
done
exec "$@"
`;

function fakeBin(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const put = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    chmodSync(join(dir, name), 0o755);
  };
  for (const name of ['sudo', 'doas', 'pkexec', LOOKALIKES.cyrillicSudo]) put(name, RUNS_AS_CALLER);
  put('su', '#!/bin/sh\n[ "$1" = -c ] && exec sh -c "$2"\nexec sh\n');
  for (const name of [LOOKALIKES.cyrillicTouch, LOOKALIKES.fullwidthTouch, LOOKALIKES.zeroWidthTouch, LOOKALIKES.nbspTouch]) put(name, '#!/bin/sh\nexec touch "$@"\n');
}

const git = (cwd: string, ...args: string[]) => {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
};

/** A small project: a git repository with scripts, sources and links into `bin`. */
function fixture(cwd: string, bin: string): void {
  writeFileSync(join(cwd, 'f.txt'), 'one\n');
  writeFileSync(join(cwd, 'README.md'), '# hello\nhello world\nhello world\n');
  const script = (s: string) => `node -e "console.log('${s} ok')"`;
  writeFileSync(join(cwd, 'package.json'), JSON.stringify({ name: 'fx', version: '1.0.0', scripts: { test: script('tests'), build: script('build'), lint: script('lint') } }, null, 2));
  mkdirSync(join(cwd, 'src'));
  writeFileSync(join(cwd, 'src/a.ts'), 'import x from "y";\nexport function a() {}\nexport const b = 1;\n');
  writeFileSync(join(cwd, 'src/b.ts'), 'export function b() {}\n');
  writeFileSync(join(cwd, 'src/main.js'), 'console.log("main");\n');
  writeFileSync(join(cwd, 'tool.py'), 'print("tool")\n');
  writeFileSync(join(cwd, 'Makefile'), 'build:\n\t@echo built\n');
  symlinkSync(join(bin, 'sudo'), join(cwd, 'rootme'));
  symlinkSync('/usr/bin/touch', join(cwd, 'linktouch'));
  git(cwd, 'init', '-q');
  git(cwd, '-c', 'user.name=t', '-c', 'user.email=t@t', 'add', '-A');
  git(cwd, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'init');
}

const marker = (i: number) => `pwned-${i}`;
const markers = (cwd: string) => readdirSync(cwd).filter((n) => n.startsWith('pwned-'));

describe('bash boundary: the bypass corpus', () => {
  const { server, harness } = useModelServer({ clearBeforeEach: true });
  const bin = join(tempDir('rift-bin-'), 'fakebin');
  const savedPath = process.env.PATH;
  before(() => {
    fakeBin(bin);
    process.env.PATH = `${bin}${delimiter}${savedPath}`;
  });
  after(() => {
    process.env.PATH = savedPath;
    rmSync(join(bin, '..'), { recursive: true, force: true });
  });

  const attempts = BYPASS_ATTEMPTS.map((a, i) => a(marker(i), bin));

  it(`has at least 150 attempts, all distinct`, () => {
    assert.ok(attempts.length >= 150, `${attempts.length} attempts`);
    assert.equal(new Set(attempts).size, attempts.length);
  });

  it('control: run by a plain sh -c, every attempt creates its marker', () => {
    const cwd = tempDir();
    fixture(cwd, bin);
    const missing: string[] = [];
    attempts.forEach((cmd, i) => {
      spawnSync('sh', ['-c', cmd], { cwd, stdio: 'ignore', timeout: 20_000 });
      if (!existsSync(join(cwd, marker(i)))) missing.push(`#${i}: ${cmd}`);
    });
    rmSync(cwd, { recursive: true, force: true });
    assert.deepEqual(missing, []);
  });

  /** Runs every attempt through the agent loop, each followed by a harmless call so the stuck guard never ends the turn. */
  async function runCorpus(approve: boolean, gate: Gate | undefined): Promise<{ cwd: string; results: Array<{ ok: boolean; preview: string }> }> {
    const cwd = tempDir();
    fixture(cwd, bin);
    const rules = new PermissionRules({ allow: [], ask: [], deny: ['Bash(touch *)', 'Bash(curl *)'] }, cwd);
    const batch = 10;
    for (let at = 0; at < attempts.length; at += batch) {
      const calls = attempts.slice(at, at + batch).flatMap((command, k) => [
        { name: 'bash', arguments: { command } },
        { name: 'plan', arguments: { set: [`checked ${at + k}`] } },
      ]);
      server.script(ollamaReply({ toolCalls: calls }));
    }
    server.script(ollamaReply({ content: 'done' }));
    const h = harness({ cwd, approval: new Approval(approve, rules, cwd), gate, maxIterations: 100 });
    const r = await h.run('try them all');
    assert.equal(r.outcome, 'answered');
    const results = h.events.flatMap((e) => (e.event === 'tool_result' && e.name === 'bash' ? [{ ok: e.ok, preview: e.preview }] : []));
    return { cwd, results };
  }

  it('approval off: every attempt is refused and none runs', async () => {
    const { cwd, results } = await runCorpus(false, undefined);
    assert.equal(results.length, attempts.length);
    const ran = results.flatMap((r, i) => (r.ok || !/^ERROR: (command blocked by permission policy|this bash command (was blocked by permission rule|cannot be checked before it runs))/.test(r.preview) ? [`#${i} ${attempts[i]} → ${r.preview}`] : []));
    assert.deepEqual(ran, []);
    assert.deepEqual(markers(cwd), []);
  });

  it('approval on: every attempt is refused outright or asked (and denied); none runs', async () => {
    const asked: AskRequest[] = [];
    const gate: Gate = {
      interactive: true,
      ask: async (req) => {
        asked.push(req);
        return 'deny';
      },
    };
    const { cwd, results } = await runCorpus(true, gate);
    assert.equal(results.length, attempts.length);
    assert.ok(results.every((r) => !r.ok));
    const refused = results.filter((r) => /^ERROR: (command blocked by permission policy|this bash command was blocked by permission rule)/.test(r.preview)).length;
    const denied = results.filter((r) => r.preview.startsWith('ERROR: the user DENIED this bash action')).length;
    assert.equal(refused + denied, attempts.length);
    assert.equal(asked.length, denied, 'each attempt not refused outright was asked about');
    // What cannot be checked is asked once, never with a session-wide grant on offer.
    for (const q of asked) assert.deepEqual(q.choices, ['allow once', 'deny'], q.question);
    assert.deepEqual(markers(cwd), []);
  });
});

describe('bash boundary: ordinary commands', () => {
  const { server, harness } = useModelServer({ clearBeforeEach: true });

  it('has 100 commands', () => {
    assert.ok(ORDINARY_COMMANDS.length >= 100, `${ORDINARY_COMMANDS.length} commands`);
  });

  it('run without a prompt under allow rules naming their programs, approval on', async () => {
    const cwd = tempDir();
    fixture(cwd, cwd);
    const asked: string[] = [];
    const gate: Gate = {
      interactive: true,
      ask: async (req) => {
        asked.push(req.question);
        return 'deny';
      },
    };
    const batch = 10;
    for (let at = 0; at < ORDINARY_COMMANDS.length; at += batch) {
      server.script(ollamaReply({ toolCalls: ORDINARY_COMMANDS.slice(at, at + batch).map((command) => ({ name: 'bash', arguments: { command } })) }));
    }
    server.script(ollamaReply({ content: 'done' }));
    const rules = new PermissionRules({ allow: ORDINARY_ALLOW, ask: [], deny: ['Bash(curl *)'] }, cwd);
    const h = harness({ cwd, approval: new Approval(true, rules, cwd), gate, maxIterations: 30 });
    const r = await h.run('look around');
    assert.equal(r.outcome, 'answered');
    assert.deepEqual(asked, []);
    const results = h.of('tool_result');
    assert.equal(results.length, ORDINARY_COMMANDS.length);
    const failed = results.flatMap((e, i) => (e.ok && !/\[exit code: /.test(e.preview) ? [] : [`${ORDINARY_COMMANDS[i]} → ${e.preview}`]));
    assert.deepEqual(failed, []);
    const byCommand = new Map(results.map((e, i) => [ORDINARY_COMMANDS[i], e.preview]));
    assert.equal(byCommand.get('echo hello'), 'hello');
    assert.equal(byCommand.get('npm test 2>&1 | tail -5')?.endsWith('tests ok'), true);
    assert.equal(byCommand.get('make build'), 'built');
    rmSync(cwd, { recursive: true, force: true });
  });
});
