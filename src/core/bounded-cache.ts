/**
 * A cache that keeps between `capacity` and twice as much, of the recently used entries: caches
 * that would otherwise grow with the tree (one entry per file or name of the workspace) stay
 * bounded. Each entry weighs 1, or what `weigh` says (a list's length, so a cache of lists is
 * bounded by the rows it holds). Two generations instead of exact recency order: a hit in the
 * young generation costs one lookup, and when it is full the old generation is dropped whole.
 * Values are never undefined (null is one), so a lookup's undefined means absent.
 */
export class BoundedCache<K, V extends {} | null> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();
  private youngWeight = 0;

  constructor(
    private readonly capacity: number,
    private readonly weigh: (value: V) => number = () => 1,
  ) {
    if (!(capacity >= 1)) throw new Error(`BoundedCache capacity must be at least 1, got ${capacity}`);
  }

  get size(): number {
    return this.young.size + this.old.size;
  }

  /** The value for `key` (kept on as recently used), undefined when absent. */
  get(key: K): V | undefined {
    const value = this.young.get(key);
    if (value !== undefined) return value;
    const kept = this.old.get(key);
    if (kept === undefined) return undefined;
    this.old.delete(key);
    this.put(key, kept);
    return kept;
  }

  set(key: K, value: V): this {
    this.old.delete(key);
    const was = this.young.get(key);
    if (was !== undefined) this.youngWeight -= this.weigh(was);
    this.put(key, value);
    return this;
  }

  private put(key: K, value: V): void {
    this.young.set(key, value);
    this.youngWeight += this.weigh(value);
    if (this.youngWeight >= this.capacity) {
      this.old = this.young;
      this.young = new Map();
      this.youngWeight = 0;
    }
  }
}
