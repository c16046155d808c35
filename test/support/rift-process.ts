import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// How tests start rift as a process: the bundled program, as users run it (`npm test` builds
// it first). A start from source through tsx costs twice the time and its parse workers compile
// TypeScript again; across the suite's several hundred starts that was minutes of CI.

const repo = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(repo, 'dist', 'bundle', 'entry.js');

function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

if (!existsSync(BIN) || statSync(BIN).mtimeMs < newest(join(repo, 'src'))) {
  throw new Error('dist/bundle/ is missing or older than src/: run `npm run build` (npm test does it first)');
}

/** Arguments after `node` that run rift: `spawn(process.execPath, [...RIFT_ARGS, 'mcp'])`. */
export const RIFT_ARGS: readonly string[] = [BIN];
