import type { ChangeService } from './change-service.ts';
import type { ReadService } from './read-service.ts';
import type { SearchService } from './search-service.ts';

// The services' call surfaces, apart from their in-process implementation: the agent's code
// tools take any of these — the engine in this process, or the workspace server over MCP.

export type ReadApi = Pick<ReadService, 'getSymbol' | 'nodes'>;
export type SearchApi = Pick<SearchService, 'search'>;
export type ChangeApi = Pick<ChangeService, 'replaceSymbol' | 'insertSymbol' | 'removeSymbol' | 'replaceNode' | 'insertNode' | 'removeNode' | 'patch' | 'moveFile' | 'renameSymbol'>;
