import { buildSync } from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Test children spawned by the hundred start far faster bundled into one ES module than
// compiled file by file through tsx (spawn cost dominates the crash tests): everything but the
// native addons is inlined, so Node neither resolves nor lexes hundreds of modules per start.
// The bundle sits inside the repository, so the addons still resolve from node_modules.

const repo = fileURLToPath(new URL('../..', import.meta.url));
const outDir = join(repo, 'node_modules', '.cache', 'rift-tests');
const NATIVE = ['better-sqlite3', '@parcel/watcher'];
// Inlined CommonJS packages call `require`, which an ES module has to make for itself.
const BANNER = "import { createRequire as __riftRequire } from 'node:module'; const require = __riftRequire(import.meta.url);";
const built = new Map<string, string>();

/** Bundles `entry` (a TypeScript file) once per test process; returns the .mjs path. */
export function bundled(entry: string): string {
  let out = built.get(entry);
  if (!out) {
    mkdirSync(outDir, { recursive: true });
    const id = createHash('sha256').update(entry).digest('hex').slice(0, 12);
    out = join(outDir, `${basename(entry, '.ts')}-${id}.mjs`);
    const result = buildSync({ entryPoints: [entry], bundle: true, platform: 'node', format: 'esm', external: NATIVE, banner: { js: BANNER }, write: false, logLevel: 'warning' });
    // Written whole and renamed, so a concurrent test run never starts a half-written bundle.
    const temp = `${out}.${process.pid}.tmp`;
    writeFileSync(temp, result.outputFiles[0].contents);
    renameSync(temp, out);
    built.set(entry, out);
  }
  return out;
}
