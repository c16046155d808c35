import { buildSync } from 'esbuild';
import { mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Test children spawned by the hundred start far faster bundled into one ES module than
// compiled file by file through tsx (spawn cost dominates the crash tests). The bundle keeps
// packages external and sits inside the repository, so `node_modules` still resolves.

const repo = fileURLToPath(new URL('../..', import.meta.url));
const outDir = join(repo, 'node_modules', '.cache', 'rift-tests');
const built = new Map<string, string>();

/** Bundles `entry` (a TypeScript file) once per test process; returns the .mjs path. */
export function bundled(entry: string): string {
  let out = built.get(entry);
  if (!out) {
    mkdirSync(outDir, { recursive: true });
    out = join(outDir, `${basename(entry, '.ts')}-${process.pid}.mjs`);
    buildSync({ entryPoints: [entry], bundle: true, platform: 'node', format: 'esm', packages: 'external', outfile: out, logLevel: 'warning' });
    built.set(entry, out);
  }
  return out;
}
