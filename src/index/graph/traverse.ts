import type { EdgeRow, GraphStore } from './graph-store.ts';

// A bounded breadth-first walk over the graph (spec "Traversal"). Breadth-first order makes the
// first route found to a node a shortest one; edges are taken in a fixed order (kind, then the
// other end's id), so the route reported is the same on every call.

export interface WalkOptions {
  direction: 'outgoing' | 'incoming';
  /** Edge kinds to follow; null follows every kind. */
  facets: ReadonlySet<string> | null;
  depth: number;
  /** Stop as soon as this node is reached. */
  to: number | null;
  /** Most nodes (the seed excluded) the walk visits. */
  bound: number;
}

export interface Reached {
  node: number;
  distance: number;
  /** Edges from the seed to this node, in walk order. */
  route: EdgeRow[];
}

export interface WalkResult {
  /** Reached nodes in the order the walk reached them (the seed excluded); with `to`, at most `to`. */
  reached: Reached[];
  /** How many nodes the walk visited (the seed excluded), whether or not `to` was among them. */
  visited: number;
  /** True when the walk stopped at `bound` with nodes left to visit. */
  truncated: boolean;
}

export function walkGraph(graph: GraphStore, seed: number, options: WalkOptions): WalkResult {
  const via = new Map<number, { prev: number; edge: EdgeRow; distance: number }>();
  const reached: number[] = [];
  let frontier = [seed];
  let truncated = false;
  const seen = new Set([seed]);
  walk: for (let distance = 1; distance <= options.depth && frontier.length > 0; distance++) {
    const next: number[] = [];
    for (const node of frontier) {
      const edges = options.direction === 'outgoing' ? graph.outgoing(node) : graph.incoming(node);
      for (const edge of edges) {
        if (options.facets !== null && !options.facets.has(edge.kind)) continue;
        const other = options.direction === 'outgoing' ? edge.dst : edge.src;
        if (seen.has(other)) continue;
        if (reached.length >= options.bound) {
          truncated = true;
          break walk;
        }
        seen.add(other);
        via.set(other, { prev: node, edge, distance });
        reached.push(other);
        if (other === options.to) break walk;
        next.push(other);
      }
    }
    frontier = next;
  }
  const routeOf = (node: number): EdgeRow[] => {
    const route: EdgeRow[] = [];
    for (let n = node; n !== seed; ) {
      const step = via.get(n)!;
      route.push(step.edge);
      n = step.prev;
    }
    return route.reverse();
  };
  const nodes = options.to === null ? reached : reached.filter((n) => n === options.to);
  return {
    reached: nodes.map((node) => ({ node, distance: via.get(node)!.distance, route: routeOf(node) })),
    visited: reached.length,
    truncated: options.to === null ? truncated : truncated && !via.has(options.to),
  };
}
