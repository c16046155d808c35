import { type z } from 'zod';
import { RiftError, invalidField } from '../core/errors.ts';
import { LogsResource, MapResource, WorkspaceResource } from '../protocol/resources.ts';
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
}

export interface ResourceDefinition {
  uri: string;
  name: string;
  description: string;
  /** RFC 6570 template of the paged form, when the resource pages. */
  template: string | null;
  schema: z.ZodType;
  read: (services: ResourceServices, pageIndex: number) => Promise<unknown>;
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
    read: async (s) => {
      await s.gate.admitComplete();
      return s.map.current();
    },
  },
  {
    uri: 'rift://workspace',
    name: 'workspace',
    description:
      'The accepted configuration (revision, languages with their engines, hooks) and one page of the source catalog: 1000 paths with content digests and languages per page.',
    template: 'rift://workspace{?page_index}',
    schema: WorkspaceResource,
    read: async (s, page) => {
      await s.gate.admitComplete();
      return s.workspace.read(page);
    },
  },
];

/** The resource a URI names and the page it selects; `invalid_request` / `resource_not_found` otherwise. */
export function resolveResourceUri(uri: string): { def: ResourceDefinition; pageIndex: number } {
  const query = uri.indexOf('?');
  const base = query < 0 ? uri : uri.slice(0, query);
  const def = RESOURCES.find((r) => r.uri === base);
  if (def === undefined) {
    throw new RiftError('resource_not_found', [['uri', uri], ['served', RESOURCES.map((r) => r.uri).join(' ')]]);
  }
  if (query < 0) return { def, pageIndex: 0 };
  const params = new URLSearchParams(uri.slice(query + 1));
  let pageIndex = 0;
  for (const [key, value] of params) {
    if (key !== 'page_index' || def.template === null) throw invalidField(key, `not a parameter of ${def.uri}`);
    if (!/^(0|[1-9][0-9]{0,15})$/.test(value)) throw invalidField('page_index', 'not a non-negative integer');
    pageIndex = Number(value);
  }
  return { def, pageIndex };
}
