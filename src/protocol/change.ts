import { z } from 'zod';
import { Digest, ProjectPath, ProjectionId, TextRange } from './common.ts';
import { NodeId, SymbolId } from './read.ts';

// Change tool inputs and the one ChangeResult every change tool returns (spec "Changes",
// "Change results"; reference A.5, A.6, D.5, D.6).

export const BodySource = z
  .union([
    z.string().describe('Inline text, used byte for byte'),
    z
      .object({ file: z.string().min(1).describe('Absolute path the server reads directly (same machine only)') })
      .strict(),
  ])
  .describe('Inline text, or {"file": "/abs/path"} read by the server; bounded by the embedding field');

const Projection = ProjectionId;
const Force = z.boolean().optional().describe('Remove even when a language engine reports standing references');
const Position = z.enum(['before', 'after']).describe('Which side of the anchor the body lands on');
const RegionRole = z
  .enum(['selection', 'name', 'header', 'body', 'content', 'documentation', 'enclosing'])
  .nullable()
  .describe('Region-scoped replacement (not served yet); omit or null');

export const ReplaceSymbolInput = z
  .object({
    symbol: SymbolId,
    region: RegionRole.optional(),
    body: BodySource.describe('Replaces the whole declaration span (attached docs and attributes included), verbatim; at most 1 MiB'),
    projection: Projection.optional(),
  })
  .strict();
export type ReplaceSymbolInput = z.infer<typeof ReplaceSymbolInput>;

export const InsertSymbolInput = z
  .object({
    anchor: SymbolId.nullable().optional().describe('Declaration to insert beside; exactly one of anchor or file'),
    file: ProjectPath.nullable().optional().describe('File to insert into, at its start or end; exactly one of anchor or file'),
    position: Position,
    body: BodySource.describe("The declaration to insert; separated as the file's sibling declarations are, in its line ending; at most 1 MiB"),
    create_missing: z.boolean().optional().describe('Create a missing file target, parent directories included (file targets only)'),
    projection: Projection.optional(),
  })
  .strict();
export type InsertSymbolInput = z.infer<typeof InsertSymbolInput>;

export const RemoveSymbolInput = z
  .object({
    symbol: SymbolId,
    force: Force,
    projection: Projection.optional(),
  })
  .strict();
export type RemoveSymbolInput = z.infer<typeof RemoveSymbolInput>;

export const ReplaceNodeInput = z
  .object({
    node: NodeId,
    region: RegionRole.optional(),
    body: BodySource.describe("Replaces exactly the node's bytes; at most 1 MiB"),
    projection: Projection.optional(),
  })
  .strict();
export type ReplaceNodeInput = z.infer<typeof ReplaceNodeInput>;

export const InsertNodeInput = z
  .object({
    node: NodeId.describe('Witnessed anchor node from `nodes` or `get_symbol`'),
    position: Position,
    body: BodySource.describe("Lands verbatim at the node's boundary: no separator, no indentation; at most 1 MiB"),
    projection: Projection.optional(),
  })
  .strict();
export type InsertNodeInput = z.infer<typeof InsertNodeInput>;

export const RemoveNodeInput = z
  .object({
    node: NodeId,
    force: Force,
    projection: Projection.optional(),
  })
  .strict();
export type RemoveNodeInput = z.infer<typeof RemoveNodeInput>;

export const PatchInput = z
  .object({
    patch: BodySource.describe('A unified diff (`--- a/<path>`, `+++ b/<path>`, `@@` hunks) applied with git apply semantics; at most 4 MiB and 64 files'),
    projection: Projection.optional(),
  })
  .strict();
export type PatchInput = z.infer<typeof PatchInput>;

export const RenameSymbolInput = z
  .object({
    symbol: SymbolId,
    new_name: z.string().min(1).max(4096).describe('The new name; the language engine judges whether it is valid'),
    projection: Projection.optional(),
  })
  .strict();
export type RenameSymbolInput = z.infer<typeof RenameSymbolInput>;

