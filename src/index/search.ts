import { countBreaks, lineAt } from '../core/lines.ts';
import { CHUNK_JOINS, SYMBOL_COLUMNS, SYMBOL_FROM, SYMBOL_JOINS, EXACT_NAME_IDS, type Store, type SymbolRow } from './store.ts';
import { abbreviations, anyStemmed, nameKey, phrase, proseStem, stemVariants, stemmed, type QueryWord } from './text.ts';

// The lanes of one search over one store. Each lane returns its own ranked list; the
// search service fuses lanes (and stores, for on-demand files) into one total order.
//   ranked-symbols  FTS5/BM25 over declaration names, documentation and own text, field-weighted
//   ranked-files    FTS5/BM25 over line-aligned chunks of every full-text file
//   names           identifier tier: exact, qualified, prefix, camelCase/snake_case part
//   content         literal line matcher: the query's exact bytes on one line

/** Candidates a lane considers; bounds the work of one query whatever the tree's size. */
const LANE_CANDIDATES_MAX = 500;

export interface LaneQuery {
  /** Words the ranked lanes score (common English words dropped from prose). */
  words: readonly QueryWord[];
  /** Every word, for the identifier tier (`which` is a name in `shutil which`). */
  identifierWords: readonly QueryWord[];
  /** The query's literal text (trimmed) for the line matcher. */
  literal: string;
  /** Whether the query reads as a sentence (`isProse`): its ranked lanes then weigh documentation over names. */
  prose: boolean;
  /** Path narrowing applied before scoring; null when every path is in (the SQL then calls no filter per row). */
  pathOk: ((path: string) => boolean) | null;
  symbols: boolean;
  files: boolean;
}

export interface SymbolHitRow {
  row: SymbolRow;
  /** Lane-native score: BM25 (lower is better) or identifier level. */
  score: number;
  /** Distinct query words the unit carries. */
  coverage: number;
}

export interface FileHitRow {
  fileId: number;
  path: string;
  size: number;
  language: string | null;
  /** The best chunk (ranked lane) or the matched line (content lane). */
  start: number;
  end: number;
  line: number;
  score: number;
  coverage: number;
  /** Ranked lane: whether the best chunk lies inside a declaration (which is then the better answer). */
  owned?: boolean;
}

export interface Lanes {
  rankedSymbols: SymbolHitRow[];
  rankedFiles: FileHitRow[];
  names: SymbolHitRow[];
  content: FileHitRow[];
  /** The semantic tier's nearest declarations, best first (the index store only). */
  semantic: SymbolHitRow[];
}



/** Runs the ranked lanes the query asks for. Throws when the full-text tables cannot be read. */
export function rankedLanes(store: Store, q: LaneQuery): Pick<Lanes, 'rankedSymbols' | 'rankedFiles'> {
  const words = withVariants(store, q.words);
  // Short forms (`tmp`, `dir`) name things in declaration names; in bodies they are mostly locals.
  // `named[i]` is `words[i]` with them.
  const named = q.symbols ? withShortForms(store, words) : words;
  return store.withPathFilter(q.pathOk, () => {
    if (words.length === 0 || (!q.symbols && !q.files)) return { rankedSymbols: [], rankedFiles: [] };
    const body = selective(store, 'chunks_fts', words);
    // The chunks are scored once for both lanes: a declaration's body is its best chunk.
    const chunks = scoredChunks(store, body, { owned: q.symbols, any: q.files });
    const matches = new Matches(store);
    return {
      rankedSymbols: q.symbols
        ? rankedSymbols(store, matches, q.prose ? PROSE_FIELDS : IDENTIFIER_FIELDS, {
            name: selective(store, 'symbols_fts', named),
            doc: selective(store, 'docs_fts', words),
            body,
          }, chunks.owned, words, named)
        : [],
      rankedFiles: q.files ? rankedFiles(matches, body, chunks.any) : [],
    };
  });
}

/** A chunk the words match, with the file holding it and its BM25 score. */
type ScoredChunk = Omit<FileHitRow, 'coverage' | 'owned'> & {
  chunk: number;
  /** The declaration whose own text the chunk is, or null. */
  owner: number | null;
};

