import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeWorkspace, tempWorkspace } from './workspace.ts';
import { RIFT_ARGS } from '../support/rift-process.ts';

// Drives `rift mcp` the way agents run it: a subprocess over stdio, spoken to by the SDK's Client.


export interface RiftMcp {
  client: Client;
  /** The `rift mcp` process. */
  pid: number | null;
  stderr: () => string;
  call: (name: string, args: Record<string, unknown>) => Promise<Record<string, unknown>>;
  /** Calls a tool expecting a JSON-RPC error; returns `{code, message, data}`. */
  fail: (name: string, args: Record<string, unknown>) => Promise<{ code: number; message: string; data: Record<string, unknown> }>;
  close: () => Promise<void>;
}

// The SDK's default request timeout is 60 s: on a loaded 2-core machine, a call that first starts
// a workspace server and builds its index can take longer, and so can `initialize` while several
// servers start at once. A test fails on what it asserts, not on
// the machine's load.
const CALL_OPTIONS = { timeout: 300_000 };

/**
 * How to start `rift mcp` in the workspace: by default the proxy to the workspace's shared server
 * (started on demand); `standalone` serves in the one process (for tests of a process's own logs
 * or restarts); `wrap` runs it under another command (a mount namespace, say).
 */
export interface StartOptions {
  standalone?: boolean;
  wrap?: string[];
}

/**
 * The RIFT_HOME folders `startRift` made, removed when the test process ends (a workspace server
 * may still run for a while after its test, with its home).
 */
const homes: string[] = [];
process.once('exit', () => {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

export async function startRift(workspace: string, env: Record<string, string> = {}, opts: StartOptions = {}): Promise<RiftMcp> {
  const home = env.RIFT_HOME ?? mkdtempSync(join(tmpdir(), 'rift-home-'));
  if (env.RIFT_HOME === undefined) homes.push(home);
  const node = [process.execPath, ...RIFT_ARGS, 'mcp', ...(opts.standalone ? ['--standalone'] : [])];
  const command = [...(opts.wrap ?? []), ...node];
  const transport = new StdioClientTransport({
    command: command[0],
    args: command.slice(1),
    cwd: workspace,
    // A workspace server started for a test outlives it by 20 s at most (and ends as soon as its
    // workspace folder is removed).
    env: { ...(process.env as Record<string, string>), RIFT_HOME: home, RIFT_SERVER_IDLE: '20s', ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: 'rift-test', version: '0.0.0' });
  await client.connect(transport, CALL_OPTIONS); // several servers starting at once on a loaded machine take their time
  await client.listTools(undefined, CALL_OPTIONS); // caches output schemas: the client validates every structured result
  return {
    client,
    pid: transport.pid,
    stderr: () => stderr,
    async call(name, args) {
      const result = await client.callTool({ name, arguments: args }, undefined, CALL_OPTIONS);
      if (result.isError) throw new Error(`tool ${name} returned isError: ${JSON.stringify(result.content)}`);
      const text = (result.content as Array<{ type: string; text: string }>)[0];
      const structured = result.structuredContent as Record<string, unknown>;
      if (!text || text.type !== 'text' || JSON.stringify(JSON.parse(text.text)) !== JSON.stringify(structured)) {
        throw new Error('the text block does not mirror structuredContent');
      }
      return structured;
    },
    async fail(name, args) {
      try {
        const result = await client.callTool({ name, arguments: args }, undefined, CALL_OPTIONS);
        throw new Error(`expected an error, got ${JSON.stringify(result)}`);
      } catch (e) {
        const err = e as { code?: number; message: string; data?: Record<string, unknown> };
        if (err.code === undefined || err.data === undefined) throw e;
        return { code: err.code, message: err.message, data: err.data };
      }
    },
    async close() {
      await client.close();
    },
  };
}

/**
 * One server over a temporary workspace for a whole `describe` block: registers the
 * before/after hooks and returns live accessors.
 */
/** Reads a resource expecting a JSON-RPC error; returns it (`code`, `data`). */
export async function readFails(rift: RiftMcp, uri: string): Promise<{ code: number; data: Record<string, unknown> }> {
  try {
    await rift.client.readResource({ uri });
  } catch (e) {
    return e as { code: number; data: Record<string, unknown> };
  }
  throw new Error(`expected ${uri} to fail`);
}

export function serveWorkspace(
  hooks: { before: (fn: () => Promise<void>) => void; after: (fn: () => Promise<void>) => void },
  files: Record<string, string | Uint8Array>,
  env: Record<string, string> = {},
): { readonly root: string; readonly rift: RiftMcp } {
  const state = {} as { root: string; rift: RiftMcp };
  hooks.before(async () => {
    state.root = tempWorkspace(files);
    state.rift = await startRift(state.root, env);
  });
  hooks.after(async () => {
    await state.rift.close();
    removeWorkspace(state.root);
  });
  return state;
}