export const MoveFileInput = z
  .object({
    path: ProjectPath.describe('The visible regular file to move'),
    destination: ProjectPath.describe('Its new project path; must not exist and must pass [source]'),
    projection: Projection.optional(),
  })
  .strict();
export type MoveFileInput = z.infer<typeof MoveFileInput>;

// ---------------------------------------------------------------------------------------------
// ChangeResult

export const Address = z
  .discriminatedUnion('kind', [z.object({ kind: z.literal('symbol'), symbol: SymbolId }).strict(), z.object({ kind: z.literal('node'), node: NodeId }).strict()])
  .meta({ id: 'Address' });

export const PreconditionValue = z
  .discriminatedUnion('kind', [
    z.object({ kind: z.literal('boolean'), value: z.boolean() }).strict(),
    z.object({ kind: z.literal('count'), value: z.number().int().min(0) }).strict(),
    z.object({ kind: z.literal('text'), value: z.string().max(4096) }).strict(),
  ])
  .meta({ id: 'PreconditionValue' });
export type PreconditionValue = z.infer<typeof PreconditionValue>;

export { RENAME_PROPOSED } from './plain.ts';

export const PreconditionKind = z.enum(['target_exists', 'source_unchanged', 'target_is_file', 'writable', 'no_references', 'engine_proposed_edits']);

export const OperationPrecondition = z
  .object({
    kind: PreconditionKind,
    status: z.enum(['satisfied', 'failed']),
    addresses: z.array(Address).max(16),
    paths: z.array(ProjectPath).max(64),
    expected: PreconditionValue,
    observed: PreconditionValue,
  })
  .strict()
  .meta({ id: 'OperationPrecondition' });
export type OperationPrecondition = z.infer<typeof OperationPrecondition>;

export const SourceSpan = z
  .object({ unit: z.string().describe('rift://file/<path>'), range: TextRange })
  .strict()
  .meta({ id: 'SourceSpan' });

export const Diagnostic = z
  .object({
    severity: z.enum(['error', 'warning', 'info', 'hint']),
    code: z.string().nullable().describe('`rift.hook.failed`, `rift.syntax.error`, `rift.change.unsupported`, …'),
    message: z.string().max(4096),
    span: SourceSpan.nullable(),
    related: z.array(z.object({ message: z.string(), span: SourceSpan.nullable() }).strict()),
    tags: z.array(z.enum(['deprecated', 'unnecessary'])),
    reliability: z.enum(['reliable', 'recovered']),
    continuation: z.enum(['repairable', 'unrepairable', 'unknown']),
    extensions: z.record(z.string(), z.unknown()),
    language: z.string().nullable(),
  })
  .strict()
  .meta({ id: 'Diagnostic' });
export type Diagnostic = z.infer<typeof Diagnostic>;

export const CoverageScope = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('reach'), reach: z.enum(['request', 'project', 'dependencies', 'all']) }).strict(),
  z.object({ kind: z.literal('unit'), unit: z.string() }).strict(),
]);

export const GuaranteeEvidence = z
  .object({
    kind: z.string().min(1).max(64).describe('`syntax_validated`, `bindings_preserved`, `references_updated`, `behavior_checked`, …'),
    scope: CoverageScope,
    hook: z.string().min(1).max(64).describe('The validation hook whose passing run established it'),
    detail: z.string().min(1).max(1024),
  })
  .strict();
export type GuaranteeEvidence = z.infer<typeof GuaranteeEvidence>;

const changeWarning = <K extends string, S extends z.ZodRawShape>(kind: K, shape: S, description: string) =>
  z
    .object({ kind: z.literal(kind), message: z.string(), ...shape })
    .strict()
    .describe(description);

