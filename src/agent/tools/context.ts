import { isAbsolute, join, resolve } from 'node:path';
import { ToolError } from '../base/tool.ts';
import type { Approval } from '../policy/approval.ts';
import type { Gate } from '../policy/gate.ts';
import type { PostEditHooks } from '../policy/hooks.ts';
import type { Sandbox } from '../policy/sandbox.ts';
import type { BackgroundTasks, CommandEnv, CommandRun } from '../base/tasks.ts';
import type { EventSink, PlanItem } from '../base/types.ts';
import type { ProjectFile, UndoJournal } from '../session/undo.ts';
import type { EngineRegistry } from '../../engine/registry.ts';
import type { ChangeApi, ProjectionApi, ReadApi, SearchApi } from '../../services/api.ts';
import { WorkspaceFiles, type LocateFailure } from '../../services/workspace-files.ts';

// What every tool call sees. Shared switches (approval, rules) live on objects the front end
// also holds, so flipping them mid-turn takes effect on the next gated action.

/** Code services (in this process, or the workspace server's); a code tool is offered only when its service exists. */
export interface CodeServices {
  read?: ReadApi;
  search?: SearchApi;
  change?: ChangeApi;
  /** The language engines, when the code runs in this process: diagnostics after write and edit. */
  engines?: EngineRegistry;
  /** Projections of the workspace: isolated sub-agents work in one each. */
  projections?: ProjectionApi;
}

/** The files as an editor holds them (its open buffers, over ACP); absent: the disk. */
export interface EditorFiles {
  /** The file's text as the editor has it (unsaved changes included), or null to read the disk. */
  read?(absPath: string, signal: AbortSignal): Promise<string | null>;
  /** Writes the text through the editor; throws when the editor refuses. */
  write?(absPath: string, content: string, signal: AbortSignal): Promise<void>;
}

/** Runs a foreground command somewhere else (an editor's terminal, over ACP); absent: a child process here. */
export type CommandRunner = (argv: readonly string[], opts: { cwd: string; signal: AbortSignal; timeoutMs: number }) => Promise<CommandRun>;

export interface AppliedDiff {
  path: string;
  diff: string[];
  added: number;
  removed: number;
}

export interface ToolContext {
  cwd: string;
  signal: AbortSignal;
  gate: Gate;
  approval: Approval;
  journal: UndoJournal;
  plan: PlanItem[];
  tasks: BackgroundTasks;
  emit: EventSink;
  code: CodeServices;
  /** Headless runs cannot ask; ask_user is answered "use your best judgment". */
  canAskUser: boolean;
  bashWrapper?: string;
  /** The OS sandbox bash commands run in (absent: none, as in unit tests of other tools). */
  sandbox?: Sandbox;
  /** Environment changes for the commands bash and the post-edit hooks run (an isolated sub-agent's git boundary). */
  commandEnv?: CommandEnv;
  /** Post-edit hooks, run after each applied write/edit/replace_symbol/patch; shared with sub-agents. */
  hooks?: PostEditHooks;
  /** read, write and edit go through the editor when it offers its files. */
  editorFiles?: EditorFiles;
  /** bash runs its foreground commands here when set (already sandbox-wrapped). */
  runner?: CommandRunner;
  /** Set by write/edit for the loop's edit_diff; one per call. */
  lastDiff?: AppliedDiff;
}

export function resolvePath(ctx: Pick<ToolContext, 'cwd'>, path: string): string {
  return isAbsolute(path) ? resolve(path) : resolve(ctx.cwd, path);
}

const WHY: Record<LocateFailure, string> = {
  outside: 'is outside the workspace',
  floor: 'is inside .git or .rift, which the file tools never touch',
  unaddressable: 'has a name rift cannot address (not NFC, or a control character)',
};

/**
 * The project file `path` names, or a ToolError saying why the file tools cannot use it. A path
 * they cannot use is first offered to `denied`, so a permission rule that covers it is named
 * (deny rules come first, whatever else is wrong with the path).
 */
export function projectFile(ctx: Pick<ToolContext, 'cwd'>, path: string, denied?: (abs: string) => void): ProjectFile {
  const files = WorkspaceFiles.at(ctx.cwd);
  const abs = resolvePath(ctx, path);
  const located = files.locate(abs);
  if (!located.ok) {
    denied?.(abs);
    throw new ToolError(`${path} ${WHY[located.reason]} (${ctx.cwd}); the file tools read and write only there — use bash for anything else`);
  }
  return { files, path: located.path, abs: located.path === '' ? ctx.cwd : join(ctx.cwd, located.path) };
}
