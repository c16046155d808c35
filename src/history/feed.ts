// A list whose items arrive over time (a history walk's versions, as `git log` finds them),
// read by index: a reader waits for the item it needs, or learns that no more will come.

export class Feed<T> {
  readonly items: T[] = [];
  private ended = false;
  private waiters: Array<() => void> = [];

  /** A feed holding `items` and ended. */
  static of<T>(items: readonly T[]): Feed<T> {
    const feed = new Feed<T>();
    feed.push(items);
    feed.end();
    return feed;
  }

  /** Whether no more items will come. */
  get done(): boolean {
    return this.ended;
  }

  push(items: readonly T[]): void {
    if (this.ended) throw new Error('Feed.push after end');
    for (const item of items) this.items.push(item);
    this.wake();
  }

  end(): void {
    this.ended = true;
    this.wake();
  }

  /** Resolves true once item `i` has arrived, false when the feed ended without it. */
  async has(i: number): Promise<boolean> {
    while (i >= this.items.length) {
      if (this.ended) return false;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    return true;
  }

  private wake(): void {
    for (const resolve of this.waiters.splice(0)) resolve();
  }
}
