// The layer rule of DESIGN.md: each folder under src/ is one layer, and a layer imports
// only from itself and the layers above it in this list. Any other arrow fails lint.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, dirname, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const LAYERS = [
  'core',
  'protocol',
  'config',
  'workspace',
  'syntax',
  'history',
  'index',
  'engine',
  'change',
  'services',
  'mcp',
  'agent',
  'serve',
  'tui',
  'cli',
] as const;

/**
 * The parts of `agent/`, in the same sense: a part imports only from itself and the parts
 * before it (base types and config, then model providers, the permission and trust policy,
 * sessions, tools, extensions, and the loop that assembles them).
 */
export const AGENT_PARTS = ['base', 'providers', 'policy', 'session', 'tools', 'extensions', 'loop'] as const;

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : /\.(ts|tsx)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

const IMPORT = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^import\s*['"]([^'"]+)['"]/gm;

const problems: string[] = [];

function agentPart(file: string): number {
  const part = relative(join(src, 'agent'), file).split(sep)[0];
  return AGENT_PARTS.indexOf(part as (typeof AGENT_PARTS)[number]);
}

function checkAgentPart(file: string, target: string, spec: string): void {
  const from = agentPart(file);
  const to = agentPart(target);
  if (from >= 0 && to > from) {
    problems.push(`${relative(root, file)}: agent/${AGENT_PARTS[from]} imports agent/${AGENT_PARTS[to]} (${spec}); it may import only ${AGENT_PARTS.slice(0, from + 1).join(', ')}`);
  }
}

for (const file of files(src)) {
  const layer = relative(src, file).split(sep)[0];
  const rank = LAYERS.indexOf(layer as (typeof LAYERS)[number]);
  if (rank < 0) {
    problems.push(`${relative(root, file)}: folder src/${layer} is not a layer in DESIGN.md`);
    continue;
  }
  if (layer === 'agent' && agentPart(file) < 0) {
    problems.push(`${relative(root, file)}: agent/ files live in one of its parts (${AGENT_PARTS.join(', ')})`);
  }
  const text = readFileSync(file, 'utf8');
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2] ?? m[3];
    if (!spec.startsWith('.')) continue;
    const target = resolve(dirname(file), spec);
    const rel = relative(src, target);
    if (rel.startsWith('..')) {
      problems.push(`${relative(root, file)}: imports ${spec}, outside src/`);
      continue;
    }
    const targetLayer = rel.split(sep)[0];
    const targetRank = LAYERS.indexOf(targetLayer as (typeof LAYERS)[number]);
    if (targetRank > rank) {
      problems.push(`${relative(root, file)}: layer ${layer} imports ${targetLayer} (${spec}); ${layer} may import only ${LAYERS.slice(0, rank + 1).join(', ')}`);
    }
    if (layer === 'agent' && targetLayer === 'agent') checkAgentPart(file, target, spec);
  }
}

if (problems.length > 0) {
  process.stderr.write(`layer rule broken:\n${problems.map((p) => `  ${p}`).join('\n')}\n`);
  process.exit(1);
}
process.stdout.write(`layers ok (${LAYERS.join(' → ')}; agent: ${AGENT_PARTS.join(' → ')})\n`);
