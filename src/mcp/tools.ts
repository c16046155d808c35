import { z } from 'zod';
import { GetSymbolInput, GetSymbolResult, NodesInput, NodesResult } from '../protocol/read.ts';
import type { ReadService } from '../services/read-service.ts';
import type { SearchService } from '../services/search-service.ts';
import { SearchInput, SearchResult } from '../protocol/search.ts';
import type { Phase } from '../core/errors.ts';

// The served tool table. Descriptions are what an agent reads to pick a tool.

export interface ToolServices {
  read: ReadService;
  search: SearchService;
}

export interface ToolDefinition {
  name: string;
  description: string;
  phase: Phase;
  input: z.ZodType;
  output: z.ZodType;
  handler: (services: ToolServices, args: never) => Promise<unknown>;
}

function tool<I extends z.ZodType, O extends z.ZodType>(def: {
  name: string;
  description: string;
  phase: Phase;
  input: I;
  output: O;
  handler: (services: ToolServices, args: z.infer<I>) => Promise<z.infer<O>>;
}): ToolDefinition {
  return def as unknown as ToolDefinition;
}

export const TOOLS: readonly ToolDefinition[] = [
  tool({
    name: 'get_symbol',
    description:
      'Find declarations by name or qualified name (`Parser.parse`, `Beacon::signal`); a case-insensitive substring match ranked exact qualified name, exact name, suffix, then other matches. ' +
      'include "source" (the default) attaches the witnessed declaration node and its exact source, attached docs and attributes included. Pages with page_index and limit (default 5).',
    phase: 'read',
    input: GetSymbolInput,
    output: GetSymbolResult,
    handler: (s, args) => s.read.getSymbol(args),
  }),
  tool({
    name: 'search',
    description:
      'Ranked search over declaration names, declaration sources and file contents: prose or identifiers. A multi-word query matches units carrying any word; more words rank higher. ' +
      'target picks symbol or file hits (default all); paths.include/exclude narrow by glob before ranking; paths.force_include reaches files [source] or .gitignore keep out of the index (≤256). ' +
      'include "source" attaches the excerpt, "score" the fused ranking value. matched_by says which lane placed a hit: ranked (full text), name (identifier), content (literal line). Pages with page_index and limit (default 20).',
    phase: 'read',
    input: SearchInput,
    output: SearchResult,
    handler: (s, args) => s.search.search(args),
  }),
  tool({
    name: 'nodes',
    description:
      'List the named syntax nodes containing a UTF-8 byte position in a file, outermost first. Each node id carries a witness of its bytes that later node edits verify.',
    phase: 'read',
    input: NodesInput,
    output: NodesResult,
    handler: (s, args) => s.read.nodes(args),
  }),
].sort((a, b) => (a.name < b.name ? -1 : 1));

/** JSON Schema of a tool's input or output, as served and exported. */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io, target: 'draft-2020-12' }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}
