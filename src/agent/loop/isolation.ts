import { existsSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { isRiftError } from '../../core/errors.ts';
import type { ChangeRecord, DependencyConflict, PublishResult } from '../../protocol/projection.ts';
import type { ProjectionApi } from '../../services/api.ts';
import type { CommandEnv } from '../base/tasks.ts';
import { ToolError } from '../base/tool.ts';
import { workspacePathOf } from '../policy/permissions.ts';
import type { Sandbox } from '../policy/sandbox.ts';
import type { CodeServices, ToolContext } from '../tools/context.ts';
import type { TurnOutcome } from './agent.ts';

// Isolated sub-agents (`agent {isolate: true}`, docs/agent.md "Isolated sub-agents"): each works
// in a fresh projection of the workspace (docs/projections.md) and its work lands through the
// same checks as MCP `publish` once its turn ends. Its code tools carry the projection's id (reads
// record dependencies, changes confirmations); its file tools, bash and hooks run in the
// projection's directory; the bash sandbox makes only that directory writable, and git there
// stops at the projection (GIT_CEILING_DIRECTORIES) instead of finding the workspace's repository.
//
// What publish is told to accept: confirmations for the sub-agent's own work — `external` (files
// its commands wrote), `hook` and `advisory` (reported to it when it made the change) — are
// accepted; `destructive` and `configuration` need what an edit of those workspace paths needs
// through the permission gate (a deny rule refuses, approval asks unless a rule or grant covers
// it). No change whose paths a deny rule covers is accepted, whatever wrote it.

/** Confirmation kinds that take the permission gate at publish; the others are the sub-agent's own work. */
const GATED = new Set(['destructive', 'configuration']);

/** The git variables that would point git at another repository than the one it finds itself. */
const GIT_REDIRECTS = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_COMMON_DIR', 'GIT_OBJECT_DIRECTORY'];

export const isolatedNote = (id: string, path: string): string =>
  `\n\nYou work in an isolated copy of the workspace (projection ${id}) at ${path}: your edits and commands change only this copy. ` +
  'When you finish, your changes are published to the workspace unless they conflict with changes made there meanwhile. Stay inside this directory.';

/** One sub-agent's projection and what its tools need to work there. */
export interface Isolation {
  id: string;
  /** The projection's directory. */
  path: string;
  /** The workspace root the projection copies. */
  root: string;
  /** Where the sub-agent starts: the parent's directory, inside the copy. */
  cwd: string;
  code: CodeServices;
  sandbox: Sandbox | undefined;
  commandEnv: CommandEnv;
}

/** What a publication came to, for the parent's tool result and a later retry. */
export interface Settled {
  text: string;
  /** Set when the projection is kept: the refusal (null when no publish was tried, or it failed). */
  kept?: { refusal: PublishResult | null };
}

function projectionsOf(ctx: Pick<ToolContext, 'code'>): ProjectionApi {
  const p = ctx.code.projections;
  if (!p) throw new ToolError("agent: isolate needs rift's code index, which this session does not have (yet); run the sub-agents without isolate");
  return p;
}

const realOr = (p: string) => {
  try {
    return realpathSync.native(p);
  } catch {
    return p;
  }
};

/** The tools' view of projection `id` at `path`. */
function isolation(ctx: ToolContext, projections: ProjectionApi, id: string, path: string): Isolation {
  const root = workspacePathOf(path);
  const rel = relative(root, realOr(ctx.cwd));
  const inside = rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) && existsSync(join(path, rel));
  const scoped = projections.scoped(id);
  return {
    id,
    path,
    root,
    cwd: inside ? join(path, rel) : path,
    // No language engines: theirs serve the workspace's files, not the copy's.
    code: { read: scoped.read, search: scoped.search, change: scoped.change },
    sandbox: ctx.sandbox?.within(path),
    commandEnv: { ...Object.fromEntries(GIT_REDIRECTS.map((k) => [k, null])), GIT_CEILING_DIRECTORIES: dirname(path) },
  };
}

