import { setFlagsFromString } from 'node:v8';

// How this process's JavaScript heap grows, set at run time (the flags below are read by V8's
// collector each time it sizes a space, so they take effect when set; bench/index.ts measures
// the cold build's peak memory with them).
//
// By default V8 lets the old generation grow up to four times the live set between full
// collections when a thread allocates fast, and doubles the young generation's semi-spaces up
// to 16 MB each. A cold build's main thread allocates fast and keeps little (row objects, keys
// and messages from the parse workers): on the Python standard library it held ~65 MB live and
// ~130 MB of heap, and its peak RSS was ~310 MB; with both bounds, ~235 MB, about 4 % slower.

/** The old generation grows by a tenth over the live set after each full collection. */
export function boundHeapGrowth(): void {
  setFlagsFromString('--heap-growing-percent=10');
}

/** V8's default semi-space growth factor (`--semi-space-growth-factor`). */
const SEMI_SPACE_GROWTH_DEFAULT = 2;

/**
 * While `fn` runs, the young generation keeps the size it has instead of growing: for a
 * stretch of fast allocation of short-lived objects (a cold build's writer), where a larger
 * young generation only holds more garbage between collections.
 */
export async function withSmallYoungGeneration<T>(fn: () => Promise<T>): Promise<T> {
  setFlagsFromString('--semi-space-growth-factor=1');
  try {
    return await fn();
  } finally {
    setFlagsFromString(`--semi-space-growth-factor=${SEMI_SPACE_GROWTH_DEFAULT}`);
  }
}
