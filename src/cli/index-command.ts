import { Engine } from '../services/engine.ts';
import type { BuildProgress } from '../index/indexer.ts';
import { parse, WORKSPACE } from './args.ts';

// `rift index`: build or refresh the workspace index, with progress on a terminal.

export async function runIndex(argv: readonly string[]): Promise<number> {
  const { values } = parse(argv, { ...WORKSPACE, json: { type: 'boolean' } }, 0);
  const engine = await Engine.open(values.workspace, { watch: false });
  try {
    const tty = process.stderr.isTTY === true && !values.json;
    let last = 0;
    const progress = (p: BuildProgress) => {
      if (!tty) return;
      const now = Date.now();
      if (now - last < 80 && p.done !== p.total) return;
      last = now;
      const text = p.phase === 'walk' ? 'scanning workspace…' : `parsing ${p.done}/${p.total} files`;
      process.stderr.write(`\r\x1b[2K${text}`);
    };
    const stats = await engine.build(progress);
    if (tty) process.stderr.write('\r\x1b[2K');
    if (values.json) {
      process.stdout.write(JSON.stringify({ ...stats, revision: engine.indexer.snapshot.revision }) + '\n');
    } else {
      process.stdout.write(
        `indexed ${stats.files} files (${stats.parsed} parsed, ${stats.reparsed} re-parsed, ${stats.removed} removed, ${stats.skipped} skipped), ` +
          `${stats.symbols} symbols in ${(stats.elapsedMs / 1000).toFixed(2)}s — tree ${engine.indexer.snapshot.revision}\n`,
      );
    }
    return 0;
  } finally {
    await engine.close();
  }
}
