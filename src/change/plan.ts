import type { WorkspaceConfig } from '../config/workspace-config.ts';
import type { EngineRegistry } from '../engine/registry.ts';
import type { Indexer } from '../index/indexer.ts';
import type { ChangeWarning } from '../protocol/change.ts';
import type { FileWrite } from './publish.ts';
import type { Address } from './refusal.ts';
import type { TargetPolicy } from './target.ts';

// What resolution produces before anything is written: the exact bytes of every file the
// change touches, the addresses it was planned against, and its warnings.

export interface ChangeContext {
  /** Canonical workspace root. */
  root: string;
  config: WorkspaceConfig;
  indexer: Indexer;
  /** The workspace's language engines (rename, reference checks, move edits, diagnostics). */
  engines: EngineRegistry;
}

export interface Plan {
  writes: FileWrite[];
  /** Addresses named by a `source_unchanged` refusal when disk moved before writing. */
  addresses: Address[];
  warnings: ChangeWarning[];
  /** Paths the index must re-read besides the written ones (a deleted symlink). */
  extraPaths?: string[];
}

export function targetPolicy(ctx: ChangeContext): TargetPolicy {
  return { root: ctx.root, isVisible: (p) => ctx.indexer.isVisible(p), maxFileBytes: ctx.config.source.max_file_bytes };
}
