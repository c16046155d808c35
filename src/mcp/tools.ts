import { z } from 'zod';
import { GetSymbolInput, GetSymbolResult, NodesInput, NodesResult } from '../protocol/read.ts';
import type { ReadService } from '../services/read-service.ts';
import type { SearchService } from '../services/search-service.ts';
import { SearchInput, SearchResult } from '../protocol/search.ts';
import type { Phase } from '../core/errors.ts';
import type { ResourceServices } from './resources.ts';
import type { ChangeOptions, ChangeService } from '../services/change-service.ts';
import type { ExecuteService } from '../services/execute-service.ts';
import { ExecuteInput, ExecuteResult } from '../protocol/execute.ts';
import type { ProjectionService } from '../services/projection-service.ts';
import { invalidField } from '../core/errors.ts';
import {
  Projection,
  ProjectionCreateInput,
  ProjectionListInput,
  ProjectionListResult,
  ProjectionRef,
  ProjectionRemoveResult,
  ProjectionRestoreInput,
  ProjectionState,
  PublishInput,
  PublishResult,
} from '../protocol/projection.ts';
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
  execute: ExecuteService;
  projections: ProjectionService;
  /** What the resources read (rift://map, rift://workspace, rift://logs). */
  resources: ResourceServices;
}

/** MCP tool annotations: hints a client may use to auto-approve reads (MCP 2025-06-18 `ToolAnnotations`). */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  annotations: ToolAnnotations;
  phase: Phase;
  input: z.ZodType;
  output: z.ZodType;
  handler: (services: ToolServices, args: never, options: ChangeOptions) => Promise<unknown>;
}

function tool<I extends z.ZodType, O extends z.ZodType>(def: {
  name: string;
  title: string;
  description: string;
  annotations: ToolAnnotations;
  phase: Phase;
  input: I;
  output: O;
  handler: (services: ToolServices, args: z.infer<I>, options: ChangeOptions) => Promise<z.infer<O>>;
}): ToolDefinition {
  return def as unknown as ToolDefinition;
}

// Every tool works on the local workspace alone (openWorldHint false). Reads change nothing.
// A change is destructive when it can replace or remove existing text (an insert only adds), and
// idempotent when repeating it changes nothing more: a replacement lands the same bytes again
// (unchanged), a removal or move finds its target gone and refuses; an insert adds again, and a
// patch whose context still matches applies again.
const READ: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const change = (destructive: boolean, idempotent: boolean): ToolAnnotations => ({
  readOnlyHint: false,
  destructiveHint: destructive,
  idempotentHint: idempotent,
  openWorldHint: false,
});

/**
 * A read on the workspace, or with `projection` on that projection's tree, each returned file
 * joining its read set (`nodesPath`: the file a node listing reads).
 */
function scopedRead<T>(
  s: ToolServices,
  args: { projection?: string; rev?: string },
  nodesPath: string | null,
  run: (read: ReadService, search: SearchService) => Promise<T>,
): Promise<T> {
  if (args.projection === undefined) return run(s.read, s.search);
  if (args.rev !== undefined) throw invalidField('rev', 'cannot be combined with projection: a projection is read as it is now');
  return s.projections.read(args.projection, nodesPath, (engine) => run(engine.read, engine.search));
}

/** A change to the workspace, or with `projection` to that projection's tree (recorded there, with its confirmations). */
function scopedChange(
  s: ToolServices,
  args: { projection?: string },
  options: ChangeOptions,
  run: (change: ChangeService, options: ChangeOptions) => Promise<ChangeResult>,
): Promise<ChangeResult> {
  if (args.projection === undefined) return run(s.change, options);
  return s.projections.change(args.projection, options, run);
}

