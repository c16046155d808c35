import { z } from 'zod';

// Wire shapes shared by every tool. Every object is closed (unknown fields are refused).

export const Digest = z.string().regex(/^[0-9a-f]{8}$/).describe('First 8 lowercase hex characters of a SHA-256');

// Shapes that recur inside one tool's schema carry an `id`: the JSON Schema export then states
// each once under `$defs` and refers to it (mcp/tools.ts), which keeps `tools/list` small.

export const ProjectPath = z
  .string()
  .min(1)
  .describe('Workspace-relative path with `/` separators, no `.` or `..` segments')
  .meta({ id: 'ProjectPath' });

export const TextRange = z
  .object({
    start: z.number().int().min(0).describe('UTF-8 byte offset, inclusive'),
    end: z.number().int().min(0).describe('UTF-8 byte offset, exclusive'),
  })
  .strict()
  .describe('Half-open UTF-8 byte range')
  .meta({ id: 'TextRange' });

export { pagination } from './plain.ts';

export const Pagination = z
  .object({
    page_index: z.number().int().min(0).describe('The zero-based page served'),
    total_pages: z.number().int().min(1).describe('The true number of pages; an empty answer is page 0 of 1'),
  })
  .strict();

export const ProjectionId = z
  .string()
  .regex(/^prj_[a-z2-7]{26}$/, { error: 'not a projection id (prj_ and 26 base32 characters)' })
  .describe('A projection from projection_create: the call works on that isolated tree instead of the workspace')
  .meta({ id: 'ProjectionId' });

/** Which indexed tree a resource answered under (reference B.4 `snapshot`). */
export const TreeSnapshot = z
  .object({ tree_revision: Digest.describe('Tree revision of the index of the tree read (the workspace, or the projection)') })
  .strict();

export const PageIndex = z.number().int().min(0).describe('Zero-based page under `limit` (default 0)');
export const Limit = z.number().int().min(1).describe('Hits per page, at most 1000');

export const RevisionId = z
  .string()
  .describe('A branch, tag, or commit id as git spells it (`main`, `v0.0.6`, `dd0a482`)');

const warning = <K extends string, S extends z.ZodRawShape>(kind: K, shape: S, description: string) =>
  z
    .object({ kind: z.literal(kind), message: z.string(), ...shape })
    .strict()
    .describe(description);

export const ReadWarning = z.discriminatedUnion('kind', [
  warning(
    'stale_index',
    { captured: Digest, indexed: Digest },
    'The answer came from an index lagging the tree the read captured; names both tree revisions',
  ),
  warning(
    'semantic_index_preparing',
    { prepared: z.number().int().min(0), total: z.number().int().min(0) },
    'The semantic ranking is still being built',
  ),
  warning('semantic_ranking_unavailable', { reason: z.string() }, 'The semantic ranking will not answer for the life of this server'),
  warning(
    'lexical_ranking_unavailable',
    { reason: z.string() },
    'The full-text tier failed to load or holds no indexed tree; ranking fell back to identifiers',
  ),
  warning(
    'symbol_disagreement',
    { symbol: z.string(), detail: z.string() },
    "A symbol's presentation disagrees with a provider's own facts",
  ),
  warning('traversal_truncated', { visited: z.number().int().min(0) }, 'The walk stopped at the node bound'),
  warning(
    'history_truncated',
    { symbol: z.string(), max_revisions: z.number().int().min(1) },
    "A symbol's history walk stopped at [providers.history] max_revisions before reaching its introduction",
  ),
]);

/** The full commit id a `rev` resolved to, on every answer read at a revision. */
export const ResolvedRevision = z
  .string()
  .regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/)
  .describe('The full commit id the request\'s `rev` resolved to (present only on revision reads)');
export type ReadWarning = z.infer<typeof ReadWarning>;

export const ErrorCodeSchema = z.enum([
  'invalid_request',
  'permission_denied',
  'resource_not_found',
  'content_unavailable',
  'cursor_invalid',
  'cursor_expired',
  'cancelled',
  'limit_exceeded',
  'storage_failure',
  'internal_error',
  'unsupported_path',
  'temporarily_unavailable',
  'configuration_invalid',
  'capability_unavailable',
]);

export const RetrySchema = z.enum(['never', 'same_request', 'operator_action']);

export const LimitEvidenceSchema = z
  .object({
    field: z.string().min(1).max(128),
    limit: z.number().int().min(0),
    required: z.number().int().min(0),
  })
  .strict();

export const ErrorDataSchema = z
  .object({
    code: ErrorCodeSchema,
    message: z.string().max(4096),
    retry: RetrySchema,
    phase: z.enum(['read', 'resolve', 'check', 'change']),
    diagnostics: z.array(z.unknown()).max(64),
    limit: LimitEvidenceSchema.optional(),
    causes: z
      .array(z.object({ code: ErrorCodeSchema, message: z.string().max(4096), retry: RetrySchema }).strict())
      .max(8),
  })
  .strict()
  .refine((e) => (e.code === 'limit_exceeded') === (e.limit !== undefined), {
    message: 'limit rides limit_exceeded, and only it',
  });
export type ErrorData = z.infer<typeof ErrorDataSchema>;
