import { toolDef, type Tool } from '../base/tool.ts';
import type { ToolDef } from '../base/types.ts';
import { bashTool } from './bash.ts';
import { patchTool, renameSymbolTool, replaceSymbolTool } from './change.ts';
import { getSymbolTool, searchTool } from './code.ts';
import type { CodeServices, ToolContext } from './context.ts';
import { editTool, readTool, writeTool } from './files.ts';
import { askUserTool, planTool, taskTool } from './interact.ts';
import { globTool, grepTool, lsTool } from './search.ts';

// The tool set the model sees, in a stable order, and the names models hallucinate for them
// (reference B.2 `resolve_alias`).

const ALIAS_GROUPS: Record<string, string[]> = {
  read: ['read_file', 'readfile', 'open_file', 'view_file', 'cat', 'view'],
  write: ['write_file', 'create_file', 'save_file', 'write_to_file'],
  edit: ['edit_file', 'str_replace', 'replace_in_file', 'apply_edit'],
  bash: ['run_command', 'execute', 'execute_command', 'shell', 'run_shell_command', 'terminal', 'run_bash', 'exec'],
  ls: ['list_files', 'list_directory', 'list_dir', 'dir'],
  grep: ['search', 'search_files', 'grep_search', 'code_search', 'search_code'],
  glob: ['find_files', 'file_glob', 'file_search'],
  outline: ['skeleton', 'file_outline', 'symbols', 'get_outline'],
  repo_map: ['repo_overview', 'project_map', 'codebase_map'],
  web_search: ['internet_search', 'google', 'web', 'duckduckgo', 'search_web'],
  fetch: ['web_fetch', 'http_get', 'get_url', 'fetch_url', 'curl', 'wget'],
  task: ['tasks', 'bg', 'task_status', 'check_task', 'background_task', 'task_output'],
  patch: ['apply_patch', 'apply_diff'],
  rename_symbol: ['rename', 'rename_identifier', 'refactor_rename'],
  agent: ['Task', 'subagent', 'sub_agent', 'spawn_agent', 'delegate', 'dispatch_agent'],
};

export const ALIASES: ReadonlyMap<string, string> = new Map(Object.entries(ALIAS_GROUPS).flatMap(([to, froms]) => froms.map((f) => [f, to] as const)));

export class ToolRegistry {
  private readonly tools = new Map<string, Tool<ToolContext>>();

  constructor(tools: ReadonlyArray<Tool<ToolContext>>) {
    for (const t of tools) this.tools.set(t.name, t);
  }

  /** The built-in set; code tools join only when their in-process service exists. */
  static standard(code: CodeServices = {}): ToolRegistry {
    const list: Tool<ToolContext>[] = [readTool, writeTool, editTool, bashTool, lsTool, grepTool, globTool, planTool, askUserTool, taskTool];
    if (code.read) list.push(getSymbolTool);
    if (code.search) list.push(searchTool);
    if (code.change) list.push(replaceSymbolTool, patchTool, renameSymbolTool);
    return new ToolRegistry(list);
  }

  /** Adds or replaces a tool: front ends register tools that become available after start-up (skills, code tools). */
  register(tool: Tool<ToolContext>): void {
    this.tools.set(tool.name, tool);
  }

  /** Keeps only the named tools (a sub-agent persona's whitelist); unknown names are ignored. */
  retain(names: Iterable<string>): void {
    const keep = new Set(names);
    for (const name of [...this.tools.keys()]) if (!keep.has(name)) this.tools.delete(name);
  }

  /** A registered name wins over an alias (a real `search` tool shadows the grep alias). */
  resolve(name: string): string {
    if (this.tools.has(name)) return name;
    return ALIASES.get(name) ?? name;
  }

  get(name: string): Tool<ToolContext> | undefined {
    return this.tools.get(name);
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  defs(): ToolDef[] {
    return [...this.tools.values()].map(toolDef);
  }

  /** The JSON Schema type of a parameter, for typing textually recovered arguments. */
  paramType(tool: string, key: string): string | undefined {
    const props = (this.tools.get(tool)?.parameters as { properties?: Record<string, { type?: string }> } | undefined)?.properties;
    return props?.[key]?.type;
  }
}
