import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { workspaceEngines } from '../../src/agent/extensions/project-trust.ts';
import { TrustStore } from '../../src/agent/policy/trust.ts';
import { startRift, type RiftMcp } from './mcp.ts';
import { removeWorkspace, tempWorkspace } from './workspace.ts';

// `rift mcp` over a workspace whose rift.toml selects the stub language server
// (test/support/stub-lsp.mjs) with `command = "stub-lsp"`: the stub's folder is on the server's
// PATH, and the workspace's engine definitions are trusted in the server's own RIFT_HOME, the way
// `rift trust` records them (the trust gate itself is tested in test/mcp/engine-trust.test.ts).

const STUB_BIN = fileURLToPath(new URL('../support/bin', import.meta.url));

/** The environment that puts `stub-lsp` on PATH. */
export function stubPath(): string {
  return `${STUB_BIN}${delimiter}${process.env.PATH ?? ''}`;
}

/** Trusts every engine definition of the workspace's rift.toml in the trust store under `home`. */
export function trustWorkspaceEngines(root: string, home: string): void {
  const store = new TrustStore(join(home, 'trusted-hooks.json'));
  for (const e of workspaceEngines(root)) store.add(e.key);
}

/** One server over a temporary workspace with trusted stub engines, for a whole `describe` block. */
export function serveStubWorkspace(
  hooks: { before: (fn: () => Promise<void>) => void; after: (fn: () => Promise<void>) => void },
  files: Record<string, string>,
): { readonly root: string; readonly rift: RiftMcp } {
  const state = {} as { root: string; home: string; rift: RiftMcp };
  hooks.before(async () => {
    state.root = tempWorkspace(files);
    state.home = mkdtempSync(join(tmpdir(), 'rift-home-'));
    trustWorkspaceEngines(state.root, state.home);
    state.rift = await startRift(state.root, { RIFT_HOME: state.home, PATH: stubPath() });
  });
  hooks.after(async () => {
    await state.rift.close();
    removeWorkspace(state.root);
    rmSync(state.home, { recursive: true, force: true });
  });
  return state;
}
