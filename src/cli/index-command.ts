import { Engine } from '../services/engine.ts';
import { describeSkip } from '../services/read-service.ts';
import type { BuildProgress, BuildStats } from '../index/indexer.ts';
import { parse, WORKSPACE } from './args.ts';

// `rift index`: build or refresh the workspace index. On a terminal it draws a progress bar
// with files/s and an ETA; its last line says what each count means; `--skipped` lists the
// visible files left out, each with its reason.

const BAR_WIDTH = 24;
const REDRAW_MS = 80;

export async function runIndex(argv: readonly string[]): Promise<number> {
  const { values } = parse(argv, { ...WORKSPACE, json: { type: 'boolean' }, skipped: { type: 'boolean' } }, 0);
  const engine = await Engine.open(values.workspace ?? '.', { watch: false });
  try {
    const tty = process.stderr.isTTY === true && !values.json;
    const bar = progressBar((text) => process.stderr.write(`\r\x1b[2K${text}`));
    const stats = await engine.build(tty ? bar : undefined);
    if (tty) process.stderr.write('\r\x1b[2K');
    const skipped = engine.indexer.skippedFiles();
    if (values.json) {
      const out: Record<string, unknown> = { ...stats, revision: engine.indexer.snapshot.revision };
      if (values.skipped) out.skippedFiles = skipped;
      process.stdout.write(JSON.stringify(out) + '\n');
      return 0;
    }
    if (values.skipped) for (const s of skipped) process.stdout.write(`${s.path}\t${describeSkip(s.reason)}\n`);
    process.stdout.write(summary(stats, engine.indexer.snapshot.revision) + '\n');
    return 0;
  } finally {
    await engine.close();
  }
}

/** The closing line: every count with what it means. */
function summary(s: BuildStats, revision: string): string {
  const n = (x: number) => x.toLocaleString('en');
  const text = s.files - s.parsed;
  return (
    `indexed ${n(s.files)} files: ${n(s.parsed)} parsed for declarations (${n(s.symbols)} symbols), ` +
    `${n(text)} stored as text only; ${n(s.skipped)} skipped (visible but left out: binary, not UTF-8, over ` +
    `max_file_bytes, links; \`rift index --skipped\` lists them). This run re-parsed ${n(s.reparsed)} changed files ` +
    `and removed ${n(s.removed)}, in ${(s.elapsedMs / 1000).toFixed(2)}s — tree ${revision}`
  );
}

/** A redraw-throttled progress bar: done/total, files/s over the parse so far, and an ETA. */
function progressBar(draw: (text: string) => void): (p: BuildProgress) => void {
  let last = 0;
  let started = 0;
  return (p) => {
    const now = performance.now();
    if (p.phase === 'walk') {
      draw('scanning workspace…');
      return;
    }
    if (started === 0) started = now;
    if (now - last < REDRAW_MS && p.done !== p.total) return;
    last = now;
    const share = p.total === 0 ? 1 : p.done / p.total;
    const filled = Math.round(share * BAR_WIDTH);
    const seconds = (now - started) / 1000;
    const rate = seconds > 0 ? p.done / seconds : 0;
    const eta = rate > 0 ? `ETA ${formatSeconds((p.total - p.done) / rate)}` : 'ETA …';
    const skipped = p.skipped ? `, ${p.skipped.toLocaleString('en')} skipped` : '';
    draw(
      `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${p.done.toLocaleString('en')}/${p.total.toLocaleString('en')} files` +
        `${skipped}  ${Math.round(rate).toLocaleString('en')} files/s  ${eta}`,
    );
  };
}

function formatSeconds(s: number): string {
  if (s < 60) return `${Math.ceil(s)}s`;
  const m = Math.floor(s / 60);
  return `${m}m${String(Math.ceil(s - m * 60)).padStart(2, '0')}s`;
}
