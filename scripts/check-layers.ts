// The layer rule of DESIGN.md: each folder under src/ is one layer, and a layer imports
// only from itself and the layers above it in this list. Any other arrow fails lint, and so
// does a disagreement between this list, docs/architecture.md's layer table and the tree.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, dirname, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const LAYERS = [
  'core',
  'protocol',
  'config',
  'process',
  'workspace',
  'syntax',
  'history',
  'index',
  'engine',
  'change',
  'services',
  'mcp',
  'agent',
  'swarm',
  'serve',
  'tui',
  'acp',
  'cli',
] as const;

/** The front ends over the agent: each stands alone, so none imports another (only `cli` wires them). */
export const FRONT_ENDS = ['serve', 'tui', 'acp'] as const;

/**
 * The parts of `agent/`, in the same sense: a part imports only from itself and the parts
 * before it (base types and config, then model providers, the permission and trust policy,
 * sessions, tools, extensions, and the loop that assembles them).
 */
export const AGENT_PARTS = ['base', 'providers', 'policy', 'session', 'tools', 'extensions', 'loop'] as const;

/** Layers DESIGN.md lists that have no folder yet; adding the folder moves a layer out of here. */
export const PLANNED: ReadonlySet<string> = new Set<string>();

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : /\.(ts|tsx)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

const IMPORT = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^import\s*['"]([^'"]+)['"]/gm;

const problems: string[] = [];

function isFrontEnd(layer: string): boolean {
  return (FRONT_ENDS as readonly string[]).includes(layer);
}

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

// docs/architecture.md's layer table: the same layers, in the same order, with the same status.
const doc = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');
const table = [...doc.matchAll(/^\| `([a-z]+)\/` \| .* \| (present|planned) \|$/gm)].map((m) => ({ layer: m[1], status: m[2] }));
if (table.map((r) => r.layer).join(' ') !== LAYERS.join(' ')) {
  problems.push(`docs/architecture.md lists the layers ${table.map((r) => r.layer).join(', ')}; this script knows ${LAYERS.join(', ')}`);
}
const parts = [...doc.matchAll(/^\| `([a-z]+)\/` \| [^|]* \|$/gm)].map((m) => m[1]);
if (parts.join(' ') !== AGENT_PARTS.join(' ')) {
  problems.push(`docs/architecture.md lists the agent parts ${parts.join(', ')}; this script knows ${AGENT_PARTS.join(', ')}`);
}
for (const { layer, status } of table) {
  const present = existsSync(join(src, layer));
  if ((status === 'planned') !== PLANNED.has(layer)) problems.push(`docs/architecture.md marks ${layer}/ ${status}, this script ${PLANNED.has(layer) ? 'planned' : 'present'}`);
  if (present && status === 'planned') problems.push(`src/${layer} exists: mark the ${layer}/ layer present in docs/architecture.md and scripts/check-layers.ts`);
  if (!present && status === 'present') problems.push(`src/${layer} does not exist, yet docs/architecture.md marks it present (mark it planned, or add the folder)`);
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
    } else if (targetLayer !== layer && isFrontEnd(layer) && isFrontEnd(targetLayer)) {
      problems.push(`${relative(root, file)}: front end ${layer} imports front end ${targetLayer} (${spec}); front ends share code through agent/ only`);
    }
    if (layer === 'agent' && targetLayer === 'agent') checkAgentPart(file, target, spec);
  }
}

if (problems.length > 0) {
  process.stderr.write(`layer rule broken:\n${problems.map((p) => `  ${p}`).join('\n')}\n`);
  process.exit(1);
}
process.stdout.write(`layers ok (${LAYERS.map((l) => (PLANNED.has(l) ? `(${l})` : l)).join(' → ')}; agent: ${AGENT_PARTS.join(' → ')}; planned in parentheses)\n`);
