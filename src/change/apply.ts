import { closeSync, fstatSync } from 'node:fs';
import { digest8, sha256Hex } from '../core/digest.ts';
import { changeId } from '../core/ids.ts';
import { lineCount } from '../core/lines.ts';
import { CHANGE_PARSE_DIAGNOSTICS_MAX } from '../core/limits.ts';
import { log } from '../core/log.ts';
import type { HookConfig } from '../config/workspace-config.ts';
import type { ChangeResult, ChangeWarning, Diagnostic, FileChange, GuaranteeEvidence } from '../protocol/change.ts';
import { initSyntax } from '../syntax/runtime.ts';
import { classifyBytes } from '../workspace/read.ts';
import { openInside, readBounded } from '../workspace/safe-open.ts';
import { sourcePolicy } from '../workspace/visibility.ts';
import { walkVisible, compareProjectPaths } from '../workspace/walk.ts';
import { hookFailure, hookGuarantees, hookPassed, hookPaths, runHook } from './hooks.ts';
import { lineStats } from './line-stats.ts';
import type { ChangeContext, Plan } from './plan.ts';
import { Publication, sameBytes } from './publish.ts';
import { riftDiagnostic } from './refusal.ts';
import { reparseFindings } from './reparse.ts';

// From a resolved plan to a ChangeResult (DESIGN "How a change flows"): re-verify the bytes,
// stage and publish, run transform hooks (their writes join the change and decide applied vs
// unchanged), commit, run validation hooks, count, re-parse, refresh the index before returning
// so the next read sees the change, and attach the language engines' diagnostics of what was
// written. Until the commit a failure — or a kill, through the journal — rolls every file back.

/** A regular file's bytes through a verified descriptor; null when absent or not a plain file inside. */
function readOrNull(root: string, path: string, max: number): Buffer | null {
  let fd: number;
  try {
    fd = openInside(root, path);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    return st.isFile() ? readBounded(fd, st.size, max) : null;
  } finally {
    closeSync(fd);
  }
}

async function fileStamps(ctx: ChangeContext): Promise<Map<string, string>> {
  const policy = sourcePolicy(ctx.config);
  const { walk } = await walkVisible(ctx.root, policy);
  return new Map(walk.files.map((f) => [f.path, `${f.size}:${f.mtimeMs}`]));
}

