import { capabilityUnavailable, invalidField, limitExceeded } from '../core/errors.ts';
import { GlobSet, patternViolation } from '../core/glob.ts';
import { FORCE_INCLUDE_FILES_MAX, SEARCH_LIMIT_DEFAULT } from '../core/limits.ts';
import type { ReadWarning } from '../protocol/common.ts';
import type { SearchInput, SearchResult } from '../protocol/search.ts';
import type { WorkspaceConfig } from '../config/workspace-config.ts';
import { Visibility } from '../workspace/visibility.ts';
import { walkWorkspace } from '../workspace/walk.ts';
import type { Indexer } from '../index/indexer.ts';
import { Store } from '../index/store.ts';
import { runParseItem } from '../index/parse-job.ts';
import { identifierLanes, rankedLanes, type FileHitRow, type LaneQuery, type Lanes, type SymbolHitRow } from '../index/search.ts';
import { queryWords, wordTokens, type QueryWord } from '../index/text.ts';
import { ReadGate, pageLimit, pagination } from './read-gate.ts';
import { symbolRecord } from './read-service.ts';
import { checkTraversal, walkTraversal, type WalkedHit } from './traversal.ts';

// search: one ranked answer over declaration names, declaration sources and file
// contents. Lanes (see index/search.ts) are fused with reciprocal-rank fusion into one
// total order: more query words carried first, then the fused score, then path, range
// start, and identity. Narrowing by paths happens inside every lane, before scoring, so
// a smaller limit is always a prefix of a larger one.

type Hit = SearchResult['results'][number];
type Lane = 'ranked' | 'name' | 'content' | 'relationship';

/** Reciprocal-rank fusion constant and per-lane weights. */
const RRF_K = 60;
const WEIGHT = { rankedSymbols: 1, rankedFiles: 1, content: 0.5 } as const;
/** Identifier-tier weight by match level: exact name, exact qualified name, prefix, camel/snake part. */
const NAME_LEVEL_WEIGHT = [3, 3, 1.5, 0.75] as const;
/** Test code ranks below the code it tests, unless the query asks for tests. */
const TEST_CODE_FACTOR = 0.5;
const TEST_PATH = /(^|\/)(tests?|testing|__tests__)\/|(^|\/)test_[^/]*$|_test\.[a-z]+$/;

// Words that carry no meaning of their own in a prose query; dropped when others remain.
const STOP_WORDS = new Set(
  'a an and are as at be by do does for from how in into is it of on or that the this to use using what when where which with'.split(' '),
);

/** One store's lanes; `tag` keeps units of the index and of the forced store apart. */
interface Source {
  tag: string;
  store: Store;
  lanes: Lanes;
}

interface Unit {
  key: string;
  store: Store;
  kind: 'symbol' | 'file';
  symbol?: SymbolHitRow['row'];
  file?: FileHitRow;
  literal?: FileHitRow;
  lanes: Set<Lane>;
  coverage: number;
  score: number;
  /** Set when the traversal reached it. */
  walked?: WalkedHit;
}

export class SearchService {
  constructor(
    private readonly root: string,
    private readonly gate: ReadGate,
    private readonly indexer: Indexer,
  ) {}

