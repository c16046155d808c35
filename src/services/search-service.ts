import { capabilityUnavailable, invalidField, limitExceeded } from '../core/errors.ts';
import { GlobSet, patternViolation } from '../core/glob.ts';
import { FORCE_INCLUDE_FILES_MAX, SEARCH_LIMIT_DEFAULT } from '../core/limits.ts';
import type { ReadWarning } from '../protocol/common.ts';
import type { SearchInput, SearchResult } from '../protocol/search.ts';
import type { WorkspaceConfig } from '../config/workspace-config.ts';
import { Visibility } from '../workspace/visibility.ts';
import { walkWorkspace } from '../workspace/walk.ts';
import type { Indexer } from '../index/indexer.ts';
import type { SemanticHit, SemanticTier } from '../index/semantic.ts';
import { Store } from '../index/store.ts';
import { runParseItem } from '../index/parse-job.ts';
import { identifierLanes, rankedLanes, semanticLane, type FileHitRow, type LaneQuery, type Lanes, type SymbolHitRow } from '../index/search.ts';
import { queryWords, wordTokens, type QueryWord } from '../index/text.ts';
import { ReadGate, pageLimit, pagination } from './read-gate.ts';
import { symbolRecord } from './read-service.ts';
import { checkTraversal, walkTraversal, type WalkedHit } from './traversal.ts';

// search: one ranked answer over declaration names, declaration sources and file
// contents, and (with [search.semantic]) the declarations nearest the query's meaning. Lanes
// (see index/search.ts) are fused with reciprocal-rank fusion into one score that orders the
// page exactly: lane credits, discounted for each query word a unit does not carry, plus the
// semantic credit, discounted for test code; ties by path, range start, and identity
// (docs/mcp.md, "Search ranking"). Narrowing by paths happens inside every lane, before
// scoring, so a smaller limit is always a prefix of a larger one.

type Hit = SearchResult['results'][number];
type Lane = 'ranked' | 'name' | 'content' | 'relationship';

/** Reciprocal-rank fusion constant and per-lane weights. */
const RRF_K = 60;
const WEIGHT = { rankedSymbols: 1, rankedFiles: 1, content: 0.5, semantic: 1 } as const;
/** Identifier-tier weight by match level: exact name, exact qualified name, prefix, camel/snake part. */
const NAME_LEVEL_WEIGHT = [3, 3, 1.5, 0.75] as const;
/** Test code ranks below the code it tests, unless the query asks for tests. */
const TEST_CODE_FACTOR = 0.25;
/** Each query word a unit does not carry multiplies its score by this. */
const MISSING_WORD_FACTOR = 0.5;
/** A file hit whose best chunk lies inside a declaration: the declaration is the better answer. */
const OWNED_FILE_FACTOR = 0.25;
/** A query of more words than this is read as prose (stop words name nothing). */
const PROSE_WORDS_MIN = 2;
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
  /** The semantic tier's nearest declarations, best first (index store only). */
  semantic: SymbolHitRow[];
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
  /** The semantic lane's credit, kept apart: it needs no query word. */
  semantic: number;
  /** Set when the traversal reached it. */
  walked?: WalkedHit;
}

export class SearchService {
  constructor(
    private readonly root: string,
    private readonly gate: ReadGate,
    private readonly indexer: Indexer,
    private readonly semantic: SemanticTier,
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
    const allWords = queryWords(literal);
    const words = meaningfulWords(allWords);
    const q: LaneQuery = {
      words,
      // A stop word is a name only in a short query (`shutil which`); in a sentence it would
      // match every declaration named `a` or `is`.
      identifierWords: allWords.length > PROSE_WORDS_MIN ? words : allWords,
      literal,
      pathOk: (p) => (includeSet.empty || includeSet.matches(p)) && !excludeSet.matches(p),
      symbols: target !== 'file',
      files: target !== 'symbol',
    };
    // Found before anything is searched, so the bound holds whether or not the page needs them.
    const forced = selectors.force.length > 0 ? await this.forcedStore(config, selectors.force) : null;

    const warnings: ReadWarning[] = [];
    // The semantic tier answers for the working tree's declarations only.
    // Its state is taken before the query is embedded: vectors that land meanwhile may help the
    // answer, but the warning never claims more than the answer was sure to have.
    const preparing = semanticWarnings(this.semantic, false);
    const nearest = input.query !== undefined && input.rev === undefined && target !== 'file' ? await this.semantic.nearest(literal) : null;
    warnings.push(...semanticWarnings(this.semantic, true), ...preparing);
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
      const semanticRows = tag === 'i' && nearest ? semanticLane(store, nearest, q.pathOk) : [];
      sources.push({ tag, store, lanes: { ...ranked, ...identifierLanes(store, q) }, semantic: semanticRows });
    }
    const units = fuse(sources, q.words.length, /\btests?\b/i.test(literal));
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

/** What the semantic tier says about itself on every answer while it is enabled and not ready. */
function semanticWarnings(tier: SemanticTier, unavailable: boolean): ReadWarning[] {
  const status = tier.status();
  if (status.kind === 'unavailable') {
    if (!unavailable) return [];
    return [{ kind: 'semantic_ranking_unavailable', message: `semantic ranking is unavailable for the life of this server: ${status.reason}`, reason: status.reason }];
  }
  if (status.kind === 'preparing' && !unavailable) {
    return [{
      kind: 'semantic_index_preparing',
      message: `semantic ranking is still being built: ${status.prepared} of ${status.total} declarations carry a vector`,
      prepared: status.prepared,
      total: status.total,
    }];
  }
  return [];
}

function lexicalUnavailable(reason: string): ReadWarning {
  return {
    kind: 'lexical_ranking_unavailable',
    message: `ranking fell back to identifier matching: ${reason}`,
    reason,
  };
}

/**
 * Reciprocal-rank fusion of every lane of every store into one total order: the sum of a
 * unit's lane credits, times MISSING_WORD_FACTOR for each of the `words` query words it does
 * not carry, times TEST_CODE_FACTOR for test code, is its `score`, and the order is by that
 * score alone (ties by path, range start and identity), so `score` orders every page.
 */
function fuse(sources: readonly Source[], words: number, wantsTests: boolean): Unit[] {
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
  // Only the index store has a semantic lane, so its own order is the lane's.
  for (const s of sources) {
    s.semantic.forEach((row, rank) => {
      const u = credit(s, 'symbol', row.row.id, 'ranked', row.coverage, 0);
      u.symbol = row.row;
      u.semantic = WEIGHT.semantic / (RRF_K + rank);
    });
  }
  merged((l) => l.rankedFiles).forEach(({ row, s }, rank) => {
    credit(s, 'file', row.fileId, 'ranked', row.coverage, (row.owned ? OWNED_FILE_FACTOR : 1) * WEIGHT.rankedFiles / (RRF_K + rank)).file = row;
  });
  // A literal line match is binary: every match earns the same weight.
  for (const s of sources) {
    for (const row of s.lanes.content) {
      const u = credit(s, 'file', row.fileId, 'content', row.coverage, WEIGHT.content / RRF_K);
      u.file ??= row;
      u.literal = row;
    }
  }
  for (const u of units.values()) {
    u.score = u.score * MISSING_WORD_FACTOR ** Math.max(0, words - u.coverage) + u.semantic;
    if (!wantsTests && TEST_PATH.test(pathOf(u))) u.score *= TEST_CODE_FACTOR;
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
