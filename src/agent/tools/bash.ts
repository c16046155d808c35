import { runCommand, stripAnsi, withEnv } from '../base/tasks.ts';
import { ToolError, optBool, optInt, stringArg, type Tool } from '../base/tool.ts';
import type { ToolContext } from './context.ts';

// bash (reference B.2): sh -c in its own process group with stdin closed; the whole group is
// killed on timeout or cancel. Output is middle-truncated so both the command's start and its
// final errors survive. The permission check reads the command first (policy/shell.ts); the
// command then runs inside the OS sandbox where there is one (policy/sandbox.ts).

export const BASH_TIMEOUT_DEFAULT_S = 60;
export const BASH_TIMEOUT_MAX_S = 300;
export const BASH_OUTPUT_BYTES_MAX = 30_000;
export const DEV_SERVER_PROBE_S = 15;

const DEV_SERVER = /\b(npm|pnpm|yarn|bun) (run )?(dev|start|serve)\b|\bvite\b|\buvicorn\b|--watch\b|\btail -f\b|\bnodemon\b|\bflask run\b|\bmanage\.py runserver\b|\bhttp\.server\b|\bnext dev\b|\bwebpack serve\b/;

export function looksLikeDevServer(command: string): boolean {
  return !command.includes('build') && DEV_SERVER.test(command);
}

export function middleTruncate(s: string, max: number = BASH_OUTPUT_BYTES_MAX): string {
  const buf = Buffer.from(s, 'utf8');
  if (buf.length <= max) return s;
  const head = buf.subarray(0, Math.floor(max / 2)).toString('utf8').replace(/\uFFFD$/, '');
  const tail = buf.subarray(buf.length - Math.ceil(max / 2)).toString('utf8').replace(/^\uFFFD/, '');
  return `${head}\n... [output truncated: ${max} of ${buf.length} bytes shown] ...\n${tail}`;
}

/** `{cmd}` single-quote escaped, `{cwd}` as is; a template without `{cmd}` is ignored. */
export function wrapCommand(template: string | undefined, command: string, cwd: string): string[] {
  if (!template || !template.includes('{cmd}')) return ['sh', '-c', command];
  const quoted = command.replace(/'/g, `'\\''`);
  return ['sh', '-c', template.replaceAll('{cmd}', quoted).replaceAll('{cwd}', cwd)];
}

export const bashTool: Tool<ToolContext> = {
  name: 'bash',
  description: 'Run a shell command (sh -c) in the project directory. Set run_in_background for long-running servers.',
  mutating: true,
  parameters: {
    type: 'object',
    required: ['command'],
    properties: {
      command: { type: 'string' },
      timeout_secs: { type: 'integer', description: 'default 60, max 300' },
      run_in_background: { type: 'boolean' },
    },
  },
  async run(args, ctx) {
    const command = stringArg(args, 'command', 'bash');
    if (command.trim() === '') throw new ToolError('bash needs a non-empty command');
    const requested = optInt(args, 'timeout_secs', 'bash');
    const background = optBool(args, 'run_in_background', 'bash') ?? false;
    const unsandboxed = ctx.sandbox?.refusal();
    if (unsandboxed) throw new ToolError(unsandboxed);
    await ctx.approval.authorizeBash(ctx.gate, command, ctx.signal);
    const shell = withEnv(wrapCommand(ctx.bashWrapper, command, ctx.cwd), ctx.commandEnv);
    const argv = ctx.sandbox ? ctx.sandbox.wrap(shell, ctx.cwd) : shell;
    if (background) {
      try {
        const { id, pid } = ctx.tasks.start(command, argv, ctx.cwd);
        return `started background task #${id} (pid ${pid}): ${command}\nIts output is collected; you will see a task_finished notice when it exits.`;
      } catch (e) {
        throw new ToolError((e as Error).message);
      }
    }
    const dev = looksLikeDevServer(command);
    const timeoutS = dev ? DEV_SERVER_PROBE_S : Math.min(Math.max(1, requested ?? BASH_TIMEOUT_DEFAULT_S), BASH_TIMEOUT_MAX_S);
    return await runForeground(argv, ctx, timeoutS * 1000, dev);
  },
};

async function runForeground(argv: string[], ctx: ToolContext, timeoutMs: number, dev: boolean): Promise<string> {
  const r = await (ctx.runner ?? runCommand)(argv, { cwd: ctx.cwd, signal: ctx.signal, timeoutMs });
  if (r.startError !== undefined) throw new ToolError(`could not start the shell: ${r.startError}`);
  const stdout = stripAnsi(r.stdout);
  const stderr = stripAnsi(r.stderr);
  let text = stdout;
  if (stderr.length > 0) text += `\n--- stderr ---\n${stderr}`;
  if (text.trim() === '') text = '(no output)';
  text = middleTruncate(text);
  if (r.timedOut) {
    const s = Math.round(timeoutMs / 1000);
    text += dev
      ? `\n[dev server probe: stopped after ${s}s. A long-running server that printed no error has most likely started fine — treat that as SUCCESS; use run_in_background to keep it running]`
      : `\n[timed out after ${s}s; the whole process tree was killed. If the command needs longer, retry with a larger timeout_secs (max ${BASH_TIMEOUT_MAX_S})]`;
  } else if (r.code !== 0) {
    text += `\n[exit code: ${r.code ?? r.signal ?? 'unknown'}]`;
  }
  return text;
}
