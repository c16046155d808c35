import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { RiftError } from '../../src/core/errors.ts';
import { Engine } from '../../src/services/engine.ts';
import type { EngineStatus } from '../../src/engine/registry.ts';
import { eventually, removeWorkspace, resend, tempWorkspace } from '../helpers/workspace.ts';

// Engine processes as the services see them, with the real engines: started lazily, tracked
// through loading to ready, restarted after a crash, in sync with writes rift did not make, and
// gone after close. An engine still loading is made visible by `ready_timeout = "0ms"`: the
// change then asks at once instead of waiting for the project to load.

/** These workspaces' engine definitions are the test's own: trusted (the gate is tested in test/mcp/engine-trust.test.ts). */
const trustAll = () => true;

const LANGUAGES = [
  {
    language: 'typescript',
    engine: 'typescript-language-server',
    files: {
      'tsconfig.json': '{ "compilerOptions": { "strict": true, "noEmit": true }, "include": ["src"] }\n',
      'src/a.ts': 'export function greet(name: string): string {\n  return name;\n}\n\nexport function spare(): number {\n  return 1;\n}\n',
      'src/b.ts': "import { greet } from './a';\n\nexport const hello = greet('x');\n",
    },
    symbol: 'rift://symbol/typescript/src/a.ts/greet',
    spare: 'rift://symbol/typescript/src/a.ts/spare',
    external: ['src/c.ts', "import { spare } from './a';\n\nexport const one = spare();\n"],
  },
  {
    language: 'python',
    engine: 'pyright',
    files: {
      'pkg/__init__.py': '',
      'pkg/a.py': 'def greet(name):\n    return name\n\n\ndef spare():\n    return 1\n',
      'pkg/b.py': 'from pkg.a import greet\n\nHELLO = greet("x")\n',
    },
    symbol: 'rift://symbol/python/pkg/a.py/greet',
    spare: 'rift://symbol/python/pkg/a.py/spare',
    external: ['pkg/c.py', 'from pkg.a import spare\n\nONE = spare()\n'],
  },
] as const;

const LOADING_TOML = (language: string, engine: string) => `[languages.${language}.lsp]\nengine = "${engine}"\nready_timeout = "0ms"\n`;

function stateOf(engine: Engine, language: string): EngineStatus {
  return engine.engines.states().find((s) => s.language === language)!;
}

async function refusal(p: Promise<unknown>): Promise<RiftError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof RiftError) return e;
    throw e;
  }
  assert.fail('expected a RiftError');
}

