import { type z } from 'zod';
import { RiftError, invalidField } from '../core/errors.ts';
import { CHANGES_PAGE_RECORDS } from '../core/limits.ts';
import { LogsResource, MapResource, WorkspaceResource } from '../protocol/resources.ts';
import { ChangesResource, ProjectionResource } from '../protocol/projection.ts';
import type { ProjectionService } from '../services/projection-service.ts';
import { pagination } from '../services/read-gate.ts';
import type { LogCapture } from '../services/log-capture.ts';
import type { MapService } from '../services/map-service.ts';
import type { ReadGate } from '../services/read-gate.ts';
import type { WorkspaceService } from '../services/workspace-service.ts';

// The served resource table (spec "Resources"): `rift://logs`, `rift://workspace`, `rift://map`,
// with URI templates for the paged forms. A read answers one JSON document.

export interface ResourceServices {
  gate: ReadGate;
  map: MapService;
  workspace: WorkspaceService;
  logs: LogCapture;
  projections: ProjectionService;
}

/** What a resource URI carried: its page, the id its path named, its other query parameters. */
export interface ResourceArgs {
  pageIndex: number;
  /** The `{id}` of a templated path (`rift://projection/{id}`). */
  id: string | null;
  params: Record<string, string>;
  uri: string;
}

export interface ResourceDefinition {
  uri: string;
  name: string;
  description: string;
  /** RFC 6570 template of the paged form, when the resource pages. */
  template: string | null;
  schema: z.ZodType;
  /** For a resource addressed by id (`rift://projection/{id}`): the id's form; it is not listed, only templated. */
  id?: RegExp;
  /** Query parameters besides page_index. */
  params?: readonly string[];
  read: (services: ResourceServices, pageIndex: number, args: ResourceArgs) => Promise<unknown>;
}

export const RESOURCE_MIME_TYPE = 'application/json';

export const RESOURCES: readonly ResourceDefinition[] = [
  {
    uri: 'rift://logs',
    name: 'logs',
    description:
      "The server's own diagnostics, newest first: records the [logs] capture filter admitted, [logs] page_records per page. Answers even while every other read refuses.",
    template: 'rift://logs{?page_index}',
    schema: LogsResource,
    read: async (s, page) => s.logs.read(page),
  },
  {
    uri: 'rift://map',
    name: 'map',
    description:
      'An orientation snapshot of the indexed tree: languages, directories (three levels), the most referenced declarations, entry points and markdown docs. Computed once per index publication.',
    template: null,
    schema: MapResource,
    read: (s) =>
      s.gate.answer(async () => {
        await s.gate.admitComplete();
        return s.map.current();
      }),
  },
  {
    uri: 'rift://workspace',
    name: 'workspace',
    description:
      'The accepted configuration (revision, languages with their engines, hooks) and one page of the source catalog: 1000 paths with content digests and languages per page.',
    template: 'rift://workspace{?page_index}',
    schema: WorkspaceResource,
    read: (s, page) =>
      s.gate.answer(async () => {
        await s.gate.admitComplete();
        return s.workspace.read(page);
      }),
  },
  {
    uri: 'rift://projection/{id}',
    name: 'projection',
    description: 'One projection: its stable directory, state and base revision (its directory reconciled first), and the workspace root.',
    template: 'rift://projection/{id}',
    schema: ProjectionResource,
    id: /^prj_[a-z2-7]{26}$/,
    read: async (s, _page, args) => ({ uri: args.uri, projection: await s.projections.get(args.id!), workspace: s.projections.workspaceRoot }),
  },
  {
    uri: 'rift://changes',
    name: 'changes',
    description:
      "The changes a projection holds (projection=<id>), oldest first: id, origin (rift, or filesystem for writes found in its directory), paths and confirmations, with the projection's state. " +
      'Changes applied directly to the workspace are kept by no changeset: without projection the list is empty and state null.',
    template: 'rift://changes{?projection,page_index}',
    schema: ChangesResource,
    params: ['projection'],
    read: async (s, page, args) => {
      const { state, changes } = await s.projections.changeList(args.params.projection ?? null);
      const at = page * CHANGES_PAGE_RECORDS;
      return { uri: args.uri, state, changes: changes.slice(at, at + CHANGES_PAGE_RECORDS), pagination: pagination(page, changes.length, CHANGES_PAGE_RECORDS) };
    },
  },
];

/** The resource a URI names and the page it selects; `invalid_request` / `resource_not_found` otherwise. */
export function resolveResourceUri(uri: string): { def: ResourceDefinition; args: ResourceArgs } {
  const query = uri.indexOf('?');
  const base = query < 0 ? uri : uri.slice(0, query);
  let id: string | null = null;
  const def = RESOURCES.find((r) => {
    if (r.id === undefined) return r.uri === base;
    const prefix = r.uri.slice(0, r.uri.indexOf('{'));
    if (!base.startsWith(prefix)) return false;
    id = base.slice(prefix.length);
    if (!r.id.test(id)) throw invalidField('uri', `${id} is not an id ${r.uri} serves`);
    return true;
  });
  if (def === undefined) {
    throw new RiftError('resource_not_found', [['uri', uri], ['served', RESOURCES.map((r) => r.uri).join(' ')]]);
  }
  const args: ResourceArgs = { pageIndex: 0, id, params: {}, uri };
  if (query < 0) return { def, args };
  for (const [key, value] of new URLSearchParams(uri.slice(query + 1))) {
    if (def.params?.includes(key)) {
      args.params[key] = value;
      continue;
    }
    if (key !== 'page_index' || def.template === null || def.id !== undefined) throw invalidField(key, `not a parameter of ${def.uri}`);
    if (!/^(0|[1-9][0-9]{0,15})$/.test(value)) throw invalidField('page_index', 'not a non-negative integer');
    args.pageIndex = Number(value);
  }
  return { def, args };
}
