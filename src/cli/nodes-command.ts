import { offsetOfPosition } from '../core/lines.ts';
import { Engine } from '../services/engine.ts';
import { readBytesSync } from '../workspace/read.ts';
import { parse, UsageError, WORKSPACE } from './args.ts';

// `rift nodes <path>:<line>[:<col>]` or `rift nodes <path> <byte-offset>`: the syntax nodes
// containing a position, outermost first. A position no node contains says why.

const POSITION = /^(.+?):(\d+)(?::(\d+))?$/;

export async function runNodes(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseNodesArgs(argv);
  const engine = await Engine.open(values.workspace ?? '.', { watch: false });
  try {
    await engine.build();
    const { path, where } = positionals;
    const bytes = readWhole(engine.root, path, engine.config.current().config.source.max_file_bytes);
    let position: number;
    if (where.kind === 'offset') position = where.offset;
    else {
      // Unreadable files get no conversion: the service names what is wrong with them.
      const at = bytes ? offsetOfPosition(bytes, where.line, where.column) : { offset: 0 };
      if ('past' in at) {
        throw new UsageError(
          at.past === 'line'
            ? `${path} has ${at.lines} line${at.lines === 1 ? '' : 's'}; line ${where.line} is past its end`
            : `line ${where.line} of ${path} has ${at.columns} character${at.columns === 1 ? '' : 's'}; column ${where.column} is past its end (columns start at 1)`,
        );
      }
      position = at.offset;
    }
    const result = await engine.read.nodes({ path, position });
    if (values.json) {
      process.stdout.write(JSON.stringify(result) + '\n');
      return 0;
    }
    if (result.nodes.length === 0) {
      const size = bytes?.length ?? 0;
      process.stderr.write(position >= size ? `no syntax node contains byte ${position}: ${path} is ${size} bytes long\n` : `no syntax node contains byte ${position} of ${path}\n`);
      return 1;
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

type Where = { kind: 'offset'; offset: number } | { kind: 'line'; line: number; column: number };

function parseNodesArgs(argv: readonly string[]) {
  const options = { ...WORKSPACE, json: { type: 'boolean' } } as const;
  let parsed;
  try {
    parsed = parse(argv, options, 2);
  } catch {
    parsed = parse(argv, options, 1);
  }
  const [first, second] = parsed.positionals;
  let where: Where;
  let path = first;
  if (second !== undefined) {
    const offset = Number(second);
    if (!/^\d+$/.test(second) || !Number.isSafeInteger(offset)) throw new UsageError('<byte-offset> must be a whole number');
    where = { kind: 'offset', offset };
  } else {
    const m = POSITION.exec(first);
    if (!m) throw new UsageError('give a position: <path>:<line>[:<col>] or <path> <byte-offset>');
    path = m[1];
    const line = Number(m[2]);
    const column = m[3] === undefined ? 1 : Number(m[3]);
    if (line < 1) throw new UsageError('lines start at 1');
    where = { kind: 'line', line, column };
  }
  return { values: parsed.values, positionals: { path, where } };
}

/** The file's bytes for position conversion, or null when it cannot be read as a whole. */
function readWhole(root: string, path: string, maxBytes: number): Uint8Array | null {
  const r = readBytesSync(root, path, maxBytes);
  return r.ok ? r.bytes : null;
}
