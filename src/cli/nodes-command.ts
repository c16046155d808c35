import { Engine } from '../services/engine.ts';
import { parse, UsageError, WORKSPACE } from './args.ts';

// `rift nodes <path> <offset>`: the syntax nodes containing a byte offset, outermost first.

export async function runNodes(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, { ...WORKSPACE, json: { type: 'boolean' } }, 2);
  const position = Number(positionals[1]);
  if (!Number.isInteger(position) || position < 0) throw new UsageError('<byte-offset> must be a whole number');
  const engine = await Engine.open(values.workspace, { watch: false });
  try {
    await engine.build();
    const result = await engine.read.nodes({ path: positionals[0], position });
    if (values.json) {
      process.stdout.write(JSON.stringify(result) + '\n');
      return 0;
    }
    result.nodes.forEach((n, depth) => {
      const link = n.symbol ? `  → ${n.symbol}` : '';
      process.stdout.write(`${'  '.repeat(depth)}${n.kind} ${n.range.start}-${n.range.end}  ${n.id}${link}\n`);
    });
    return 0;
  } finally {
    await engine.close();
  }
}