const PROJECTION_TOOLS: readonly ToolDefinition[] = [
  tool({
    name: 'projection_create',
    title: 'Create a projection',
    annotations: change(false, false),
    description:
      'Create a projection: an isolated copy of every visible workspace file under .rift/projections/<id>/ (copy-on-write where the filesystem allows), with its own index. ' +
      'Pass its id as projection to any read or change tool to work there; run shell commands in its path; publish lands its changes in the workspace atomically, or none.',
    phase: 'change',
    input: ProjectionCreateInput,
    output: Projection,
    handler: (s, args) => s.projections.create(args.reason ?? null),
  }),
  tool({
    name: 'projection_list',
    title: 'List projections',
    annotations: READ,
    description: 'List the workspace\'s projections (every rift process sees the same), oldest first, each with its path, state and base revision. Pages with page_index and limit (default 100).',
    phase: 'read',
    input: ProjectionListInput,
    output: ProjectionListResult,
    handler: async (s, args) => s.projections.list(args),
  }),
  tool({
    name: 'projection_remove',
    title: 'Remove a projection',
    annotations: change(true, true),
    description: 'Remove a projection and its directory, dropping whatever it did not publish; the result reports the state it was in.',
    phase: 'change',
    input: ProjectionRef,
    output: ProjectionRemoveResult,
    handler: (s, args) => s.projections.remove(args.projection),
  }),
  tool({
    name: 'projection_restore',
    title: 'Restore projection paths',
    annotations: change(true, true),
    description:
      'Refresh changed paths of a projection from the workspace (paths omitted: all) and drop every change that touched them. Changes drop whole: naming one path of a change restores all of its paths. ' +
      'Restored paths take the workspace\'s current bytes as their new baseline.',
    phase: 'change',
    input: ProjectionRestoreInput,
    output: ProjectionState,
    handler: (s, args) => s.projections.restore(args),
  }),
  tool({
    name: 'publish',
    title: 'Publish a projection',
    annotations: change(true, false),
    description:
      'Write a projection\'s changes into the workspace, all or nothing. Files written in the projection directory by other programs first become one filesystem change (external confirmation). ' +
      'Refuses, writing nothing, with unaccepted (changes whose confirmations accept did not name), conflicts (paths the workspace changed too) and dependency_conflicts (files a projection read returned that the workspace changed; pass one back in accept_dependencies to accept it). ' +
      'On success the projection is rebuilt from the new workspace and its base revision advances. Fails temporarily_unavailable when another publication holds the workspace for the whole call budget.',
    phase: 'change',
    input: PublishInput,
    output: PublishResult,
    handler: (s, args) => s.projections.publish(args),
  }),
];

