import type { AskRequest, Gate, ReviewDecision, ReviewRequest } from '../agent/policy/gate.ts';
import { ReviewModel } from './review.ts';

// The TUI's gate: asks and edit reviews wait in one FIFO queue and are answered with pickers,
// the head one on screen. An aborted turn drops its questions (a dropped reply is a deny), and
// quitting drops them all. Nothing here draws; the controller shows `head` and answers it.

export type Question =
  | { kind: 'ask'; id: number; req: AskRequest; choice: number; scroll: number; settle: (answer: string | null) => void }
  | { kind: 'review'; id: number; review: ReviewModel; settle: (d: ReviewDecision | null) => void };

export class Questions implements Gate {
  readonly interactive = true;
  private readonly queue: Question[] = [];
  private seq = 0;

  /** Called whenever the queue changes, so the screen follows. */
  constructor(private readonly changed: () => void = () => {}) {}

  get head(): Question | undefined {
    return this.queue[0];
  }

  get size(): number {
    return this.queue.length;
  }

  ask(req: AskRequest, signal: AbortSignal): Promise<string | null> {
    return this.raise<string>(signal, (id, settle) => ({ kind: 'ask', id, req, choice: 0, scroll: 0, settle }));
  }

  review(req: ReviewRequest, signal: AbortSignal): Promise<ReviewDecision | null> {
    return this.raise<ReviewDecision>(signal, (id, settle) => ({ kind: 'review', id, review: new ReviewModel(req), settle }));
  }

  /** Answers the head question; a null answer drops it (deny). */
  answerAsk(answer: string | null): void {
    const q = this.queue[0];
    if (q?.kind === 'ask') this.settle(q, () => q.settle(answer));
  }

  decide(decision: ReviewDecision | null): void {
    const q = this.queue[0];
    if (q?.kind === 'review') this.settle(q, () => q.settle(decision));
  }

  /** Drops every pending question (quit): each resolves as dropped. */
  dropAll(): void {
    for (const q of this.queue.splice(0)) q.settle(null);
    this.changed();
  }

  private settle(q: Question, answer: () => void): void {
    this.queue.splice(this.queue.indexOf(q), 1);
    answer();
    this.changed();
  }

  private raise<T>(signal: AbortSignal, make: (id: number, settle: (v: T | null) => void) => Question): Promise<T | null> {
    if (signal.aborted) return Promise.resolve(null);
    return new Promise<T | null>((resolve) => {
      const onAbort = () => {
        const i = this.queue.indexOf(q);
        if (i >= 0) {
          this.queue.splice(i, 1);
          this.changed();
        }
        resolve(null);
      };
      const q = make(++this.seq, (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      });
      signal.addEventListener('abort', onAbort, { once: true });
      this.queue.push(q);
      this.changed();
    });
  }
}
