import { SEARCH_LIMIT_DEFAULT } from '../core/limits.ts';
import { Engine } from '../services/engine.ts';
import { PAGING, pageFlags, parse, UsageError, WORKSPACE } from './args.ts';

// `rift search <query>`: ranked hits as `path:line  kind name` rows a terminal can click
// (`--rev`: over a commit's tree).

export async function runSearch(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      ...WORKSPACE,
      json: { type: 'boolean' },
      target: { type: 'string' },
      'include-path': { type: 'string', multiple: true },
      'exclude-path': { type: 'string', multiple: true },
      ...PAGING,
      source: { type: 'boolean' },
      rev: { type: 'string' },
    },
    1,
  );
  const target = values.target ?? 'all';
  if (target !== 'all' && target !== 'symbol' && target !== 'file') throw new UsageError('--target is one of symbol, file, all');
  const paging = pageFlags(values, SEARCH_LIMIT_DEFAULT);
  const engine = await Engine.open(values.workspace ?? '.', { watch: false });
  try {
    const result = await engine.search.search({
      query: positionals[0],
      target,
      ...paging,
      paths: { include: values['include-path'] ?? [], exclude: values['exclude-path'] ?? [] },
      include: values.source || values.json ? ['source', 'score'] : [],
      ...(values.rev === undefined ? {} : { rev: values.rev }),
    });
    if (values.json) {
      process.stdout.write(JSON.stringify(result) + '\n');
      return 0;
    }
    for (const w of result.warnings) process.stderr.write(`warning: ${w.message}\n`);
    if (result.results.length === 0) {
      process.stderr.write(`nothing matches '${positionals[0]}'\n`);
      return 1;
    }
    for (const r of result.results) {
      const what = r.hit.target === 'symbol' ? `${r.hit.symbol.kind} ${r.hit.symbol.name}` : 'file';
      process.stdout.write(`${r.path}:${r.line}  ${what}\n`);
      if (r.source !== undefined) {
        const text = r.hit.target === 'symbol' ? r.source.split('\n').slice(0, 3).join('\n') : r.source;
        process.stdout.write(text.replace(/^/gm, '    ') + '\n');
      }
    }
    const { page_index, total_pages } = result.pagination;
    if (total_pages > 1) process.stderr.write(`page ${page_index + 1} of ${total_pages} (--page N for more)\n`);
    return 0;
  } finally {
    await engine.close();
  }
}
