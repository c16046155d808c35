import type { Segment } from './diff.ts';

// The interface front ends answer (serve, TUI, headless). The engine only awaits promises:
// a dropped reply (null) always means deny, so exiting or ignoring a question fails safe.

export interface AskRequest {
  question: string;
  detail: string[];
  /** Empty means free text. */
  choices: string[];
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