/**
 * The best chunks the words match, scored in one pass for the lanes that want them: `owned`,
 * the best 2 × LANE_CANDIDATES_MAX inside a declaration (the ranked-symbols lane's body field);
 * `any`, the best 2 × LANE_CANDIDATES_MAX of all (the ranked-files lane).
 */
function scoredChunks(store: Store, words: readonly QueryWord[], want: { owned: boolean; any: boolean }): { owned: ScoredChunk[]; any: ScoredChunk[] } {
  const views = [
    ...(want.owned ? [{ where: 'owner IS NOT NULL', limit: LANE_CANDIDATES_MAX * 2 }] : []),
    ...(want.any ? [{ where: null, limit: LANE_CANDIDATES_MAX * 2 }] : []),
  ];
  const found = bestScored<ScoredChunk>(store, `search.chunks.${want.owned}.${want.any}`, 'chunks_fts', words, {
    matches: `SELECT c.id AS chunk, c.symbol_id AS owner, f.id AS fileId, f.path, f.size, b.language, c.start, c.end, c.line,
        bm25(chunks_fts) AS score
      FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid ${CHUNK_JOINS}
      WHERE chunks_fts MATCH @match AND rift_path_ok(f.path)`,
    tie: ['chunk', 'fileId'],
    views,
  });
  return { owned: want.owned ? found[0] : [], any: want.any ? found.at(-1)! : [] };
}

/** The query words with each prose word's stem variants (stem + a known suffix) that the index holds. */
function withVariants(store: Store, words: readonly QueryWord[]): QueryWord[] {
  if (!words.some((w) => proseStem(w) !== null)) return [...words];
  return words.map((w) => {
    const stem = proseStem(w);
    return stem === null ? w : { ...w, variants: indexedTerms(store, stemVariants(stem), w) };
  });
}

/** `words` (from withVariants) with each prose word's short forms (`dir` for "directory") that the index holds added; `words` itself when none has any. */
function withShortForms(store: Store, words: readonly QueryWord[]): readonly QueryWord[] {
  if (!words.some((w) => abbreviations(w).length > 0)) return words;
  return words.map((w) => {
    const short = indexedTerms(store, abbreviations(w), w).filter((t) => !w.variants?.includes(t));
    return short.length === 0 ? w : { ...w, variants: [...(w.variants ?? []), ...short] };
  });
}

/** The spellings other than the word itself that the index's vocabulary holds. */
function indexedTerms(store: Store, spellings: readonly string[], w: QueryWord): string[] {
  const lookup = store.prepared('search.stemVariants', `SELECT term FROM ${store.vocabulary('chunks_fts')} WHERE term = ?`);
  return spellings.filter((t) => t !== w.tokens[0] && lookup.get(t) !== undefined);
}

/** A word in more than this share of a table's rows says little and costs most; it is left out. */
const COMMON_WORD_SHARE = 0.05;

/** The table whose row ids a full-text table's rows carry (docs_fts: a declaration's). */
function rowsOf(table: 'symbols_fts' | 'chunks_fts' | 'docs_fts'): 'symbols' | 'chunks' {
  return table === 'chunks_fts' ? 'chunks' : 'symbols';
}

/**
 * The words worth scoring in one table. A word whose rarest token sits in more than 5 % of
 * the rows and in more rows than a lane considers (`def`, `self`, `if` in a large tree)
 * would flood the candidates and decide nothing, so it is dropped — keeping at least the
 * rarest word. In a small tree every word counts.
 */
function selective(store: Store, table: 'symbols_fts' | 'chunks_fts' | 'docs_fts', words: readonly QueryWord[]): readonly QueryWord[] {
  if (words.length < 2) return words;
  const vocab = store.vocabulary(table);
  const rows = store.rowCount(rowsOf(table));
  const docs = store.prepared(`selective.docs.${table}`, `SELECT doc FROM ${vocab} WHERE term = ?`);
  const scored = words.map((w) => ({ w, docs: Math.min(...w.tokens.map((t) => (docs.get(t) as { doc: number } | undefined)?.doc ?? 0)) }));
  const kept = scored.filter((x) => x.docs <= Math.max(COMMON_WORD_SHARE * rows, LANE_CANDIDATES_MAX)).map((x) => x.w);
  return kept.length > 0 ? kept : [scored.reduce((a, b) => (b.docs < a.docs ? b : a)).w];
}