  async search(input: SearchInput): Promise<SearchResult> {
    if (input.query === undefined && input.traversal === undefined) throw invalidField('query', 'missing');
    const literal = input.query?.trim() ?? '';
    if (input.query !== undefined && literal.length === 0) throw invalidField('query', 'empty');
    const limit = pageLimit(input.limit, SEARCH_LIMIT_DEFAULT);
    const pageIndex = input.page_index ?? 0;
    const include = new Set(input.include ?? []);
    const target = input.target ?? 'all';
    const selectors = {
      include: checkPatterns(input.paths?.include),
      exclude: checkPatterns(input.paths?.exclude),
      force: checkPatterns(input.paths?.force_include),
    };
    ReadGate.checkRevisionSpelling(input.rev);
    const traversal = input.traversal === undefined ? null : checkTraversal(input.traversal, input.rev);
    if (input.rev !== undefined && selectors.force.length > 0) throw capabilityUnavailable('force_include at a revision');
    const config = await this.gate.admit(input.rev);

    const includeSet = new GlobSet(selectors.include);
    const excludeSet = new GlobSet(selectors.exclude);
    const identifierWords = queryWords(literal);
    const q: LaneQuery = {
      words: meaningfulWords(identifierWords),
      identifierWords,
      literal,
      pathOk: (p) => (includeSet.empty || includeSet.matches(p)) && !excludeSet.matches(p),
      symbols: target !== 'file',
      files: target !== 'symbol',
    };
    // Found before anything is searched, so the bound holds whether or not the page needs them.
    const forced = selectors.force.length > 0 ? await this.forcedStore(config, selectors.force) : null;

    const warnings: ReadWarning[] = [];
    // Synchronous from here: the walk and the lanes read one committed state of the store.
    const walked = traversal === null ? null : walkTraversal(this.indexer, config, traversal, input.traversal!);
    if (walked) warnings.push(...walked.warnings);
    const sources: Source[] = [];
    for (const [tag, store] of input.query === undefined ? [] : ([['i', this.indexer.store], ['f', forced]] as const)) {
      if (!store) continue;
      let ranked: Pick<Lanes, 'rankedSymbols' | 'rankedFiles'> = { rankedSymbols: [], rankedFiles: [] };
      try {
        ranked = rankedLanes(store, q);
        if (tag === 'i' && !store.hasFullText() && store.counts().files > 0) {
          warnings.push(lexicalUnavailable('the full-text tier holds no indexed tree; run `rift index` to rebuild it'));
        }
      } catch (err) {
        if (tag === 'i') warnings.push(lexicalUnavailable(`the full-text tier failed to load: ${(err as Error).message}`));
      }
      sources.push({ tag, store, lanes: { ...ranked, ...identifierLanes(store, q) } });
    }
    const units = fuse(sources, /\btests?\b/i.test(literal));
    if (walked && target !== 'file') joinWalk(units, walked.hits.filter((h) => q.pathOk(h.row.path)), this.indexer.store, input.query === undefined);
    const total = units.length;
    const page = units.slice(pageIndex * limit, pageIndex * limit + limit);
    const results = page.map((u) => toHit(u, q.words, include));
    forced?.close();
    return { results, pagination: pagination(pageIndex, total, limit), warnings: [...warnings, ...this.gate.warnings()] };
  }

  /**
   * Files `force_include` reaches that the index does not hold (excluded by [source] or
   * .gitignore; never the floor), parsed into a private in-memory store.
   */
  private async forcedStore(config: WorkspaceConfig, force: readonly string[]): Promise<Store> {
    // Only the floor and the force patterns apply, as an include: the walk then skips every
    // directory no pattern can reach instead of walking the whole tree.
    const policy = {
      include: force,
      exclude: [] as string[],
      respectGitignore: false,
      maxFileBytes: config.source.max_file_bytes,
      maxFiles: Number.MAX_SAFE_INTEGER,
    };
    const walk = await walkWorkspace(this.root, Visibility.fromGitignores(policy, new Map()), policy);
    const matched = walk.files.filter((f) => !this.indexer.isVisible(f.path));
    if (matched.length > FORCE_INCLUDE_FILES_MAX) {
      throw limitExceeded('paths.force_include', FORCE_INCLUDE_FILES_MAX, matched.length);
    }
    const selection = this.indexer.currentSelection();
    const store = Store.memory(this.root);
    const updates = [];
    for (const f of matched) {
      const outcome = runParseItem(this.root, config.source.max_file_bytes, { ...selection.item(f.path), keepContent: true, relations: false });
      if (outcome.ok) updates.push(outcome);
    }
    store.applyBatch(updates, [], []);
    return store;
  }
}

function checkPatterns(patterns: readonly string[] | undefined): string[] {
  for (const p of patterns ?? []) {
    const violation = patternViolation(p);
    if (violation) throw invalidField('paths', violation);
  }
  return [...(patterns ?? [])];
}

function meaningfulWords(words: QueryWord[]): QueryWord[] {
  const kept = words.filter((w) => !STOP_WORDS.has(w.text.toLowerCase()));
  return kept.length > 0 ? kept : words;
}

function lexicalUnavailable(reason: string): ReadWarning {
  return {
    kind: 'lexical_ranking_unavailable',
    message: `ranking fell back to identifier matching: ${reason}`,
    reason,
  };
}