export const TOOLS: readonly ToolDefinition[] = [
  ...PROJECTION_TOOLS,
  tool({
    name: 'get_symbol',
    title: 'Get symbol',
    annotations: READ,
    description:
      'Find declarations by name or qualified name (`Parser.parse`, `Beacon::signal`); a case-insensitive substring match ranked exact qualified name, exact name, suffix, then other matches. ' +
      'include "source" (the default) attaches the witnessed declaration node and its exact source, attached docs and attributes included; "history" attaches its git timeline (introduced, body_changed, signature_changed, decorators_changed, removed; newest first). ' +
      'rev reads the declaration as a branch, tag or commit holds it. Pages with page_index and limit (default 5).',
    phase: 'read',
    input: GetSymbolInput,
    output: GetSymbolResult,
    handler: (s, args) => scopedRead(s, args, null, (read) => read.getSymbol(args)),
  }),
  tool({
    name: 'search',
    title: 'Search',
    annotations: READ,
    description:
      'Ranked search over declaration names, declaration sources and file contents: prose or identifiers. A multi-word query matches units carrying any word; more words rank higher. ' +
      'target picks symbol or file hits (default all); paths.include/exclude narrow by glob before ranking; paths.force_include reaches files [source] or .gitignore keep out of the index (≤256). ' +
      'include "source" attaches the excerpt, "score" the fused ranking value. matched_by says which lane placed a hit: ranked (full text), name (identifier), content (literal line). rev searches a branch, tag or commit instead of the working tree. Pages with page_index and limit (default 20).',
    phase: 'read',
    input: SearchInput,
    output: SearchResult,
    handler: (s, args) => scopedRead(s, args, null, (_read, search) => search.search(args)),
  }),
  tool({
    name: 'nodes',
    title: 'Syntax nodes at a position',
    annotations: READ,
    description:
      'List the named syntax nodes containing a UTF-8 byte position in a file, outermost first. Each node id carries a witness of its bytes that later node edits verify. rev reads the file as a branch, tag or commit holds it.',
    phase: 'read',
    input: NodesInput,
    output: NodesResult,
    handler: (s, args) => scopedRead(s, args, args.path, (read) => read.nodes(args)),
  }),
  // Change tools: each resolves the whole operation against current bytes before writing and
  // returns a ChangeResult; a refusal is a result (status "refused"), never an error.
  tool({
    name: 'replace_symbol',
    title: 'Replace a declaration',
    annotations: change(true, true),
    description:
      'Replace a declaration, addressed by SymbolId, with body verbatim. The replaced span is the whole declaration: attached doc comments, attributes and decorators included, trailing newline excluded. ' +
      'Refuses (result status "refused") when the symbol is missing or ambiguous, or when the file on disk no longer matches the index. body is text or {"file": "/abs/path"}, at most 1 MiB.',
    phase: 'change',
    input: ReplaceSymbolInput,
    output: ChangeResult,
    handler: (s, args, o) => scopedChange(s, args, o, (c, opts) => c.replaceSymbol(args, opts)),
  }),
  tool({
    name: 'insert_symbol',
    title: 'Insert a declaration',
    annotations: change(false, false),
    description:
      'Insert a declaration beside an anchor declaration (anchor: SymbolId; before lands above its docs and attributes; the anchor\'s indentation is applied to the body) or at the start or end of a file (file: project path; create_missing creates it and its parents). ' +
      'Blank lines separate the body as the file separates its sibling declarations (two between top-level Python definitions when it shows none), and the body takes the file\'s own line ending. Exactly one of anchor or file.',
    phase: 'change',
    input: InsertSymbolInput,
    output: ChangeResult,
    handler: (s, args, o) => scopedChange(s, args, o, (c, opts) => c.insertSymbol(args, opts)),
  }),
  tool({
    name: 'remove_symbol',
    title: 'Remove a declaration',
    annotations: change(true, true),
    description:
      'Remove a declaration: its whole span (attached docs and attributes included) and the separator after it, so no blank-line run is left. ' +
      'The language engine checks references first: a standing reference refuses (no_references) unless force is set; an engine still loading that reports none fails temporarily_unavailable (resend, or force). ' +
      'Without an engine the removal applies with a rift.remove.references_unchecked warning naming why.',
    phase: 'change',
    input: RemoveSymbolInput,
    output: ChangeResult,
    handler: (s, args, o) => scopedChange(s, args, o, (c, opts) => c.removeSymbol(args, opts)),
  }),
  tool({
    name: 'replace_node',
    title: 'Replace a syntax node',
    annotations: change(true, true),
    description:
      'Replace exactly the bytes of a witnessed syntax node (NodeId from nodes or get_symbol) with body. The witness is recomputed first; a stale one refuses with source_unchanged naming both witnesses.',
    phase: 'change',
    input: ReplaceNodeInput,
    output: ChangeResult,
    handler: (s, args, o) => scopedChange(s, args, o, (c, opts) => c.replaceNode(args, opts)),
  }),
  tool({
    name: 'insert_node',
    title: 'Insert beside a syntax node',
    annotations: change(false, false),
    description:
      "Insert body verbatim immediately before or after a witnessed syntax node: no separator and no indentation are added, so include the spacing the inserted bytes need.",
    phase: 'change',
    input: InsertNodeInput,
    output: ChangeResult,
    handler: (s, args, o) => scopedChange(s, args, o, (c, opts) => c.insertNode(args, opts)),
  }),
  tool({
    name: 'remove_node',
    title: 'Remove a syntax node',
    annotations: change(true, true),
    description:
      'Remove a witnessed syntax node. A node naming a declaration removes the declaration like remove_symbol, references checked the same way (force overrides); any other node is removed with a rift.remove.node_unchecked warning.',
    phase: 'change',
    input: RemoveNodeInput,
    output: ChangeResult,
    handler: (s, args, o) => scopedChange(s, args, o, (c, opts) => c.removeNode(args, opts)),
  }),
  tool({
    name: 'patch',
    title: 'Apply a unified diff',
    annotations: change(true, false),
    description:
      'Apply a unified diff (`--- a/<path>`, `+++ b/<path>`, `@@ -l,n +l,n @@` hunks) to any visible file, with git apply semantics: context locates each hunk (header numbers and counts are hints), line endings are matched loosely and kept, ' +
      '`--- /dev/null` creates and `+++ /dev/null` deletes (the hunks must consume the whole file). All files land as one change or none does; a hunk found nowhere refuses naming the hunk, the line searched from, and both sides. At most 4 MiB and 64 files.',
    phase: 'change',
    input: PatchInput,
    output: ChangeResult,
    handler: (s, args, o) => scopedChange(s, args, o, (c, opts) => c.patch(args, opts)),
  }),
  tool({
    name: 'rename_symbol',
    title: 'Rename a declaration',
    annotations: change(true, true),
    description:
      "Rename a declaration (SymbolId) and every reference to it, as the language engine for its language proposes (prepareRename, then rename): all files land as one change, each edit witnessed against the current bytes. " +
      'Refuses unsupported when the language has no engine, and unmet_precondition (engine_proposed_edits, with the engine\'s words) when the engine declines. ' +
      'The result warns rift.rename.surviving_occurrence for each whole-word occurrence of the old name left in the tree (comments, strings, unrelated declarations).',
    phase: 'change',
    input: RenameSymbolInput,
    output: ChangeResult,
    handler: (s, args, o) => scopedChange(s, args, o, (c, opts) => c.renameSymbol(args, opts)),
  }),
  tool({
    name: 'move_file',
    title: 'Move a file',
    annotations: change(true, true),
    description:
      'Move a visible regular file to a new project path (which must not exist and must pass [source]); parent directories are created. ' +
      'A language engine advertising workspace/willRenameFiles (typescript-language-server) rewrites the imports in the same change; for Python without such an engine (pyright) rift rewrites the imports of the moved module from the syntax tree in the same change. ' +
      'Otherwise, and for each Python occurrence it cannot rewrite safely (a string naming the module, __all__), the result carries rift.move.references_not_updated naming the path and why.',
    phase: 'change',
    input: MoveFileInput,
    output: ChangeResult,
    handler: (s, args, o) => scopedChange(s, args, o, (c, opts) => c.moveFile(args, opts)),
  }),
  tool({
    name: 'execute',
    title: 'Run code in the execution copy',
    // It writes only inside the execution copy, never the tree; what the code does is open.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    description:
      'Run a block of code (language: javascript via node, python via python3, bash or sh, as [execution].allow names it exactly) in the workspace\'s execution copy under .rift/exec/ (with projection, that projection\'s own copy): ' +
      'the copy persists between calls (installed dependencies stay), its visible files are refreshed to match the tree first, and nothing the code writes reaches the tree. ' +
      'Bounded by [execution] max_code (limit_exceeded), max_timeout (the process group is killed; status failed, rift.execute.timed_out) and max_output bytes kept per stream (truncated, with the whole stream\'s size and digest); ' +
      'at most max_concurrent runs at once across the workspace (temporarily_unavailable: resend). sandbox says whether bubblewrap held the run (network off, only the copy writable) or why not.',
    phase: 'read',
    input: ExecuteInput,
    output: ExecuteResult,
    handler: (s, args) => s.execute.execute(args),
  }),
].sort((a, b) => (a.name < b.name ? -1 : 1));

