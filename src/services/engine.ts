import { log } from '../core/log.ts';
import { ConfigLoader } from '../config/loader.ts';
import { canonicalRoot } from '../workspace/root.ts';
import { initSyntax } from '../syntax/runtime.ts';
import { openStore } from '../index/store-open.ts';
import { BuildStopped, Indexer, type BuildProgress, type BuildStats } from '../index/indexer.ts';
import { EngineRegistry } from '../engine/registry.ts';
import type { EngineTrust } from '../engine/definitions.ts';
import { RevisionIndex } from '../index/revision.ts';
import { SemanticTier } from '../index/semantic.ts';
import { ReadService } from './read-service.ts';
import { ReadGate } from './read-gate.ts';
import { SearchService } from './search-service.ts';
import { ChangeService } from './change-service.ts';
import { ProjectionService } from './projection-service.ts';
import { MapService } from './map-service.ts';
import { ExecuteService } from './execute-service.ts';
import { registryEngineStates, WorkspaceService } from './workspace-service.ts';
import { FsService } from './fs-service.ts';

// Everything one workspace needs, opened once: configuration, store, indexer, services.
// The MCP server, the CLI commands and the agent all start here.

export interface EngineOptions {
  /** Keep the index current from filesystem events (servers do; one-shot CLI commands don't). */
  watch: boolean;
  /**
   * Which engine definitions from the project's rift.toml that run a program of its choosing the
   * user trusts (`engineTrustKey`; front ends ask the user's trust store). Without it none run.
   */
  engineTrust?: EngineTrust;
}

export class Engine {
  private constructor(
    readonly root: string,
    readonly config: ConfigLoader,
    readonly indexer: Indexer,
    readonly read: ReadService,
    readonly search: SearchService,
    readonly change: ChangeService,
    /** The language engines (LSP); `engines.states()` is each language's engine state. */
    readonly engines: EngineRegistry,
    readonly gate: ReadGate,
    readonly map: MapService,
    readonly workspace: WorkspaceService,
    /** Background vectors for `search` when `[search.semantic]` is enabled. */
    readonly semantic: SemanticTier,
    readonly execute: ExecuteService,
    /** Projections of this workspace, each served by an engine opened on its directory. */
    readonly projections: ProjectionService,
    /** `rift://fs`: the tree's files and directories, as its visibility policy shows them. */
    readonly fs: FsService,
  ) {}

  /** Opens the workspace `workspace` names, or the current directory when it is undefined. */
  static async open(workspace: string | undefined, options: EngineOptions): Promise<Engine> {
    const root = canonicalRoot(workspace);
    // Servers load the grammars now, alongside opening the store and the first walk (a few
    // hundred milliseconds); whatever parses on this thread awaits them. One-shot commands
    // load them only when they parse.
    if (options.watch) initSyntax().catch(() => undefined);
    const config = new ConfigLoader(root);
    const store = openStore(root);
    const indexer = new Indexer(root, config, store, { parseInWorkers: options.watch });
    const gate = new ReadGate(config, indexer, new RevisionIndex(root, () => indexer.store, { workers: () => indexer.workers() }));
    const semantic = new SemanticTier(root, () => indexer.store, () => config.current().config.search.semantic, options.engineTrust);
    // Every published batch may hold declarations without vectors.
    indexer.onPublish(() => semantic.schedule());
    const engines = new EngineRegistry(root, config, indexer, options.engineTrust ?? (() => false));
    const change = new ChangeService(root, config, indexer, engines);
    // A projection's engine: the same trust, no watcher (each call reconciles the directory first).
    const projections = new ProjectionService(root, { indexer, change, config }, (dir) => Engine.open(dir, { watch: false, engineTrust: options.engineTrust }));
    // `execute { projection }` runs in that projection's own execution copy, removed with it.
    const execute = new ExecuteService(root, config, (id) => (id === undefined ? { id: 'workspace', root } : { id, root: projections.treeRoot(id) }));
    projections.onRemoved((id) => execute.discard(id));
    const engine = new Engine(
      root,
      config,
      indexer,
      new ReadService(root, gate, indexer),
      new SearchService(root, gate, indexer, semantic),
      change,
      engines,
      gate,
      new MapService(root, indexer),
      new WorkspaceService(config, indexer, registryEngineStates(engines)),
      semantic,
      execute,
      projections,
      new FsService({ root, config, indexer }),
    );
    await change.recoverAtStart();
    if (options.watch) await indexer.watch();
    return engine;
  }

  /** Builds (or refreshes) the index under the current configuration, logging an `index.build` span. */
  async build(onProgress?: (p: BuildProgress) => void): Promise<BuildStats> {
    const stats = await this.indexer.ensureBuilt(this.config.current().config, onProgress);
    log('info', 'index.build', 'index built', {
      files: stats.files,
      parsed: stats.parsed,
      symbols: stats.symbols,
      reparsed: stats.reparsed,
      elapsed_ms: stats.elapsedMs,
    });
    return stats;
  }

  /**
   * `build` for a server that answers meanwhile: a failure is logged, not thrown, and a build
   * that `close` stopped (it logs that itself) resolves null, as a failed one does.
   */
  buildInBackground(): Promise<BuildStats | null> {
    return this.build().catch((e: Error) => {
      if (!(e instanceof BuildStopped)) log('warn', 'index.build', 'index build failed', { error: e.message });
      return null;
    });
  }

  async close(): Promise<void> {
    await this.projections.close();
    await this.change.close();
    this.execute.close();
    this.map.close();
    await this.engines.close();
    this.gate.revisions.close();
    await this.semantic.close();
    await this.indexer.close();
  }
}
