import { z } from 'zod';
import { Limit, PageIndex, Pagination, ProjectPath, ReadWarning, RevisionId, TextRange } from './common.ts';
import { SymbolRecord } from './read.ts';

// search (spec "search", "Full-text search"; reference A.3, F.6).

export const SearchInput = z
  .object({
    query: z.string().describe('Words or a literal: matches declaration names, declaration sources and file contents'),
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
      .array(z.enum(['ranked', 'name', 'content']))
      .min(1)
      .describe('ranked: the full-text lane; name: the identifier matcher; content: the literal line matcher'),
    range: TextRange,
    line: z.number().int().min(1).describe('1-based line of range.start'),
    path: ProjectPath,
    source: z.string().optional().describe('With include "source": the excerpt (declaration source, or the matched line)'),
    score: z.number().optional().describe('With include "score": the fused ranking value, comparable only within this answer'),
  })
  .strict();

export const SearchResult = z
  .object({ results: z.array(SearchHit), pagination: Pagination, warnings: z.array(ReadWarning) })
  .strict();
export type SearchResult = z.infer<typeof SearchResult>;
