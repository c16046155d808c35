import { z } from 'zod';
import { Digest, Limit, PageIndex, Pagination, ProjectPath, ProjectionId, TreeSnapshot } from './common.ts';
import { ChangeId, ConfirmationRequirement } from './change.ts';

// Projection tools and resources (spec "Projections"; reference A.7, B.4, F.15).

export const ProjectionState = z
  .object({
    dirty: z.boolean().describe('The projection holds changes the workspace does not'),
    unaccepted: z.boolean().describe('Some change carries a confirmation publish must be told to accept'),
  })
  .strict();
export type ProjectionState = z.infer<typeof ProjectionState>;

export const Projection = z
  .object({
    id: ProjectionId,
    path: z.string().describe('Absolute directory of the projection tree (stable for its life)'),
    state: ProjectionState,
    base_revision: Digest.describe('Tree revision of the workspace the projection was taken from (advanced by each publish)'),
    reason: z.string().nullable(),
  })
  .strict();
export type Projection = z.infer<typeof Projection>;

export const DependencyConflict = z
  .object({
    path: ProjectPath,
    observed: Digest.describe('Digest of the file a projection read returned'),
    current: Digest.nullable().describe("The workspace's digest now; null when the workspace deleted it"),
  })
  .strict();
export type DependencyConflict = z.infer<typeof DependencyConflict>;

export const ProjectionCreateInput = z
  .object({ reason: z.string().max(1024).nullable().optional().describe('Why the projection exists (shown by projection_list)') })
  .strict();

export const ProjectionListInput = z
  .object({
    page_index: PageIndex.optional(),
    limit: Limit.optional().describe('Projections per page (default 100, at most 1000)'),
  })
  .strict();
export type ProjectionListInput = z.infer<typeof ProjectionListInput>;

export const ProjectionListResult = z.object({ projections: z.array(Projection), pagination: Pagination }).strict();

export const ProjectionRef = z.object({ projection: ProjectionId }).strict();

export const ProjectionRemoveResult = z
  .object({ projection: ProjectionId, state: ProjectionState.describe('What the projection held when it was removed') })
  .strict();

export const ProjectionRestoreInput = z
  .object({
    projection: ProjectionId,
    paths: z.array(ProjectPath).max(4096).nullable().optional().describe('Changed paths to restore from the workspace (omitted or null: all); every change touching one is dropped whole'),
  })
  .strict();
export type ProjectionRestoreInput = z.infer<typeof ProjectionRestoreInput>;

export const PublishInput = z
  .object({
    projection: ProjectionId,
    accept: z.array(ChangeId).max(4096).optional().describe('Change ids whose confirmations the caller accepts'),
    accept_dependencies: z
      .array(DependencyConflict)
      .max(4096)
      .optional()
      .describe('Dependency conflicts accepted as they are: each exactly as a refused publish returned it'),
  })
  .strict();
export type PublishInput = z.infer<typeof PublishInput>;

export const PublishResult = z
  .object({
    state: ProjectionState,
    published: z.boolean().describe('The workspace now holds the projection changes (all the lists below are empty)'),
    conflicts: z.array(ProjectPath).describe('Paths the projection and the workspace both changed'),
    dependency_conflicts: z.array(DependencyConflict).describe('Files a projection read returned that the workspace changed since'),
    unaccepted: z.array(ChangeId).describe('Changes carrying a confirmation not accepted (new filesystem changes included)'),
  })
  .strict();
export type PublishResult = z.infer<typeof PublishResult>;

export const ChangeRecord = z
  .object({
    id: ChangeId,
    origin: z.enum(['rift', 'filesystem']).describe('filesystem: writes found in the projection directory that no rift tool made'),
    paths: z.array(ProjectPath),
    confirmations: z.array(ConfirmationRequirement),
  })
  .strict();
export type ChangeRecord = z.infer<typeof ChangeRecord>;

export const ProjectionResource = z
  .object({ uri: z.string(), projection: Projection, workspace: z.string().describe('Absolute workspace root') })
  .strict();

export const ChangesResource = z
  .object({
    uri: z.string(),
    state: ProjectionState.nullable(),
    changes: z.array(ChangeRecord),
    pagination: Pagination,
    snapshot: TreeSnapshot,
  })
  .strict();
