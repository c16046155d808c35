import { z } from 'zod';
import { parseNodeId, parseSymbolId } from '../core/ids.ts';
import { PageIndex, Limit, Pagination, ProjectPath, ProjectionId, ReadWarning, ResolvedRevision, RevisionId, TextRange } from './common.ts';

// get_symbol and nodes (spec "Reads"; reference A.2, A.4, A.9).

export const SymbolFacet = z.enum([
  'namespace', 'module', 'type', 'value', 'callable', 'member', 'member_container', 'parameter',
  'type_parameter', 'constructible', 'extensible', 'implementable', 'macro', 'test', 'annotation',
  'extension', 'variant', 'enumeration', 'alias', 'property', 'abstract', 'constructor', 'static',
  'mutable', 'public', 'deprecated', 'entrypoint', 'operator', 'async', 'generator',
]);

export const NodeFacet = z.enum([
  'declaration', 'definition', 'body', 'block', 'statement', 'expression', 'type_expression', 'import',
  'export', 'parameter', 'argument', 'annotation', 'comment', 'identifier', 'literal', 'pattern',
  'generated', 'test',
]);

/** An id string; one that does not parse names the form it misses (reference D.3), not its length. */
const riftId = (parses: (s: string) => boolean, violation: string, form: string, id: string) =>
  z.string().min(1).max(8192).refine(parses, { error: violation }).describe(form).meta({ id });

export const SymbolId = riftId((s) => parseSymbolId(s) !== null, 'not a rift symbol address', 'rift://symbol/<language>/<path>/<qualified name>', 'SymbolId');
export const NodeId = riftId(
  (s) => parseNodeId(s) !== null,
  'not a witnessed rift node address',
  'rift://node/<language>/<path>@<start>-<end>#<witness>; the witness is re-checked on use',
  'NodeId',
);

export const SymbolRecord = z
  .object({
    id: SymbolId,
    language: z.string().describe('Language id, e.g. `rust`'),
    name: z.string().max(4096).describe('Qualified name: containers joined with `::` (Rust) or `.`'),
    kind: z.string().describe('Bare kind: `function`, `class`, `method`, `struct`, …'),
    facets: z.array(SymbolFacet),
    visibility: z.string().nullable(),
    container: SymbolId.optional().describe("The enclosing declaration's SymbolId"),
  })
  .strict();

export const NodeRecord = z
  .object({
    id: NodeId,
    symbol: SymbolId.optional().describe('The declaration whose span this node is, if any'),
    language: z.string(),
    kind: z.string().describe('Bare grammar kind, e.g. `function_item`'),
    facets: z.array(NodeFacet),
    range: TextRange,
  })
  .strict();

export const SourceExcerpt = z
  .object({
    path: ProjectPath,
    range: TextRange,
    text: z.string().describe('The exact bytes of the range, as UTF-8'),
  })
  .strict();

export const SymbolVersion = z
  .object({
    revision: z.string().describe('The full commit id'),
    path: ProjectPath,
    kind: z.enum(['introduced', 'body_changed', 'signature_changed', 'removed', 'decorators_changed']),
    timestamp: z.string().max(64).describe('Committer time, RFC 3339'),
    author: z.string(),
    summary: z.string().nullable().describe("The commit message's first line"),
  })
  .strict();

export const SymbolHistory = z
  .object({
    symbol: SymbolId,
    versions: z.array(SymbolVersion).describe('Newest first'),
    complete: z.boolean().describe('False when the walk stopped at max_revisions before the introduction'),
  })
  .strict();

export const GetSymbolInput = z
  .object({
    name: z.string().min(1).max(4096).describe('A declaration name or qualified name (case-insensitive substring), not free text'),
    include: z
      .array(z.enum(['source', 'history']))
      .optional()
      .describe('Optional payload per hit; omitted = ["source"], [] = neither'),
    page_index: PageIndex.optional(),
    limit: Limit.optional().describe('Hits per page (default 5, at most 1000)'),
    rev: RevisionId.optional(),
    projection: ProjectionId.optional(),
  })
  .strict();
export type GetSymbolInput = z.infer<typeof GetSymbolInput>;

export const GetSymbolHit = z
  .object({
    symbol: SymbolRecord,
    path: ProjectPath,
    range: TextRange.describe('The whole-declaration span, attached docs and attributes included'),
    line: z.number().int().min(1).describe('1-based line of range.start'),
    node: NodeRecord.optional().describe('With include "source": the witnessed declaration node'),
    source: SourceExcerpt.optional().describe('With include "source": the declaration excerpt'),
    history: SymbolHistory.optional(),
  })
  .strict();

export const GetSymbolResult = z
  .object({ hits: z.array(GetSymbolHit), pagination: Pagination, revision: ResolvedRevision.optional(), warnings: z.array(ReadWarning) })
  .strict();
export type GetSymbolResult = z.infer<typeof GetSymbolResult>;

export const NodesInput = z
  .object({
    path: ProjectPath,
    position: z.number().int().min(0).describe('UTF-8 byte offset'),
    rev: RevisionId.optional(),
    projection: ProjectionId.optional(),
  })
  .strict();
export type NodesInput = z.infer<typeof NodesInput>;

export const NodesResult = z
  .object({
    nodes: z.array(NodeRecord).describe('Named syntax nodes containing the position, outermost first'),
    revision: ResolvedRevision.optional(),
    warnings: z.array(ReadWarning),
  })
  .strict();
export type NodesResult = z.infer<typeof NodesResult>;