/** zod's bounds of an integer that says nothing more: the JSON safe range, implied by `integer` here. */
function withoutSafeIntegerBounds(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutSafeIntegerBounds);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if ((k === 'maximum' && x === Number.MAX_SAFE_INTEGER) || (k === 'minimum' && x === Number.MIN_SAFE_INTEGER)) continue;
    out[k] = withoutSafeIntegerBounds(x);
  }
  return out;
}

const DEF = '#/$defs/';

/** How often each `$defs` entry is referenced in `v`. */
function refCounts(v: unknown, counts: Map<string, number>): Map<string, number> {
  if (Array.isArray(v)) for (const x of v) refCounts(x, counts);
  else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (k === '$ref' && typeof x === 'string' && x.startsWith(DEF)) counts.set(x.slice(DEF.length), (counts.get(x.slice(DEF.length)) ?? 0) + 1);
      else refCounts(x, counts);
    }
  }
  return counts;
}

/** `v` with the references to `defs` entries in `inline` replaced by the entry (siblings such as a description kept). */
function inlineDefs(v: unknown, defs: Record<string, unknown>, inline: ReadonlySet<string>): unknown {
  if (Array.isArray(v)) return v.map((x) => inlineDefs(x, defs, inline));
  if (v === null || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  const ref = typeof o.$ref === 'string' && o.$ref.startsWith(DEF) ? o.$ref.slice(DEF.length) : null;
  const out: Record<string, unknown> = ref !== null && inline.has(ref) ? { ...(inlineDefs(defs[ref], defs, inline) as object) } : {};
  for (const [k, x] of Object.entries(o)) if (!(k === '$ref' && ref !== null && inline.has(ref))) out[k] = inlineDefs(x, defs, inline);
  return out;
}

/**
 * JSON Schema of a tool's input or output, as served and exported. Shapes with an `id`
 * (protocol/common.ts) that recur within the schema are stated once under `$defs` and referred
 * to; the SDK client's validator (Ajv) and draft 2020-12 clients resolve `#/$defs/…`. A shape
 * used once is inlined, where a reference would only add bytes.
 */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  let json = withoutSafeIntegerBounds(z.toJSONSchema(schema, { io, target: 'draft-2020-12' })) as Record<string, unknown>;
  delete json.$schema;
  const defs = (json.$defs ?? {}) as Record<string, unknown>;
  const counts = refCounts(json, new Map());
  const once = new Set(Object.keys(defs).filter((k) => (counts.get(k) ?? 0) <= 1));
  if (once.size > 0) {
    json = inlineDefs(json, defs, once) as Record<string, unknown>;
    const kept = Object.fromEntries(Object.entries(defs).filter(([k]) => !once.has(k)).map(([k, d]) => [k, inlineDefs(d, defs, once)]));
    if (Object.keys(kept).length > 0) json.$defs = kept;
    else delete json.$defs;
  }
  // MCP requires `type: "object"` at the root; a union of object shapes (ChangeResult) lacks it.
  if (json.type === undefined) json.type = 'object';
  return json;
}
