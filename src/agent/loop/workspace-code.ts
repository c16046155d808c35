import { log } from '../../core/log.ts';
import { changeOutcomeUnknown } from '../../mcp/errors.ts';
import { connectRemote, failureKind } from '../../mcp/remote.ts';
import { findServer } from '../../mcp/discovery.ts';
import type { ChangeApi, ProjectionApi, ReadApi, ScopedApis, SearchApi } from '../../services/api.ts';
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
  projections: ProjectionApi;
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
  if (build) void engine.buildInBackground();
  return {
    read: engine.read,
    search: engine.search,
    change: engine.change,
    projections: engine.projections,
    engines: engine.engines,
    remote: false,
    close: () => engine.close(),
  };
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

  /** The change service of `scope` (the workspace, or one projection of it), every call carrying the session's change options. */
  private changeApi(scope: (b: Backend) => ChangeApi): ChangeApi {
    const opts = <O>(options: O | undefined) => ({ ...options, ...this.changeOptions() });
    return {
      replaceSymbol: (input, options) => this.run('change', (b) => scope(b).replaceSymbol(input, opts(options))),
      insertSymbol: (input, options) => this.run('change', (b) => scope(b).insertSymbol(input, opts(options))),
      removeSymbol: (input, options) => this.run('change', (b) => scope(b).removeSymbol(input, opts(options))),
      replaceNode: (input, options) => this.run('change', (b) => scope(b).replaceNode(input, opts(options))),
      insertNode: (input, options) => this.run('change', (b) => scope(b).insertNode(input, opts(options))),
      removeNode: (input, options) => this.run('change', (b) => scope(b).removeNode(input, opts(options))),
      patch: (input, options) => this.run('change', (b) => scope(b).patch(input, opts(options))),
      moveFile: (input, options) => this.run('change', (b) => scope(b).moveFile(input, opts(options))),
      renameSymbol: (input, options, review) => this.run('change', (b) => scope(b).renameSymbol(input, opts(options), review)),
    };
  }

  readonly change: ChangeApi = this.changeApi((b) => b.change);

  /**
   * Projections of the workspace, on whichever backend serves now. Creating, publishing,
   * restoring and removing are changes (an answer lost with the server is reported, not resent).
   */
  readonly projections: ProjectionApi = {
    create: (reason) => this.run('change', (b) => b.projections.create(reason)),
    publish: (input) => this.run('change', (b) => b.projections.publish(input)),
    restore: (input) => this.run('change', (b) => b.projections.restore(input)),
    remove: (id) => this.run('change', (b) => b.projections.remove(id)),
    changeList: (id) => this.run('read', (b) => b.projections.changeList(id)),
    scoped: (id): ScopedApis => ({
      read: {
        getSymbol: (input) => this.run('read', (b) => b.projections.scoped(id).read.getSymbol(input)),
        nodes: (input) => this.run('read', (b) => b.projections.scoped(id).read.nodes(input)),
      },
      search: { search: (input) => this.run('read', (b) => b.projections.scoped(id).search.search(input)) },
      change: this.changeApi((b) => b.projections.scoped(id).change),
    }),
  };

  async close(): Promise<void> {
    await (await this.backend.catch(() => null))?.close().catch(() => {});
  }
}
