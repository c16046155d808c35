import { posix } from 'node:path';
import { symbolId } from '../core/ids.ts';
import { log } from '../core/log.ts';
import { MAP_AHEAD_MS, MAP_HUBS_MAX, MAP_MODULE_DEPTH } from '../core/limits.ts';
import type { MapModuleShape, MapResource } from '../protocol/resources.ts';
import type { Indexer } from '../index/indexer.ts';
import { entrypointSymbols, fileCounts, symbolAt } from '../index/resource-queries.ts';
import { fileScopeTargets } from '../index/graph/graph.ts';
import { readSourceFileSync } from '../workspace/read.ts';

// `rift://map` (spec "Map"; reference B.3, F.9 rules 98–100): an orientation snapshot computed
// once per index publication — right after it, off the publishing call — and served from that
// cache, so a read is a lookup. A read that arrives first computes it itself, once. Where the
// last computation took longer than MAP_AHEAD_MS (a large tree), publications stop computing it
// ahead: an edit's reads must not wait seconds behind a map nobody asked for yet, so the next
// read of the map computes it (and a cheap one is computed ahead again). Until a read has
// measured a computation, none is done ahead: a server that just opened a large tree does not
// start by computing a map for seconds.

const DOC = /\.(md|mdx|markdown)$/i;
const PACKAGE_JSON = /(^|\/)package\.json$/;
const ECMASCRIPT = new Set(['typescript', 'tsx', 'javascript']);
const PACKAGE_JSON_BYTES_MAX = 1024 * 1024;

export class MapService {
  private cached: { generation: number; map: MapResource } | null = null;
  private scheduled: NodeJS.Immediate | null = null;
  private readonly unsubscribe: () => void;
  /** How long the last computation took; null before the first, which a read does. */
  private lastMs: number | null = null;

  constructor(
    private readonly root: string,
    private readonly indexer: Indexer,
    /** The longest computation still done ahead of reads. */
    private readonly aheadMs = MAP_AHEAD_MS,
  ) {
    this.unsubscribe = indexer.onPublish(() => {
      if (this.scheduled !== null || this.lastMs === null || this.lastMs > this.aheadMs) return;
      this.scheduled = setImmediate(() => {
        this.scheduled = null;
        try {
          this.mapFor(true);
        } catch (e) {
          // Computing ahead is best effort, off any request: a damaged store is set aside and
          // rebuilt (its publication computes the map again); a read meets any other error itself.
          if (this.indexer.storeFault(e) === null) log('warn', 'map', 'map not computed ahead', { error: (e as Error).message });
        }
      });
      this.scheduled.unref();
    });
  }

  /** The map of the published snapshot (computed now only if this publication has none yet). */
  current(): MapResource {
    return this.mapFor(false);
  }

  /** `current()`, saying in its record whether a publication (`ahead`) or a read computed it. */
  private mapFor(ahead: boolean): MapResource {
    const generation = this.indexer.snapshot.generation;
    if (this.cached?.generation === generation) return this.cached.map;
    const started = performance.now();
    const map = this.compute();
    this.cached = { generation, map };
    this.lastMs = performance.now() - started;
    // One record per publication (rift://logs at debug): what computing the map costs, and a way
    // to see that reads are served from the cache.
    log('debug', 'map.compute', 'map computed', { revision: map.revision, generation, elapsed_ms: Math.round(this.lastMs), ahead });
    return map;
  }

