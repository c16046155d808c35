import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { isRiftError } from '../core/errors.ts';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ChangeApi, ProjectionApi, ReadApi, ScopedApis, SearchApi } from '../services/api.ts';
import type { ChangeRecord, ProjectionState } from '../protocol/projection.ts';
import type { ChangeOptions } from '../services/change-service.ts';
import { RENAME_REVIEW_META, TRUSTED_HOOKS_META } from './wire.ts';
import type { ProposedWrite } from '../change/rename.ts';
import { RENAME_PROPOSED, type ChangeResult } from '../protocol/change.ts';
import { fromWireError } from './errors.ts';
import type { ServerLock } from './lock.ts';
import { serverUrl } from './discovery.ts';

// The workspace server's tools as the services' call surfaces, for a rift process that is not
// the server (the agent): each method is one MCP tool call, its structured result returned as
// is and its ErrorData turned back into the RiftError the in-process service would have thrown.

export interface RemoteServices {
  read: ReadApi;
  search: SearchApi;
  change: ChangeApi;
  projections: ProjectionApi;
  close(): Promise<void>;
}

export async function connectRemote(lock: ServerLock, client: { name: string; version: string }): Promise<RemoteServices> {
  const transport = new StreamableHTTPClientTransport(serverUrl(lock), {
    requestInit: { headers: { authorization: `Bearer ${lock.token}` } },
    reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
  });
  const mcp = new Client(client);
  await mcp.connect(transport);
  const call = async <T>(name: string, args: object, options: ChangeOptions = {}): Promise<T> => {
    try {
      const meta: Record<string, unknown> = {};
      if (options.trustedHooks !== undefined) meta[TRUSTED_HOOKS_META] = options.trustedHooks;
      if (options.renameReview !== undefined) meta[RENAME_REVIEW_META] = 'propose' in options.renameReview ? 'propose' : { approved: options.renameReview.approved };
      const result = await mcp.callTool({ name, arguments: args as Record<string, unknown>, ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}) });
      return result.structuredContent as T;
    } catch (e) {
      throw fromWireError(e) ?? e;
    }
  };
  /** The read, search and change tools, each called with `scope` added to its arguments (a projection, or nothing). */
  const apis = (scope: { projection?: string }): ScopedApis => ({
    read: {
      getSymbol: (input) => call('get_symbol', { ...input, ...scope }),
      nodes: (input) => call('nodes', { ...input, ...scope }),
    },
    search: { search: (input) => call('search', { ...input, ...scope }) },
    change: {
      replaceSymbol: (input, options) => call('replace_symbol', { ...input, ...scope }, options),
      insertSymbol: (input, options) => call('insert_symbol', { ...input, ...scope }, options),
      removeSymbol: (input, options) => call('remove_symbol', { ...input, ...scope }, options),
      replaceNode: (input, options) => call('replace_node', { ...input, ...scope }, options),
      insertNode: (input, options) => call('insert_node', { ...input, ...scope }, options),
      removeNode: (input, options) => call('remove_node', { ...input, ...scope }, options),
      patch: (input, options) => call('patch', { ...input, ...scope }, options),
      moveFile: (input, options) => call('move_file', { ...input, ...scope }, options),
      // The server cannot call a reviewer back: the rename is proposed, reviewed here, then
      // applied only as approved (the same files, each still holding the approved bytes).
      renameSymbol: async (input, options = {}, review) => {
        const args = { ...input, ...scope };
        if (!review) return call('rename_symbol', args, options);
        const proposed = await call<ChangeResult>('rename_symbol', args, { ...options, renameReview: { propose: true } });
        const writes = proposalOf(proposed);
        if (writes === null) return proposed; // refused for a reason of its own (declined, unsupported, …)
        await review(writes);
        return call('rename_symbol', args, { ...options, renameReview: { approved: writes } });
      },
    },
  });
  /** A resource's JSON body. */
  const resource = async <T>(uri: string): Promise<T> => {
    try {
      const r = await mcp.readResource({ uri });
      const first = r.contents[0];
      return JSON.parse(first && 'text' in first ? first.text : 'null') as T;
    } catch (e) {
      throw fromWireError(e) ?? e;
    }
  };
  const projections: ProjectionApi = {
    create: (reason) => call('projection_create', { reason }),
    publish: (input) => call('publish', input),
    restore: (input) => call('projection_restore', input),
    remove: (id) => call('projection_remove', { projection: id }),
    // Every page of rift://changes, oldest change first.
    changeList: async (id) => {
      const query = id === null ? '' : `projection=${id}&`;
      const changes: ChangeRecord[] = [];
      for (let page = 0; ; page++) {
        const body = await resource<{ state: ProjectionState | null; changes: ChangeRecord[]; pagination: { total_pages: number }; snapshot: { tree_revision: string } }>(
          `rift://changes?${query}page_index=${page}`,
        );
        changes.push(...body.changes);
        if (page + 1 >= body.pagination.total_pages) return { state: body.state, changes, snapshot: body.snapshot };
      }
    },
    scoped: (id) => apis({ projection: id }),
  };
  return {
    ...apis({}),
    projections,
    async close() {
      await transport.terminateSession().catch(() => {});
      await mcp.close();
    },
  };
}

/** The files a propose-only rename answered with, or null when it answered anything else. */
function proposalOf(result: ChangeResult): ProposedWrite[] | null {
  if (result.status !== 'refused') return null;
  const d = result.diagnostics.find((x) => x.code === RENAME_PROPOSED);
  const writes = d?.extensions.writes;
  return Array.isArray(writes) ? (writes as ProposedWrite[]) : null;
}

/**
 * What a failed call to the workspace server means: `answer` — the server answered with an
 * error (a RiftError, a JSON-RPC error); `undelivered` — no server took the request (the
 * connection was refused, a new server does not know the session or the token, or a stopping
 * server refused it with 503), so it is safe to send again; `lost` — the server took it and
 * stopped before answering.
 */
export function failureKind(e: unknown): 'answer' | 'undelivered' | 'lost' {
  if (isRiftError(e)) return 'answer';
  if (e instanceof McpError) return e.code === -32000 && e.data === undefined ? 'lost' : 'answer';
  // 404: a new server that does not know the session; 401: a new token; 503: a server stopping.
  if (e instanceof StreamableHTTPError) return e.code === 404 || e.code === 401 || e.code === 503 ? 'undelivered' : 'lost';
  const cause = (e as { cause?: { code?: string } })?.cause;
  return cause?.code === 'ECONNREFUSED' ? 'undelivered' : 'lost';
}
