import { z } from 'zod';
import { Digest, Pagination, ProjectPath } from './common.ts';
import { SymbolId } from './read.ts';

// The resources (spec "Resources"; reference B.1–B.3, F.9): `rift://logs`, `rift://workspace`,
// `rift://map`. Each is read as one JSON document.

export const LogRecord = z
  .object({
    id: z.number().int().min(1).describe("The store's own ascending number"),
    recorded_at_ms: z.number().int().describe('When the event happened, milliseconds since the epoch'),
    level: z.enum(['error', 'warn', 'info', 'debug', 'trace']),
    target: z.string().describe('`rift::<component>`'),
    component: z.string().describe('The subsystem: index, mcp, change, logs, …'),
    operation: z.string().describe('What it was doing: index.build, index.publish, mcp.call, …'),
    message: z.string(),
    fields: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).describe('The remaining fields'),
    elapsed_ms: z.number().optional().describe('How long the work took, on a span that closed'),
  })
  .strict();

export const LogsResource = z
  .object({
    records: z.array(LogRecord).describe('Newest first, at most [logs] page_records'),
    record_count: z.number().int().min(0).describe('Records the store holds (at most [logs] retention_records)'),
    pagination: Pagination,
    unavailable: z.string().optional().describe('Why the log store could not be read; records is then empty'),
  })
  .strict();
export type LogsResource = z.infer<typeof LogsResource>;

export const EngineState = z
  .enum(['not_configured', 'configured', 'starting', 'ready', 'failed'])
  .describe('not_configured: no `lsp` engine; configured: named in rift.toml, no process started; starting / ready / failed: the engine process');

export const WorkspaceLanguage = z
  .object({
    id: z.string(),
    enabled: z.boolean(),
    include: z.array(z.string()),
    exclude: z.array(z.string()),
    syntax: z.boolean().describe('Whether a built-in syntax provider parses it (declarations, nodes, relationships)'),
    execution: z.boolean().describe('Whether [execution].allow lets execute run it'),
    lsp: z.object({ engine: z.string().nullable(), state: EngineState, detail: z.string().optional() }).strict(),
  })
  .strict();

export const WorkspaceHook = z
  .object({
    id: z.string(),
    kind: z.string(),
    role: z.enum(['transform', 'validation']),
    include: z.array(z.string()).describe('Changed paths that run it (empty: every change)'),
    exclude: z.array(z.string()),
  })
  .strict();

export const WorkspaceSource = z
  .object({
    path: ProjectPath,
    digest: Digest.describe('Content digest of the indexed bytes'),
    languages: z.array(z.string()).describe('The language entry that claims it, if any'),
  })
  .strict();

export const WorkspaceResource = z
  .object({
    configuration_revision: Digest.describe('Digest of the accepted rift.toml bytes (of no bytes when the file is absent)'),
    languages: z.array(WorkspaceLanguage),
    hooks: z.array(WorkspaceHook),
    source: z.array(WorkspaceSource).describe('At most 1000 source units per page, in path order'),
    pagination: Pagination,
  })
  .strict();
export type WorkspaceResource = z.infer<typeof WorkspaceResource>;

export interface MapModuleShape {
  path: string;
  files: number;
  symbols: number;
  children?: MapModuleShape[];
}

export const MapModule: z.ZodType<MapModuleShape> = z.lazy(() =>
  z
    .object({
      path: z.string(),
      files: z.number().int().min(0),
      symbols: z.number().int().min(0),
      children: z.array(MapModule).optional(),
    })
    .strict(),
);

export const MapResource = z
  .object({
    revision: Digest.describe('The indexed tree the map was computed from'),
    languages: z.array(z.object({ language: z.string(), files: z.number().int().min(0), symbols: z.number().int().min(0) }).strict()),
    modules: z.array(MapModule).describe('Directories, counts inclusive of descendants, folded three directories deep'),
    hubs: z
      .array(z.object({ symbol: SymbolId, kind: z.string(), references: z.number().int().min(1) }).strict())
      .describe('The most referenced declarations, by distinct referrers'),
    entry_points: z.array(SymbolId).describe('Where execution starts: main functions, __main__ guards, package.json bin entries, public static void main'),
    docs: z.array(ProjectPath).describe('Markdown files, in path order'),
    pagination: Pagination,
  })
  .strict();
export type MapResource = z.infer<typeof MapResource>;
