#!/usr/bin/env node
// The installed entry point runs the compiled program in dist/ (built by `npm ci` via
// the `prepare` script). From a source checkout without dist/, it falls back to tsx.
import { existsSync } from 'node:fs';

const dist = new URL('../dist/cli/entry.js', import.meta.url);
if (existsSync(dist)) {
  await import(dist.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/cli/entry.ts', import.meta.url).href);
}