/** A fresh projection of the workspace for one sub-agent. */
export async function isolate(ctx: ToolContext, label: string): Promise<Isolation> {
  const projections = projectionsOf(ctx);
  let created;
  try {
    created = await projections.create(`sub-agent: ${label}`.slice(0, 1024));
  } catch (e) {
    throw new ToolError(`agent: could not create a projection for '${label}': ${describe(e)}`);
  }
  return isolation(ctx, projections, created.id, created.path);
}

/**
 * A kept projection again, for a retry: the paths the last refusal named (and the other paths of
 * the changes that touched them) are first refreshed from the workspace. Returns the isolation,
 * the note for the sub-agent, and the dependency conflicts it was told about (accepted at publish).
 */
export async function resume(ctx: ToolContext, id: string, path: string, refusal: PublishResult | null): Promise<{ iso: Isolation; note: string; acceptDependencies: DependencyConflict[] }> {
  const projections = projectionsOf(ctx);
  const conflicts = refusal?.conflicts ?? [];
  const deps = refusal?.dependency_conflicts ?? [];
  const before = (await projections.changeList(id)).changes;
  const earlier = [...new Set(before.flatMap((c) => c.paths))].sort();
  let note = `\nThis copy already holds the unpublished work of an earlier sub-agent on this task${earlier.length > 0 ? ` (it changed ${list(earlier)})` : ''}: see where it stands and finish it.`;
  if (conflicts.length > 0 || deps.length > 0) {
    await projections.restore({ projection: id, paths: [...new Set([...conflicts, ...deps.map((d) => d.path)])] });
    const after = new Set((await projections.changeList(id)).changes.map((c) => c.id));
    const reset = [...new Set([...conflicts, ...before.filter((c) => !after.has(c.id)).flatMap((c) => c.paths)])].filter((p) => !deps.some((d) => d.path === p)).sort();
    if (reset.length > 0) {
      note += ` The workspace changed files this work also changed; these now hold the workspace's current content, and the earlier changes to them were dropped — redo that part on top of the new content: ${reset.join(', ')}.`;
    }
    if (deps.length > 0) note += ` These files changed in the workspace since the earlier work read them and now hold the new content: check the work still fits them: ${deps.map((d) => d.path).join(', ')}.`;
  }
  return { iso: isolation(ctx, projections, id, path), note, acceptDependencies: deps };
}

function describe(e: unknown): string {
  return isRiftError(e) ? `${e.code}: ${e.message}` : (e as Error).message;
}

const list = (xs: readonly string[]) => xs.join(', ');

/**
 * Publishes the sub-agent's projection once its turn ended, through publish's checks, and says
 * what happened. A finished turn is published: the changes the policy above accepts are passed in
 * `accept`; the gate is asked only when nothing else stands in the way. A published or empty
 * projection is removed; any other is kept (named, with what stopped it). A cancelled turn's
 * projection is removed unpublished.
 */
