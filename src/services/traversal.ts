import { RiftError, capabilityUnavailable, invalidField, limitExceeded } from '../core/errors.ts';
import { parseSymbolId, symbolId, type SymbolAddress } from '../core/ids.ts';
import { TRAVERSAL_DEPTH_MAX, TRAVERSAL_NODES_MAX } from '../core/limits.ts';
import type { WorkspaceConfig } from '../config/workspace-config.ts';
import type { ReadWarning } from '../protocol/common.ts';
import type { SearchInput } from '../protocol/search.ts';
import type { Indexer } from '../index/indexer.ts';
import type { SymbolRow } from '../index/store.ts';
import type { WalkedHit } from '../index/rank.ts';
import { walkGraph } from '../index/graph/traverse.ts';

// `search.traversal` (spec "Traversal"; reference F.7): the seed and `to` checked, the walk run
// over the binding provider's graph, and each reached declaration returned with its route.

type Traversal = NonNullable<SearchInput['traversal']>;
type GraphHop = WalkedHit['path'][number];

export interface CheckedTraversal {
  seed: SymbolAddress;
  to: SymbolAddress | null;
  depth: number;
  direction: 'outgoing' | 'incoming';
  facets: ReadonlySet<string> | null;
}


export interface Walked {
  hits: WalkedHit[];
  warnings: ReadWarning[];
}

/** Shape checks that need no index: addresses, depth (before the read waits for anything). */
export function checkTraversal(t: Traversal, rev: string | undefined): CheckedTraversal {
  const seed = parseSymbolId(t.seed);
  if (seed === null) throw invalidField('traversal.seed', 'not a rift symbol address');
  const to = t.to === undefined ? null : parseSymbolId(t.to);
  if (t.to !== undefined && to === null) throw invalidField('traversal.to', 'not a rift symbol address');
  if (t.depth !== undefined && t.depth > TRAVERSAL_DEPTH_MAX) throw limitExceeded('traversal.depth', TRAVERSAL_DEPTH_MAX, t.depth);
  // The graph describes the current tree alone.
  if (rev !== undefined) throw capabilityUnavailable('relationship traversal at a revision', [['rev', rev]]);
  const facets = t.facets === undefined || t.facets.length === 0 ? null : new Set<string>(t.facets);
  return { seed, to, depth: t.depth ?? (to === null ? 1 : TRAVERSAL_DEPTH_MAX), direction: t.direction ?? 'outgoing', facets };
}

export function walkTraversal(indexer: Indexer, config: WorkspaceConfig, t: CheckedTraversal, original: Traversal): Walked {
  const graph = indexer.graph.store;
  if (!config.providers.binding.enabled && !graph.hasData()) {
    throw capabilityUnavailable('relationship traversal (providers.binding disabled)', [], true);
  }
  const rows = new RowCache(indexer);
  const seedNode = graph.findNode(t.seed.path, t.seed.qualifiedName);
  if (seedNode === null && rows.get(t.seed.path, t.seed.qualifiedName, t.seed.language) === null) {
    throw new RiftError('resource_not_found', [['symbol', original.seed]]);
  }
  let toNode: number | null = null;
  if (t.to !== null) {
    toNode = graph.findNode(t.to.path, t.to.qualifiedName);
    if (toNode === null && rows.get(t.to.path, t.to.qualifiedName, t.to.language) === null) {
      throw new RiftError('resource_not_found', [['symbol', original.to!]]);
    }
  }
  // A declaration with no edges is a legitimate answer: nothing reached.
  if (seedNode === null || (t.to !== null && toNode === null)) return { hits: [], warnings: [] };

  const walk = walkGraph(graph, seedNode, { direction: t.direction, facets: t.facets, depth: t.depth, to: toNode, bound: TRAVERSAL_NODES_MAX });
  const ids = new Map<number, string | null>();
  const idOf = (node: number): string | null => {
    let id = ids.get(node);
    if (id === undefined) {
      const n = graph.nodeById(node);
      const language = n === null ? null : rows.language(n.path);
      id = n === null || language === null ? null : symbolId(language, n.path, n.qname);
      ids.set(node, id);
    }
    return id;
  };
  const hits: WalkedHit[] = [];
  for (const r of walk.reached) {
    const n = graph.nodeById(r.node);
    const row = n === null ? null : rows.get(n.path, n.qname, null);
    // A declaration the graph remembers but the index no longer holds (data kept from a
    // build before the provider was disabled) is walked through but not returned.
    if (row === null) continue;
    const path: GraphHop[] = [];
    for (const e of r.route) {
      const from = idOf(e.src);
      const to = idOf(e.dst);
      if (from === null || to === null) break;
      path.push({
        relationship: { from, kind: e.kind, facets: [e.kind as GraphHop['relationship']['facets'][number]], to, derivation: e.derivation as 'resolution' | 'heuristic' },
        direction: t.direction,
      });
    }
    if (path.length !== r.route.length) continue;
    hits.push({ row, distance: r.distance, path });
  }
  hits.sort((a, b) => a.distance - b.distance || cmp(a.row.path, b.row.path) || a.row.span_start - b.row.span_start || a.row.id - b.row.id);
  const warnings: ReadWarning[] = walk.truncated
    ? [
        {
          kind: 'traversal_truncated',
          message: `the walk stopped at its bound of ${TRAVERSAL_NODES_MAX} symbols; symbols beyond it are missing — narrow facets, lower depth, or start from a less-connected seed`,
          visited: walk.visited,
        },
      ]
    : [];
  return { hits, warnings };
}

/** Symbol rows of the index by (path, qualified name), one query per file. */
class RowCache {
  private readonly byPath = new Map<string, Map<string, SymbolRow>>();
  constructor(private readonly indexer: Indexer) {}

  get(path: string, qname: string, language: string | null): SymbolRow | null {
    let file = this.byPath.get(path);
    if (file === undefined) {
      file = new Map(this.indexer.store.symbolsOfFile(path).map((r) => [r.qname, r]));
      this.byPath.set(path, file);
    }
    const row = file.get(qname) ?? null;
    return row !== null && language !== null && row.language !== language ? null : row;
  }

  language(path: string): string | null {
    return this.indexer.store.file(path)?.language ?? this.indexer.graph.store.recordedFile(path)?.language ?? null;
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
