import { isAbsolute, resolve } from 'node:path';
import type { Approval } from '../policy/approval.ts';
import type { Gate } from '../policy/gate.ts';
import type { PostEditHooks } from '../policy/hooks.ts';
import type { Sandbox } from '../policy/sandbox.ts';
import type { BackgroundTasks } from '../base/tasks.ts';
import type { EventSink, PlanItem } from '../base/types.ts';
import type { UndoJournal } from '../session/undo.ts';
import type { EngineRegistry } from '../../engine/registry.ts';
import type { ChangeApi, ReadApi, SearchApi } from '../../services/api.ts';

// What every tool call sees. Shared switches (approval, rules) live on objects the front end
// also holds, so flipping them mid-turn takes effect on the next gated action.

/** Code services (in this process, or the workspace server's); a code tool is offered only when its service exists. */
export interface CodeServices {
  read?: ReadApi;
  search?: SearchApi;
  change?: ChangeApi;
  /** The language engines, when the code runs in this process: diagnostics after write and edit. */
  engines?: EngineRegistry;
}

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
  /** Post-edit hooks, run after each applied write/edit/replace_symbol/patch; shared with sub-agents. */
  hooks?: PostEditHooks;
  /** Set by write/edit for the loop's edit_diff; one per call. */
  lastDiff?: AppliedDiff;
}

export function resolvePath(ctx: Pick<ToolContext, 'cwd'>, path: string): string {
  return isAbsolute(path) ? resolve(path) : resolve(ctx.cwd, path);
}