  private compute(): MapResource {
    const store = this.indexer.store;
    const files = fileCounts(store);
    const languages = new Map<string, { files: number; symbols: number }>();
    for (const f of files) {
      if (f.language === null) continue;
      const entry = languages.get(f.language) ?? { files: 0, symbols: 0 };
      entry.files++;
      entry.symbols += f.symbols;
      languages.set(f.language, entry);
    }

    const hubs: MapResource['hubs'] = [];
    for (const h of this.indexer.graph.store.mostReferenced(MAP_HUBS_MAX * 2)) {
      const row = symbolAt(store, h.path, h.qname);
      if (row === null) continue; // kept from an earlier build, no longer declared
      hubs.push({ symbol: symbolId(row.language, row.path, row.qname), kind: row.kind, references: h.refs });
      if (hubs.length === MAP_HUBS_MAX) break;
    }

    const entries = new Set(entrypointSymbols(store).map((r) => symbolId(r.language, r.path, r.qname)));
    for (const id of this.scriptEntries(files.map((f) => f.path), new Map(files.map((f) => [f.path, f.language])))) entries.add(id);

    return {
      revision: this.indexer.snapshot.revision,
      languages: [...languages].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([language, c]) => ({ language, ...c })),
      modules: foldModules(files),
      hubs,
      entry_points: [...entries].sort(),
      docs: files.filter((f) => DOC.test(f.path)).map((f) => f.path),
      pagination: { page_index: 0, total_pages: 1 },
    };
  }

  /**
   * Entry points no facet marks: the files a package.json `bin` names (their `main`, else what
   * their top level calls) and what a Python `__main__` guard calls.
   */
  private scriptEntries(paths: readonly string[], language: ReadonlyMap<string, string | null>): string[] {
    const scripts: string[] = [];
    for (const pkg of paths.filter((p) => PACKAGE_JSON.test(p))) {
      for (const bin of binEntries(this.root, pkg)) if (ECMASCRIPT.has(language.get(bin) ?? '')) scripts.push(bin);
    }
    const store = this.indexer.store;
    const out: string[] = [];
    const callers: string[] = [];
    for (const script of scripts) {
      const main = symbolAt(store, script, 'main');
      if (main !== null) out.push(symbolId(main.language, main.path, main.qname));
      else callers.push(script);
    }
    callers.push(...paths.filter((p) => language.get(p) === 'python'));
    for (const d of fileScopeTargets(this.indexer.graph.store, callers)) {
      const row = symbolAt(store, d.path, d.qname);
      if (row !== null) out.push(symbolId(row.language, row.path, row.qname));
    }
    return out;
  }

  close(): void {
    this.unsubscribe();
    if (this.scheduled !== null) clearImmediate(this.scheduled);
  }
}

/** The project paths a package.json's `bin` names (a string, or an object of them). */
function binEntries(root: string, pkg: string): string[] {
  const read = readSourceFileSync(root, pkg, PACKAGE_JSON_BYTES_MAX);
  if (!read.ok) return [];
  let bin: unknown;
  try {
    bin = (JSON.parse(Buffer.from(read.bytes).toString('utf8')) as { bin?: unknown }).bin;
  } catch {
    return []; // not JSON: no entry points to read
  }
  const targets = typeof bin === 'string' ? [bin] : bin !== null && typeof bin === 'object' ? Object.values(bin) : [];
  const dir = posix.dirname(pkg);
  const out: string[] = [];
  for (const t of targets) {
    if (typeof t !== 'string') continue;
    const p = posix.normalize(posix.join(dir, t));
    if (!p.startsWith('../') && p !== '..' && !posix.isAbsolute(p)) out.push(p);
  }
  return out;
}

/** Directories of the indexed files, counts inclusive of descendants, unfolded MAP_MODULE_DEPTH levels. */
function foldModules(files: ReadonlyArray<{ path: string; symbols: number }>): MapModuleShape[] {
  interface Node {
    path: string;
    files: number;
    symbols: number;
    children: Map<string, Node>;
  }
  const top = new Map<string, Node>();
  for (const f of files) {
    const dirs = f.path.split('/').slice(0, -1).slice(0, MAP_MODULE_DEPTH);
    let level = top;
    let prefix = '';
    for (const d of dirs) {
      prefix = prefix === '' ? d : `${prefix}/${d}`;
      let node = level.get(d);
      if (node === undefined) {
        node = { path: prefix, files: 0, symbols: 0, children: new Map() };
        level.set(d, node);
      }
      node.files++;
      node.symbols += f.symbols;
      level = node.children;
    }
  }
  const emit = (level: Map<string, Node>): MapModuleShape[] =>
    [...level.values()]
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
      .map((n) => {
        const out: MapModuleShape = { path: n.path, files: n.files, symbols: n.symbols };
        if (n.children.size > 0) out.children = emit(n.children);
        return out;
      });
  return emit(top);
}
