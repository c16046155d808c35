import { Engine } from '../services/engine.ts';
import { parse, UsageError, WORKSPACE } from './args.ts';

// `rift projection list` and `rift projection remove <id>…`: the workspace's projections as a
// person manages them — the ones isolated sub-agents and swarm candidates leave behind when
// their work was not published, besides those MCP clients made.

export async function runProjection(argv: readonly string[]): Promise<number> {
  const [action, ...rest] = argv;
  if (action === 'list') return list(rest);
  if (action === 'remove') return remove(rest);
  throw new UsageError(action === undefined ? 'expected list or remove' : `unknown action '${action}': expected list or remove`);
}

async function list(argv: readonly string[]): Promise<number> {
  const { values } = parse(argv, { ...WORKSPACE, json: { type: 'boolean' } }, 0);
  const engine = await Engine.open(values.workspace, { watch: false });
  try {
    const all = [];
    for (let page = 0; ; page++) {
      const r = engine.projections.list({ page_index: page, limit: 1000 });
      all.push(...r.projections);
      if (page + 1 >= r.pagination.total_pages) break;
    }
    if (values.json) {
      process.stdout.write(JSON.stringify({ projections: all }) + '\n');
      return 0;
    }
    if (all.length === 0) process.stderr.write('no projections\n');
    for (const p of all) {
      const state = p.state.unaccepted ? 'unaccepted' : p.state.dirty ? 'changed' : 'clean';
      process.stdout.write(`${p.id}  ${state.padEnd(10)}  ${p.path}${p.reason ? `  (${p.reason})` : ''}\n`);
    }
    return 0;
  } finally {
    await engine.close();
  }
}

async function remove(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, { ...WORKSPACE }, 'some');
  const engine = await Engine.open(values.workspace, { watch: false });
  try {
    for (const id of positionals) {
      const r = await engine.projections.remove(id);
      process.stdout.write(`removed ${r.projection}${r.state.dirty ? ' (its unpublished changes with it)' : ''}\n`);
    }
    return 0;
  } finally {
    await engine.close();
  }
}