export function identifierLanes(store: Store, q: LaneQuery): Pick<Lanes, 'names' | 'content'> {
  return store.withPathFilter(q.pathOk, () => ({
    names: q.symbols ? names(store, q.identifierWords) : [],
    content: q.files ? content(store, q) : [],
  }));
}

/** Field weights of the ranked-symbols lane: each field's BM25 (its own length and word rarity) times its weight. */
interface FieldWeights {
  name: number;
  doc: number;
  body: number;
}
/** An identifier-like query is about names: a name match counts three times a match in the text. */
const IDENTIFIER_FIELDS: FieldWeights = { name: 3, doc: 1, body: 1 };
/**
 * A sentence is about what code does, which its documentation says in words: a doc match
 * counts most, and a name carrying one common verb of the sentence (`read`) no more than the body.
 */
const PROSE_FIELDS: FieldWeights = { name: 1, doc: 3, body: 1 };

/**
 * Declarations ranked by BM25 over three fields — the name, the documentation (docs_fts) and
 * the declaration's own text (the chunks it owns, so the text is indexed once, for files and
 * declarations alike) — each field scored against its own lengths and word counts and
 * weighted (`FieldWeights`), the body by its best chunk. Coverage counts the words its name or
 * its chunks carry (the chunks hold its documentation too).
 */
function rankedSymbols(
  store: Store,
  matches: Matches,
  weights: FieldWeights,
  words: Record<keyof FieldWeights, readonly QueryWord[]>,
  bodyChunks: readonly ScoredChunk[],
  plain: readonly QueryWord[],
  named: readonly QueryWord[],
): SymbolHitRow[] {
  // The name and documentation fields: one row per declaration, the rowid its id.
  const byField = (table: 'symbols_fts' | 'docs_fts', fieldWords: readonly QueryWord[]) =>
    bestScored<{ id: number; score: number }>(store, `search.rankedSymbols.${table}`, table, fieldWords, {
      matches: `SELECT s.id, bm25(${table}) AS score
        FROM ${table} JOIN symbols s ON s.id = ${table}.rowid ${SYMBOL_JOINS}
        WHERE ${table} MATCH @match AND rift_path_ok(f.path)`,
      tie: ['id'],
      views: [{ where: null, limit: LANE_CANDIDATES_MAX }],
    })[0];
  const byName = byField('symbols_fts', words.name);
  const byDoc = byField('docs_fts', words.doc);
  // The body: a declaration's best chunk.
  const bodyScores = new Map<number, number>();
  for (const r of bodyChunks) if (!bodyScores.has(r.owner!)) bodyScores.set(r.owner!, r.score);
  const byBody = [...bodyScores].map(([id, score]) => ({ id, score }));
  const scores = new Map<number, number>();
  const add = (rows: Array<{ id: number; score: number }>, weight: number) => {
    for (const r of rows) scores.set(r.id, (scores.get(r.id) ?? 0) + weight * r.score);
  };
  add(byName, weights.name);
  add(byDoc, weights.doc);
  add(byBody, weights.body);
  const ranked = [...scores].sort((a, b) => a[1] - b[1] || a[0] - b[0]).slice(0, LANE_CANDIDATES_MAX);
  if (ranked.length === 0) return [];
  const ids = ranked.map(([id]) => id);
  const rows = new Map(
    (store.prepared('search.rankedSymbols.rows', `SELECT ${SYMBOL_COLUMNS} FROM ${SYMBOL_FROM} WHERE s.id IN (SELECT value FROM json_each(@ids))`)
      .all({ ids: JSON.stringify(ids) }) as SymbolRow[]).map((r) => [r.id, r]),
  );
  // Each query word scored in the name or the body counts once: the name table is asked with the
  // word's short forms, the body without (the same word, by its place in the query).
  const covered = named.map((name, i) => ({ name, body: plain[i] })).filter((p) => words.name.includes(p.name) || words.body.includes(p.body));
  const coverage = symbolCoverage(matches, covered, ids);
  return ranked.filter(([id]) => rows.has(id)).map(([id, score]) => ({ row: rows.get(id)!, score, coverage: coverage.get(id) ?? 1 }));
}

