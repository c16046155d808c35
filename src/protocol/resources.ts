import { z } from 'zod';
import { Digest, Pagination, ProjectPath, TreeSnapshot } from './common.ts';
import { SymbolId } from './read.ts';

// The resources (spec "Resources"; reference B.1–B.4, F.9): `rift://logs`, `rift://workspace`,
// `rift://map`, `rift://fs`. Each is read as one JSON document.

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

/** A file as `rift://fs` reports it: a regular file with its size, or a symlink, reported and never followed. */
export const FsFile = z
  .object({
    path: ProjectPath,
    content: z.discriminatedUnion('kind', [
      z.object({ kind: z.literal('regular'), size_bytes: z.number().int().min(0) }).strict(),
      z
        .object({
          kind: z.literal('symlink'),
          target: z.string().max(5464).describe('The raw bytes of the link, padded base64; rift never follows it'),
        })
        .strict(),
    ]),
    languages: z.array(z.string()).describe('The language entry that claims the path, if any (none for a symlink)'),
  })
  .strict();

export const ProjectEntry = z
  .discriminatedUnion('kind', [
    z.object({ kind: z.literal('directory'), path: z.string().describe('Project path; "" for the workspace root') }).strict(),
    z.object({ kind: z.literal('file'), file: FsFile }).strict(),
  ])
  .meta({ id: 'ProjectEntry' });
export type ProjectEntry = z.infer<typeof ProjectEntry>;

export const FsResource = z
  .object({
    uri: z.string(),
    snapshot: TreeSnapshot,
    entry: ProjectEntry.describe('What the path names'),
    encoding: z
      .enum(['directory', 'utf8', 'base64', 'none'])
      .describe('directory: entries lists it; utf8: content is text (the file is UTF-8 without NUL); base64: content is the raw bytes; none: no content (a symlink)'),
    entries: z.array(ProjectEntry).optional().describe('A directory: one page of its visible entries, sorted by path in UTF-8 byte order'),
    pagination: Pagination.optional(),
    start: z.number().int().min(0).optional().describe('A file: the UTF-8 byte offset content starts at'),
    end: z.number().int().min(0).optional().describe('A file: the byte offset content ends at (exclusive)'),
    total_bytes: z.number().int().min(0).optional().describe('A file: its size'),
    content: z.string().optional().describe('A file: bytes [start, end), as encoding says'),
    digest: Digest.optional().describe('A file: digest of all its bytes; when it changes between ranges, restart from start=0'),
    next: z.string().optional().describe('A file with bytes past end: the URI of the next range'),
  })
  .strict();
export type FsResource = z.infer<typeof FsResource>;
