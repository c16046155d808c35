import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringArg, ToolError, type Tool } from '../base/tool.ts';
import type { ToolContext } from '../tools/context.ts';

// Skills (issue 6): `.rift/skills/<name>/SKILL.md` in the project and `<user data>/skills/<name>/SKILL.md`.
// The description is the front-matter `description:` or the first non-heading line; a project
// skill shadows a user skill of the same name. Bodies are read on demand.

export const DESCRIPTION_CHARS_MAX = 120;
export const BODY_CHARS_MAX = 12_000;
export const BODY_TRUNCATED = '\n\n[skill body truncated — keep SKILL.md focused]';

export interface Skill {
  name: string;
  description: string;
  /** SKILL.md path; '' for a plugin command. */
  path: string;
  /** A plugin command's prompt template (`{args}` is replaced with the task). */
  template?: string;
}

export function discoverSkills(dirs: readonly string[]): Skill[] {
  const byName = new Map<string, Skill>();
  for (const dir of dirs) {
    if (!existsSync(dir)) continue;
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const entry of names.sort()) {
      // `<name>/SKILL.md`, or a flat `<name>.md`
      const flat = entry.endsWith('.md');
      const name = flat ? entry.slice(0, -3) : entry;
      const path = flat ? join(dir, entry) : join(dir, entry, 'SKILL.md');
      if (name === '' || byName.has(name) || !existsSync(path)) continue;
      try {
        byName.set(name, { name, description: describe(readFileSync(path, 'utf8')), path });
      } catch {
        // unreadable: skipped
      }
    }
  }
  return [...byName.values()].sort(compareNames);
}

/** Code-unit order by name: skills, plugin commands and personas are all listed this way. */
export function compareNames(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** `---` front matter of `key: value` lines (quotes around a value dropped), and the body after it. */
export function frontMatter(text: string): { fields: Record<string, string>; body: string } {
  const fm = /^---\r?\n([\s\S]*?)\r?\n---(?:\r?\n|$)/.exec(text);
  const fields: Record<string, string> = {};
  if (!fm) return { fields, body: text };
  for (const line of fm[1].split(/\r?\n/)) {
    const m = /^([A-Za-z_][\w-]*):\s*(.*)$/.exec(line);
    if (m) fields[m[1]] = m[2].trim().replace(/^["']|["']$/g, '');
  }
  return { fields, body: text.slice(fm[0].length) };
}

/** The first non-heading line of a body, as a fallback description. */
export function firstLine(body: string): string {
  return (body.split('\n').map((l) => l.trim()).find((l) => l !== '' && !l.startsWith('#')) ?? '').slice(0, DESCRIPTION_CHARS_MAX);
}

function describe(text: string): string {
  const { fields, body } = frontMatter(text);
  return fields.description || firstLine(body);
}

export function skillBody(s: Skill): string {
  if (s.template !== undefined) return s.template;
  const body = frontMatter(readFileSync(s.path, 'utf8')).body.trim();
  return body.length > BODY_CHARS_MAX ? body.slice(0, BODY_CHARS_MAX) + BODY_TRUNCATED : body;
}

/** The system prompt section listing what the `skill` tool and `/skill:` can load. */
export function skillsSection(skills: readonly Skill[]): string {
  if (skills.length === 0) return '';
  return `\n\n## Skills\nLoad one with the skill tool when it fits the task:\n${skills.map((s) => `- ${s.name}: ${s.description}`).join('\n')}`;
}

/** `/skill:<name> [task]` → the expanded prompt (A.16), or the unknown name. */
export function expandSkill(raw: string, skills: readonly Skill[]): { text: string } | { unknown: string } {
  const rest = raw.trim().slice('/skill:'.length);
  const m = /^(\S*)\s*([\s\S]*)$/.exec(rest)!;
  const name = m[1];
  const task = m[2].trim();
  const skill = skills.find((s) => s.name === name);
  if (!skill) return { unknown: name };
  let body: string;
  try {
    body = skillBody(skill);
  } catch {
    return { unknown: name };
  }
  if (skill.template !== undefined) body = body.replace(/\{args\}/g, task);
  return {
    text: `Follow this skill's instructions.\n\n--- SKILL: ${name} ---\n${body}\n--- END SKILL ---\n\nTask: ${task || 'Apply this skill to the current project now.'}`,
  };
}

/** The model's `skill` tool: a skill's body by name, loaded on demand. */
export function skillTool(skills: readonly Skill[]): Tool<ToolContext> {
  return {
    name: 'skill',
    description: `Load a skill's instructions by name. Available: ${skills.map((s) => `${s.name} (${s.description})`).join('; ')}`,
    parameters: { type: 'object', properties: { name: { type: 'string', description: 'the skill name' } }, required: ['name'] },
    async run(args) {
      const name = stringArg(args, 'name', 'skill');
      const s = skills.find((k) => k.name === name);
      if (!s) throw new ToolError(`unknown skill '${name}'. Available: ${skills.map((k) => k.name).join(', ')}`);
      return `--- SKILL: ${name} ---\n${skillBody(s)}`;
    },
  };
}
