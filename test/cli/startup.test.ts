import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { RIFT_ARGS } from '../support/rift-process.ts'; // dist/ is built and current
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// What a command loads before it can answer is its start-up time (a warm `rift index`, the
// workspace server's first answer). The engine, and so `rift index` and every command that
// reads the index, needs no request schema: loading the schema library and building every
// tool's schema cost ~70 ms of each start. This pins the split (src/protocol/plain.ts).

const repo = fileURLToPath(new URL('../..', import.meta.url));

// A resolve hook in a child process reports each resolved URL on stderr.
const HOOK = `export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write('LOADED ' + r.url + '\\n'); return r; }`;
const REGISTER = `data:text/javascript,${encodeURIComponent(`import { register } from 'node:module'; register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(HOOK)}));`)}`;

/** Every module URL `node args` resolves, with the hook; the run must succeed. */
function loadedBy(args: string[], cwd?: string): string[] {
  const home = mkdtempSync(join(tmpdir(), 'rift-home-'));
  const r = spawnSync(process.execPath, ['--import', REGISTER, ...args], { encoding: 'utf8', timeout: 60_000, cwd, env: { ...process.env, RIFT_HOME: home } });
  rmSync(home, { recursive: true, force: true });
  assert.equal(r.status, 0, r.stderr);
  return r.stderr
    .split('\n')
    .filter((l) => l.startsWith('LOADED '))
    .map((l) => l.slice('LOADED '.length));
}

/** Every module URL that importing `entry` (a file under dist/) resolves, in a fresh Node process. */
function modulesLoadedBy(entry: string): string[] {
  return loadedBy(['--input-type=module', '-e', `await import(${JSON.stringify(pathToFileURL(join(repo, 'dist', entry)).href)});`]);
}

/** The files of the bundle (dist/bundle/, what rift runs) that a command loaded, with their text. */
function bundleFilesLoadedBy(args: string[], cwd: string): Array<{ url: string; text: string }> {
  return loadedBy([...RIFT_ARGS, ...args], cwd)
    .filter((u) => u.includes('/dist/bundle/'))
    .map((url) => ({ url, text: readFileSync(fileURLToPath(url), 'utf8') }));
}

/** Whether bundled code holds the schema library (its error class). */
const holdsSchemas = (text: string) => text.includes('ZodError');

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

test('bundled, `rift index` still loads no schema library, and `rift mcp` does', () => {
  const root = tempWorkspace({ 'a.py': 'def alpha():\n    return 1\n' });
  try {
    const index = bundleFilesLoadedBy(['index', '--workspace', root], root);
    // The probe sees the indexer's chunk (it would pass vacuously if it saw nothing).
    assert.ok(index.some((f) => f.text.includes('index snapshot published')), `the hook saw ${index.length} bundle files`);
    assert.deepEqual(index.filter((f) => holdsSchemas(f.text)).map((f) => f.url), [], 'rift index loads the schema library');
    // With stdin at its end the server starts, then stops: it loaded the schemas it validates with.
    const mcp = bundleFilesLoadedBy(['mcp', '--standalone', '--workspace', root], root);
    assert.ok(mcp.some((f) => holdsSchemas(f.text)));
  } finally {
    removeWorkspace(root);
  }
});
