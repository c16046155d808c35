// One FIFO lane per tree (spec "Changes"): changes run one after the other, each resolving
// against the result of the one before. A failed change does not stop the lane.

export class Lane {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const next = this.tail.then(work, work);
    this.tail = next.catch(() => undefined);
    return next;
  }
}