export async function settle(
  ctx: Pick<ToolContext, 'code' | 'approval' | 'gate' | 'signal'>,
  iso: Isolation,
  label: string,
  outcome: TurnOutcome,
  acceptDependencies: DependencyConflict[] = [],
): Promise<Settled> {
  const projections = projectionsOf(ctx);
  const kept = (why: string, refusal: PublishResult | null): Settled => ({
    text:
      `[isolated: NOT published; the workspace is unchanged. The projection is kept: ${iso.id} at ${iso.path}\n${why}\n` +
      `To retry, call agent with isolate and set this task's projection to ${iso.id}: a sub-agent continues there, the files in conflict first refreshed from the workspace. Or delegate the task again.]`,
    kept: { refusal },
  });
  const removed = async (text: string): Promise<Settled> => {
    await projections.remove(iso.id).catch(() => {});
    return { text };
  };
  const cancelled = () => removed('[isolated: cancelled; nothing was published and the projection was removed]');
  if (outcome === 'cancelled' || ctx.signal.aborted) return cancelled();
  if (outcome !== 'answered' && outcome !== 'wrapped') return kept(`The sub-agent did not finish (${outcome}), so its work was not published.`, null);

  try {
    let changes = (await projections.changeList(iso.id)).changes;
    if (changes.length === 0) return removed(`[isolated: no changes to publish; projection ${iso.id} removed]`);
    const declined: string[] = [];
    const accept = new Set<string>();
    const judge = (c: ChangeRecord) => {
      const rule = c.paths.map((p) => ctx.approval.rules.verdict('edit', join(iso.root, p))).find((v) => v.kind === 'deny');
      if (rule && rule.kind === 'deny') declined.push(`${c.id} (${list(c.paths)}): blocked by permission rule '${rule.rule}'`);
      else if (!c.confirmations.some((x) => GATED.has(x.kind))) accept.add(c.id);
    };
    changes.forEach(judge);
    if (declined.length > 0) return kept(`not accepted: ${declined.join('; ')}`, null);

    let result = await projections.publish({ projection: iso.id, accept: [...accept], accept_dependencies: acceptDependencies });
    if (!result.published && result.conflicts.length === 0 && result.dependency_conflicts.length === 0 && result.unaccepted.length > 0) {
      // Only confirmations stand in the way: writes found at publish (a command still running)
      // are judged like the rest, then each gated change goes through the permission gate.
      const known = new Set(changes.map((c) => c.id));
      if (result.unaccepted.some((id) => !known.has(id))) {
        changes = (await projections.changeList(iso.id)).changes;
        changes.filter((c) => !known.has(c.id)).forEach(judge);
      }
      for (const c of changes.filter((x) => result.unaccepted.includes(x.id) && !accept.has(x.id))) {
        if (declined.length > 0) break;
        const gated = c.confirmations.filter((x) => GATED.has(x.kind));
        if (gated.length === 0) continue;
        try {
          await ctx.approval.authorizeChange(
            ctx.gate,
            {
              tool: 'publish',
              files: c.paths.map((p) => ({ absPath: join(iso.root, p), kind: 'edit' as const })),
              detail: [`sub-agent '${label}' publishes ${c.id} from its projection ${iso.id}:`, ...gated.map((x) => `${x.title}: ${x.detail}`)],
            },
            ctx.signal,
          );
          accept.add(c.id);
        } catch (e) {
          declined.push(`${c.id} (${gated.map((x) => `${x.kind}: ${x.detail}`).join('; ')}): ${(e as Error).message}`);
        }
      }
      if (ctx.signal.aborted) return cancelled();
      if (declined.length > 0) return kept(`not accepted: ${declined.join('; ')}`, result);
      result = await projections.publish({ projection: iso.id, accept: [...accept], accept_dependencies: acceptDependencies });
    }
    if (result.published) {
      const paths = [...new Set(changes.flatMap((c) => c.paths))].sort();
      return removed(`[isolated: published to the workspace — ${list(paths)}; projection ${iso.id} removed]`);
    }
    const why: string[] = [];
    if (result.conflicts.length > 0) why.push(`conflicts — the workspace changed these since the sub-agent started: ${list(result.conflicts)}`);
    if (result.dependency_conflicts.length > 0) {
      why.push(`dependency conflicts — files it read that the workspace changed since: ${list(result.dependency_conflicts.map((d) => `${d.path} (read ${d.observed}, now ${d.current ?? 'deleted'})`))}`);
    }
    if (result.unaccepted.length > 0) {
      const kinds = (id: string) => changes.find((c) => c.id === id)?.confirmations.map((x) => `${x.kind}: ${x.detail}`).join('; ') ?? 'found at publish';
      why.push(`not accepted yet (the permission gate is asked once nothing else stands in the way): ${result.unaccepted.map((id) => `${id} (${kinds(id)})`).join('; ')}`);
    }
    return kept(why.join('\n'), result);
  } catch (e) {
    if (ctx.signal.aborted) return cancelled();
    return kept(`publishing failed: ${describe(e)}`, null);
  }
}
