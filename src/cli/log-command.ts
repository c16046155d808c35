import { parseSymbolId } from '../core/ids.ts';
import type { GetSymbolResult } from '../protocol/read.ts';
import { Engine } from '../services/engine.ts';
import { parse, UsageError, WORKSPACE } from './args.ts';
import { describeSymbol, symbolArgument } from './symbol-arg.ts';

// `rift log <symbol>`: one declaration's timeline, newest first, one line per version the way
// `git log --oneline` reads: short commit, date, what changed, the commit's summary.

type History = NonNullable<GetSymbolResult['hits'][number]['history']>;

/** Column width of the longest version kind (`decorators_changed`). */
const KIND_WIDTH = 18;

export function timelineRows(history: History): string {
  const rows = history.versions.map(
    (v) => `${v.revision.slice(0, 7)} ${v.timestamp.slice(0, 10)} ${v.kind.padEnd(KIND_WIDTH)} ${v.summary ?? ''}`.trimEnd() + '\n',
  );
  if (!history.complete) rows.push('… (older revisions past [providers.history] max_revisions)\n');
  return rows.join('');
}

export async function runLog(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, { ...WORKSPACE, json: { type: 'boolean' }, rev: { type: 'string' } }, 1);
  const rev = values.rev;
  const engine = await Engine.open(values.workspace ?? '.', { watch: false });
  try {
    const id = await symbolArgument(engine, positionals[0], rev);
    const address = parseSymbolId(id)!;
    const found = await engine.read.getSymbol({ name: address.qualifiedName, include: ['history'], limit: 1000, ...(rev === undefined ? {} : { rev }) });
    const hit = found.hits.find((h) => h.symbol.id === id);
    if (!hit?.history) throw new UsageError(`no declaration ${id}${rev === undefined ? '' : ` at ${rev}`}; try 'rift symbol ${address.qualifiedName}'`);
    if (values.json) {
      process.stdout.write(JSON.stringify({ ...hit.history, warnings: found.warnings }) + '\n');
      return 0;
    }
    for (const w of found.warnings) process.stderr.write(`warning: ${w.message}\n`);
    process.stderr.write(`${describeSymbol(id, hit.line)}\n`);
    process.stdout.write(timelineRows(hit.history));
    return 0;
  } finally {
    await engine.close();
  }
}
