import type { SearchResult } from '../protocol/search.ts';
import { Engine } from '../services/engine.ts';
import { intFlag, PAGING, pageFlags, parse, WORKSPACE } from './args.ts';
import { describeSymbol, symbolArgument } from './symbol-arg.ts';

// `rift callers <symbol>` and `rift callees <symbol>`: the incoming or outgoing walk of the
// relationship graph from one declaration, printed as a tree (each hit under the hit it was
// reached through).

const DEFAULT_FACETS = ['calls', 'constructs'];

type Hit = SearchResult['results'][number];

export async function runCallers(argv: readonly string[], direction: 'incoming' | 'outgoing'): Promise<number> {
  const { values, positionals } = parse(
    argv,
    { ...WORKSPACE, json: { type: 'boolean' }, depth: { type: 'string' }, facets: { type: 'string' }, ...PAGING },
    1,
  );
  const depth = intFlag(values.depth, 'depth') ?? 1;
  const facets = (values.facets ?? DEFAULT_FACETS.join(',')).split(',').filter((f) => f !== '');
  const paging = pageFlags(values, 1000);
  const engine = await Engine.open(values.workspace ?? '.', { watch: false });
  try {
    const seed = await symbolArgument(engine, positionals[0]);
    const result = await engine.search.search({
      traversal: { seed, direction, depth, facets: facets as never },
      ...paging,
    });
    if (values.json) {
      process.stdout.write(JSON.stringify(result) + '\n');
      return 0;
    }
    for (const w of result.warnings) process.stderr.write(`warning: ${w.message}\n`);
    process.stdout.write(`${describeSymbol(seed)}\n`);
    if (result.results.length === 0) {
      process.stderr.write(`no ${direction === 'incoming' ? 'callers' : 'callees'} (${facets.join(', ')}) within depth ${depth}\n`);
      return 1;
    }
    process.stdout.write(tree(seed, result.results, direction));
    const { page_index, total_pages } = result.pagination;
    if (total_pages > 1) process.stderr.write(`page ${page_index + 1} of ${total_pages} (--page N for more)\n`);
    return 0;
  } finally {
    await engine.close();
  }
}

/** Hits nested under the hit their route passed through last. */
export function tree(seed: string, hits: readonly Hit[], direction: 'incoming' | 'outgoing'): string {
  const arrow = direction === 'incoming' ? '←' : '→';
  const byParent = new Map<string, Hit[]>();
  for (const h of hits) {
    const last = h.traversal_path!.at(-1)!.relationship;
    const parent = direction === 'incoming' ? last.to : last.from;
    const list = byParent.get(parent) ?? [];
    list.push(h);
    byParent.set(parent, list);
  }
  let out = '';
  const emit = (id: string, indent: string) => {
    for (const h of byParent.get(id) ?? []) {
      const kind = h.traversal_path!.at(-1)!.relationship.kind;
      const heuristic = h.traversal_path!.at(-1)!.relationship.derivation === 'heuristic' ? ' (heuristic)' : '';
      out += `${indent}${arrow} ${h.hit.target === 'symbol' ? h.hit.symbol.name : ''}  ${h.path}:${h.line}  ${kind}${heuristic}\n`;
      if (h.hit.target === 'symbol') emit(h.hit.symbol.id, indent + '  ');
    }
  };
  emit(seed, '  ');
  return out;
}
