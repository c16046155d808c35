import { capabilityUnavailable, invalidField, isRiftError, storageFailure } from '../core/errors.ts';
import { CHANGE_BODY_BYTES_MAX, PATCH_BYTES_MAX } from '../core/limits.ts';
import { sha256Hex } from '../core/digest.ts';
import { log } from '../core/log.ts';
import { projectPathViolation } from '../core/path.ts';
import type { ConfigLoader } from '../config/loader.ts';
import type { HookConfig } from '../config/workspace-config.ts';
import type { EngineRegistry } from '../engine/registry.ts';
import type { Indexer } from '../index/indexer.ts';
import type {
  ChangeResult,
  InsertNodeInput,
  InsertSymbolInput,
  MoveFileInput,
  PatchInput,
  RemoveNodeInput,
  RemoveSymbolInput,
  ReplaceNodeInput,
  RenameSymbolInput,
  ReplaceSymbolInput,
} from '../protocol/change.ts';
import { applyPlan } from '../change/apply.ts';
import { resolveBodySource } from '../change/body-source.ts';
import { insertNode, insertSymbol, removeNode, removeSymbol, replaceNode, replaceSymbol } from '../change/declaration-edits.ts';
import { planMove } from '../change/move.ts';
import { planPatch } from '../change/patch.ts';
import type { ChangeContext, Plan } from '../change/plan.ts';
import { hasInterruptedChanges } from '../change/journal.ts';
import { isRefusal } from '../change/refusal.ts';
import { checkReview, planRename, proposedWrites, type ProposedWrite, type RenameReview } from '../change/rename.ts';
import { TreeLock, changeLockBudget, recoverInterrupted, type Held } from '../change/tree-lock.ts';

// Transport-free change tools (spec "Changes"). Request-shape checks run first and fail as
// `invalid_request`; then the configuration gate and index readiness; everything else holds
// the tree (in-process FIFO, then the cross-process lock): recovery of a change a dead process
// left, an index refresh of what other processes changed, resolution against the bytes on disk
// now (refusals are results), publication, hooks, index refresh.

/** An index store failure (SQLite) as `storage_failure` on `.rift/rift.db`; anything else as it is. */
function storeError(e: unknown): unknown {
  const code = (e as { code?: unknown } | null)?.code;
  return !isRiftError(e) && typeof code === 'string' && code.startsWith('SQLITE_') ? storageFailure('.rift/rift.db', e) : e;
}

function pathField(field: string, value: string): string {
  const violation = projectPathViolation(value);
  if (violation) throw invalidField(field, violation);
  return value;
}

function unservedRegion(input: { region?: string | null }): void {
  if (input.region !== undefined && input.region !== null) throw capabilityUnavailable('region-scoped replacement');
}

/** The key a list of `rift.toml` hooks is trusted under: the digest of exactly that list. */
export function hooksKey(hooks: readonly HookConfig[]): string {
  return `workspace-hooks:sha256:${sha256Hex(JSON.stringify(hooks))}`;
}

/** Per-call options of every change. */
export interface ChangeOptions {
  /**
   * Run the workspace's `[[hooks]]` only when they are exactly the list trusted under this
   * `hooksKey` (any other value, `''` included, skips them). The agent sends the key of the
   * hooks its user trusted, so a cloned repository's hooks run only once trusted, and a
   * rift.toml edited since runs none. Absent, the hooks run: an MCP client's workspace is the
   * one its user chose to serve.
   */
  trustedHooks?: string;
  /**
   * A rename reviewed by a caller in another process (`RenameReview`, change/rename.ts):
   * `propose` plans and refuses with the files it would write; `approved` applies only the
   * approved files, each still holding the approved bytes.
   */
  renameReview?: RenameReview;
  /**
   * Work run holding the tree around the change: `before` after recovery and catch-up, before
   * resolution; `after` with the result, which it may extend. A projection reconciles its
   * directory and records the change here, so no other process sees the tree between them.
   */
  around?: { before(): Promise<void>; after(result: ChangeResult): ChangeResult };
}

export class ChangeService {
  private readonly lock: TreeLock;
  private readonly budgetMs = changeLockBudget();
  /** How far this process's index has followed the tree's change log (null: unknown, rebuild). */
  private seen: number | null;

  constructor(
    private readonly root: string,
    private readonly config: ConfigLoader,
    private readonly indexer: Indexer,
    private readonly engines: EngineRegistry,
  ) {
    this.lock = TreeLock.acquire(root);
    // Read before the index is first built, so every change logged after it is replayed.
    this.seen = this.lock.position();
  }

  /**
   * Rolls back changes a killed process left half done, when the tree is free right now (a
   * busy tree is recovered by whoever holds it next). Engines call this once on opening.
   */
  async recoverAtStart(): Promise<void> {
    if (!hasInterruptedChanges(this.root)) return;
    try {
      await this.lock.run(0, 0, (held) => recoverInterrupted(this.root, held));
    } catch (e) {
      if (!isRiftError(e) || e.code !== 'temporarily_unavailable') throw e;
    }
  }

  async close(): Promise<void> {
    await this.lock.release();
  }

  replaceSymbol(input: ReplaceSymbolInput, options: ChangeOptions = {}): Promise<ChangeResult> {
    unservedRegion(input);
    const body = resolveBodySource('body', input.body, CHANGE_BODY_BYTES_MAX);
    return this.run('replace_symbol', options, (ctx) => replaceSymbol(ctx, input.symbol, body));
  }

