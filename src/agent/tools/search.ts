import { join } from 'node:path';
import { compileGlob } from '../../core/glob.ts';
import { isRiftError } from '../../core/errors.ts';
import { splitLines } from '../../core/lines.ts';
import { decodeText, looksBinary } from '../../workspace/encoding.ts';
import { ToolError, optString, stringArg, type Tool } from '../base/tool.ts';
import type { ProjectFile } from '../session/undo.ts';
import { projectFile, type ToolContext } from './context.ts';

// ls, grep and glob (reference B.2, C.4) over the workspace's own view of its files: grep and
// glob walk what `[source]` and the `.gitignore` files make visible (the walk the index uses),
// skip hidden entries below where they start, and never enter .git or .rift; denied paths are
// hidden or refused; every walk is bounded by `[source].max_files`.

export const GREP_MATCHES_MAX = 100;
export const GREP_LINE_CHARS_MAX = 250;
export const GLOB_RESULTS_MAX = 200;
const GREP_FILE_BYTES_MAX = 2 * 1024 * 1024;

function denied(ctx: ToolContext, tool: string, abs: string): string | null {
  return ctx.approval.rules.denied(tool, abs);
}

/** A project path under cwd, as permission rules see it. */
function underCwd(ctx: ToolContext, path: string): string {
  return join(ctx.cwd, path);
}

export const lsTool: Tool<ToolContext> = {
  name: 'ls',
  description: 'List a directory (directories end with /).',
  parameters: { type: 'object', properties: { path: { type: 'string', description: 'default .' } } },
  async run(args, ctx) {
    const path = optString(args, 'path', 'ls') ?? '.';
    const refuse = (abs: string) => {
      const rule = denied(ctx, 'ls', abs);
      if (rule) throw new ToolError(`listing ${abs} is blocked by permission rule '${rule}'`);
    };
    const f = projectFile(ctx, path, refuse);
    refuse(f.abs);
    const kind = f.files.kind(f.path);
    if (kind === null) throw new ToolError(`${path} does not exist. Use glob to find the right path.`);
    if (kind === 'file') throw new ToolError(`${path} is a file, not a directory; use read to see it`);
    const entries = f.files
      .list(f.path)
      .filter((e) => !denied(ctx, 'ls', underCwd(ctx, f.path === '' ? e.name : `${f.path}/${e.name}`)))
      .map((e) => (e.isDirectory() ? `${e.name}/` : e.name));
    return entries.length === 0 ? '(empty directory)' : entries.join('\n');
  },
};

/** The files a search covers: the file itself, or the visible, non-hidden, allowed files below a directory. */
async function searched(ctx: ToolContext, tool: 'grep' | 'glob', path: string | undefined): Promise<{ base: ProjectFile; files: string[] }> {
  const refuse = (abs: string) => {
    const rule = denied(ctx, tool, abs);
    if (rule) throw new ToolError(`searching ${abs} is blocked by permission rule '${rule}'`);
  };
  const base = projectFile(ctx, path ?? '.', refuse);
  const kind = base.files.kind(base.path);
  if (kind === null) throw new ToolError(`${path} does not exist. Use ls to find the right directory.`);
  refuse(base.abs);
  if (kind === 'file') {
    if (tool === 'glob') throw new ToolError(`${base.abs} is a file; glob searches a directory`);
    return { base, files: [base.path] };
  }
  let all: string[];
  try {
    all = await base.files.visibleFiles(base.path);
  } catch (e) {
    if (isRiftError(e) && e.code === 'limit_exceeded') throw new ToolError(`${path ?? '.'} holds more files than one search walks (${e.message}); search a subdirectory`);
    throw e;
  }
  const skip = base.path === '' ? 0 : base.path.length + 1;
  const files = all.filter((p) => !p.slice(skip).split('/').some((s) => s.startsWith('.')) && !denied(ctx, tool, underCwd(ctx, p)));
  return { base, files };
}

/** A project path as the model reads it: relative to the searched directory's workspace (cwd). */
function relativeToBase(base: ProjectFile, path: string): string {
  const skip = base.path === '' ? 0 : base.path.length + 1;
  return path.slice(skip);
}

export const grepTool: Tool<ToolContext> = {
  name: 'grep',
  description: 'Search file contents by regex; prints path:line: text.',
  parameters: { type: 'object', required: ['pattern'], properties: { pattern: { type: 'string' }, path: { type: 'string' } } },
  async run(args, ctx) {
    const pattern = stringArg(args, 'pattern', 'grep');
    let re: RegExp;
    try {
      re = new RegExp(pattern);
    } catch (e) {
      throw new ToolError(`pattern is not a valid regular expression (${(e as Error).message}); escape special characters like ( [ { . * +`);
    }
    const { base, files } = await searched(ctx, 'grep', optString(args, 'path', 'grep'));
    const hits: string[] = [];
    for (const path of files) {
      if (ctx.signal.aborted) throw new ToolError('cancelled by user');
      const r = base.files.read(path, GREP_FILE_BYTES_MAX);
      if (!r.ok || looksBinary(r.bytes)) continue;
      const lines = splitLines(decodeText(r.bytes).text);
      for (let i = 0; i < lines.length; i++) {
        if (!re.test(lines[i])) continue;
        hits.push(`${path}:${i + 1}: ${lines[i].slice(0, GREP_LINE_CHARS_MAX)}`);
        if (hits.length >= GREP_MATCHES_MAX) return `${hits.join('\n')}\n[stopped at ${GREP_MATCHES_MAX} matches; narrow the pattern]`;
      }
    }
    return hits.length === 0 ? 'no matches' : hits.join('\n');
  },
};

export const globTool: Tool<ToolContext> = {
  name: 'glob',
  description: 'Find files by glob pattern (e.g. **/*.ts); * also crosses /.',
  parameters: { type: 'object', required: ['pattern'], properties: { pattern: { type: 'string' }, path: { type: 'string' } } },
  async run(args, ctx) {
    const pattern = stringArg(args, 'pattern', 'glob');
    let matches: (path: string) => boolean;
    try {
      matches = compileGlob(pattern, 'tool');
    } catch {
      throw new ToolError(`pattern is not a valid glob (unbalanced brackets or braces): ${pattern}`);
    }
    const { base, files } = await searched(ctx, 'glob', optString(args, 'path', 'glob'));
    const matched = files.map((p) => relativeToBase(base, p)).filter((p) => matches(p));
    if (matched.length === 0) return 'no files matched';
    if (matched.length > GLOB_RESULTS_MAX) return `${matched.slice(0, GLOB_RESULTS_MAX).join('\n')}\n[stopped at ${GLOB_RESULTS_MAX} results]`;
    return matched.join('\n');
  },
};
