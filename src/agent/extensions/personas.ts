import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compareNames, firstLine, frontMatter } from './skills.ts';

// Personas for the `agent` tool (reference B.9): `.rift/agents/*.md` in the project (wins a name
// collision), then `<user config>/agents/*.md`. Front matter: `name` (default: the file stem),
// `description`, `model` (an address or a role name) and `tools` (a comma-separated whitelist).
// The body is appended to the sub-agent's system prompt as `[persona: <name>]`.

export interface Persona {
  name: string;
  description: string;
  model?: string;
  /** Undefined: every standard tool. */
  tools?: string[];
  body: string;
}

export function discoverPersonas(dirs: readonly string[]): { personas: Persona[]; warnings: string[] } {
  const byName = new Map<string, Persona>();
  const warnings: string[] = [];
  for (const dir of dirs) {
    if (!existsSync(dir)) continue;
    let entries: string[];
    try {
      entries = readdirSync(dir).filter((e) => e.endsWith('.md')).sort();
    } catch {
      continue;
    }
    for (const entry of entries) {
      const path = join(dir, entry);
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch (e) {
        warnings.push(`skipping persona ${path}: ${(e as Error).message}`);
        continue;
      }
      const { fields, body } = frontMatter(text);
      const name = fields.name || entry.slice(0, -3);
      if (byName.has(name)) continue;
      const tools = fields.tools ? fields.tools.split(',').map((t) => t.trim()).filter((t) => t !== '') : undefined;
      byName.set(name, { name, description: fields.description || firstLine(body), model: fields.model || undefined, tools, body: body.trim() });
    }
  }
  return { personas: [...byName.values()].sort(compareNames), warnings };
}

/** System prompt sections (B.10 item 5): model roles when configured, then personas when any exist. */
export function rolesAndPersonasSection(roles: Readonly<Record<string, string>>, personas: readonly Persona[]): string {
  let out = '';
  const names = Object.keys(roles).sort();
  if (names.length > 0) {
    out += `\n\n## Model roles\nThe agent tool's \`model\` field accepts a role name for a sub-agent:\n${names.map((r) => `- ${r}: ${roles[r]}`).join('\n')}`;
  }
  if (personas.length > 0) {
    out += `\n\n## Personas\nThe agent tool's \`agent\` field runs a sub-agent as one of these:\n${personas.map((p) => `- ${p.name}: ${p.description}`).join('\n')}`;
  }
  return out;
}
