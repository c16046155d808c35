#!/usr/bin/env node
// The installed entry point runs the bundled program in dist/bundle/ (built by `npm ci` via the
// `prepare` script: tsc into dist/, then scripts/bundle.mjs), else the compiled modules in
// dist/, else, from a source checkout without dist/, the sources through tsx.
import { existsSync } from 'node:fs';

const bundle = new URL('../dist/bundle/entry.js', import.meta.url);
const dist = new URL('../dist/cli/entry.js', import.meta.url);
if (existsSync(bundle)) {
  await import(bundle.href);
} else if (existsSync(dist)) {
  await import(dist.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/cli/entry.ts', import.meta.url).href);
}
