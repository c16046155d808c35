import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadAgentConfig, userDirs, PROJECT_CONFIG_FILE } from '../agent/base/config.ts';
import { pendingTrust } from '../agent/extensions/project-trust.ts';
import { Sandbox } from '../agent/policy/sandbox.ts';
import { TrustStore } from '../agent/policy/trust.ts';
import { initShell } from '../agent/policy/shell.ts';
import { isRiftError } from '../core/errors.ts';
import { ConfigLoader } from '../config/loader.ts';
import { LANGUAGE_IDS, initSyntax } from '../syntax/runtime.ts';
import { parse, WORKSPACE } from './args.ts';

// `rift doctor [--workspace DIR] [--json]`: what this machine and workspace give the agent —
// the bash sandbox, the engines (grammars, the shell grammar the permission check reads
// commands with, git), and where configuration comes from, with what still waits for trust.

interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

async function attempt(name: string, run: () => Promise<string> | string): Promise<Check> {
  try {
    return { name, ok: true, detail: await run() };
  } catch (e) {
    return { name, ok: false, detail: (e as Error).message };
  }
}

export async function runDoctor(argv: readonly string[]): Promise<number> {
  const { values } = parse(argv, { ...WORKSPACE, json: { type: 'boolean' } }, 0);
  const cwd = resolve(values.workspace ?? '.');
  const dirs = userDirs();
  const store = TrustStore.user();
  const { config, warnings } = loadAgentConfig(cwd, {}, process.env, (k) => store.has(k));
  const sandbox = Sandbox.create(config.sandbox, cwd, [dirs.config, dirs.data]);
  const checks: Check[] = [
    { name: 'sandbox', ok: sandbox.active, detail: sandbox.describe().replace(/^bash sandbox: /, '') },
    await attempt('grammars', async () => {
      await initSyntax();
      return `${LANGUAGE_IDS.length} languages (${LANGUAGE_IDS.join(', ')})`;
    }),
    await attempt('shell grammar', async () => {
      await initShell();
      return 'tree-sitter-bash: bash commands are read before they run';
    }),
    await attempt('git', () => {
      const r = spawnSync('git', ['--version'], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(r.error ? `not found (${r.error.message})` : r.stderr.trim());
      return r.stdout.trim();
    }),
  ];
  const toml = new ConfigLoader(cwd).tryCurrent();
  const pending = pendingTrust(cwd, store);
  const sources = [
    { name: 'user config', path: join(dirs.config, 'config.json'), state: existsSync(join(dirs.config, 'config.json')) ? 'read' : 'absent' },
    {
      name: 'project config',
      path: join(cwd, PROJECT_CONFIG_FILE),
      state: !existsSync(join(cwd, PROJECT_CONFIG_FILE)) ? 'absent' : pending.some((r) => r.subject.kind === 'project-config') ? 'not trusted: only its tightening keys apply' : 'read',
    },
    {
      name: 'workspace config',
      path: join(cwd, 'rift.toml'),
      state: isRiftError(toml)
        ? `invalid: ${toml.message}`
        : toml.revision === null
          ? 'absent'
          : `${toml.config.hooks.length} hook(s)${pending.some((r) => r.subject.kind === 'workspace-hooks') ? ', not trusted: they do not run after the agent’s edits' : ''}`,
    },
    { name: 'trust store', path: store.path, state: existsSync(store.path) ? 'read' : 'absent' },
  ];
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ checks, sources, warnings, pending: pending.map((r) => ({ kind: r.subject.kind, question: r.question, detail: r.detail })) })}\n`);
    return 0;
  }
  const out = (s: string) => process.stdout.write(`${s}\n`);
  for (const c of checks) out(`${c.ok ? 'ok  ' : 'warn'} ${c.name}: ${c.detail}`);
  out('');
  for (const s of sources) out(`${s.name}: ${s.path} (${s.state})`);
  for (const w of warnings) out(`warning: ${w}`);
  if (pending.length > 0) {
    out('');
    out(`waiting for trust (run \`rift trust\` to decide):`);
    for (const r of pending) out(`  - ${r.question}\n${r.detail.map((d) => `      ${d}`).join('\n')}`);
  }
  return 0;
}
