import { log } from '../../core/log.ts';
import { changeOutcomeUnknown } from '../../mcp/errors.ts';
import { connectRemote, failureKind } from '../../mcp/remote.ts';
import { findServer } from '../../mcp/discovery.ts';
import type { ChangeApi, ReadApi, SearchApi } from '../../services/api.ts';
import type { ChangeOptions } from '../../services/change-service.ts';
import type { EngineRegistry } from '../../engine/registry.ts';
import type { EngineTrust } from '../../engine/definitions.ts';
import { userTrusts } from '../policy/trust.ts';
import type { Engine } from '../../services/engine.ts';

// The agent's code services for one workspace: the workspace's `rift server` when one runs
// (one index and one watcher for every agent on the tree), the engine in this process when
// none does — the same tools, answers and errors either way. A server that disappears mid-
// session is replaced by whatever serves now (a new server, or the engine here); a read is
// then asked again, a change whose answer was lost is reported, never resent.

interface Backend {
  read: ReadApi;
  search: SearchApi;
  change: ChangeApi;
  /** The language engines, when the backend is the engine in this process. */
  engines: EngineRegistry | null;
  remote: boolean;
  close(): Promise<void>;
}

const CLIENT = { name: 'rift-agent', version: '1' };

async function openBackend(root: string, version: string, build: boolean, engineTrust: EngineTrust): Promise<Backend> {
  const found = await findServer(root, 0).catch(() => null);
  if (found && found.lock.version === version) {
    try {
      const remote = await connectRemote(found.lock, CLIENT);
      log('info', 'agent', 'code tools use the workspace server', { pid: found.lock.pid });
      return { ...remote, engines: null, remote: true };
    } catch (e) {
      log('info', 'agent', 'workspace server unreachable; opening the index here', { error: (e as Error).message });
    }
  }
  // Loaded on demand so a front end can answer before the index modules load.
  const { Engine } = await import('../../services/engine.ts');
  const engine: Engine = await Engine.open(root, { watch: true, engineTrust });
  if (build) engine.build().catch((e: Error) => log('warn', 'index.build', 'index build failed', { error: e.message }));
  return { read: engine.read, search: engine.search, change: engine.change, engines: engine.engines, remote: false, close: () => engine.close() };
}

export class WorkspaceCode {
  private backend: Promise<Backend>;
  /** The first backend's language engines when it runs here (diagnostics after write and edit). */
  readonly engines: EngineRegistry | null;

  private constructor(
    private readonly root: string,
    private readonly version: string,
    first: Backend,
    /** Options every change carries (which rift.toml hooks the user trusts), asked at each call. */
    private readonly changeOptions: () => ChangeOptions,
    /** Which of the project's own language-engine definitions the user trusts (the engine here). */
    private readonly engineTrust: EngineTrust,
  ) {
    this.backend = Promise.resolve(first);
    this.engines = first.engines;
  }

  static async open(root: string, version: string, changeOptions: () => ChangeOptions = () => ({}), engineTrust: EngineTrust = userTrusts): Promise<WorkspaceCode> {
    return new WorkspaceCode(root, version, await openBackend(root, version, true, engineTrust), changeOptions, engineTrust);
  }

  /** Whether the current answers come from the workspace server. */
  async remote(): Promise<boolean> {
    return (await this.backend).remote;
  }

  private async run<T>(kind: 'read' | 'change', call: (b: Backend) => Promise<T>): Promise<T> {
    const backend = await this.backend;
    try {
      return await call(backend);
    } catch (e) {
      // Errors the service itself raised are answers; only a lost server is handled here.
      const failure = backend.remote ? failureKind(e) : 'answer';
      if (failure === 'answer') throw e;
      log('info', 'agent', 'workspace server lost', { error: (e as Error).message });
      if ((await this.backend) === backend) {
        this.backend = openBackend(this.root, this.version, true, this.engineTrust);
        void backend.close().catch(() => {});
      }
      if (kind === 'read' || failure === 'undelivered') return call(await this.backend);
      throw changeOutcomeUnknown();
    }
  }

  readonly read: ReadApi = {
    getSymbol: (input) => this.run('read', (b) => b.read.getSymbol(input)),
    nodes: (input) => this.run('read', (b) => b.read.nodes(input)),
  };

  readonly search: SearchApi = {
    search: (input) => this.run('read', (b) => b.search.search(input)),
  };

  readonly change: ChangeApi = {
    replaceSymbol: (input, options) => this.run('change', (b) => b.change.replaceSymbol(input, { ...options, ...this.changeOptions() })),
    insertSymbol: (input, options) => this.run('change', (b) => b.change.insertSymbol(input, { ...options, ...this.changeOptions() })),
    removeSymbol: (input, options) => this.run('change', (b) => b.change.removeSymbol(input, { ...options, ...this.changeOptions() })),
    replaceNode: (input, options) => this.run('change', (b) => b.change.replaceNode(input, { ...options, ...this.changeOptions() })),
    insertNode: (input, options) => this.run('change', (b) => b.change.insertNode(input, { ...options, ...this.changeOptions() })),
    removeNode: (input, options) => this.run('change', (b) => b.change.removeNode(input, { ...options, ...this.changeOptions() })),
    patch: (input, options) => this.run('change', (b) => b.change.patch(input, { ...options, ...this.changeOptions() })),
    moveFile: (input, options) => this.run('change', (b) => b.change.moveFile(input, { ...options, ...this.changeOptions() })),
    renameSymbol: (input, options, review) => this.run('change', (b) => b.change.renameSymbol(input, { ...options, ...this.changeOptions() }, review)),
  };

  async close(): Promise<void> {
    await (await this.backend.catch(() => null))?.close().catch(() => {});
  }
}
