import { capabilityUnavailable, invalidField } from '../core/errors.ts';
import { CHANGE_BODY_BYTES_MAX, PATCH_BYTES_MAX } from '../core/limits.ts';
import { sha256Hex } from '../core/digest.ts';
import { log } from '../core/log.ts';
import { projectPathViolation } from '../core/path.ts';
import type { ConfigLoader } from '../config/loader.ts';
import type { HookConfig } from '../config/workspace-config.ts';
import type { EngineRegistry } from '../engine/registry.ts';
import type { Indexer } from '../index/indexer.ts';
import { initSyntax } from '../syntax/runtime.ts';
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
import { Lane } from '../change/lane.ts';
import { planMove } from '../change/move.ts';
import { planPatch } from '../change/patch.ts';
import type { ChangeContext, Plan } from '../change/plan.ts';
import { sweepStage } from '../change/publish.ts';
import { isRefusal } from '../change/refusal.ts';
import { checkReview, planRename, proposedWrites, type ProposedWrite, type RenameReview } from '../change/rename.ts';

// Transport-free change tools (spec "Changes"). Request-shape checks run first and fail as
// `invalid_request`; everything else runs in the tree's FIFO lane: configuration gate, index
// readiness, resolution (refusals are results), publication, hooks, index refresh.

function pathField(field: string, value: string): string {
  const violation = projectPathViolation(value);
  if (violation) throw invalidField(field, violation);
  return value;
}

function unserved(input: { projection?: string; region?: string | null }): void {
  if (input.projection !== undefined) throw capabilityUnavailable('projection changes');
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
}

export class ChangeService {
  private readonly lane = new Lane();

  constructor(
    private readonly root: string,
    private readonly config: ConfigLoader,
    private readonly indexer: Indexer,
    private readonly engines: EngineRegistry,
  ) {
    sweepStage(root);
  }

  replaceSymbol(input: ReplaceSymbolInput, options: ChangeOptions = {}): Promise<ChangeResult> {
    unserved(input);
    const body = resolveBodySource('body', input.body, CHANGE_BODY_BYTES_MAX);
    return this.run('replace_symbol', options, (ctx) => replaceSymbol(ctx, input.symbol, body));
  }

  insertSymbol(input: InsertSymbolInput, options: ChangeOptions = {}): Promise<ChangeResult> {
    unserved(input);
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
    unserved(input);
    return this.run('remove_symbol', options, (ctx) => removeSymbol(ctx, input.symbol, input.force === true));
  }

  replaceNode(input: ReplaceNodeInput, options: ChangeOptions = {}): Promise<ChangeResult> {
    unserved(input);
    const body = resolveBodySource('body', input.body, CHANGE_BODY_BYTES_MAX);
    return this.run('replace_node', options, (ctx) => replaceNode(ctx, input.node, body));
  }

  insertNode(input: InsertNodeInput, options: ChangeOptions = {}): Promise<ChangeResult> {
    unserved(input);
    const body = resolveBodySource('body', input.body, CHANGE_BODY_BYTES_MAX);
    return this.run('insert_node', options, (ctx) => insertNode(ctx, input.node, input.position, body));
  }

  removeNode(input: RemoveNodeInput, options: ChangeOptions = {}): Promise<ChangeResult> {
    unserved(input);
    return this.run('remove_node', options, (ctx) => removeNode(ctx, input.node, input.force === true));
  }

  patch(input: PatchInput, options: ChangeOptions = {}): Promise<ChangeResult> {
    unserved(input);
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
    unserved(input);
    return this.run('rename_symbol', options, async (ctx) => {
      const plan = await planRename(ctx, input.symbol, input.new_name);
      const writes = proposedWrites(plan);
      if (options.renameReview) checkReview(options.renameReview, plan.addresses, writes);
      await review?.(writes);
      return plan;
    });
  }

  moveFile(input: MoveFileInput, options: ChangeOptions = {}): Promise<ChangeResult> {
    unserved(input);
    const path = pathField('path', input.path);
    const destination = pathField('destination', input.destination);
    return this.run('move_file', options, (ctx) => planMove(ctx, path, destination));
  }

  private run(tool: string, options: ChangeOptions, plan: (ctx: ChangeContext) => Plan | Promise<Plan>): Promise<ChangeResult> {
    return this.lane.run(async () => {
      const started = performance.now();
      const accepted = this.config.current();
      await this.indexer.ensureBuilt(accepted.config);
      await initSyntax();
      const hooks = accepted.config.hooks;
      const gated = options.trustedHooks !== undefined && hooks.length > 0 && hooksKey(hooks) !== options.trustedHooks;
      if (gated) log('info', 'change', 'workspace hooks skipped: not trusted by the caller', { tool, hooks: hooks.length });
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
      log('info', 'change', 'change finished', { tool, status: result.status, elapsed_ms: Math.round(performance.now() - started) });
      return result;
    });
  }
}
