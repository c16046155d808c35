import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { pendingTrust } from '../../src/agent/extensions/project-trust.ts';
import { TrustStore } from '../../src/agent/policy/trust.ts';
import { startRift, type RiftMcp } from '../helpers/mcp.ts';
import { writeConceptModel } from '../support/onnx-model.ts';
import { RIFT_ARGS } from '../support/rift-process.ts';
import { eventually, removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// A cloned repository's rift.toml may name an ONNX embedding model for the semantic tier. Over
// MCP (the proxy and the workspace server it starts) those files are loaded and run only once
// the user trusted that directory, the way `rift trust` records it; until then every search says
// why the tier is unavailable — for the server's life, as the contract has it: the trust counts
// from the server's next start.

interface Page {
  results: Array<{ path: string; matched_by: string[] }>;
  warnings: Array<{ kind: string; reason?: string }>;
}

describe('an in-process embedding model named by a project rift.toml waits for trust', () => {
  let root: string;
  let home: string;
  let model: string;
  let rift: RiftMcp;
  before(async () => {
    model = mkdtempSync(join(tmpdir(), 'rift-model-'));
    writeConceptModel(model, [['greet', 'hello', 'welcome', 'salute'], ['tally', 'count', 'occurrences']]);
    root = tempWorkspace({
      'rift.toml': `[search.semantic]\nenabled = true\nprovider = "onnx"\nmodel = "${model}"\n`,
      'hello.py': 'def say_hello(name):\n    """Welcome someone by name."""\n    return "hello " + name\n',
      'tally.py': 'def tally(items):\n    """Occurrences of each element."""\n    return {}\n',
    });
    home = mkdtempSync(join(tmpdir(), 'rift-home-'));
    rift = await startRift(root, { RIFT_HOME: home });
  });
  after(async () => {
    await rift.close();
    removeWorkspace(root);
    rmSync(home, { recursive: true, force: true });
    rmSync(model, { recursive: true, force: true });
  });

  const reason = () =>
    `rift.toml names an ONNX embedding model this machine has not trusted (${model}); run \`rift trust\` in the workspace to allow it, then restart rift (\`rift server --stop\` ends a shared server)`;
  const search = async (query: string) => (await rift.call('search', { query, target: 'symbol' })) as unknown as Page;

  test('untrusted: every search says semantic_ranking_unavailable naming rift trust; lexical results still served', async () => {
    for (let i = 0; i < 2; i++) {
      const page = await search('tally');
      assert.equal(page.results[0]?.path, 'tally.py');
      assert.equal(page.warnings.length, 1, JSON.stringify(page.warnings));
      const w = page.warnings[0];
      assert.deepEqual(Object.keys(w).sort(), ['kind', 'message', 'reason']);
      assert.equal(w.kind, 'semantic_ranking_unavailable');
      assert.equal(w.reason, reason());
    }
    const salute = await search('salute');
    assert.equal(salute.results.some((r) => r.path === 'hello.py'), false, 'no lane but the semantic one finds it');
  });

  test('rift trust lists the model directory; trusted, it is used from the server\'s next start', async () => {
    const store = new TrustStore(join(home, 'trusted-hooks.json'));
    const requests = pendingTrust(root, store, { RIFT_HOME: home });
    assert.deepEqual(requests.map((r) => [r.subject.kind, r.detail]), [
      ['language-engines', [`[search.semantic] model: the ONNX embedding model in \`${model}\`, loaded and run in this process`]],
    ]);
    // What `rift trust` does on a `trust` answer.
    for (const k of requests[0].keys) store.add(k);
    assert.deepEqual(pendingTrust(root, store, { RIFT_HOME: home }), []);
    const still = await search('tally');
    assert.deepEqual(still.warnings.map((w) => [w.kind, w.reason]), [['semantic_ranking_unavailable', reason()]], 'unavailable for this server\'s life');
    // Restart: the proxy's workspace server stopped, a new `rift mcp` starts another.
    await rift.close();
    const stop = spawnSync(process.execPath, [...RIFT_ARGS, 'server', '--stop', '--workspace', root], { env: { ...process.env, RIFT_HOME: home }, encoding: 'utf8' });
    assert.equal(stop.status, 0, stop.stderr);
    rift = await startRift(root, { RIFT_HOME: home });
    const page = await eventually(async () => {
      const p = await search('salute');
      return p.warnings.length === 0 && p.results[0]?.path === 'hello.py' ? p : undefined;
    }, 30_000);
    assert.deepEqual(page.results[0].matched_by, ['ranked']);
  });
});