  insertSymbol(input: InsertSymbolInput, options: ChangeOptions = {}): Promise<ChangeResult> {
    const anchor = input.anchor ?? null;
    const file = input.file ?? null;
    if (anchor !== null && file !== null) throw invalidField('file', 'insert_symbol accepts exactly one of anchor or file, not both');
    if (anchor === null && file === null) throw invalidField('anchor', 'insert_symbol requires exactly one of anchor or file');
    if (anchor !== null && input.create_missing === true) {
      throw invalidField('create_missing', 'cannot be set with an anchor target; an anchor always addresses an existing file');
    }
    if (file !== null) pathField('file', file);
    const body = resolveBodySource('body', input.body, CHANGE_BODY_BYTES_MAX);
    const req = { anchor, file, position: input.position, createMissing: input.create_missing === true };
    return this.run('insert_symbol', options, (ctx) => insertSymbol(ctx, req, body));
  }

  removeSymbol(input: RemoveSymbolInput, options: ChangeOptions = {}): Promise<ChangeResult> {
    return this.run('remove_symbol', options, (ctx) => removeSymbol(ctx, input.symbol, input.force === true));
  }

  replaceNode(input: ReplaceNodeInput, options: ChangeOptions = {}): Promise<ChangeResult> {
    const body = resolveBodySource('body', input.body, CHANGE_BODY_BYTES_MAX);
    return this.run('replace_node', options, (ctx) => replaceNode(ctx, input.node, body));
  }

  insertNode(input: InsertNodeInput, options: ChangeOptions = {}): Promise<ChangeResult> {
    const body = resolveBodySource('body', input.body, CHANGE_BODY_BYTES_MAX);
    return this.run('insert_node', options, (ctx) => insertNode(ctx, input.node, input.position, body));
  }

  removeNode(input: RemoveNodeInput, options: ChangeOptions = {}): Promise<ChangeResult> {
    return this.run('remove_node', options, (ctx) => removeNode(ctx, input.node, input.force === true));
  }

  patch(input: PatchInput, options: ChangeOptions = {}): Promise<ChangeResult> {
    const body = resolveBodySource('patch', input.patch, PATCH_BYTES_MAX);
    if (body.length === 0) throw invalidField('patch', 'empty');
    return this.run('patch', options, (ctx) => planPatch(ctx, body));
  }

  /**
   * `review`, when given, sees the files the engine's edits will write after resolution and
   * before anything is written (the agent's approval gate and undo journal); throwing from it
   * abandons the change. A caller in another process reviews through `options.renameReview`.
   */
  renameSymbol(input: RenameSymbolInput, options: ChangeOptions = {}, review?: (writes: ProposedWrite[]) => Promise<void>): Promise<ChangeResult> {
    return this.run('rename_symbol', options, async (ctx) => {
      const plan = await planRename(ctx, input.symbol, input.new_name);
      const writes = proposedWrites(plan);
      if (options.renameReview) checkReview(options.renameReview, plan.addresses, writes);
      await review?.(writes);
      return plan;
    });
  }

  moveFile(input: MoveFileInput, options: ChangeOptions = {}): Promise<ChangeResult> {
    const path = pathField('path', input.path);
    const destination = pathField('destination', input.destination);
    return this.run('move_file', options, (ctx) => planMove(ctx, path, destination));
  }

  /**
   * Runs `work` holding the tree, recovered and caught up, with the context a plan resolves in
   * and a way to log the paths it wrote (publication: its checks and writes see one state).
   */
  hold<T>(work: (ctx: ChangeContext, record: (paths: readonly string[]) => void) => Promise<T>): Promise<T> {
    const deadline = performance.now() + this.budgetMs;
    return this.lock.run(deadline, this.budgetMs, async (held) => {
      await recoverInterrupted(this.root, held);
      await this.catchUp(held);
      const ctx: ChangeContext = { root: this.root, config: this.config.current().config, indexer: this.indexer, engines: this.engines };
      return work(ctx, (paths) => {
        if (paths.length > 0) this.seen = held.record(paths);
      });
    });
  }

  private async run(tool: string, options: ChangeOptions, plan: (ctx: ChangeContext) => Plan | Promise<Plan>): Promise<ChangeResult> {
    const deadline = performance.now() + this.budgetMs;
    const accepted = this.config.current();
    await this.indexer.ensureBuilt(accepted.config).catch((e: unknown) => {
      throw storeError(e);
    });
    const hooks = accepted.config.hooks;
    const gated = options.trustedHooks !== undefined && hooks.length > 0 && hooksKey(hooks) !== options.trustedHooks;
    if (gated) log('info', 'change', 'workspace hooks skipped: not trusted by the caller', { tool, hooks: hooks.length });
    return this.lock.run(deadline, this.budgetMs, async (held) => {
      const started = performance.now();
      await recoverInterrupted(this.root, held);
      await this.catchUp(held);
      await options.around?.before();
      const ctx: ChangeContext = {
        root: this.root,
        config: gated ? { ...accepted.config, hooks: [] } : accepted.config,
        indexer: this.indexer,
        engines: this.engines,
      };
      let result: ChangeResult;
      try {
        result = await applyPlan(ctx, await plan(ctx));
      } catch (e) {
        if (!isRefusal(e)) throw e;
        result = e.result;
      }
      if (result.status === 'applied') this.seen = held.record(result.summary.files.map((f) => f.path));
      if (options.around) result = options.around.after(result);
      log('info', 'change', 'change finished', { tool, status: result.status, elapsed_ms: Math.round(performance.now() - started) });
      return result;
    });
  }

  /** Re-indexes what other processes changed since this one last looked. */
  private async catchUp(held: Held): Promise<void> {
    const { paths, position } = held.missed(this.seen);
    try {
      if (paths === null) await this.indexer.build();
      else if (paths.length > 0) await this.indexer.refresh(paths);
    } catch (e) {
      throw storeError(e);
    }
    this.seen = position;
  }
}
