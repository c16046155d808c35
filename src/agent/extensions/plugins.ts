import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCommand } from '../base/tasks.ts';
import { ToolError, type Tool } from '../base/tool.ts';
import type { ToolContext } from '../tools/context.ts';

// Plugins (reference D): `<cwd>/.rift/plugins/<dir>/plugin.json` (project, wins collisions) and
// `<user config>/plugins/<dir>/plugin.json`. Commands are inert prompt templates, offered like
// skills; tools run `sh -c <command>` with the arguments as JSON on stdin; `hooks.post_edit`
// commands join the session's post-edit hooks. A project plugin's tools and hooks need a trust
// decision keyed to the exact manifest text.

export const PLUGIN_TOOL_TIMEOUT_MS = 60_000;

export interface PluginCommand {
  name: string;
  description: string;
  prompt: string;
}

export interface PluginToolDef {
  name: string;
  description: string;
  command: string;
  parameters: Record<string, unknown>;
}

export interface Plugin {
  name: string;
  scope: 'project' | 'user';
  /** Trust key: `plugin:<name>:<exact manifest text>`. */
  key: string;
  commands: PluginCommand[];
  tools: PluginToolDef[];
  /** `hooks.post_edit` commands, run after each successful edit once the plugin is trusted. */
  hooks: string[];
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export function discoverPlugins(projectDir: string, userDir: string): { plugins: Plugin[]; warnings: string[] } {
  const warnings: string[] = [];
  const byName = new Map<string, Plugin>();
  for (const [dir, scope] of [[projectDir, 'project'], [userDir, 'user']] as const) {
    if (!existsSync(dir)) continue;
    let entries: string[];
    try {
      entries = readdirSync(dir).sort();
    } catch {
      continue;
    }
    for (const e of entries) {
      const path = join(dir, e, 'plugin.json');
      if (!existsSync(path)) continue;
      try {
        const text = readFileSync(path, 'utf8');
        const m = JSON.parse(text) as Record<string, unknown>;
        if (!m || typeof m !== 'object' || typeof m.name !== 'string' || m.name === '') throw new Error("the manifest needs a string 'name'");
        if (byName.has(m.name)) continue;
        const commands = (Array.isArray(m.commands) ? m.commands : [])
          .filter((c): c is Record<string, unknown> => !!c && typeof c === 'object' && typeof (c as Record<string, unknown>).name === 'string')
          .map((c) => ({ name: str(c.name), description: str(c.description) || `(plugin ${m.name as string})`, prompt: str(c.prompt) }));
        const tools = (Array.isArray(m.tools) ? m.tools : [])
          .filter((t): t is Record<string, unknown> => !!t && typeof t === 'object' && typeof (t as Record<string, unknown>).name === 'string' && typeof (t as Record<string, unknown>).command === 'string')
          .map((t) => ({
            name: str(t.name),
            description: str(t.description),
            command: str(t.command),
            parameters: t.parameters && typeof t.parameters === 'object' ? (t.parameters as Record<string, unknown>) : { type: 'object', properties: {} },
          }));
        const h = m.hooks && typeof m.hooks === 'object' ? (m.hooks as Record<string, unknown>).post_edit : undefined;
        const hooks = (Array.isArray(h) ? h : []).filter((c): c is string => typeof c === 'string' && c.trim() !== '');
        byName.set(m.name, { name: m.name, scope, key: `plugin:${m.name}:${text}`, commands, tools, hooks });
      } catch (err) {
        warnings.push(`skipping plugin ${path}: ${(err as Error).message}`);
      }
    }
  }
  return { plugins: [...byName.values()], warnings };
}

export function pluginTool(def: PluginToolDef, plugin: string): Tool<ToolContext> {
  return {
    name: def.name,
    description: `${def.description} (plugin: ${plugin})`,
    parameters: def.parameters,
    mutating: true,
    async run(args, ctx) {
      const r = await runCommand(['sh', '-c', def.command], { cwd: ctx.cwd, signal: ctx.signal, timeoutMs: PLUGIN_TOOL_TIMEOUT_MS, input: JSON.stringify(args) });
      if (r.startError !== undefined) throw new ToolError(`plugin tool '${def.name}' failed to start: ${r.startError}`);
      if (r.timedOut) throw new ToolError(`plugin tool '${def.name}' timed out after ${PLUGIN_TOOL_TIMEOUT_MS / 1000}s`);
      if (r.code === 0) return r.stdout.trimEnd() || '(no output)';
      throw new ToolError(`plugin tool '${def.name}' failed (${r.code}): ${r.stderr.trim() || r.stdout.trim()}`);
    },
  };
}
