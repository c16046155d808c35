import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pendingTrust } from '../../src/agent/extensions/project-trust.ts';
import { TrustStore } from '../../src/agent/policy/trust.ts';
import { startRift, type RiftMcp } from '../helpers/mcp.ts';
import { eventually, removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// A cloned repository's rift.toml may name the program its language engine runs. Over MCP (the
// proxy and the workspace server it starts) that program runs only once the user trusted that
// exact definition, the way `rift trust` records it; until then the language has no engine.

const TOML = '[languages.python.lsp]\ncommand = "sh"\nargs = ["-c", "touch engine-ran"]\n';
const LINE = '[languages.python].lsp: `sh -c touch engine-ran`';

describe('language engines from a project rift.toml wait for trust', () => {
  let root: string;
  let home: string;
  let rift: RiftMcp;
  before(async () => {
    root = tempWorkspace({ 'rift.toml': TOML, 'pkg/mod.py': 'def area(w, h):\n    return w * h\n\n\nprint(area(1, 2))\n' });
    home = mkdtempSync(join(tmpdir(), 'rift-home-'));
    rift = await startRift(root, { RIFT_HOME: home });
  });
  after(async () => {
    await rift.close();
    removeWorkspace(root);
    rmSync(home, { recursive: true, force: true });
  });

  const python = async () => {
    const r = await rift.client.readResource({ uri: 'rift://workspace' });
    const page = JSON.parse((r.contents[0] as { text: string }).text) as { languages: Array<{ id: string; lsp: Record<string, unknown> }> };
    return page.languages.find((l) => l.id === 'python')!.lsp;
  };
  const rename = () => rift.call('rename_symbol', { symbol: 'rift://symbol/python/pkg/mod.py/area', new_name: 'surface' });

  test('untrusted: no engine is started, rift://workspace says why, a rename refuses unsupported naming rift trust', async () => {
    const reason = `${LINE} in rift.toml runs a program this machine has not trusted; run \`rift trust\` in the workspace to allow it`;
    assert.deepEqual(await python(), { engine: 'sh', state: 'not_configured', detail: reason });
    assert.deepEqual(await rename(), {
      status: 'refused',
      reason: 'unsupported',
      preconditions: [],
      diagnostics: [
        {
          severity: 'error', code: 'rift.change.unsupported', message: `rename_symbol needs a language engine (lsp) for python: ${reason}`, span: null,
          related: [], tags: [], reliability: 'reliable', continuation: 'unknown', extensions: {}, language: null,
        },
      ],
    });
    assert.equal(existsSync(join(root, 'engine-ran')), false, 'the program never ran');
  });

  test('rift trust lists the definition with what it runs; once trusted, the next change starts it', async () => {
    const store = new TrustStore(join(home, 'trusted-hooks.json'));
    const requests = pendingTrust(root, store, { RIFT_HOME: home });
    assert.deepEqual(requests.map((r) => [r.subject.kind, r.detail]), [['language-engines', [LINE]]]);
    // What `rift trust` does on a `trust` answer.
    for (const k of requests[0].keys) store.add(k);
    assert.deepEqual(pendingTrust(root, store, { RIFT_HOME: home }), []);
    assert.deepEqual(await python(), { engine: 'sh', state: 'configured' });
    // The program is no language server: it exits while starting, which the rename reports.
    const failure = await rift.fail('rename_symbol', { symbol: 'rift://symbol/python/pkg/mod.py/area', new_name: 'surface' });
    assert.match(failure.message, /engine sh, detail exited while starting \(code 0\)/);
    assert.equal(existsSync(join(root, 'engine-ran')), true, 'the trusted program ran');
    const state = await eventually(async () => {
      const s = await python();
      return s.state === 'failed' ? s : undefined;
    }, 30_000);
    assert.equal(state.engine, 'sh');
  });
});
