import { isAbsolute, relative, resolve } from 'node:path';
import type { PlanEntry, ToolCallLocation, ToolKind } from '@agentclientprotocol/sdk';
import type { PlanItem } from '../agent/base/types.ts';
import { parsePatch } from '../change/patch-parse.ts';
import { parseSymbolId } from '../core/ids.ts';
import { projectPathViolation } from '../core/path.ts';

// How one of the agent's tool calls looks to an ACP client (protocol/v1 tool-calls): a title,
// a kind for its icon, the files it reads or changes ("follow along"), and which files to show
// as a diff once it ran. Pure: the arguments and the session folder decide.

export interface ToolCallView {
  title: string;
  kind: ToolKind;
  locations: ToolCallLocation[];
  /** Files whose change the tool call shows as diff content (absolute). */
  changes: string[];
}

const KINDS: Record<string, ToolKind> = {
  read: 'read',
  write: 'edit',
  edit: 'edit',
  replace_symbol: 'edit',
  insert_symbol: 'edit',
  replace_node: 'edit',
  insert_node: 'edit',
  rename_symbol: 'edit',
  patch: 'edit',
  remove_symbol: 'delete',
  remove_node: 'delete',
  move_file: 'move',
  bash: 'execute',
  task: 'execute',
  ls: 'search',
  grep: 'search',
  glob: 'search',
  get_symbol: 'search',
  search: 'search',
  plan: 'think',
  agent: 'think',
};

const TITLE_CHARS_MAX = 120;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

function short(s: string): string {
  const line = s.split('\n')[0];
  return line.length > TITLE_CHARS_MAX || line !== s ? `${line.slice(0, TITLE_CHARS_MAX)}…` : line;
}

/** The files a unified diff names, either side (an unparseable diff names none). */
function patchPaths(patch: string): string[] {
  try {
    return [...new Set(parsePatch(Buffer.from(patch, 'utf8')).flatMap((f) => [f.oldPath, f.newPath]).filter((p): p is string => p !== null && projectPathViolation(p) === null))];
  } catch {
    return [];
  }
}

export function describeToolCall(name: string, args: Record<string, unknown>, cwd: string): ToolCallView {
  const abs = (p: string) => (isAbsolute(p) ? resolve(p) : resolve(cwd, p));
  const shown = (p: string) => {
    const rel = relative(cwd, abs(p));
    return rel === '' ? '.' : rel.startsWith('..') ? abs(p) : rel;
  };
  const path = str(args.path);
  const kind = KINDS[name] ?? 'other';
  const at = (p: string, line?: number): ToolCallLocation => (line === undefined ? { path: abs(p) } : { path: abs(p), line });
  switch (name) {
    case 'read': {
      const offset = typeof args.offset === 'number' && Number.isInteger(args.offset) && args.offset > 0 ? args.offset : undefined;
      return { title: path ? `Read ${shown(path)}${offset ? `:${offset}` : ''}` : 'Read', kind, locations: path ? [at(path, offset)] : [], changes: [] };
    }
    case 'write':
    case 'edit':
      return { title: path ? `${name === 'write' ? 'Write' : 'Edit'} ${shown(path)}` : name, kind, locations: path ? [at(path)] : [], changes: path ? [abs(path)] : [] };
    case 'replace_symbol': {
      const id = str(args.symbol);
      const target = id ? parseSymbolId(id) : null;
      return {
        title: target ? `Replace ${target.qualifiedName} in ${target.path}` : 'Replace a declaration',
        kind,
        locations: target ? [at(target.path)] : [],
        changes: target ? [abs(target.path)] : [],
      };
    }
    case 'patch': {
      const files = typeof args.patch === 'string' ? patchPaths(args.patch) : [];
      return { title: files.length > 0 ? `Patch ${files.join(', ')}` : 'Patch', kind, locations: files.map((f) => at(f)), changes: files.map(abs) };
    }
    case 'bash': {
      const command = str(args.command);
      return { title: command ? `\`${short(command)}\`` : 'Run a command', kind, locations: [], changes: [] };
    }
    case 'ls':
      return { title: `List ${shown(path ?? '.')}`, kind, locations: [at(path ?? '.')], changes: [] };
    case 'grep':
    case 'glob': {
      const pattern = str(args.pattern);
      const where = path ? ` in ${shown(path)}` : '';
      return { title: pattern ? `${name === 'grep' ? 'Search for' : 'Find'} \`${short(pattern)}\`${where}` : name, kind, locations: path ? [at(path)] : [], changes: [] };
    }
    case 'get_symbol':
      return { title: str(args.name) ? `Look up ${short(String(args.name))}` : 'Look up a declaration', kind, locations: [], changes: [] };
    case 'search':
      return { title: str(args.query) ? `Search \`${short(String(args.query))}\`` : 'Search', kind, locations: [], changes: [] };
    case 'plan':
      return { title: 'Update the plan', kind, locations: [], changes: [] };
    case 'ask_user':
      return { title: str(args.question) ? `Ask: ${short(String(args.question))}` : 'Ask the user', kind, locations: [], changes: [] };
    case 'agent':
      return { title: 'Run sub-agents', kind, locations: [], changes: [] };
    case 'task':
      return { title: typeof args.id === 'number' ? `Background task #${args.id}` : 'Background tasks', kind, locations: [], changes: [] };
    default:
      return { title: path ? `${name} ${shown(path)}` : name, kind, locations: path ? [at(path)] : [], changes: [] };
  }
}

/** The agent's checklist as an ACP plan: done steps completed, the first open one in progress. */
export function planEntries(items: readonly PlanItem[]): PlanEntry[] {
  const current = items.findIndex((i) => !i.done);
  return items.map((it, i) => ({ content: it.text, priority: 'medium', status: it.done ? 'completed' : i === current ? 'in_progress' : 'pending' }));
}
