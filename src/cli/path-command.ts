import { TRAVERSAL_DEPTH_MAX } from '../core/limits.ts';
import { Engine } from '../services/engine.ts';
import { intFlag, parse, WORKSPACE } from './args.ts';
import { describeSymbol, symbolArgument } from './symbol-arg.ts';

// `rift path <from> <to>`: whether, and by which shortest route, the outgoing walk from one
// declaration reaches another.

export async function runPath(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    { ...WORKSPACE, json: { type: 'boolean' }, depth: { type: 'string' }, facets: { type: 'string' }, incoming: { type: 'boolean' } },
    2,
  );
  const depth = intFlag(values.depth, 'depth') ?? TRAVERSAL_DEPTH_MAX;
  const facets = values.facets?.split(',').filter((f) => f !== '');
  const engine = await Engine.open(values.workspace ?? '.', { watch: false });
  try {
    const seed = await symbolArgument(engine, positionals[0]);
    const to = await symbolArgument(engine, positionals[1]);
    const direction = values.incoming ? 'incoming' : 'outgoing';
    const result = await engine.search.search({ traversal: { seed, to, depth, direction, ...(facets ? { facets: facets as never } : {}) } });
    if (values.json) {
      process.stdout.write(JSON.stringify(result) + '\n');
      return 0;
    }
    for (const w of result.warnings) process.stderr.write(`warning: ${w.message}\n`);
    const hit = result.results[0];
    if (hit === undefined) {
      process.stderr.write(`no path from ${describeSymbol(seed)} to ${describeSymbol(to)} within depth ${depth}${facets ? ` following ${facets.join(', ')}` : ''}\n`);
      return 1;
    }
    process.stdout.write(`${describeSymbol(seed)}\n`);
    for (const hop of hit.traversal_path!) {
      const r = hop.relationship;
      const next = hop.direction === 'outgoing' ? r.to : r.from;
      const arrow = hop.direction === 'outgoing' ? '→' : '←';
      process.stdout.write(`  ${r.kind} ${arrow} ${describeSymbol(next)}${r.derivation === 'heuristic' ? '  (heuristic)' : ''}\n`);
    }
    return 0;
  } finally {
    await engine.close();
  }
}
