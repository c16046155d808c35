import { z } from 'zod';
import { Limit, PageIndex, Pagination, ProjectPath, ProjectionId, ReadWarning, ResolvedRevision, RevisionId, TextRange } from './common.ts';
import { SymbolId, SymbolRecord } from './read.ts';

// search (spec "search", "Full-text search", "Traversal"; reference A.3, A.9, F.6, F.7).

export const RelationshipFacet = z.enum([
  'contains', 'declares', 'augments', 'references', 'calls', 'constructs', 'reads', 'writes', 'imports',
  'exports', 'extends', 'implements', 'has_type', 'overrides', 'aliases', 'generates', 'depends_on',
  'annotated_by', 'throws', 'catches', 'bounded_by', 'instantiates', 'specializes', 'overloads',
  'mixes_in', 'embeds', 'tests', 'configures', 'binds',
]);

export const Direction = z.enum(['outgoing', 'incoming']);

export const Relationship = z
  .object({
    from: SymbolId,
    kind: z.string().describe('The relationship kind: calls, constructs, references, imports, extends, implements, embeds, contains'),
    facets: z.array(RelationshipFacet).min(1),
    to: SymbolId,
    derivation: z
      .enum(['resolution', 'syntax', 'heuristic'])
      .describe('resolution: scope and import resolution found the target; heuristic: the only workspace declaration of that name and kind'),
  })
  .strict()
  .describe('One edge of the relationship graph, in its own orientation (from → to)');

export const GraphHop = z
  .object({ relationship: Relationship, direction: Direction.describe('How the walk followed the relationship') })
  .strict();

export const SearchTraversal = z
  .object({
    seed: SymbolId.describe('Where the walk starts: a SymbolId from get_symbol or search'),
    to: SymbolId.optional().describe('Report only whether, and by which shortest route, the walk reaches this symbol'),
    direction: Direction.optional().describe('outgoing (default): what the seed calls, imports, references; incoming: what depends on it'),
    facets: z.array(RelationshipFacet).optional().describe('Relationship facets to follow; empty or omitted follows every facet'),
    depth: z.number().int().min(1).optional().describe('Hops to walk (default 1; with `to`, the maximum; at most 8)'),
  })
  .strict();

export const SearchInput = z
  .object({
    query: z
      .string()
      .optional()
      .describe('Words or a literal: matches declaration names, declaration sources and file contents; required unless traversal is given'),
    target: z.enum(['symbol', 'file', 'all']).optional().describe('Which hits to return (default all)'),
    paths: z
      .object({
        include: z.array(z.string()).optional().describe('Globs a hit path must match (narrowing before scoring)'),
        exclude: z.array(z.string()).optional().describe('Globs a hit path must not match'),
        force_include: z
          .array(z.string())
          .optional()
          .describe('Globs of files [source] or .gitignore keep out of the index, parsed on demand (at most 256 files)'),
      })
      .strict()
      .optional(),
    include: z
      .array(z.enum(['source', 'score']))
      .optional()
      .describe('Extra payload per hit: source (the excerpt), score (the fused ranking value); omitted = neither'),
    page_index: PageIndex.optional(),
    limit: Limit.optional().describe('Hits per page (default 20, at most 1000)'),
    rev: RevisionId.optional(),
    projection: ProjectionId.optional(),
    traversal: SearchTraversal.optional().describe('Walk the relationship graph from a seed; alone, or beside query'),
  })
  .strict();
export type SearchInput = z.infer<typeof SearchInput>;

export const SearchHit = z
  .object({
    hit: z.discriminatedUnion('target', [
      z.object({ target: z.literal('symbol'), symbol: SymbolRecord }).strict(),
      z
        .object({
          target: z.literal('file'),
          size: z.number().int().min(0).describe('File size in bytes'),
          languages: z.array(z.string()).optional().describe('Only where a syntax provider claims the path'),
        })
        .strict(),
    ]),
    matched_by: z
      .array(z.enum(['ranked', 'name', 'content', 'relationship']))
      .min(1)
      .describe('ranked: the full-text lane; name: the identifier matcher; content: the literal line matcher; relationship: the traversal reached it'),
    range: TextRange,
    line: z.number().int().min(1).describe('1-based line of range.start'),
    path: ProjectPath,
    source: z.string().optional().describe('With include "source": the excerpt (declaration source, or the matched line)'),
    score: z.number().optional().describe('With include "score": the fused ranking value, comparable only within this answer'),
    traversal_path: z.array(GraphHop).min(1).optional().describe('Walked hits: the hops from the seed to this hit, shortest first found'),
    distance: z.number().int().min(1).optional().describe('Walked hits: the length of traversal_path'),
  })
  .strict();

export const SearchResult = z
  .object({ results: z.array(SearchHit), pagination: Pagination, revision: ResolvedRevision.optional(), warnings: z.array(ReadWarning) })
  .strict();
export type SearchResult = z.infer<typeof SearchResult>;
