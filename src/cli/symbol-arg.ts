import { parseSymbolId, symbolId } from '../core/ids.ts';
import type { Engine } from '../services/engine.ts';
import { UsageError } from './args.ts';

// A symbol named on the command line: a SymbolId as tools return it, or a (qualified) name that
// matches exactly one declaration. Several equally good matches are listed for the caller to pick.

export async function symbolArgument(engine: Engine, arg: string, rev?: string): Promise<string> {
  if (parseSymbolId(arg) !== null) return arg;
  const found = await engine.read.getSymbol({ name: arg, include: [], limit: 20, ...(rev === undefined ? {} : { rev }) });
  const exact = found.hits.filter((h) => h.symbol.name === arg || h.symbol.name.endsWith(`.${arg}`) || h.symbol.name.endsWith(`::${arg}`));
  const picks = exact.length > 0 ? exact : found.hits;
  if (picks.length === 1) return picks[0].symbol.id;
  if (picks.length === 0) throw new UsageError(`no declaration matches '${arg}'; try 'rift symbol ${arg}' or pass a SymbolId`);
  const listed = picks.map((h) => `  ${h.symbol.id}    ${h.path}:${h.line}`).join('\n');
  throw new UsageError(`'${arg}' names ${picks.length} declarations; pass one SymbolId:\n${listed}`);
}

/** `Store.find  ts/store.ts:10` for a SymbolId (the path is the id's own). */
export function describeSymbol(id: string, line?: number): string {
  const a = parseSymbolId(id);
  if (a === null) return id;
  return `${a.qualifiedName}  ${a.path}${line === undefined ? '' : `:${line}`}`;
}

export { symbolId };