/** The temporary directory rift gave an engine process (its TMPDIR). */
function engineTemp(pid: number): string {
  const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  const dir = env.find((v) => v.startsWith('TMPDIR='))!.slice('TMPDIR='.length);
  assert.ok(dir.startsWith(join(tmpdir(), 'rift-engine-')), dir);
  return dir;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

for (const L of LANGUAGES) {
  describe(`engine lifecycle: ${L.engine}`, () => {
    let root = '';
    let engine: Engine;
    before(async () => {
      root = tempWorkspace({ ...L.files, 'rift.toml': '[languages.java]\nlsp = false\n' });
      engine = await Engine.open(root, { watch: true, engineTrust: trustAll });
      await engine.build();
    });
    after(async () => {
      await engine.close();
      removeWorkspace(root);
    });

    test('nothing starts until a change needs the engine; then it loads and reports ready', async () => {
      assert.deepEqual(stateOf(engine, L.language), { language: L.language, engine: L.engine, state: 'idle' });
      assert.deepEqual(stateOf(engine, 'java'), { language: 'java', engine: null, state: 'unavailable', reason: '[languages.java] sets lsp = false' });
      const r = await resend(() => engine.change.removeSymbol({ symbol: L.symbol }));
      assert.equal(r.status, 'refused', 'greet is referenced');
      const s = stateOf(engine, L.language);
      assert.equal(s.state, 'ready');
      assert.equal(s.root, '');
      assert.equal(s.restarts, 0);
      assert.ok(s.pid && alive(s.pid));
      const temp = engineTemp(s.pid);
      // typescript-language-server's cancellation pipes land there, not in the system's directory.
      if (L.engine === 'typescript-language-server') assert.ok(readdirSync(temp).some((n) => /^[0-9a-f]{32}$/.test(n)), readdirSync(temp).join(', '));
    });

    test('the engine sees a file written outside rift: its new reference stops the removal', async () => {
      writeFileSync(join(root, L.external[0]), L.external[1]);
      await eventually(() => (engine.indexer.store.file(L.external[0]) ? true : undefined));
      const r = await engine.change.removeSymbol({ symbol: L.spare });
      assert.equal(r.status, 'refused');
      assert.deepEqual(r.status === 'refused' && r.preconditions.map((p) => [p.kind, p.paths]), [['no_references', [L.external[0]]]]);
    });

    test('a crashed engine is restarted with backoff and serves the next change', async () => {
      const before = stateOf(engine, L.language);
      const crashedTemp = engineTemp(before.pid!);
      process.kill(before.pid!, 'SIGKILL');
      const restarted = await eventually(() => {
        const s = stateOf(engine, L.language);
        return s.pid !== undefined && s.pid !== before.pid ? s : undefined;
      }, 30_000);
      assert.equal(restarted.restarts, 1);
      assert.equal(existsSync(crashedTemp), false, 'the temporary directory of the crashed engine is gone');
      const r = await resend(() => engine.change.renameSymbol({ symbol: L.symbol, new_name: 'welcome' }));
      assert.equal(r.status, 'applied', JSON.stringify(r));
      assert.equal(r.status === 'applied' && r.summary.files.length, 2, 'the importer was renamed too');
      assert.equal(stateOf(engine, L.language).state, 'ready');
    });

    test('close shuts the engine down', async () => {
      const pid = stateOf(engine, L.language).pid!;
      const temp = engineTemp(pid);
      await engine.close();
      assert.equal(alive(pid), false);
      assert.equal(existsSync(temp), false, 'its temporary directory is gone');
      assert.equal(stateOf(engine, L.language).state, 'stopped');
      engine = await Engine.open(root, { watch: false, engineTrust: trustAll }); // for the after hook
    });
  });

  describe(`engine still loading: ${L.engine}`, () => {
    let root = '';
    before(() => {
      root = tempWorkspace({ ...L.files, 'rift.toml': LOADING_TOML(L.language, L.engine) });
    });
    after(() => removeWorkspace(root));

    test('an empty answer before readiness is temporarily_unavailable; once loaded the reference is found', async () => {
      const engine = await Engine.open(root, { watch: true, engineTrust: trustAll });
      try {
        await engine.build();
        const e = await refusal(engine.change.removeSymbol({ symbol: L.symbol }));
        assert.equal(e.code, 'temporarily_unavailable');
        assert.equal(e.retry, 'same_request');
        assert.equal(e.phase, 'check');
        assert.equal(
          e.message,
          `the server cannot serve this request yet: engine ${L.engine}, detail the engine answered no references before confirming its readiness (still loading); resend once it has loaded, or set force; resend the same request after a short delay`,
        );
        await eventually(() => (stateOf(engine, L.language).state === 'ready' ? true : undefined), 60_000);
        const r = await engine.change.removeSymbol({ symbol: L.symbol });
        assert.equal(r.status, 'refused');
        assert.equal(r.status === 'refused' && r.preconditions[0].kind, 'no_references');
      } finally {
        await engine.close();
      }
    });

    test('force removes while the engine may still be loading', async () => {
      const engine = await Engine.open(root, { watch: true, engineTrust: trustAll });
      try {
        await engine.build();
        const r = await engine.change.removeSymbol({ symbol: L.spare, force: true });
        assert.equal(r.status, 'applied');
        // The engine races its own load: when its answer comes before readiness the removal says
        // so; an engine that finished loading first answered for real and needs no warning. The
        // warning itself is pinned, with no race, against an engine that never loads:
        // test/mcp/engine-stub.test.ts.
        const unconfirmed = {
          kind: 'rift.remove.readiness_unconfirmed',
          message: `${L.engine} answered no references before confirming it had loaded the project; removed because force was set`,
        };
        const warnings = r.status === 'applied' ? r.summary.warnings : null;
        assert.ok(JSON.stringify(warnings) === JSON.stringify([unconfirmed]) || JSON.stringify(warnings) === '[]', JSON.stringify(warnings));
      } finally {
        await engine.close();
      }
    });
  });
}

describe('an engine that cannot start', () => {
  let root = '';
  let engine: Engine;
  before(async () => {
    // `false` is a real program that exits at once: every start fails the same way.
    root = tempWorkspace({ 'rift.toml': '[languages.go.lsp]\ncommand = "false"\n', 'main.go': 'package main\n\nfunc Run() {}\n' });
    engine = await Engine.open(root, { watch: false, engineTrust: trustAll });
    await engine.build();
  });
  after(async () => {
    await engine.close();
    removeWorkspace(root);
  });

  test('a removal goes unchecked, saying why; restarts back off and then stop', async () => {
    const r = await engine.change.removeSymbol({ symbol: 'rift://symbol/go/main.go/Run' });
    assert.equal(r.status, 'applied');
    const w = r.status === 'applied' ? r.summary.warnings : [];
    assert.deepEqual(w.map((x) => x.kind), ['rift.remove.references_unchecked']);
    assert.equal((w[0] as { reason: string }).reason, 'false is unavailable: exited while starting (code 1)');
    const failed = await eventually(() => {
      const s = stateOf(engine, 'go');
      return s.state === 'failed' ? s : undefined;
    }, 60_000);
    assert.equal(failed.restarts, 5);
    assert.equal(failed.reason, 'exited while starting (code 1); gave up after 5 restarts — fix the engine, then edit rift.toml or restart rift');

    // Editing the definition replaces the failed engine: the new one starts afresh.
    writeFileSync(join(root, 'rift.toml'), '[languages.go.lsp]\ncommand = "false"\nargs = ["--again"]\n');
    assert.deepEqual(stateOf(engine, 'go'), { language: 'go', engine: 'false', state: 'idle' });
  });
});

test('an engine whose command cannot be started leaves no temporary directory behind', async () => {
  // On PATH and executable, so it is resolved, but its interpreter does not exist: the spawn fails.
  const bin = mkdtempSync(join(tmpdir(), 'rift-test-bin-'));
  writeFileSync(join(bin, 'rift-broken-lsp'), '#!/nonexistent/interpreter\n', { mode: 0o755 });
  const path = process.env.PATH;
  process.env.PATH = `${bin}${delimiter}${path ?? ''}`;
  const root = tempWorkspace({ 'pkg/a.py': 'def greet(name):\n    return name\n', 'rift.toml': '[languages.python.lsp]\ncommand = "rift-broken-lsp"\n' });
  const engine = await Engine.open(root, { watch: false, engineTrust: trustAll });
  const temps = () => readdirSync(tmpdir()).filter((n) => n.startsWith('rift-engine-')).sort();
  try {
    await engine.build();
    const before = temps();
    await engine.change.removeSymbol({ symbol: 'rift://symbol/python/pkg/a.py/greet' }).catch(() => undefined);
    // It was started and failed (and is retried later).
    const s = stateOf(engine, 'python');
    assert.ok(s.state === 'restarting' || s.state === 'unavailable', JSON.stringify(s));
    assert.deepEqual(temps(), before);
    await engine.close();
    assert.deepEqual(temps(), before);
  } finally {
    process.env.PATH = path;
    await engine.close();
    removeWorkspace(root);
    rmSync(bin, { recursive: true, force: true });
  }
});
