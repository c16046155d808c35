import type { MapModuleShape, MapResource } from '../protocol/resources.ts';
import { Engine } from '../services/engine.ts';
import { parse, WORKSPACE } from './args.ts';
import { describeSymbol } from './symbol-arg.ts';

// `rift map`: the orientation snapshot `rift://map` serves, as a tree a person reads.

export async function runMap(argv: readonly string[]): Promise<number> {
  const { values } = parse(argv, { ...WORKSPACE, json: { type: 'boolean' } }, 0);
  const engine = await Engine.open(values.workspace ?? '.', { watch: false });
  try {
    await engine.build();
    const map = engine.map.current();
    process.stdout.write(values.json ? JSON.stringify(map) + '\n' : render(map));
    return 0;
  } finally {
    await engine.close();
  }
}

export function render(map: MapResource): string {
  const counts = (files: number, symbols: number) => `${String(files).padStart(6)} files ${String(symbols).padStart(7)} symbols`;
  let out = `tree ${map.revision}\n\nlanguages\n`;
  const width = Math.max(0, ...map.languages.map((l) => l.language.length));
  for (const l of map.languages) out += `  ${l.language.padEnd(width)}  ${counts(l.files, l.symbols)}\n`;
  out += '\nmodules\n';
  const rows: Array<[string, MapModuleShape]> = [];
  const walk = (mods: readonly MapModuleShape[], depth: number) => {
    for (const m of mods) {
      rows.push([`${'  '.repeat(depth)}${m.path.slice(m.path.lastIndexOf('/') + 1)}/`, m]);
      if (m.children) walk(m.children, depth + 1);
    }
  };
  walk(map.modules, 1);
  const name = Math.max(0, ...rows.map(([n]) => n.length));
  for (const [n, m] of rows) out += `${n.padEnd(name)}  ${counts(m.files, m.symbols)}\n`;
  out += '\nhubs (most referenced)\n';
  if (map.hubs.length === 0) out += '  none: no references resolved\n';
  for (const h of map.hubs) out += `  ${String(h.references).padStart(5)}  ${h.kind} ${describeSymbol(h.symbol)}\n`;
  out += '\nentry points\n';
  if (map.entry_points.length === 0) out += '  none found\n';
  for (const e of map.entry_points) out += `  ${describeSymbol(e)}\n`;
  out += '\ndocs\n';
  if (map.docs.length === 0) out += '  none\n';
  for (const d of map.docs) out += `  ${d}\n`;
  return out;
}
