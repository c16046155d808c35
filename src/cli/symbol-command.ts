import { Engine } from '../services/engine.ts';
import { PAGING, pageFlags, parse, WORKSPACE } from './args.ts';
import { timelineRows } from './log-command.ts';

// `rift symbol <name>`: declarations by name, as `path:line  kind name` rows; `--rev` reads
// them as a commit holds them, `--history` adds each one's timeline.

export async function runSymbol(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    { ...WORKSPACE, json: { type: 'boolean' }, ...PAGING, source: { type: 'boolean' }, rev: { type: 'string' }, history: { type: 'boolean' } },
    1,
  );
  const paging = pageFlags(values, 20);
  const engine = await Engine.open(values.workspace ?? '.', { watch: false });
  try {
    const result = await engine.read.getSymbol({
      name: positionals[0],
      ...paging,
      include: [...(values.source || values.json ? (['source'] as const) : []), ...(values.history ? (['history'] as const) : [])],
      ...(values.rev === undefined ? {} : { rev: values.rev }),
    });
    if (values.json) {
      process.stdout.write(JSON.stringify(result) + '\n');
      return 0;
    }
    if (result.hits.length === 0) {
      process.stderr.write(`no declaration matches '${positionals[0]}'\n`);
      return 1;
    }
    for (const hit of result.hits) {
      process.stdout.write(`${hit.path}:${hit.line}  ${hit.symbol.kind} ${hit.symbol.name}\n`);
      if (hit.source) process.stdout.write(hit.source.text.replace(/^/gm, '    ') + '\n');
      if (hit.history) process.stdout.write(timelineRows(hit.history).replace(/^(?=.)/gm, '    '));
    }
    for (const w of result.warnings) process.stderr.write(`warning: ${w.message}\n`);
    const { page_index, total_pages } = result.pagination;
    if (total_pages > 1) process.stderr.write(`page ${page_index + 1} of ${total_pages} (--page N for more)\n`);
    return 0;
  } finally {
    await engine.close();
  }
}
