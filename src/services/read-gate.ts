import { capabilityUnavailable, invalidField, limitExceeded } from '../core/errors.ts';
import { RESULTS_MAX } from '../core/limits.ts';
import type { ConfigLoader } from '../config/loader.ts';
import type { WorkspaceConfig } from '../config/workspace-config.ts';
import type { ReadWarning } from '../protocol/common.ts';
import { UNOBSERVED_REVISION, type Indexer } from '../index/indexer.ts';
import { initSyntax } from '../syntax/runtime.ts';
import type { RevisionIndex, RevisionSnapshot } from '../index/revision.ts';

// What every read does before and after it answers: the configuration gate, revision
// admission, waiting for the index built under the accepted configuration (or, during a long
// build, for its first stored files), and the freshness warning.

const REVISION_ID = /^[A-Za-z0-9._/-]+$/;

export class ReadGate {
  constructor(
    private readonly config: ConfigLoader,
    private readonly indexer: Indexer,
    readonly revisions: RevisionIndex,
  ) {}

  /** Validates `rev` spelling (before anything else that concerns it). */
  static checkRevisionSpelling(rev: string | undefined): void {
    if (rev === undefined) return;
    if (rev.length === 0) throw invalidField('rev', 'empty');
    if (rev.length > 128) throw invalidField('rev', 'too_long');
    if (!REVISION_ID.test(rev)) throw invalidField('rev', 'charset_forbidden');
  }

  /** Gates on configuration and waits for the index (a working-tree read: `rev` absent). */
  async admit(): Promise<WorkspaceConfig> {
    const accepted = this.config.current();
    // A long cold build lets reads in once its first files are stored (they warn stale_index).
    await this.indexer.readable(accepted.config);
    return accepted.config;
  }

  /**
   * Admits a revision read: spelling, the history provider, the repository, the revision
   * itself; then the commit's indexed tree. Never waits for the working-tree index.
   */
  async admitRevision(rev: string): Promise<{ config: WorkspaceConfig; snapshot: RevisionSnapshot }> {
    const accepted = this.config.current();
    ReadGate.checkRevisionSpelling(rev);
    if (!accepted.config.providers.history.enabled) {
      throw capabilityUnavailable('revision reads (providers.history disabled)', [], true);
    }
    const commit = await this.revisions.resolve(rev);
    await initSyntax(); // the commit's blobs are parsed here, not by the working-tree index
    return { config: accepted.config, snapshot: await this.revisions.snapshot(commit, accepted.config) };
  }

  /** Admits `include: ["history"]`: the history provider must serve it. */
  async checkHistory(config: WorkspaceConfig): Promise<void> {
    if (!config.providers.history.enabled) throw capabilityUnavailable('symbol history (providers.history disabled)', [], true);
    await this.revisions.repository();
    await initSyntax();
  }

  /**
   * Waits for the whole index under the accepted configuration. Resources carry no warnings, so
   * unlike tool reads they never answer from a long build's first stored files.
   */
  async admitComplete(): Promise<WorkspaceConfig> {
    const accepted = this.config.current();
    await this.indexer.ensureBuilt(accepted.config);
    return accepted.config;
  }

  /**
   * Runs one read. A store found damaged while answering is set aside and rebuilt; the read
   * answers `storage_failure` (retry the same request) rather than an unclassified error.
   */
  async answer<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (e) {
      throw this.indexer.storeFault(e) ?? e;
    }
  }

  /** `stale_index` while the watcher has observed changes the index does not hold yet. */
  warnings(): ReadWarning[] {
    const observed = this.indexer.observedRevision();
    if (!observed) return [];
    const message =
      observed.captured === UNOBSERVED_REVISION
        ? `the index holds tree ${observed.indexed} and the workspace may differ: events were lost (${observed.lost}); the answer may miss external edits until a rescan of the tree finishes`
        : `the index holds tree ${observed.indexed} while the workspace holds ${observed.captured}; the answer may miss external edits still being indexed` +
          (observed.lost ? `, and events were lost (${observed.lost}) until a rescan of the tree finishes` : '');
    return [{ kind: 'stale_index', message, captured: observed.captured, indexed: observed.indexed }];
  }
}

export function pageLimit(limit: number | undefined, fallback: number): number {
  if (limit === undefined) return fallback;
  if (limit === 0) throw invalidField('limit', 'zero');
  if (limit > RESULTS_MAX) throw limitExceeded('limit', RESULTS_MAX, limit);
  return limit;
}

export { pagination } from '../protocol/plain.ts';
