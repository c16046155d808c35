import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { delimiter, join, relative, resolve, sep } from 'node:path';
import type { SandboxConfig } from '../base/config.ts';

// The OS sandbox for the bash tool: bubblewrap (Linux namespaces), found and probed at run
// time. Inside it the whole filesystem is read-only except the workspace (and the user's own
// `sandbox.writable` paths), /tmp is a private empty tmpfs, there is no network unless the user
// config turns it on, and the process tree lives in its own pid namespace that dies with rift.
// The user's rift configuration, trust store and the workspace's git hooks and git config stay
// read-only even when they sit inside a writable path, so a command cannot grant itself
// anything. Where bubblewrap is missing or cannot create namespaces, commands run unsandboxed and
// every front end says so.

export interface SandboxProbe {
  available: boolean;
  /** The bwrap binary, when found. */
  binary: string | null;
  /** Why the sandbox is unavailable ('' when available). */
  reason: string;
}

/** Seconds the one-time probe may take before bubblewrap counts as unusable. */
const PROBE_TIMEOUT_MS = 5000;

const probes = new Map<string, SandboxProbe>();

function findBinary(env: NodeJS.ProcessEnv): string | null {
  if (env.RIFT_BWRAP) return existsSync(env.RIFT_BWRAP) ? env.RIFT_BWRAP : null;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir !== '' && existsSync(join(dir, 'bwrap'))) return join(dir, 'bwrap');
  }
  return null;
}

/** Whether bubblewrap can sandbox a command here: found on PATH (or `$RIFT_BWRAP`) and able to create its namespaces. Probed once per binary. */
export function probeSandbox(env: NodeJS.ProcessEnv = process.env): SandboxProbe {
  if (process.platform !== 'linux') return { available: false, binary: null, reason: `the bash sandbox uses Linux namespaces (bubblewrap); this is ${process.platform}` };
  const binary = findBinary(env);
  if (!binary) {
    const where = env.RIFT_BWRAP ? `$RIFT_BWRAP (${env.RIFT_BWRAP}) does not exist` : 'bubblewrap (bwrap) is not installed';
    return { available: false, binary: null, reason: `${where} — install it (Debian/Ubuntu: apt-get install bubblewrap) to run bash commands in a sandbox` };
  }
  const known = probes.get(binary);
  if (known) return known;
  const r = spawnSync(binary, ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-net', '--unshare-pid', '--die-with-parent', '--', 'true'], {
    encoding: 'utf8',
    timeout: PROBE_TIMEOUT_MS,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const probe: SandboxProbe =
    r.status === 0
      ? { available: true, binary, reason: '' }
      : { available: false, binary, reason: `bubblewrap cannot create namespaces here (${(r.stderr || r.error?.message || `exit ${r.status}`).trim().split('\n')[0]}) — commands run without a sandbox` };
  probes.set(binary, probe);
  return probe;
}

const inside = (path: string, root: string): boolean => {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !rel.startsWith('/'));
};

function real(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return resolve(path);
  }
}

export class Sandbox {
  private constructor(
    readonly probe: SandboxProbe,
    readonly config: SandboxConfig,
    private readonly workspace: string,
    /** Paths that stay read-only even inside a writable one. */
    private readonly protectedPaths: readonly string[],
  ) {}

  /** `protect`: the user's rift config and data directories (they hold permissions and trust). */
  static create(config: SandboxConfig, workspace: string, protect: readonly string[], env: NodeJS.ProcessEnv = process.env): Sandbox {
    const probe = config.mode === 'off' ? { available: false, binary: null, reason: 'the sandbox is turned off in the user config (sandbox.mode = "off")' } : probeSandbox(env);
    const ws = real(workspace);
    return new Sandbox(probe, config, ws, [...protect, join(ws, '.git', 'hooks'), join(ws, '.git', 'config')].map(real));
  }

  /** Commands run inside the sandbox. */
  get active(): boolean {
    return this.probe.available && this.config.mode !== 'off';
  }

  /** The startup line every front end shows. */
  describe(): string {
    if (this.active) return `bash sandbox: bubblewrap — the workspace is writable, the rest of the filesystem read-only, network ${this.config.network ? 'on' : 'off'}`;
    if (this.config.mode === 'required') return `bash sandbox: unavailable (${this.probe.reason}); sandbox.mode is "required", so bash commands are refused`;
    return `bash sandbox: unavailable — bash commands run with your full permissions (${this.probe.reason})`;
  }

  /** Why a command may not run at all: the sandbox is required and unavailable. */
  refusal(): string | null {
    if (this.active || this.config.mode !== 'required') return null;
    return `bash runs only inside the sandbox here (sandbox.mode = "required"), and no sandbox is available: ${this.probe.reason}`;
  }

  /** `argv` run under bubblewrap in `cwd`, or unchanged when the sandbox is not active. */
  wrap(argv: readonly string[], cwd: string): string[] {
    if (!this.active) return [...argv];
    const writable = [this.workspace, ...this.config.writable.map((p) => real(p))].filter((p) => existsSync(p));
    const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
    for (const w of writable) args.push('--bind', w, w);
    for (const p of this.protectedPaths) if (existsSync(p) && writable.some((w) => inside(p, w))) args.push('--ro-bind', p, p);
    if (!this.config.network) args.push('--unshare-net');
    args.push('--unshare-pid', '--unshare-ipc', '--die-with-parent', '--new-session', '--chdir', real(cwd), '--');
    return [this.probe.binary!, ...args, ...argv];
  }
}