/**
 * Rows a ranked query scores at most: BM25 is computed for every row a word's list holds, so a
 * word in millions of rows (\`self\` in 32 stdlib copies: 1.8 million chunks, 2 s) would make
 * the cost of one query grow with the tree. Scoring a row with its joins costs ~5 µs; 5,000
 * rows ranked the relevance sets as 20,000 did (bench/ranking.ts) at a quarter of the cost.
 */
const SCORED_ROWS_MAX = scoredRowsMax();

/** SCORED_ROWS_MAX: 5,000, or RIFT_SEARCH_SCORED_ROWS (a positive integer) where tests need a small tree to reach it. */
function scoredRowsMax(): number {
  const env = Number(process.env.RIFT_SEARCH_SCORED_ROWS);
  return Number.isInteger(env) && env > 0 ? env : 5_000;
}

/**
 * A ranked query: \`matches\` selects every row the words match (\`@match\`: any of them) with
 * its BM25 \`score\`; each view is the best \`limit\` of those rows passing its \`where\` (over
 * the selected columns), by score then the \`tie\` columns.
 */
interface RankedQuery {
  matches: string;
  tie: readonly string[];
  views: ReadonlyArray<{ where: string | null; limit: number }>;
}

/**
 * The best rows of a ranked query, one list per view, every match scored once whatever the
 * views. Up to SCORED_ROWS_MAX matches, every one is scored and the answer is exact. Past it,
 * an even sample of about SCORED_ROWS_MAX matches is scored — every k-th row id (no part of the
 * tree favoured), k told from how far into the row ids the first SCORED_ROWS_MAX matches
 * reach — together with the rows carrying every word (exact while they fit, sampled alike
 * beyond): the rows that rank first are not left to the sample.
 */
function bestScored<T extends { score: number }>(
  store: Store,
  key: string,
  table: 'symbols_fts' | 'docs_fts' | 'chunks_fts',
  words: readonly QueryWord[],
  q: RankedQuery,
): T[][] {
  const order = ['score', ...q.tie].join(', ');
  // One view reads the matches directly; several share them, scored once into a temporary table.
  const view = (i: number, from: string) => {
    const v = q.views[i];
    return `SELECT ${i} AS view, * FROM ${from}${v.where ? ` WHERE ${v.where}` : ''} ORDER BY ${order} LIMIT ${v.limit}`;
  };
  const select = (matches: string) =>
    q.views.length === 1
      ? view(0, `(${matches})`)
      : `WITH m AS MATERIALIZED (${matches}) ` + q.views.map((_, i) => `SELECT * FROM (${view(i, 'm')})`).join(' UNION ALL ');
  const run = (match: string): { views: T[][]; sampled: boolean } => {
    const every = sampleEvery(store, table, match);
    const rows = (
      every === null
        ? store.prepared(`${key}.all`, select(q.matches)).all({ match })
        : store.prepared(`${key}.sampled`, select(`${q.matches} AND ${table}.rowid % @every = 0`)).all({ match, every })
    ) as Array<T & { view: number }>;
    const views = q.views.map((): T[] => []);
    for (const { view, ...row } of rows) views[view].push(row as unknown as T);
    return { views, sampled: every !== null };
  };
  const any = run(anyStemmed(words));
  if (!any.sampled || words.length < 2) return any.views;
  // The sample may have passed over the rows carrying every word: they join it.
  const every = run(words.map((w) => stemmed(w)).join(' AND ')).views;
  const tie = (r: T) => q.tie.map((c) => (r as unknown as Record<string, number>)[c]);
  const byTie = (a: T, b: T) => {
    const x = tie(a);
    const y = tie(b);
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i] - y[i];
    return 0;
  };
  return any.views.map((rows, i) => {
    const seen = new Set(rows.map((r) => tie(r).join(':')));
    const merged = [...rows, ...every[i].filter((r) => !seen.has(tie(r).join(':')))];
    return merged.sort((a, b) => a.score - b.score || byTie(a, b)).slice(0, q.views[i].limit);
  });
}

