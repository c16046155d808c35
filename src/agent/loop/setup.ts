import { Approval } from '../policy/approval.ts';
import { userDirs, type PermissionConfig } from '../base/config.ts';
import { PermissionRules } from '../policy/permissions.ts';
import { resumeBrief, Session } from '../session/session.ts';
import { persistRule } from '../base/user-config.ts';
import type { Message } from '../base/types.ts';

// Set-up shared by the front ends (`-p`, `--serve`): session selection (`--resume FILE`,
// `--continue` — the newest non-empty session — or a freshly reserved file) and the approval
// switch over the configured rules. Notes and warnings are for stderr.

export interface OpenedSession {
  path: string;
  /** Prior conversation, undefined when starting fresh. */
  messages: Message[] | undefined;
  notes: string[];
  /** The file was reserved by this process (its empty reservation is released at exit). */
  reserved: boolean;
}

export function openSession(opts: { resume?: string; continue?: boolean }, dir: string = Session.dir()): OpenedSession {
  const notes: string[] = [];
  if (!opts.resume && !opts.continue) return { path: Session.reserve(dir), messages: undefined, notes, reserved: true };
  const found = opts.resume ?? Session.newest(dir);
  if (!found) {
    notes.push('no saved session to continue — starting fresh');
    return { path: Session.reserve(dir), messages: undefined, notes, reserved: true };
  }
  const loaded = Session.load(found);
  if (loaded.note) notes.push(loaded.note);
  const messages = loaded.messages.length > 0 ? loaded.messages : undefined;
  // A hidden brief (a `[system]` user message: never shown as history, stripped on the next load).
  const brief = messages ? resumeBrief(messages) : null;
  if (messages && brief) messages.push({ role: 'user', content: brief });
  const fresh = loaded.note?.includes('corrupt') === true;
  return { path: fresh ? Session.reserve(dir) : found, messages, notes, reserved: fresh };
}

/** The prior user/assistant exchanges a front end replays on resume (tool and system traffic excluded). */
export function historyMessages(messages: readonly Message[]): Array<{ role: 'user' | 'assistant'; text: string }> {
  const out: Array<{ role: 'user' | 'assistant'; text: string }> = [];
  for (const m of messages) {
    if (m.role === 'user' && !m.content.startsWith('[system]')) out.push({ role: 'user', text: m.content });
    else if (m.role === 'assistant' && m.content !== '' && !(m.tool_calls && m.tool_calls.length > 0)) out.push({ role: 'assistant', text: m.content });
  }
  return out;
}

/**
 * The approval switch over the configured permission rules; malformed rules are reported, and an
 * "always allow" answer is persisted to the user config (a failure to persist is reported, not fatal).
 */
export function createApproval(approve: boolean, permissions: PermissionConfig, cwd: string, warn: (text: string) => void): Approval {
  const rules = new PermissionRules(permissions, cwd);
  for (const m of rules.malformed) warn(m);
  return new Approval(approve, rules, cwd, (rule, list) => {
    try {
      persistRule(userDirs().config, rule, list);
    } catch (e) {
      warn(`could not persist permission rule: ${(e as Error).message}`);
    }
  });
}
