import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { compileGlob } from '../../core/glob.ts';
import { ToolError, optString, stringArg, type Tool } from '../base/tool.ts';
import { resolvePath, type ToolContext } from './context.ts';
import { looksBinary } from './files.ts';

// ls, grep and glob (reference B.2, C.4): walks respect .gitignore, skip hidden entries and
// never enter .git or .rift; denied paths are hidden or refused; every walk is bounded.

export const GREP_MATCHES_MAX = 100;
export const GREP_LINE_CHARS_MAX = 250;
export const GLOB_RESULTS_MAX = 200;
export const WALK_FILES_MAX = 50_000;
const GREP_FILE_BYTES_MAX = 2 * 1024 * 1024;

function denied(ctx: ToolContext, tool: string, abs: string): string | null {
  return ctx.approval.rules.denied(tool, abs);
}

export const lsTool: Tool<ToolContext> = {
  name: 'ls',
  description: 'List a directory (directories end with /).',
  parameters: { type: 'object', properties: { path: { type: 'string', description: 'default .' } } },
  async run(args, ctx) {
    const path = optString(args, 'path', 'ls') ?? '.';
    const abs = resolvePath(ctx, path);
    const rule = denied(ctx, 'ls', abs);
    if (rule) throw new ToolError(`listing ${abs} is blocked by permission rule '${rule}'`);
    if (!existsSync(abs)) throw new ToolError(`${path} does not exist. Use glob to find the right path.`);
    if (!statSync(abs).isDirectory()) throw new ToolError(`${path} is a file, not a directory; use read to see it`);
    const entries = readdirSync(abs, { withFileTypes: true })
      .filter((e) => !denied(ctx, 'ls', join(abs, e.name)))
      .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
      .sort();
    return entries.length === 0 ? '(empty directory)' : entries.join('\n');
  },
};

/** Visible files under `base` (absolute), as paths relative to `base`, sorted. */
function walk(ctx: ToolContext, tool: string, base: string): string[] {
  const out: string[] = [];
  const visit = (dir: string, rules: Array<{ at: string; ig: Ignore }>) => {
    if (out.length >= WALK_FILES_MAX) return;
    let ig = rules;
    const gi = join(dir, '.gitignore');
    if (existsSync(gi)) {
      try {
        ig = [...rules, { at: dir, ig: ignore().add(readFileSync(gi, 'utf8')) }];
      } catch {
        // an unreadable .gitignore hides nothing
      }
    }
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      const abs = join(dir, e.name);
      const isDir = e.isDirectory();
      if (!isDir && !e.isFile()) continue;
      if (ig.some((r) => r.ig.ignores(relative(r.at, abs).split(sep).join('/') + (isDir ? '/' : '')))) continue;
      if (denied(ctx, tool, abs)) continue;
      if (isDir) visit(abs, ig);
      else out.push(relative(base, abs).split(sep).join('/'));
      if (out.length >= WALK_FILES_MAX) return;
    }
  };
  visit(base, []);
  return out;
}

function baseDir(ctx: ToolContext, tool: string, path: string | undefined): string {
  const abs = resolvePath(ctx, path ?? '.');
  if (!existsSync(abs)) throw new ToolError(`${path} does not exist. Use ls to find the right directory.`);
  const rule = denied(ctx, tool, abs);
  if (rule) throw new ToolError(`searching ${abs} is blocked by permission rule '${rule}'`);
  return abs;
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
    const base = baseDir(ctx, 'grep', optString(args, 'path', 'grep'));
    const files = statSync(base).isDirectory() ? walk(ctx, 'grep', base).map((r) => join(base, r)) : [base];
    const hits: string[] = [];
    for (const abs of files) {
      if (ctx.signal.aborted) throw new ToolError('cancelled by user');
      let buf: Buffer;
      try {
        if (statSync(abs).size > GREP_FILE_BYTES_MAX) continue;
        buf = readFileSync(abs);
      } catch {
        continue;
      }
      if (looksBinary(buf)) continue;
      const rel = relative(ctx.cwd, abs).split(sep).join('/') || abs;
      const lines = buf.toString('utf8').split('\n');
      for (let i = 0; i < lines.length; i++) {
        if (!re.test(lines[i])) continue;
        hits.push(`${rel}:${i + 1}: ${lines[i].replace(/\r$/, '').slice(0, GREP_LINE_CHARS_MAX)}`);
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
    const base = baseDir(ctx, 'glob', optString(args, 'path', 'glob'));
    if (!statSync(base).isDirectory()) throw new ToolError(`${base} is a file; glob searches a directory`);
    let matches: (path: string) => boolean;
    try {
      matches = compileGlob(pattern, 'tool');
    } catch {
      throw new ToolError(`pattern is not a valid glob (unbalanced brackets or braces): ${pattern}`);
    }
    const matched = walk(ctx, 'glob', base).filter(matches);
    if (matched.length === 0) return 'no files matched';
    if (matched.length > GLOB_RESULTS_MAX) return `${matched.slice(0, GLOB_RESULTS_MAX).join('\n')}\n[stopped at ${GLOB_RESULTS_MAX} results]`;
    return matched.join('\n');
  },
};
