import { z } from 'zod';
import { GetSymbolInput, GetSymbolResult, NodesInput, NodesResult } from '../protocol/read.ts';
import type { ReadService } from '../services/read-service.ts';
import type { SearchService } from '../services/search-service.ts';
import { SearchInput, SearchResult } from '../protocol/search.ts';
import type { Phase } from '../core/errors.ts';
import type { ResourceServices } from './resources.ts';
import type { ChangeOptions, ChangeService } from '../services/change-service.ts';
import {
  ChangeResult,
  InsertNodeInput,
  InsertSymbolInput,
  MoveFileInput,
  PatchInput,
  RemoveNodeInput,
  RemoveSymbolInput,
  RenameSymbolInput,
  ReplaceNodeInput,
  ReplaceSymbolInput,
} from '../protocol/change.ts';

// The served tool table. Descriptions are what an agent reads to pick a tool.

export interface ToolServices {
  read: ReadService;
  search: SearchService;
  change: ChangeService;
  /** What the resources read (rift://map, rift://workspace, rift://logs). */
  resources: ResourceServices;
}

export interface ToolDefinition {
  name: string;
  description: string;
  phase: Phase;
  input: z.ZodType;
  output: z.ZodType;
  handler: (services: ToolServices, args: never, options: ChangeOptions) => Promise<unknown>;
}

function tool<I extends z.ZodType, O extends z.ZodType>(def: {
  name: string;
  description: string;
  phase: Phase;
  input: I;
  output: O;
  handler: (services: ToolServices, args: z.infer<I>, options: ChangeOptions) => Promise<z.infer<O>>;
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
  // Change tools: each resolves the whole operation against current bytes before writing and
  // returns a ChangeResult; a refusal is a result (status "refused"), never an error.
  tool({
    name: 'replace_symbol',
    description:
      'Replace a declaration, addressed by SymbolId, with body verbatim. The replaced span is the whole declaration: attached doc comments, attributes and decorators included, trailing newline excluded. ' +
      'Refuses (result status "refused") when the symbol is missing or ambiguous, or when the file on disk no longer matches the index. body is text or {"file": "/abs/path"}, at most 1 MiB.',
    phase: 'change',
    input: ReplaceSymbolInput,
    output: ChangeResult,
    handler: (s, args, o) => s.change.replaceSymbol(args, o),
  }),
  tool({
    name: 'insert_symbol',
    description:
      'Insert a declaration beside an anchor declaration (anchor: SymbolId; before lands above its docs and attributes; the anchor\'s indentation is applied to the body) or at the start or end of a file (file: project path; create_missing creates it and its parents). ' +
      'One blank line separates the body from existing text, in the file\'s own line ending. Exactly one of anchor or file.',
    phase: 'change',
    input: InsertSymbolInput,
    output: ChangeResult,
    handler: (s, args, o) => s.change.insertSymbol(args, o),
  }),
  tool({
    name: 'remove_symbol',
    description:
      'Remove a declaration: its whole span (attached docs and attributes included) and the separator after it, so no blank-line run is left. ' +
      'The language engine checks references first: a standing reference refuses (no_references) unless force is set; an engine still loading that reports none fails temporarily_unavailable (resend, or force). ' +
      'Without an engine the removal applies with a rift.remove.references_unchecked warning naming why.',
    phase: 'change',
    input: RemoveSymbolInput,
    output: ChangeResult,
    handler: (s, args, o) => s.change.removeSymbol(args, o),
  }),
  tool({
    name: 'replace_node',
    description:
      'Replace exactly the bytes of a witnessed syntax node (NodeId from nodes or get_symbol) with body. The witness is recomputed first; a stale one refuses with source_unchanged naming both witnesses.',
    phase: 'change',
    input: ReplaceNodeInput,
    output: ChangeResult,
    handler: (s, args, o) => s.change.replaceNode(args, o),
  }),
  tool({
    name: 'insert_node',
    description:
      "Insert body verbatim immediately before or after a witnessed syntax node: no separator and no indentation are added, so include the spacing the inserted bytes need.",
    phase: 'change',
    input: InsertNodeInput,
    output: ChangeResult,
    handler: (s, args, o) => s.change.insertNode(args, o),
  }),
  tool({
    name: 'remove_node',
    description:
      'Remove a witnessed syntax node. A node naming a declaration removes the declaration like remove_symbol, references checked the same way (force overrides); any other node is removed with a rift.remove.node_unchecked warning.',
    phase: 'change',
    input: RemoveNodeInput,
    output: ChangeResult,
    handler: (s, args, o) => s.change.removeNode(args, o),
  }),
  tool({
    name: 'patch',
    description:
      'Apply a unified diff (`--- a/<path>`, `+++ b/<path>`, `@@ -l,n +l,n @@` hunks) to any visible file, with git apply semantics: context locates each hunk (header numbers and counts are hints), line endings are matched loosely and kept, ' +
      '`--- /dev/null` creates and `+++ /dev/null` deletes (the hunks must consume the whole file). All files land as one change or none does; a hunk found nowhere refuses naming the hunk, the line searched from, and both sides. At most 4 MiB and 64 files.',
    phase: 'change',
    input: PatchInput,
    output: ChangeResult,
    handler: (s, args, o) => s.change.patch(args, o),
  }),
  tool({
    name: 'rename_symbol',
    description:
      "Rename a declaration (SymbolId) and every reference to it, as the language engine for its language proposes (prepareRename, then rename): all files land as one change, each edit witnessed against the current bytes. " +
      'Refuses unsupported when the language has no engine, and unmet_precondition (engine_proposed_edits, with the engine\'s words) when the engine declines. ' +
      'The result warns rift.rename.surviving_occurrence for each whole-word occurrence of the old name left in the tree (comments, strings, unrelated declarations).',
    phase: 'change',
    input: RenameSymbolInput,
    output: ChangeResult,
    handler: (s, args, o) => s.change.renameSymbol(args, o),
  }),
  tool({
    name: 'move_file',
    description:
      'Move a visible regular file to a new project path (which must not exist and must pass [source]); parent directories are created. ' +
      'A language engine advertising workspace/willRenameFiles (typescript-language-server) rewrites the imports in the same change; otherwise references are not updated and the result carries rift.move.references_not_updated naming why.',
    phase: 'change',
    input: MoveFileInput,
    output: ChangeResult,
    handler: (s, args, o) => s.change.moveFile(args, o),
  }),
].sort((a, b) => (a.name < b.name ? -1 : 1));

/** JSON Schema of a tool's input or output, as served and exported. */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io, target: 'draft-2020-12' }) as Record<string, unknown>;
  delete json.$schema;
  // MCP requires `type: "object"` at the root; a union of object shapes (ChangeResult) lacks it.
  if (json.type === undefined) json.type = 'object';
  return json;
}