export async function applyPlan(ctx: ChangeContext, plan: Plan): Promise<ChangeResult> {
  const writes = plan.writes
    .filter((w) => !sameBytes(w.before, w.after) || w.link)
    .sort((a, b) => compareProjectPaths(a.target, b.target));
  if (writes.length === 0) return { status: 'unchanged' };

  const maxBytes = ctx.config.source.max_file_bytes;
  const publication = Publication.begin(ctx.root, writes, plan.addresses, maxBytes);
  let committed = false;
  let finals: Map<string, Buffer | null>;
  // Original bytes of every path the change (and later its transform hooks) touched.
  const originals = new Map<string, Buffer | null>();
  const linkDeletions = new Set(writes.filter((w) => w.link).map((w) => w.target));
  // Files a transform hook wrote beyond the change's own: what the index held of each.
  const hookTouched = new Map<string, { sha256: string; lines: number } | null>();
  const diagnostics: Diagnostic[] = [];
  const guarantees: GuaranteeEvidence[] = [];
  const hooks = ctx.config.hooks;
  try {
    for (const w of writes) originals.set(w.target, w.link ? null : w.before);
    // Byte-ordered already: `writes` is sorted and a Map keeps insertion order.
    const transforms = selectHooks(hooks, 'transform', [...originals.keys()]);
    if (transforms.length > 0) {
      const tag = publication.hooksStarting();
      // The watcher may index a hook's write before we look, so what the files a hook touches
      // held before comes from a read snapshot of the index taken before the hooks ran. The index
      // keeps digests, not copies: such a file is known by its indexed digest and line count.
      const snapshot = ctx.indexer.store.readSnapshot();
      try {
        const before = await fileStamps(ctx);
        for (const [hook, paths] of transforms) await runOne(ctx, hook, paths, diagnostics, guarantees, tag);
        const after = await fileStamps(ctx);
        for (const [p, stamp] of after) if (before.get(p) !== stamp && !originals.has(p)) hookTouched.set(p, snapshot.file(p));
        for (const p of before.keys()) if (!after.has(p) && !originals.has(p)) hookTouched.set(p, snapshot.file(p));
      } finally {
        snapshot.close();
      }
    }

    // The final state decides: a path whose bytes equal its original did not change.
    finals = new Map<string, Buffer | null>();
    for (const [p, orig] of originals) {
      const now = linkDeletions.has(p) ? null : transforms.length > 0 ? readOrNull(ctx.root, p, maxBytes) : writes.find((w) => w.target === p)!.after;
      if (linkDeletions.has(p) || !sameBytes(orig, now)) finals.set(p, now);
    }
    publication.commit();
    committed = true;
  } finally {
    if (!committed) publication.rollback();
  }
  for (const [p, prior] of hookTouched) {
    const now = readOrNull(ctx.root, p, maxBytes);
    if ((now === null) !== (prior === null) || (now && prior && sha256Hex(now) !== prior.sha256)) finals.set(p, now);
  }
  const touched = [...new Set([...originals.keys(), ...hookTouched.keys(), ...(plan.extraPaths ?? [])])].sort(compareProjectPaths);
  if (finals.size === 0) {
    await refresh(ctx, touched);
    return { status: 'unchanged' };
  }
  const changed = [...finals.keys()].sort(compareProjectPaths);

  for (const [hook, paths] of selectHooks(hooks, 'validation', changed)) await runOne(ctx, hook, paths, diagnostics, guarantees);

  const files: FileChange[] = changed.map((path) => {
    const after = finals.get(path)!;
    const orig = originals.get(path) ?? null;
    const prior = hookTouched.get(path) ?? null;
    // Without the prior bytes of a hook-rewritten file, its lines count as all replaced.
    const stats = originals.has(path) ? lineStats(orig, after) : { added: after ? lineCount(after) : 0, removed: prior?.lines ?? 0 };
    const existed = originals.has(path) ? orig !== null : prior !== null;
    const entry: FileChange = {
      path,
      change: after === null ? 'deleted' : !existed ? 'created' : 'modified',
      size_bytes: after?.length ?? 0,
      line_count: after ? lineCount(after) : 0,
      lines_added: stats.added,
      lines_removed: stats.removed,
    };
    if (after) entry.digest = digest8(after);
    return entry;
  });

  const selection = ctx.indexer.currentSelection();
  if (changed.some((p) => finals.get(p) && selection.syntaxLanguage(p))) await initSyntax();
  const findings: Diagnostic[] = [];
  for (const path of changed) {
    const after = finals.get(path);
    const language = selection.syntaxLanguage(path);
    if (!after || !language) continue;
    const kind = classifyBytes(after);
    if (kind !== 'ok') {
      // The bytes landed as asked; only their parse is impossible (F.2 rule 22 leaves such files out).
      const why = kind === 'nul_byte' ? 'contains a NUL byte' : 'is not valid UTF-8';
      diagnostics.push(riftDiagnostic('warning', 'rift.change.not_indexed', `${path} ${why}: the change was written, but the file is neither re-parsed nor indexed`));
      continue;
    }
    findings.push(...reparseFindings(path, language, after, CHANGE_PARSE_DIAGNOSTICS_MAX - findings.length));
  }

  const warnings: ChangeWarning[] = [...plan.warnings];
  const stale = await refresh(ctx, touched);
  if (stale) warnings.push(stale);
  // After the refresh, so the engines have already heard of the new bytes.
  const written = changed.flatMap((path) => {
    const bytes = finals.get(path);
    return bytes ? [{ path, bytes }] : [];
  });
  const engineFindings = await ctx.engines.diagnosticsAfter(written, ctx.config);
  return {
    status: 'applied',
    summary: {
      id: changeId(changed.map((path) => ({ path, text: finals.get(path) ?? '' }))),
      files,
      diagnostics: [...findings, ...diagnostics, ...engineFindings],
      guarantees,
      warnings,
    },
  };
}

/** The hooks of one role that the changed paths select, each with the paths it receives. */
function selectHooks(hooks: readonly HookConfig[], role: HookConfig['role'], changed: readonly string[]): Array<[HookConfig, string[]]> {
  return hooks.filter((h) => h.role === role).map((h): [HookConfig, string[]] => [h, hookPaths(h, changed)]).filter(([, paths]) => paths.length > 0);
}

async function runOne(
  ctx: ChangeContext,
  hook: HookConfig,
  paths: readonly string[],
  diagnostics: Diagnostic[],
  guarantees: GuaranteeEvidence[],
  tag: Record<string, string> = {},
): Promise<void> {
  const started = performance.now();
  const outcome = await runHook(ctx.root, hook, paths, tag);
  const passed = hookPassed(outcome);
  log('info', 'change.hook', 'hook finished', { hook: hook.id, passed, elapsed_ms: Math.round(performance.now() - started) });
  if (!passed) diagnostics.push(hookFailure(hook, outcome));
  else if (hook.role === 'validation') guarantees.push(...hookGuarantees(hook));
}

/** Re-indexes the touched paths; a failure still reports the change, with a stale-snapshot warning. */
async function refresh(ctx: ChangeContext, paths: readonly string[]): Promise<ChangeWarning | null> {
  try {
    await ctx.indexer.refresh(paths);
    return null;
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    return {
      kind: 'rift.snapshot.stale',
      message: `the change landed, and the read snapshot could not refresh; current-tree reads wait for a successful workspace reindex: ${reason}`,
      reason,
    };
  }
}
