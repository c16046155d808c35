import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import '../support/rift-process.ts'; // dist/ is built and current

// What a command loads before it can answer is its start-up time (a warm `rift index`, the
// workspace server's first answer). The engine, and so `rift index` and every command that
// reads the index, needs no request schema: loading the schema library and building every
// tool's schema cost ~70 ms of each start. This pins the split (src/protocol/plain.ts).

const repo = fileURLToPath(new URL('../..', import.meta.url));

/** Every module URL that importing `entry` (a file under dist/) resolves, in a fresh Node process. */
function modulesLoadedBy(entry: string): string[] {
  // A resolve hook in the child reports each resolved URL on stderr.
  const hook = `export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write('LOADED ' + r.url + '\\n'); return r; }`;
  const register = `import { register } from 'node:module'; register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));`;
  const r = spawnSync(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(register)}`, '--input-type=module', '-e', `await import(${JSON.stringify(pathToFileURL(join(repo, 'dist', entry)).href)});`],
    { encoding: 'utf8', timeout: 60_000 },
  );
  assert.equal(r.status, 0, r.stderr);
  return r.stderr
    .split('\n')
    .filter((l) => l.startsWith('LOADED '))
    .map((l) => l.slice('LOADED '.length));
}

test('the engine and the index command load without the schema library', () => {
  for (const entry of ['services/engine.js', 'cli/index-command.js']) {
    const loaded = modulesLoadedBy(entry);
    // The probe sees the engine's own modules (it would pass vacuously if the hook saw nothing).
    assert.ok(loaded.some((u) => u.endsWith('/dist/index/indexer.js')), `${entry}: the hook saw ${loaded.length} modules`);
    const schemas = loaded.filter((u) => /\/node_modules\/zod\//.test(u) || /\/dist\/protocol\/(?!plain\.js$)[^/]+\.js$/.test(u));
    assert.deepEqual(schemas, [], `${entry} loads request schemas at start-up`);
  }
});

test('the MCP server still loads the schemas it validates requests with', () => {
  const loaded = modulesLoadedBy('mcp/server.js');
  assert.ok(loaded.some((u) => /\/node_modules\/zod\//.test(u)));
  assert.ok(loaded.some((u) => u.endsWith('/dist/protocol/read.js')));
});
