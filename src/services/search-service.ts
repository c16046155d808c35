import { capabilityUnavailable, invalidField, limitExceeded } from '../core/errors.ts';
import { GlobSet, patternViolation } from '../core/glob.ts';
import { lineContentEnd, nextLineStart } from '../core/lines.ts';
import { FORCE_INCLUDE_FILES_MAX, SEARCH_LIMIT_DEFAULT } from '../core/limits.ts';
import type { ReadWarning } from '../protocol/common.ts';
import type { SearchInput, SearchResult } from '../protocol/search.ts';
import type { WorkspaceConfig } from '../config/workspace-config.ts';
import { Visibility } from '../workspace/visibility.ts';
import { walkWorkspace } from '../workspace/walk.ts';
import type { Indexer } from '../index/indexer.ts';
import { Store } from '../index/store.ts';
import { isCorruption } from '../index/store-open.ts';
import { specialMountsUnder } from '../workspace/special-fs.ts';
import { identifierLanes, rankedLanes, semanticLane, type FileHitRow, type LaneQuery, type Lanes } from '../index/search.ts';
import type { SemanticTier } from '../index/semantic.ts';
import { queryWords, wordTokens, type QueryWord } from '../index/text.ts';
import { fuse, identifierWordsOf, isProse, joinWalk, meaningfulWords, type Source, type Unit } from '../index/rank.ts';
import { ReadGate, pageLimit, pagination } from './read-gate.ts';
import { symbolRecord } from './read-service.ts';
import { checkTraversal, walkTraversal } from './traversal.ts';

// search: one ranked answer over declaration names, declaration sources and file
// contents, and (with [search.semantic]) the declarations nearest the query's meaning. This
// service checks the request, gathers the lanes of the index (and of the on-demand store
// `force_include` fills) and the semantic tier's, has index/rank.ts fuse them into one order,
// pages it and shapes each hit. Narrowing by paths happens inside every lane, before scoring,
// so a smaller limit is always a prefix of a larger one.

type Hit = SearchResult['results'][number];

export class SearchService {
  constructor(
    private readonly root: string,
    private readonly gate: ReadGate,
    private readonly indexer: Indexer,
    private readonly semantic: SemanticTier,
  ) {}

  search(input: SearchInput): Promise<SearchResult> {
    return this.gate.answer(() => this.rank(input));
  }

  private async rank(input: SearchInput): Promise<SearchResult> {
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
    const rev = input.rev === undefined ? null : await this.gate.admitRevision(input.rev);
    const config = rev ? rev.config : await this.gate.admit();
    // A walk follows relationships: it waits for a resolve pass running aside (see Indexer.graphResolved).
    if (traversal !== null) await this.indexer.graphResolved();
    const indexed = rev ? rev.snapshot.store : this.indexer.store;

    const includeSet = new GlobSet(selectors.include);
    const excludeSet = new GlobSet(selectors.exclude);
    const allWords = queryWords(literal);
    const q: LaneQuery = {
      words: meaningfulWords(allWords),
      identifierWords: identifierWordsOf(allWords),
      literal,
      prose: isProse(allWords),
      pathOk: includeSet.empty && excludeSet.empty ? null : (p) => (includeSet.empty || includeSet.matches(p)) && !excludeSet.matches(p),
      symbols: target !== 'file',
      files: target !== 'symbol',
    };
    const inPaths = q.pathOk ?? (() => true);
    // Found before anything is searched, so the bound holds whether or not the page needs them.
    const forced = selectors.force.length > 0 ? await this.forcedStore(config, selectors.force) : null;

    const warnings: ReadWarning[] = [];
    // The semantic tier answers for the working tree's declarations only. Its state is taken
    // before the query is embedded: vectors that land meanwhile may help the answer, but the
    // warning never claims more than the answer was sure to have.
    const preparing = semanticWarnings(this.semantic, false);
    const nearest = input.query !== undefined && input.rev === undefined && target !== 'file' ? await this.semantic.nearest(literal) : null;
    warnings.push(...semanticWarnings(this.semantic, true), ...preparing);
    // Synchronous from here: the walk and the lanes read one committed state of the store.
    const walked = traversal === null ? null : walkTraversal(this.indexer, config, traversal, input.traversal!);
    if (walked) warnings.push(...walked.warnings);
    const sources: Source[] = [];
    for (const [tag, store] of input.query === undefined ? [] : ([['i', indexed], ['f', forced]] as const)) {
      if (!store) continue;
      let ranked: Pick<Lanes, 'rankedSymbols' | 'rankedFiles'> = { rankedSymbols: [], rankedFiles: [] };
      try {
        ranked = rankedLanes(store, q);
        if (tag === 'i' && !store.hasFullText() && store.counts().files > 0) {
          warnings.push(lexicalUnavailable('the full-text tier holds no indexed tree; run `rift index` to rebuild it'));
        }
      } catch (err) {
        // This answer falls back to identifiers; a corrupt store is also set aside and rebuilt.
        if (tag === 'i' && isCorruption(err)) this.indexer.storeFault(err);
        if (tag === 'i') warnings.push(lexicalUnavailable(`the full-text tier failed to load: ${(err as Error).message}`));
      }
      const semantic = tag === 'i' && nearest ? semanticLane(store, nearest, inPaths) : [];
      sources.push({ tag, store, lanes: { ...ranked, ...identifierLanes(store, q), semantic } });
    }
    const units = fuse(sources, literal, q.words.length);
    if (walked && target !== 'file') joinWalk(units, walked.hits.filter((h) => inPaths(h.row.path)), this.indexer.store, input.query === undefined);
    const total = units.length;
    const page = units.slice(pageIndex * limit, pageIndex * limit + limit);
    const results = page.map((u) => toHit(u, q.words, include));
    forced?.close();
    if (rev) return { results, pagination: pagination(pageIndex, total, limit), revision: rev.snapshot.commit, warnings };
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
    const walk = await walkWorkspace(this.root, Visibility.fromGitignores(policy, new Map(), specialMountsUnder(this.root)), policy);
    const matched = walk.files.filter((f) => !this.indexer.isVisible(f.path));
    if (matched.length > FORCE_INCLUDE_FILES_MAX) {
      throw limitExceeded('paths.force_include', FORCE_INCLUDE_FILES_MAX, matched.length);
    }
    const selection = this.indexer.currentSelection();
    const store = Store.memory(this.root);
    const items = matched.map((f) => ({ ...selection.item(f.path), keepContent: true, relations: false }));
    const outcomes = await this.indexer.parseDetached(items, config.source.max_file_bytes);
    store.applyBatch(outcomes.flatMap((o) => (o.ok ? [o] : [])), [], []);
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

/** What the semantic tier says about itself: `unavailable` selects which of its two warnings. */
function semanticWarnings(tier: SemanticTier, unavailable: boolean): ReadWarning[] {
  const status = tier.status();
  if (status.kind === 'unavailable' && unavailable) {
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
  for (; start < bytes.length; start = nextLineStart(bytes, start), line++) {
    const end = lineContentEnd(bytes, start);
    const tokens = new Set(wordTokens(utf8.decode(bytes.subarray(start, end))));
    const count = words.filter((w) => w.tokens.every((t) => tokens.has(t))).length;
    if (count > best.count) best = { start: chunk.start + start, end: chunk.start + end, line, count };
  }
  return best;
}
