// A FIFO lane: work runs one item after the other, in the order it was handed in, each after
// the one before settled. A failed item does not stop the lane.

export class Lane {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const next = this.tail.then(work, work);
    this.tail = next.catch(() => undefined);
    return next;
  }

  /** Resolves once everything handed in so far has settled. */
  idle(): Promise<void> {
    return this.tail.then(() => undefined);
  }
}
