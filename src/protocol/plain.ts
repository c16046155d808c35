// Wire values that code outside the request schemas uses at run time, kept apart from the
// schemas (zod): the engine, and so `rift index` and every command that reads the index, load
// without the schema library and the construction of every tool's schema (~70 ms a start).

/** The pagination object of a page `pageIndex` of `total` items, `limit` a page. */
export function pagination(pageIndex: number, total: number, limit: number): { page_index: number; total_pages: number } {
  return { page_index: pageIndex, total_pages: Math.max(1, Math.ceil(total / limit)) };
}

/** The diagnostic code of a propose-only rename (`rift/rename-review`); `extensions.writes` carries the proposal. */
export const RENAME_PROPOSED = 'rift.rename.proposed';
