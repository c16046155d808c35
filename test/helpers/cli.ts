import { spawnSync } from 'node:child_process';
import { RIFT_ARGS } from '../support/rift-process.ts';

// The rift CLI as a process (the built program): one spawn helper for every CLI test.


export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** The whole environment of the process (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** Programs the command runs under (`['setsid']`, …). */
  wrap?: string[];
  input?: string;
  timeoutMs?: number;
}

export function runCli(args: string[], cwd: string, o: CliOptions = {}): CliRun {
  const argv = [...(o.wrap ?? []), process.execPath, ...RIFT_ARGS, ...args];
  const r = spawnSync(argv[0], argv.slice(1), { cwd, encoding: 'utf8', timeout: o.timeoutMs ?? 120_000, env: o.env, input: o.input });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
