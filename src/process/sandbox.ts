import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync, statSync } from 'node:fs';
import { relative, resolve, sep } from 'node:path';
import { SANDBOX_PROBE_TIMEOUT_MS } from '../core/limits.ts';
import { findOnPath } from './programs.ts';

// The OS sandbox: bubblewrap (Linux namespaces), found and probed at run time. Inside it the
// whole filesystem is read-only except the paths a caller names writable, /tmp is a private
// empty tmpfs, the network is off unless the caller turns it on, and the process tree lives in
// its own pid namespace that dies with rift. The agent's `bash` (agent/policy/sandbox.ts) and
// `execute` (services/execute-service.ts) both start their processes through `sandboxArgv`.

export interface SandboxProbe {
  available: boolean;
  /** The bwrap binary, when found. */
  binary: string | null;
  /** Why the sandbox is unavailable ('' when available). */
  reason: string;
}

const probes = new Map<string, SandboxProbe>();

function findBinary(env: NodeJS.ProcessEnv): string | null {
  if (env.RIFT_BWRAP) return existsSync(env.RIFT_BWRAP) ? env.RIFT_BWRAP : null;
  return findOnPath('bwrap', env.PATH ?? '');
}

/** Whether bubblewrap can sandbox a command here: found on PATH (or `$RIFT_BWRAP`) and able to create its namespaces. Probed once per binary. */
export function probeSandbox(env: NodeJS.ProcessEnv = process.env): SandboxProbe {
  if (process.platform !== 'linux') return { available: false, binary: null, reason: `the sandbox uses Linux namespaces (bubblewrap); this is ${process.platform}` };
  const binary = findBinary(env);
  if (!binary) {
    const where = env.RIFT_BWRAP ? `$RIFT_BWRAP (${env.RIFT_BWRAP}) does not exist` : 'bubblewrap (bwrap) is not installed';
    return { available: false, binary: null, reason: `${where} — install it (Debian/Ubuntu: apt-get install bubblewrap) to run commands in a sandbox` };
  }
  const known = probes.get(binary);
  if (known) return known;
  const r = spawnSync(binary, ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-net', '--unshare-pid', '--die-with-parent', '--', 'true'], {
    encoding: 'utf8',
    timeout: SANDBOX_PROBE_TIMEOUT_MS,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const probe: SandboxProbe =
    r.status === 0
      ? { available: true, binary, reason: '' }
      : { available: false, binary, reason: `bubblewrap cannot create namespaces here (${(r.stderr || r.error?.message || `exit ${r.status}`).trim().split('\n')[0]}) — commands run without a sandbox` };
  probes.set(binary, probe);
  return probe;
}

/** The real path of `path`, or its absolute form when it does not resolve. */
export function realPath(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return resolve(path);
  }
}

const inside = (path: string, root: string): boolean => {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !rel.startsWith('/'));
};

/** What a sandboxed process may touch. Paths are real (resolved) absolute paths. */
export interface SandboxLayout {
  /** The only writable paths (the rest of the filesystem is read-only). */
  writable: readonly string[];
  /** Paths that stay read-only even inside a writable one. */
  protected: readonly string[];
  network: boolean;
  /** The working directory inside the sandbox. */
  cwd: string;
}

/**
 * The private /tmp would hide a program that lives there (a server script in a checkout under
 * /tmp, with its modules beside it): each absolute file path in `argv` under /tmp keeps the
 * top folder of /tmp it lives in, read-only.
 */
function programTrees(argv: readonly string[]): string[] {
  const trees = new Set<string>();
  for (const a of argv) {
    if (!a.startsWith('/tmp/')) continue;
    const top = a.split('/').slice(0, 3).join('/');
    try {
      if (statSync(a).isFile() && top !== a) trees.add(top);
    } catch {
      // not a file: an argument, not a program
    }
  }
  return [...trees];
}

/** `argv` run under the bubblewrap `binary` with `layout`. */
export function sandboxArgv(binary: string, layout: SandboxLayout, argv: readonly string[]): string[] {
  const writable = layout.writable.filter((p) => existsSync(p));
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
  for (const p of programTrees(argv)) args.push('--ro-bind', p, p);
  for (const w of writable) args.push('--bind', w, w);
  for (const p of layout.protected) if (existsSync(p) && writable.some((w) => inside(p, w))) args.push('--ro-bind', p, p);
  if (!layout.network) args.push('--unshare-net');
  args.push('--unshare-pid', '--unshare-ipc', '--die-with-parent', '--new-session', '--chdir', layout.cwd, '--');
  return [binary, ...args, ...argv];
}
