import type { Store, SymbolRow } from './store.ts';
import { SYMBOL_COLUMNS, SYMBOL_FROM } from './store.ts';

// What `rift://map` and `rift://workspace` read from the store, each in one committed state.

export interface FileCount {
  path: string;
  language: string | null;
  symbols: number;
}

/** Every indexed file with its language and declaration count, in path order. */
export function fileCounts(store: Store): FileCount[] {
  return store
    .prepared(
      'map.fileCounts',
      `SELECT f.path, b.language, (SELECT count(*) FROM symbols s WHERE s.blob_id = f.blob_id) AS symbols FROM files f JOIN blobs b ON b.id = f.blob_id ORDER BY f.path`,
    )
    .all() as FileCount[];
}

/** Declarations carrying the `entrypoint` facet. */
export function entrypointSymbols(store: Store): SymbolRow[] {
  return store
    .prepared(
      'map.entrypoints',
      `SELECT ${SYMBOL_COLUMNS} FROM ${SYMBOL_FROM}
       WHERE (',' || s.facets || ',') LIKE '%,entrypoint,%' ORDER BY f.path, s.span_start, s.id`,
    )
    .all() as SymbolRow[];
}

/** A declaration by file and qualified name. */
export function symbolAt(store: Store, path: string, qname: string): SymbolRow | null {
  return (
    (store
      .prepared('map.symbolAt', `SELECT ${SYMBOL_COLUMNS} FROM ${SYMBOL_FROM} WHERE f.path = ? AND s.qname = ? LIMIT 1`)
      .get(path, qname) as SymbolRow | undefined) ?? null
  );
}

/** One page of the source catalog in path order, and the catalog's size. */
export function sourcePage(store: Store, offset: number, limit: number): { rows: Array<{ path: string; sha256: string; language: string | null }>; total: number } {
  const rows = store
    .prepared('workspace.sources', `SELECT f.path, b.sha256, b.language FROM files f JOIN blobs b ON b.id = f.blob_id ORDER BY f.path LIMIT ? OFFSET ?`)
    .all(limit, offset) as Array<{ path: string; sha256: string; language: string | null }>;
  const total = (store.prepared('workspace.count', `SELECT count(*) AS n FROM files`).get() as { n: number }).n;
  return { rows, total };
}
