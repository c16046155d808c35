import { type z } from 'zod';
import { RiftError, invalidField } from '../core/errors.ts';
import { decodeIdPath } from '../core/ids.ts';
import { CHANGES_PAGE_RECORDS } from '../core/limits.ts';
import { FsResource, LogsResource, MapResource, WorkspaceResource } from '../protocol/resources.ts';
import type { FsService } from '../services/fs-service.ts';
import { ChangesResource, ProjectionResource } from '../protocol/projection.ts';
import type { ProjectionService } from '../services/projection-service.ts';
import { pagination } from '../protocol/common.ts';
import type { LogCapture } from '../services/log-capture.ts';
import type { MapService } from '../services/map-service.ts';
import type { ReadGate } from '../services/read-gate.ts';
import type { WorkspaceService } from '../services/workspace-service.ts';

// The served resource table (spec "Resources"): `rift://logs`, `rift://workspace`, `rift://map`,
// `rift://fs`, with URI templates for the paged and addressed forms. A read answers one JSON document.

export interface ResourceServices {
  gate: ReadGate;
  map: MapService;
  workspace: WorkspaceService;
  logs: LogCapture;
  projections: ProjectionService;
  /** `rift://fs` of the workspace (a projection's comes from `projections`). */
  fs: FsService;
}

/** What a resource URI carried: its page, the id its path named, its other query parameters. */
export interface ResourceArgs {
  pageIndex: number;
  /** Whether the URI named page_index (pageIndex is 0 otherwise). */
  paged: boolean;
  /** The `{id}` of a templated path (`rift://projection/{id}`). */
  id: string | null;
  /** The decoded `{/path}` of a resource addressed by project path (`rift://fs`); '' for the bare URI. */
  path: string | null;
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
  /** A resource addressed by a percent-encoded project path after its URI (`rift://fs/src/a.ts`); the bare URI is the root. */
  path?: true;
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
    uri: 'rift://fs',
    name: 'fs',
    description:
      'Files and directories of the workspace (projection=<id>: of that projection), as the visibility policy shows them; the path follows rift://fs/ percent-encoded as in ids. ' +
      'A directory lists its visible entries (1000 a page, page_index; sorted by path in UTF-8 byte order; symlinks reported, never followed). ' +
      'A file answers one byte range (start, length; at most 1 MiB) with its encoding (utf8 or base64), total_bytes, the digest of the whole file, and next: the URI of the following range. ' +
      'A digest that changes between ranges means the file changed: read again from start=0.',
    template: 'rift://fs{/path}{?page_index,start,length,projection}',
    schema: FsResource,
    path: true,
    params: ['start', 'length', 'projection'],
    read: async (s, page, args) => {
      const projection = projectionParam(args);
      const request = {
        uri: args.uri,
        path: args.path!,
        pageIndex: args.paged ? page : null,
        start: integerParam(args, 'start'),
        length: integerParam(args, 'length'),
        projection,
      };
      if (projection !== null) return (await s.projections.fs(projection)).read(request);
      return s.gate.answer(async () => {
        await s.gate.admitComplete();
        return s.fs.read(request);
      });
    },
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
      const { state, changes, snapshot } = await s.projections.changeList(projectionParam(args));
      const at = page * CHANGES_PAGE_RECORDS;
      return { uri: args.uri, state, changes: changes.slice(at, at + CHANGES_PAGE_RECORDS), pagination: pagination(page, changes.length, CHANGES_PAGE_RECORDS), snapshot };
    },
  },
];

const INTEGER = /^(0|[1-9][0-9]{0,15})$/;

/** A non-negative integer query parameter, or null when the URI names none. */
function integerParam(args: ResourceArgs, key: string): number | null {
  const value = args.params[key];
  if (value === undefined) return null;
  if (!INTEGER.test(value)) throw invalidField(key, 'not a non-negative integer');
  return Number(value);
}

/** The `projection` query parameter (a projection id), or null for the workspace. */
function projectionParam(args: ResourceArgs): string | null {
  const value = args.params.projection;
  if (value === undefined) return null;
  if (!/^prj_[a-z2-7]{26}$/.test(value)) throw invalidField('projection', 'not a projection id (prj_ and 26 base32 characters)');
  return value;
}

/** The resource a URI names and the page it selects; `invalid_request` / `resource_not_found` otherwise. */
export function resolveResourceUri(uri: string): { def: ResourceDefinition; args: ResourceArgs } {
  const query = uri.indexOf('?');
  const base = query < 0 ? uri : uri.slice(0, query);
  let id: string | null = null;
  let path: string | null = null;
  const def = RESOURCES.find((r) => {
    if (r.path) {
      if (base === r.uri) path = '';
      else if (base.startsWith(`${r.uri}/`)) {
        // Reference C.1: decoding accepts either hex case; an escaped safe byte, a bare unsafe one or bytes that are not UTF-8 are refused.
        path = decodeIdPath(base.slice(r.uri.length + 1));
        if (path === null) throw invalidField('uri', 'the path is not percent-encoded canonically (reference C.1)');
      } else return false;
      return true;
    }
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
  const args: ResourceArgs = { pageIndex: 0, paged: false, id, path, params: {}, uri };
  if (query < 0) return { def, args };
  for (const [key, value] of new URLSearchParams(uri.slice(query + 1))) {
    if (def.params?.includes(key)) {
      args.params[key] = value;
      continue;
    }
    if (key !== 'page_index' || def.template === null || def.id !== undefined) throw invalidField(key, `not a parameter of ${def.uri}`);
    if (!INTEGER.test(value)) throw invalidField('page_index', 'not a non-negative integer');
    args.pageIndex = Number(value);
    args.paged = true;
  }
  return { def, args };
}
