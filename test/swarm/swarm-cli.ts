import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ollamaReply, type Step } from '../support/model-server.ts';
import { RIFT_ARGS } from '../support/rift-process.ts';

// What the swarm tests share: rift as a process, scripted steps, a snapshot of the workspace.

/** A model the scripted server lists with tool support. */
export const TOOLS = { capabilities: ['completion', 'tools'], contextLength: 32768 };

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the rift CLI in `cwd` (HOME and RIFT_HOME `home`, no user or system git configuration); `onStart` gets its pid. */
export function rift(args: string[], cwd: string, home: string, onStart?: (pid: number) => void): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...RIFT_ARGS, ...args], {
      cwd,
      env: { PATH: process.env.PATH, HOME: home, RIFT_HOME: home, RIFT_LOG: 'error', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (child.pid) onStart?.(child.pid);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b) => (stdout += b));
    child.stderr.on('data', (b) => (stderr += b));
    const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export const write = (path: string, content: string): Step => ollamaReply({ toolCalls: [{ name: 'write', arguments: { path, content } }] });
export const bash = (command: string): Step => ollamaReply({ toolCalls: [{ name: 'bash', arguments: { command } }] });
export const answer = (text: string): Step => ollamaReply({ content: text });

/** Every file of the tree outside .git and .rift, with its bytes. */
export function snapshot(dir: string, rel = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (p === '.git' || p === '.rift') continue;
    if (e.isDirectory()) Object.assign(out, snapshot(dir, p));
    else out[p] = readFileSync(join(dir, p), 'latin1');
  }
  return out;
}
