import type { ChangeService } from './change-service.ts';
import type { ProjectionService } from './projection-service.ts';
import type { ReadService } from './read-service.ts';
import type { SearchService } from './search-service.ts';

// The services' call surfaces, apart from their in-process implementation: the agent's code
// tools take any of these — the engine in this process, or the workspace server over MCP.

export type ReadApi = Pick<ReadService, 'getSymbol' | 'nodes'>;
export type SearchApi = Pick<SearchService, 'search'>;
export type ChangeApi = Pick<ChangeService, 'replaceSymbol' | 'insertSymbol' | 'removeSymbol' | 'replaceNode' | 'insertNode' | 'removeNode' | 'patch' | 'moveFile' | 'renameSymbol'>;

/** The code services working in one projection: reads record its dependencies, changes its confirmations. */
export interface ScopedApis {
  read: ReadApi;
  search: SearchApi;
  change: ChangeApi;
}

/**
 * Projections (spec "Projections"), each call as the MCP tool or resource of the same meaning
 * answers it: `create` → projection_create, `publish`, `restore` → projection_restore, `remove`
 * → projection_remove, `changeList` → rift://changes?projection=<id>; `scoped(id)` → the read,
 * search and change tools called with `projection: id`.
 */
export interface ProjectionApi extends Pick<ProjectionService, 'create' | 'publish' | 'restore' | 'remove' | 'changeList'> {
  scoped(id: string): ScopedApis;
}
