import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAgentConfig } from '../../src/agent/base/config.ts';
import { mcpServerKey } from '../../src/agent/extensions/project-trust.ts';
import { probeSandbox } from '../../src/process/sandbox.ts';
import { tempDir } from '../support/agent-harness.ts';
import { runCli } from '../helpers/cli.ts';
import { RIFT_ARGS } from '../support/rift-process.ts';

// `rift trust` (the headless path to a trust decision) and `rift doctor`, as processes.


function rift(args: string[], cwd: string, home: string, env: Record<string, string> = {}) {
  return runCli(args, cwd, { env: { PATH: process.env.PATH, HOME: home, RIFT_HOME: home, ...env } });
}

/** Runs rift on a pseudo-terminal (util-linux `script`), typing `input`. */
function riftOnTty(args: string[], cwd: string, home: string, input: string) {
  const command = [process.execPath, ...RIFT_ARGS, ...args].map((a) => `'${a}'`).join(' ');
  const r = spawnSync('script', ['-qec', command, '/dev/null'], { cwd, encoding: 'utf8', timeout: 60_000, input, env: { PATH: process.env.PATH, HOME: home, RIFT_HOME: home, TERM: 'dumb' } });
  return { code: r.status, stdout: r.stdout };
}

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function repo(): { cwd: string; home: string; text: string } {
  const cwd = tempDir();
  const home = tempDir('rift-home-');
  dirs.push(cwd, home);
  const text = '{"host": "http://elsewhere:11434", "mcp": {"docs": {"command": "node", "args": ["tools/docs-mcp.js"]}}}\n';
  writeFileSync(join(cwd, '.rift.json'), text);
  writeFileSync(join(cwd, 'rift.toml'), '[[hooks]]\nid = "lint"\nprogram = "npx"\narguments = ["eslint"]\n');
  return { cwd, home, text };
}

describe('rift trust', () => {
  it('--list shows the questions; without a terminal nothing is trusted', () => {
    const { cwd, home } = repo();
    const list = rift(['trust', '--list'], cwd, home);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /1\. Project config '\.rift\.json' changes 1 setting\(s\)/);
    assert.match(list.stdout, /host: http:\/\/elsewhere:11434 \(instead of http:\/\/localhost:11434\)/);
    assert.match(list.stdout, /2\. Project rift\.toml declares 1 hook\(s\)[^\n]*\n {3}lint \(validation\): `npx eslint`/);
    assert.match(list.stdout, /3\. Project MCP server 'docs' runs `node tools\/docs-mcp\.js` — a program from this repo[^\n]*\n {3}command: `node tools\/docs-mcp\.js`/);
    const piped = rift(['trust'], cwd, home);
    assert.equal(piped.code, 1);
    assert.match(piped.stderr, /answer these on a terminal \(stdin is not one\); nothing was trusted/);
    assert.equal(existsSync(join(home, 'trusted-hooks.json')), false);
  });

  it('on a terminal: trust persists the digest key, skip persists nothing', () => {
    const { cwd, home, text } = repo();
    const r = riftOnTty(['trust'], cwd, home, 'trust\nskip\ntrust\n');
    assert.equal(r.code, 0, r.stdout);
    const server = loadAgentConfig(cwd, {}, { RIFT_HOME: home }).config.mcp[0];
    assert.deepEqual(JSON.parse(readFileSync(join(home, 'trusted-hooks.json'), 'utf8')), [`project-config:sha256:${createHash('sha256').update(text).digest('hex')}`, mcpServerKey(server)]);
    const again = rift(['trust', '--list'], cwd, home);
    assert.doesNotMatch(again.stdout, /Project config/);
    assert.doesNotMatch(again.stdout, /Project MCP server/);
    assert.match(again.stdout, /Project rift\.toml declares 1 hook/);
  });
});

describe('rift doctor', () => {
  it('reports the sandbox, engines and config sources, and what waits for trust', () => {
    const { cwd, home } = repo();
    const r = rift(['doctor', '--json'], cwd, home);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.deepEqual(report.checks.map((c: { name: string }) => c.name), ['sandbox', 'grammars', 'shell grammar', 'git']);
    assert.equal(report.checks[0].ok, probeSandbox().available);
    assert.ok(report.checks.slice(1).every((c: { ok: boolean }) => c.ok));
    assert.deepEqual(report.sources.map((s: { name: string; state: string }) => [s.name, s.state]), [
      ['user config', 'absent'],
      ['project config', 'not trusted: only its tightening keys apply'],
      ['workspace config', '1 hook(s), not trusted: they do not run after the agent’s edits'],
      ['trust store', 'absent'],
    ]);
    assert.deepEqual(report.pending.map((p: { kind: string }) => p.kind), ['project-config', 'workspace-hooks', 'mcp-server']);
    const none = rift(['doctor'], cwd, home, { RIFT_BWRAP: '/nonexistent/bwrap' });
    assert.match(none.stdout, /^warn sandbox: unavailable — bash commands run with your full permissions \(\$RIFT_BWRAP \(\/nonexistent\/bwrap\) does not exist/m);
    assert.match(none.stdout, /waiting for trust \(run `rift trust` to decide\):/);
  });
});
