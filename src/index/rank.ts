import type { SearchResult } from '../protocol/search.ts';
import type { Store, SymbolRow } from './store.ts';
import type { FileHitRow, Lanes, SymbolHitRow } from './search.ts';
import type { QueryWord } from './text.ts';

// Ranking (DESIGN: index/ owns it): the lanes of one search (index/search.ts), over one store
// or several, and the semantic tier's nearest declarations, fused by reciprocal-rank fusion
// into one score that orders the page exactly — lane credits, discounted for each query word a
// unit does not carry, plus the semantic credit, discounted for test code; ties by path, range
// start, and identity (docs/mcp.md, "Search ranking") — and the declarations a relationship
// walk reached (search.traversal) joined into that order.

export type Lane = 'ranked' | 'name' | 'content' | 'relationship';

type GraphHop = NonNullable<SearchResult['results'][number]['traversal_path']>[number];

/** A declaration a relationship walk reached: how many hops away, and the route. */
export interface WalkedHit {
  row: SymbolRow;
  distance: number;
  path: GraphHop[];
}

/** Reciprocal-rank fusion constant and per-lane weights. */
const RRF_K = 60;
const WEIGHT = { rankedSymbols: 1, rankedFiles: 1, content: 0.5, semantic: 1 } as const;
/** Identifier-tier weight by match level: exact name, exact qualified name, prefix, camel/snake part. */
const NAME_LEVEL_WEIGHT = [3, 3, 1.5, 0.75] as const;
/** Test code ranks below the code it tests, unless the query asks for tests. */
const TEST_CODE_FACTOR = 0.25;
/** A private declaration (`_helper`, `Cls._impl`) ranks below its public peers, unless the query names one. */
const PRIVATE_FACTOR = 0.5;
/** A part of a qualified name that is private by convention: a leading underscore, not a `__dunder__`. */
const PRIVATE_PART = /(^|[.:])_(?!_[A-Za-z0-9_]*__(?:$|[.:~]))/;
/** A sentence has at least this many words, all plain lowercase (no `snake_case`, `camelCase`, `a.b`). */
const PROSE_QUERY_WORDS_MIN = 3;
const PLAIN_WORD = /^[a-z0-9'-]+$/;
/** Each query word a unit does not carry multiplies its lexical credit by this. */
const MISSING_WORD_FACTOR = 0.5;
/** A file hit whose best chunk lies inside a declaration: the declaration is the better answer. */
const OWNED_FILE_FACTOR = 0.25;
/** A query of more words than this is read as a sentence, where stop words name nothing. */
const PROSE_WORDS_MIN = 2;
const TEST_PATH = /(^|\/)(tests?|testing|__tests__)\/|(^|\/)test_[^/]*$|_test\.[a-z]+$/;
const ASKS_FOR_TESTS = /\btests?\b/i;

// Words that carry no meaning of their own in a prose query; dropped when others remain.
const STOP_WORDS = new Set(
  'a an and are as at be by do does for from how in into is it of on or that the this to use using what when where which with'.split(' '),
);

/** One store's lanes; `tag` keeps units of the index and of the forced store apart. */
export interface Source {
  tag: string;
  store: Store;
  lanes: Lanes;
}

/** One ranked unit: a declaration or a file, with the lanes that placed it. */
export interface Unit {
  key: string;
  store: Store;
  kind: 'symbol' | 'file';
  symbol?: SymbolHitRow['row'];
  file?: FileHitRow;
  literal?: FileHitRow;
  lanes: Set<Lane>;
  coverage: number;
  score: number;
  /** The semantic lane's credit, kept apart: it needs no query word. */
  semantic: number;
  /** Set when the traversal reached it. */
  walked?: WalkedHit;
}

/**
 * Whether a query reads as a sentence ("rotate log files when they get too large") rather than
 * names (`shutil copytree`, `ArgumentParser add_argument`): the ranked lanes then weigh what
 * documentation says over names that share one of its words.
 */
export function isProse(words: readonly QueryWord[]): boolean {
  return words.length >= PROSE_QUERY_WORDS_MIN && words.every((w) => PLAIN_WORD.test(w.text));
}

/** The words the ranked lanes score: stop words dropped from prose when others remain. */
export function meaningfulWords(words: QueryWord[]): QueryWord[] {
  const kept = words.filter((w) => !STOP_WORDS.has(w.text.toLowerCase()));
  return kept.length > 0 ? kept : words;
}

/**
 * The words the identifier tier matches: every word of a short query (`which` is a name in
 * `shutil which`), the meaningful ones of a sentence, where `a` or `is` would match every
 * declaration so named.
 */
export function identifierWordsOf(words: QueryWord[]): QueryWord[] {
  return words.length > PROSE_WORDS_MIN ? meaningfulWords(words) : words;
}

/** Every lane of every store fused into one total order for the query `literal` of `words` meaningful words. */
export function fuse(sources: readonly Source[], literal: string, words: number): Unit[] {
  const units = new Map<string, Unit>();
  /** The unit a lane row names, credited with that lane, the row's coverage and `score`. */
  const credit = (s: Source, kind: 'symbol' | 'file', id: number, lane: Lane, coverage: number, score: number): Unit => {
    const key = `${s.tag}:${kind}:${id}`;
    let u = units.get(key);
    if (!u) {
      u = { key, store: s.store, kind, lanes: new Set(), coverage: 0, score: 0, semantic: 0 };
      units.set(key, u);
    }
    u.lanes.add(lane);
    u.coverage = Math.max(u.coverage, coverage);
    u.score += score;
    return u;
  };
  // Lanes from different stores merge by their own scores before ranks are taken.
  const merged = <T extends { score: number; coverage: number }>(pick: (l: Lanes) => T[]) =>
    sources
      .flatMap((s) => pick(s.lanes).map((row) => ({ row, s })))
      .sort((a, b) => b.row.coverage - a.row.coverage || a.row.score - b.row.score);

  merged((l) => l.rankedSymbols).forEach(({ row, s }, rank) => {
    credit(s, 'symbol', row.row.id, 'ranked', row.coverage, WEIGHT.rankedSymbols / (RRF_K + rank)).symbol = row.row;
  });
  merged((l) => l.names).forEach(({ row, s }, rank) => {
    // A name carrying one word of a sentence is weak evidence: credit by the square of the share it carries.
    const share = Math.min(1, row.coverage / Math.max(1, words)) ** 2;
    credit(s, 'symbol', row.row.id, 'name', row.coverage, (share * NAME_LEVEL_WEIGHT[row.score]) / (RRF_K + rank)).symbol = row.row;
  });
  // Only the index store has a semantic lane, so its own order is the lane's rank.
  for (const s of sources) {
    s.lanes.semantic.forEach((row, rank) => {
      const u = credit(s, 'symbol', row.row.id, 'ranked', row.coverage, 0);
      u.symbol = row.row;
      u.semantic = WEIGHT.semantic / (RRF_K + rank);
    });
  }
  merged((l) => l.rankedFiles).forEach(({ row, s }, rank) => {
    credit(s, 'file', row.fileId, 'ranked', row.coverage, ((row.owned ? OWNED_FILE_FACTOR : 1) * WEIGHT.rankedFiles) / (RRF_K + rank)).file = row;
  });
  // A literal line match is binary: every match earns the same weight.
  for (const s of sources) {
    for (const row of s.lanes.content) {
      const u = credit(s, 'file', row.fileId, 'content', row.coverage, WEIGHT.content / RRF_K);
      u.file ??= row;
      u.literal = row;
    }
  }
  const wantsTests = ASKS_FOR_TESTS.test(literal);
  const wantsPrivate = /(^|\s)_/.test(literal);
  for (const u of units.values()) {
    u.score = u.score * MISSING_WORD_FACTOR ** Math.max(0, words - u.coverage) + u.semantic;
    if (!wantsTests && TEST_PATH.test(pathOf(u))) u.score *= TEST_CODE_FACTOR;
    if (!wantsPrivate && u.symbol && PRIVATE_PART.test(u.symbol.qname)) u.score *= PRIVATE_FACTOR;
  }
  return [...units.values()].sort(
    (a, b) =>
      b.score - a.score ||
      cmp(pathOf(a), pathOf(b)) ||
      startOf(a) - startOf(b) ||
      cmp(a.kind, b.kind) ||
      cmp(a.key, b.key),
  );
}

/**
 * Adds the walk to the fused units: a symbol both lanes reached keeps its lexical place and
 * score and gains its route; the rest follow in walk order. A pure walk scores 1 / distance.
 */
export function joinWalk(units: Unit[], hits: readonly WalkedHit[], store: Store, pure: boolean): void {
  const index = new Map(units.filter((u) => u.key.startsWith('i:symbol:')).map((u) => [u.symbol!.id, u]));
  for (const h of hits) {
    const u = index.get(h.row.id);
    if (u) {
      u.lanes.add('relationship');
      u.walked = h;
      continue;
    }
    units.push({
      key: `i:symbol:${h.row.id}`, store, kind: 'symbol', symbol: h.row, lanes: new Set(['relationship']),
      coverage: 0, score: pure ? 1 / h.distance : 0, semantic: 0, walked: h,
    });
  }
}

function pathOf(u: Unit): string {
  return u.symbol?.path ?? u.file!.path;
}

function startOf(u: Unit): number {
  return u.symbol ? u.symbol.span_start : (u.literal ?? u.file!).start;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
