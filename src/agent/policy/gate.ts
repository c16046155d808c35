import type { Segment } from './diff.ts';

// The interface front ends answer (serve, TUI, headless). The engine only awaits promises:
// a dropped reply (null) always means deny, so exiting or ignoring a question fails safe.

/** What a permission answer does, for front ends whose wire has fixed answer kinds (ACP's permission options). */
export type ChoiceMeaning = 'allow_once' | 'allow_always' | 'allow_session' | 'deny';

export interface AskRequest {
  question: string;
  detail: string[];
  /** Empty means free text. */
  choices: string[];
  /** A permission ask: what each choice means, one per choice. */
  meanings?: ChoiceMeaning[];
  /**
   * The permission rule an "always allow" choice adds (`Bash(git push *)`, `Edit(src/**)`); a
   * front end may offer to reject it always (`Approval.rejectAlways`). Absent when only a
   * one-off answer fits (an `ask` rule, a command that cannot be checked).
   */
  rule?: string;
}

export interface ReviewRequest {
  tool: 'write' | 'edit';
  /** Absolute path. */
  path: string;
  /** Full prior content ('' for a new file). */
  old: string;
  /** Full proposed content of the whole file. */
  new: string;
  segments: Segment[];
}

/** apply with `content` writes the reviewer's assembly; without it, the proposal verbatim. */
export type ReviewDecision = { apply: true; content?: string } | { apply: false };

export interface Gate {
  /** Whether a person is attached who can answer asks (false for headless). */
  readonly interactive: boolean;
  /** Resolves to the answer text, or null when the question was dropped. */
  ask(req: AskRequest, signal: AbortSignal): Promise<string | null>;
  /**
   * Inline edit review, present only when the front end opted in. Resolves to null when the
   * reply was dropped (deny) or to 'unavailable' when the review channel is gone (plain ask instead).
   */
  review?(req: ReviewRequest, signal: AbortSignal): Promise<ReviewDecision | null | 'unavailable'>;
}

/** A gate with nobody attached: every ask is dropped. Headless and tests start from this. */
export const DETACHED_GATE: Gate = {
  interactive: false,
  ask: async () => null,
};