/** Reciprocal-rank fusion of every lane of every store into one total order. */
function fuse(sources: readonly Source[], wantsTests: boolean): Unit[] {
  const units = new Map<string, Unit>();
  /** The unit a lane row names, credited with that lane, the row's coverage and `score`. */
  const credit = (s: Source, kind: 'symbol' | 'file', id: number, lane: Lane, coverage: number, score: number): Unit => {
    const key = `${s.tag}:${kind}:${id}`;
    let u = units.get(key);
    if (!u) {
      u = { key, store: s.store, kind, lanes: new Set(), coverage: 0, score: 0 };
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
    credit(s, 'symbol', row.row.id, 'name', row.coverage, NAME_LEVEL_WEIGHT[row.score] / (RRF_K + rank)).symbol = row.row;
  });
  merged((l) => l.rankedFiles).forEach(({ row, s }, rank) => {
    credit(s, 'file', row.fileId, 'ranked', row.coverage, WEIGHT.rankedFiles / (RRF_K + rank)).file = row;
  });
  // A literal line match is binary: every match earns the same weight.
  for (const s of sources) {
    for (const row of s.lanes.content) {
      const u = credit(s, 'file', row.fileId, 'content', row.coverage, WEIGHT.content / RRF_K);
      u.file ??= row;
      u.literal = row;
    }
  }
  if (!wantsTests) for (const u of units.values()) if (TEST_PATH.test(pathOf(u))) u.score *= TEST_CODE_FACTOR;
  return [...units.values()].sort(
    (a, b) =>
      b.coverage - a.coverage ||
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
function joinWalk(units: Unit[], hits: readonly WalkedHit[], store: Store, pure: boolean): void {
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
      coverage: 0, score: pure ? 1 / h.distance : 0, walked: h,
    });
  }
}

function pathOf(u: Unit): string {
  return u.symbol?.path ?? u.file!.path;
}

function startOf(u: Unit): number {
  return u.symbol ? u.symbol.span_start : (u.literal ?? u.file!).start;
}

const utf8 = new TextDecoder('utf-8');

function toHit(u: Unit, words: readonly QueryWord[], include: ReadonlySet<string>): Hit {
  const matched_by = (['ranked', 'name', 'content', 'relationship'] as const).filter((l) => u.lanes.has(l));
  let hit: Hit;
  if (u.symbol) {
    const row = u.symbol;
    hit = {
      hit: { target: 'symbol', symbol: symbolRecord(row) },
      matched_by,
      range: { start: row.span_start, end: row.span_end },
      line: row.line,
      path: row.path,
    };
  } else {
    const file = u.file!;
    // Only the best chunk is read, not the whole file.
    const chunk = u.literal ? null : u.store.indexedRange(file.path, file.start, file.end);
    const at = u.literal ?? (chunk ? bestLine(chunk, file, words) : file);
    const target: Hit['hit'] = { target: 'file', size: file.size };
    if (file.language) target.languages = [file.language];
    hit = { hit: target, matched_by, range: { start: at.start, end: at.end }, line: at.line, path: file.path };
  }
  if (include.has('source')) {
    // A file changed behind the index serves no source: the result warns `stale_index` instead.
    const bytes = u.store.indexedRange(hit.path, hit.range.start, hit.range.end);
    hit.source = bytes ? utf8.decode(bytes) : '';
  }
  if (include.has('score')) hit.score = u.score;
  if (u.walked) {
    hit.traversal_path = u.walked.path;
    hit.distance = u.walked.distance;
  }
  return hit;
}

/**
 * Within a file's best chunk (`bytes` holds exactly `chunk.start..chunk.end`), the first line
 * carrying the most query words, its ending excluded; offsets are the file's.
 */
function bestLine(bytes: Uint8Array, chunk: FileHitRow, words: readonly QueryWord[]): { start: number; end: number; line: number } {
  let best = { start: chunk.start, end: chunk.start, line: chunk.line, count: -1 };
  let start = 0;
  let line = chunk.line;
  while (start < bytes.length) {
    let end = bytes.indexOf(0x0a, start);
    if (end < 0) end = bytes.length;
    let textEnd = end;
    if (textEnd > start && bytes[textEnd - 1] === 0x0d) textEnd--;
    const tokens = new Set(wordTokens(utf8.decode(bytes.subarray(start, textEnd))));
    const count = words.filter((w) => w.tokens.every((t) => tokens.has(t))).length;
    if (count > best.count) best = { start: chunk.start + start, end: chunk.start + textEnd, line, count };
    start = end + 1;
    line++;
  }
  return best;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