export const ChangeWarning = z.discriminatedUnion('kind', [
  changeWarning('rift.symlink.resolved', { path: ProjectPath, resolved: ProjectPath }, 'The addressed path is a symlink; the write landed on the file it resolves to'),
  changeWarning(
    'rift.move.references_not_updated',
    { path: ProjectPath, reason: z.string() },
    'The file moved, but no language engine updated references to it',
  ),
  changeWarning(
    'rift.rename.surviving_occurrence',
    { path: ProjectPath, line: z.number().int().min(1).describe('1-based line of the occurrence') },
    'The old name still occurs here after the rename: a comment, a string, or another declaration of the same name',
  ),
  changeWarning(
    'rift.remove.references_forced',
    {
      references: z
        .array(z.object({ path: z.string().describe('Project path, or the engine\'s URI for a file outside the workspace'), line: z.number().int().min(1) }).strict())
        .describe('The standing references the engine reported (at most 64)'),
    },
    'force removed a declaration the language engine still sees referenced',
  ),
  changeWarning('rift.remove.references_unchecked', { reason: z.string() }, 'The removal applied without a reference check'),
  changeWarning('rift.remove.readiness_unconfirmed', {}, 'force removed a declaration the engine reported unreferenced before confirming its readiness'),
  changeWarning('rift.remove.node_unchecked', {}, 'The removed node names no declaration; nothing was checked'),
  changeWarning('rift.snapshot.stale', { reason: z.string() }, 'The change landed but the index could not refresh'),
]);
export type ChangeWarning = z.infer<typeof ChangeWarning>;

export const FileChange = z
  .object({
    path: ProjectPath,
    change: z.enum(['created', 'modified', 'deleted']),
    size_bytes: z.number().int().min(0).describe('Size after the change; 0 for a deletion'),
    line_count: z.number().int().min(0).describe('Lines after the change, a final unterminated line included'),
    lines_added: z.number().int().min(0),
    lines_removed: z.number().int().min(0).describe('A changed line counts once here and once in lines_added'),
    digest: Digest.optional().describe('Digest of the bytes after the change (absent for a deletion)'),
  })
  .strict();
export type FileChange = z.infer<typeof FileChange>;

export const ChangeId = z.string().regex(/^chg_[a-z2-7]{26}$/).describe('Deterministic in the changed paths and their resulting bytes');

/** What a projection change asks the publisher to accept (reference A.7). */
export const ConfirmationRequirement = z
  .object({
    kind: z.enum(['destructive', 'large_scope', 'generated_code', 'hook', 'configuration', 'advisory', 'external']),
    title: z.string().min(1).max(256),
    detail: z.string().min(1).max(4096),
    spans: z.array(SourceSpan),
  })
  .strict();
export type ConfirmationRequirement = z.infer<typeof ConfirmationRequirement>;

export const ChangeSummary = z
  .object({
    id: ChangeId,
    confirmations: z
      .array(ConfirmationRequirement)
      .optional()
      .describe('Only on a change inside a projection: what publish must be told to accept (its id in accept)'),
    files: z.array(FileChange).describe('Every file the change wrote, transform-hook writes included, sorted by path'),
    diagnostics: z.array(Diagnostic).max(256),
    guarantees: z.array(GuaranteeEvidence).max(512),
    warnings: z.array(ChangeWarning),
  })
  .strict();

export const RefusalReason = z.enum(['unsupported', 'unmet_precondition', 'ambiguous_target']);

export const RefusedResult = z
  .object({
    status: z.literal('refused'),
    reason: RefusalReason,
    preconditions: z.array(OperationPrecondition).max(16),
    diagnostics: z.array(Diagnostic).max(256),
  })
  .strict()
  .describe('Nothing was written');
export type RefusedResult = z.infer<typeof RefusedResult>;

export const AppliedResult = z.object({ status: z.literal('applied'), summary: ChangeSummary }).strict();
export type AppliedResult = z.infer<typeof AppliedResult>;

export const UnchangedResult = z
  .object({ status: z.literal('unchanged') })
  .strict()
  .describe('The final bytes equal the original (a no-op edit, or transform hooks restored them)');

export const ChangeResult = z.discriminatedUnion('status', [AppliedResult, RefusedResult, UnchangedResult]);
export type ChangeResult = z.infer<typeof ChangeResult>;