/**
 * Null when \`match\` matches at most SCORED_ROWS_MAX rows of \`table\`; else the k of an even
 * sample of about that many (row ids divisible by k), k told from how far into the table's ids
 * the first SCORED_ROWS_MAX matches reach (no count of every match).
 */
function sampleEvery(store: Store, table: 'symbols_fts' | 'docs_fts' | 'chunks_fts', match: string): number | null {
  // The row id of the first match past the scored ones, read from the index alone (which stops there).
  const past = store
    .prepared(`search.past.${table}`, `SELECT rowid FROM ${table} WHERE ${table} MATCH @match LIMIT 1 OFFSET ${SCORED_ROWS_MAX}`)
    .pluck()
    .get({ match }) as number | undefined;
  if (past === undefined) return null;
  // Each alone, so SQLite reads either end of the table's ids rather than every row.
  const rows = rowsOf(table);
  const ids = store.prepared(`search.ids.${table}`, `SELECT (SELECT min(id) FROM ${rows}) AS lo, (SELECT max(id) FROM ${rows}) AS hi`).get() as { lo: number; hi: number };
  return Math.max(2, Math.ceil((ids.hi - ids.lo + 1) / Math.max(1, past - ids.lo + 1)));
}

/** How many distinct query words each declaration's name or own text carries. */
function symbolCoverage(matches: Matches, words: ReadonlyArray<{ name: QueryWord; body: QueryWord }>, ids: number[]): Map<number, number> {
  const counts = new Map<number, number>();
  if (words.length < 2) return counts;
  const idList = JSON.stringify(ids);
  const owned = matches.store.prepared(
    'search.coverage.owned',
    `SELECT id, symbol_id AS owner FROM chunks WHERE symbol_id IN (SELECT value FROM json_each(@ids))`,
  ).all({ ids: idList }) as Array<{ id: number; owner: number }>;
  const ownerOf = new Map(owned.map((r) => [r.id, r.owner]));
  const chunkIds = owned.map((r) => r.id);
  for (const w of words) {
    const carriers = new Set<number>(matches.among('symbols_fts', w.name, ids));
    for (const id of matches.among('chunks_fts', w.body, chunkIds)) carriers.add(ownerOf.get(id)!);
    for (const id of carriers) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

/** Rows of a token's doclist read whole before asking row by row instead, per candidate. */
const DOCLIST_READ_PER_CANDIDATE = 32;

/**
 * The rows among candidates that a word (stemmed) matches, for the lanes of one query. FTS5
 * answers \`rowid IN (…)\` by running the match once per listed row (~8 µs each, times the tokens
 * a stemmed word ORs), while reading a word's whole list of rows costs ~0.2 µs a row: a word in
 * fewer rows than a few dozen per candidate and token is read whole and intersected here (32
 * stdlib copies, 1,000 candidates: \`create\` and its four variants, 140,000 rows, 86 → 35 ms);
 * a commoner one is asked row by row. A list read whole serves the query's other lanes too, and
 * a list found too long is not read again for as many candidates or fewer.
 */
export class Matches {
  /** Per table and match: its rows in ascending order when read whole, else the most rows a read found it longer than. */
  private readonly lists = new Map<string, { rows: readonly number[] } | { longerThan: number }>();

  constructor(readonly store: Store) {}

  among(table: 'symbols_fts' | 'chunks_fts', word: QueryWord, ids: readonly number[]): number[] {
    if (ids.length === 0) return [];
    const match = stemmed(word);
    const key = `${table}\0${match}`;
    const cap = Math.max(1000, DOCLIST_READ_PER_CANDIDATE * (1 + (word.variants?.length ?? 0)) * ids.length);
    let list = this.lists.get(key);
    if (list === undefined || ('longerThan' in list && list.longerThan < cap)) {
      const rows = this.store
        .prepared(`search.doclist.${table}`, `SELECT rowid FROM ${table} WHERE ${table} MATCH @match ORDER BY rowid LIMIT @cap`)
        .pluck()
        .all({ match, cap }) as number[];
      list = rows.length < cap ? { rows } : { longerThan: cap };
      this.lists.set(key, list);
    }
    if ('rows' in list) {
      const rows = list.rows;
      return ids.filter((id) => holds(rows, id));
    }
    return this.store
      .prepared(`search.among.${table}`, `SELECT rowid FROM ${table} WHERE ${table} MATCH @match AND rowid IN (SELECT value FROM json_each(@ids))`)
      .pluck()
      .all({ match, ids: JSON.stringify(ids) }) as number[];
  }
}

/** Whether the ascending `sorted` holds `id` (binary search). */
function holds(sorted: readonly number[], id: number): boolean {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < sorted.length && sorted[lo] === id;
}

function rankedFiles(matches: Matches, words: readonly QueryWord[], chunks: readonly ScoredChunk[]): FileHitRow[] {
  const coverage = chunkCoverage(matches, words, chunks.map((c) => c.chunk));
  // One unit per file: its chunk carrying the most words, then the best score.
  const best = new Map<number, FileHitRow>();
  for (const { chunk, owner, ...c } of chunks) {
    const hit: FileHitRow = { ...c, owned: owner !== null, coverage: coverage.get(chunk) ?? 1 };
    const prev = best.get(c.fileId);
    if (!prev || hit.coverage > prev.coverage || (hit.coverage === prev.coverage && hit.score < prev.score)) best.set(c.fileId, hit);
  }
  return [...best.values()].sort((a, b) => b.coverage - a.coverage || a.score - b.score || a.fileId - b.fileId);
}

/** How many distinct query words each candidate chunk carries. */
function chunkCoverage(matches: Matches, words: readonly QueryWord[], ids: number[]): Map<number, number> {
  const counts = new Map<number, number>();
  if (words.length < 2 || ids.length === 0) return counts;
  for (const w of words) for (const id of matches.among('chunks_fts', w, ids)) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

/** Identifier tier: level 0 exact name, 1 exact qualified name, 2 name prefix, 3 camel/snake part. */
function names(store: Store, words: readonly QueryWord[]): SymbolHitRow[] {
  const byId = new Map<number, { row: SymbolRow; level: number; words: number }>();
  const exact = store.prepared(
    'search.names.exact',
    `SELECT ${SYMBOL_COLUMNS}, CASE WHEN s.name_lower = @lower THEN 0 ELSE 1 END AS level
     FROM ${SYMBOL_FROM}
     WHERE s.id IN (${EXACT_NAME_IDS}) AND rift_path_ok(f.path) LIMIT ${LANE_CANDIDATES_MAX}`,
  );
  // The part level reads the full-text tier; without it the identifier tier still answers. A
  // part in more names than a ranked lane scores (\`test\`) is read from an even sample of them.
  const part = (word: QueryWord) =>
    fullText(() => {
      const match = phrase(word, 'name');
      return store.prepared(
        'search.names.part',
        `SELECT ${SYMBOL_COLUMNS}, 3 AS level FROM symbols_fts JOIN symbols s ON s.id = symbols_fts.rowid ${SYMBOL_JOINS}
         WHERE symbols_fts MATCH @match AND symbols_fts.rowid % @every = 0 AND rift_path_ok(f.path)
         ORDER BY length(s.name), s.qname LIMIT ${LANE_CANDIDATES_MAX}`,
      ).all({ match, every: sampleEvery(store, 'symbols_fts', match) ?? 1 }) as Array<SymbolRow & { level: number }>;
    }) ?? [];
  for (const word of words) {
    const w = word.text.toLowerCase();
    const found = [
      ...(exact.all({ lower: w, key: nameKey(w) }) as Array<SymbolRow & { level: number }>),
      ...prefixed(store, w),
      ...part(word),
    ];
    const seen = new Set<number>();
    for (const r of found) {
      if (seen.has(r.id)) continue;
      seen.add(r.id);
      const prev = byId.get(r.id);
      if (!prev) byId.set(r.id, { row: r, level: r.level, words: 1 });
      else {
        prev.level = Math.min(prev.level, r.level);
        prev.words++;
      }
    }
  }
  return [...byId.values()]
    .sort(
      (a, b) =>
        b.words - a.words ||
        a.level - b.level ||
        a.row.name.length - b.row.name.length ||
        cmp(a.row.qname, b.row.qname) ||
        cmp(a.row.path, b.row.path) ||
        a.row.span_start - b.row.span_start ||
        a.row.id - b.row.id,
    )
    .slice(0, LANE_CANDIDATES_MAX)
    .map((e) => ({ row: e.row, score: e.level, coverage: e.words }));
}

/**
 * The identifier tier's prefix level: declarations whose name starts with `w` (and is longer),
 * shortest name first, then by qualified name, path and place — the first LANE_CANDIDATES_MAX.
 * Read through the distinct names (\`names\`), a batch at a time in that order, each batch's
 * declarations fetched by name: in a tree of many copies a prefix such as \`test\` is held by
 * hundreds of thousands of declarations but a few thousand names (32 stdlib copies: 2.5 s
 * sorting the declarations, milliseconds sorting the names).
 */
function prefixed(store: Store, w: string): Array<SymbolRow & { level: number }> {
  // While a cold build has the names uncounted, the declarations themselves are sorted.
  if (!store.namesCounted()) {
    return store
      .prepared(
        'search.names.prefix',
        `SELECT ${SYMBOL_COLUMNS}, 2 AS level FROM ${SYMBOL_FROM}
         WHERE s.name_lower > @w AND s.name_lower < @hi AND rift_path_ok(f.path)
         ORDER BY length(s.name), s.qname, s.name, f.path, s.span_start, s.id LIMIT ${LANE_CANDIDATES_MAX}`,
      )
      .all({ w, hi: w + '\uffff' }) as Array<SymbolRow & { level: number }>;
  }
  const names = store.prepared(
    'search.names.prefixNames',
    `SELECT qname, name, qname_lower, n FROM names WHERE name_lower > @w AND name_lower < @hi ORDER BY length(name), qname, name LIMIT @limit OFFSET @skip`,
  );
  const declarations = store.prepared(
    'search.names.prefixRows',
    `SELECT ${SYMBOL_COLUMNS}, 2 AS level FROM json_each(@names) j
       JOIN symbols s ON s.qname_key = j.value ->> 0 AND s.qname = j.value ->> 1 AND s.name = j.value ->> 2 ${SYMBOL_JOINS}
     WHERE rift_path_ok(f.path)
     ORDER BY length(s.name), s.qname, s.name, f.path, s.span_start, s.id LIMIT @limit`,
  );
  const out: Array<SymbolRow & { level: number }> = [];
  for (let skip = 0; out.length < LANE_CANDIDATES_MAX; skip += LANE_CANDIDATES_MAX) {
    const batch = names.all({ w, hi: w + '\uffff', limit: LANE_CANDIDATES_MAX, skip }) as Array<{ qname: string; name: string; qname_lower: string; n: number }>;
    // Declarations come in their names' order, so the names whose counts cover what is still
    // wanted are asked first (in many copies of a tree a name has many declarations); the next
    // ones only when the path filter leaves the page short.
    for (let from = 0; from < batch.length && out.length < LANE_CANDIDATES_MAX; ) {
      let to = from;
      for (let count = 0; to < batch.length && count < LANE_CANDIDATES_MAX - out.length; to++) count += batch[to].n;
      const keyed = JSON.stringify(batch.slice(from, to).map((n) => [nameKey(n.qname_lower), n.qname, n.name]));
      out.push(...(declarations.all({ names: keyed, limit: LANE_CANDIDATES_MAX - out.length }) as Array<SymbolRow & { level: number }>));
      from = to;
    }
    if (batch.length < LANE_CANDIDATES_MAX) break;
  }
  return out;
}

/**
 * The semantic lane: the tier's nearest declarations (best first) that still stand in the
 * store under the same qualified name and pass the path filter; `score` is the rank.
 */
export function semanticLane(store: Store, hits: readonly { id: number; qname: string }[], pathOk: (path: string) => boolean): SymbolHitRow[] {
  if (hits.length === 0) return [];
  const rows = new Map(
    (store.prepared('search.semantic.rows', `SELECT ${SYMBOL_COLUMNS} FROM ${SYMBOL_FROM} WHERE s.id IN (SELECT value FROM json_each(@ids))`)
      .all({ ids: JSON.stringify(hits.map((h) => h.id)) }) as SymbolRow[]).map((r) => [r.id, r]),
  );
  const out: SymbolHitRow[] = [];
  for (const h of hits) {
    const row = rows.get(h.id);
    if (row && row.qname === h.qname && pathOk(row.path)) out.push({ row, score: out.length, coverage: 0 });
  }
  return out;
}

/** Literal line matcher: files with a line containing the query's exact bytes, first occurrence each. */
function content(store: Store, q: LaneQuery): FileHitRow[] {
  const literal = Buffer.from(q.literal, 'utf8');
  if (literal.length === 0 || q.literal.includes('\n')) return [];
  const candidates =
    q.words.length > 0 && fullText(() => store.prepared('search.content.probe', `SELECT 1 FROM chunks_fts LIMIT 0`).all()) !== null
      ? // Path order among the first SCORED_ROWS_MAX chunks carrying every word, in the index's
        // order (the index stops there): a word in every file (\`self\` at 32 stdlib copies, a
        // million chunks) is not sorted whole for the first files holding the line.
        (store.prepared(
          'search.content.chunks',
          `SELECT * FROM (
             SELECT f.id AS fileId, f.path, f.size, b.language, c.start, c.end, c.line
             FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid ${CHUNK_JOINS}
             WHERE chunks_fts MATCH @match AND rift_path_ok(f.path) LIMIT ${SCORED_ROWS_MAX})
           ORDER BY path, start LIMIT ${LANE_CANDIDATES_MAX * 4}`,
        ).all({ match: q.words.map((w) => phrase(w)).join(' AND ') }) as Array<Omit<FileHitRow, 'score' | 'coverage'>>)
      : (store.prepared(
          'search.content.all',
          `SELECT f.id AS fileId, f.path, f.size, b.language, c.start, c.end, c.line
           FROM chunks c ${CHUNK_JOINS} WHERE rift_path_ok(f.path) ORDER BY f.path, c.start`,
        ).all() as Array<Omit<FileHitRow, 'score' | 'coverage'>>);
  const out: FileHitRow[] = [];
  let lastFile = -1;
  let bytes: Uint8Array | null = null;
  for (const c of candidates) {
    // Rows come grouped by file: one match per file is enough.
    if (out.at(-1)?.fileId === c.fileId) continue;
    if (c.fileId !== lastFile) {
      // Verified against the index: a file changed behind it matches nothing here.
      bytes = store.indexedBytes(c.path);
      lastFile = c.fileId;
    }
    if (!bytes) continue;
    // Search the chunk plus the literal's length, so a match never straddles chunk ends unseen.
    const window = Buffer.from(bytes.buffer, bytes.byteOffset + c.start, Math.min(bytes.length, c.end + literal.length) - c.start);
    const at = window.indexOf(literal);
    if (at < 0 || c.start + at >= c.end) continue;
    const { start, end } = lineAt(bytes, c.start + at);
    const line = c.line + countBreaks(bytes, c.start, start);
    out.push({ ...c, start, end, line, score: out.length, coverage: q.words.length || 1 });
    if (out.length >= LANE_CANDIDATES_MAX) break;
  }
  return out;
}

/** What a read of the full-text tables returns, or null when they cannot be read. */
function fullText<T>(read: () => T): T | null {
  try {
    return read();
  } catch {
    return null;
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
