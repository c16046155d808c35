import { countBreaks, lineStartAt, nextLineStart } from '../core/lines.ts';

// How code text becomes full-text index input and how a query becomes an FTS5 expression.
// SQLite's unicode61 tokenizer splits on everything but letters and digits, so snake_case
// already splits; camelCase does not, so each camelCase identifier is followed by its parts
// in the indexed text (`encodePath` → `encodePath encode Path`). A query word becomes the
// phrase of its parts, which matches both spellings.

const IDENT = /[A-Za-z0-9]+/g;
const CAMEL = /[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g;

/** The camelCase / PascalCase / digit parts of one alphanumeric run (`HTTPServer2` → HTTP, Server, 2). */
function camelParts(word: string): string[] {
  return word.match(CAMEL) ?? [];
}

/**
 * A whole run of letters and digits that has more than one camel part: exactly the runs holding
 * a case or digit transition (`aB`, `ABc`, `a1`, `1a`). Matching only those skips the match
 * objects of every plain word, which is most of the text.
 */
const SPLIT_WORD = /(?<![A-Za-z0-9])[A-Za-z0-9]*?(?:[a-z][A-Z]|[A-Z][A-Z][a-z]|[A-Za-z][0-9]|[0-9][A-Za-z])[A-Za-z0-9]*/g;

/** Text as the full-text index should see it: original words plus camelCase parts. */
export function indexText(text: string): string {
  let out = '';
  let last = 0;
  for (const m of text.matchAll(SPLIT_WORD)) {
    const end = m.index + m[0].length;
    out += text.slice(last, end) + ' ' + camelParts(m[0]).join(' ') + ' ';
    last = end;
  }
  return last === 0 ? text : out + text.slice(last);
}

/** Lowercase FTS tokens of one query word, camel parts split (`encode_path`, `encodePath` → encode, path). */
export function wordTokens(word: string): string[] {
  const out: string[] = [];
  for (const m of word.matchAll(IDENT)) for (const p of camelParts(m[0])) out.push(p.toLowerCase());
  return out;
}

export interface QueryWord {
  /** The word as typed. */
  text: string;
  /** Its FTS tokens. */
  tokens: string[];
  /** Indexed tokens sharing a prose word's stem (`rotating`, `rotation` for `rotate`), when looked up. */
  variants?: string[];
}

/** Query words: whitespace-separated, each with at least one token; duplicates dropped. */
export function queryWords(query: string): QueryWord[] {
  const seen = new Set<string>();
  const words: QueryWord[] = [];
  for (const text of query.split(/\s+/)) {
    const tokens = wordTokens(text);
    if (tokens.length === 0) continue;
    const key = tokens.join(' ');
    if (seen.has(key)) continue;
    seen.add(key);
    words.push({ text, tokens });
  }
  return words;
}

/** The FTS5 phrase for one word; tokens are alphanumeric, so quoting needs no escaping. */
export function phrase(word: QueryWord, column?: string): string {
  const parts = word.tokens.join(' ');
  // How the word as typed was indexed: a camelCase run after another run is followed by its
  // parts (`safe_MessageBeep` → safe messagebeep message beep), which the parts alone miss.
  const stream = (indexText(word.text).match(IDENT) ?? []).map((t) => t.toLowerCase()).join(' ');
  const p = stream !== parts ? `("${stream}" OR "${parts}")` : `"${parts}"`;
  return column ? `{${column}} : ${p}` : p;
}

/** `w1 OR w2 …`: a unit carrying any word matches (spec: multi-word queries match any term). */
export function anyOf(words: readonly QueryWord[], column?: string): string {
  return words.map((w) => phrase(w, column)).join(' OR ');
}

// Prose words are stemmed at query time: a plain lowercase word also matches the indexed
// tokens that are its stem plus a common suffix (`rotate` → `rotating`, `rotation`), so the index keeps one tokenization for code and prose and identifiers are
// never stemmed. The variants are looked up in the index's vocabulary (index/search.ts), not
// matched as FTS5 prefixes, which would scan every token with the prefix on every query.
const PROSE_WORD = /^[a-z]+$/;
/** Suffixes stripped to find a stem, longest first. */
const SUFFIXES = ['ational', 'ization', 'ations', 'ation', 'ments', 'ement', 'ities', 'iness', 'ingly', 'ings', 'ness', 'ment', 'ions', 'ies', 'ing', 'ion', 'ity', 'ers', 'ied', 'ed', 'es', 'er', 'ly', 'al', 'e', 's', 'y'];
/** Suffixes a stem takes back (`rotat` → `rotate`, `rotation`, `rotating`, …). */
const INFLECTIONS = ['', 'e', 's', 'es', 'ed', 'er', 'ers', 'ing', 'ings', 'ion', 'ions', 'ation', 'ations', 'or', 'ors', 'y', 'ies', 'ied', 'ly', 'al', 'ally', 'ment', 'ments', 'ive'];

/** Every spelling of a stem with one of INFLECTIONS, to be checked against the index's vocabulary. */
export function stemVariants(stem: string): string[] {
  return INFLECTIONS.map((s) => stem + s);
}

/**
 * The short forms code spells common words with (`dir` for "directory", `tmp` for "temporary"),
 * by the prose word: in declaration names a prose query's word also matches them (index/search.ts;
 * in bodies they are mostly local variables). Only abbreviations that mean the word wherever they
 * appear; builtins that collide with other meanings (`str`, `len`, `max`) are left out.
 */
const ABBREVIATIONS: Readonly<Record<string, readonly string[]>> = (() => {
  const table: Record<string, readonly string[]> = {};
  const add = (words: string, short: string) => {
    for (const w of words.split(' ')) table[w] = short.split(' ');
  };
  add('directory directories', 'dir dirs dirname');
  add('temporary', 'tmp temp');
  add('configuration configure', 'config conf cfg');
  add('argument arguments', 'arg args argv');
  add('parameter parameters', 'param params');
  add('message messages', 'msg msgs');
  add('command commands', 'cmd cmds');
  add('environment', 'env environ');
  add('initialize initialise initialization', 'init');
  add('attribute attributes', 'attr attrs');
  add('reference references', 'ref refs');
  add('previous', 'prev');
  add('source', 'src');
  add('destination', 'dst dest');
  add('function functions', 'func funcs');
  add('utility utilities', 'util utils');
  add('information', 'info');
  add('specification', 'spec');
  add('expression expressions', 'expr');
  add('request', 'req');
  add('response', 'resp');
  add('context', 'ctx');
  add('database', 'db');
  add('package packages', 'pkg');
  add('position', 'pos');
  add('sequence', 'seq');
  add('exception', 'exc');
  add('address', 'addr');
  add('authentication', 'auth');
  add('connection', 'conn');
  add('buffer', 'buf');
  add('password', 'passwd');
  add('statistics', 'stats');
  add('synchronize synchronous', 'sync');
  add('asynchronous', 'async');
  add('millisecond milliseconds', 'ms');
  add('timestamp', 'ts');
  return table;
})();

/** The short forms of a plain prose word (see ABBREVIATIONS), to be checked against the index's vocabulary. */
export function abbreviations(word: QueryWord): readonly string[] {
  if (word.tokens.length !== 1 || !PROSE_WORD.test(word.text)) return [];
  return Object.hasOwn(ABBREVIATIONS, word.tokens[0]) ? ABBREVIATIONS[word.tokens[0]] : [];
}

/** A stem shorter than this matches too many unrelated tokens to help (`us*`, `ad*`). */
const STEM_MIN = 4;

/** The stem of a plain prose word, or null when it has none worth a prefix match. */
export function proseStem(word: QueryWord): string | null {
  if (word.tokens.length !== 1 || !PROSE_WORD.test(word.text)) return null;
  const w = word.tokens[0];
  for (const suffix of SUFFIXES) {
    if (w.endsWith(suffix) && w.length - suffix.length >= STEM_MIN) return w.slice(0, -suffix.length);
  }
  return w.length >= STEM_MIN + 1 ? w : null;
}

/** The FTS5 expression matching a word or any of its stem's `variants` (indexed tokens). */
export function stemmed(word: QueryWord, column?: string): string {
  if (!word.variants || word.variants.length === 0) return phrase(word, column);
  const p = `(${[word.tokens[0], ...word.variants].map((t) => `"${t}"`).join(' OR ')})`;
  return column ? `{${column}} : ${p}` : p;
}

/** `anyOf` with prose words stemmed. */
export function anyStemmed(words: readonly QueryWord[], column?: string): string {
  return words.map((w) => stemmed(w, column)).join(' OR ');
}

export interface Chunk {
  start: number;
  end: number;
  /** 1-based line of `start`. */
  line: number;
}

const CHUNK_LINES = 40;
const CHUNK_BYTES = 4096;

/** Splits `[start, end)` (line-aligned) into chunks of at most 40 lines or about 4 KiB; `line` is the line of `start`. */
function chunkLines(bytes: Uint8Array, start = 0, end = bytes.length, line = 1): Chunk[] {
  const chunks: Chunk[] = [];
  let lines = 0;
  for (let i = start; i < end; i++) {
    if (bytes[i] !== 0x0a) continue;
    lines++;
    if (lines >= CHUNK_LINES || i + 1 - start >= CHUNK_BYTES) {
      chunks.push({ start, end: i + 1, line });
      start = i + 1;
      line += lines;
      lines = 0;
    }
  }
  if (start < end) chunks.push({ start, end, line });
  return chunks;
}

/**
 * A 53-bit key of a lowercased qualified name (two FNV-1a hashes): the store indexes this
 * integer instead of the name's text, a third of the size, and checks the name itself after.
 */
export function nameKey(lower: string): number {
  let a = 0x811c9dc5;
  let b = 0x01000193;
  for (let i = 0; i < lower.length; i++) {
    const c = lower.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x811c9dc5) + i;
  }
  return (a >>> 0) * 0x200000 + ((b >>> 0) & 0x1fffff);
}

/**
 * Line-aligned chunks that follow declarations: each declaration's lines (nested declarations
 * cut out) form runs of their own, owned by it, and the lines outside every declaration form
 * runs owned by none; each run is then split by `chunkLines`. The owner of a run is the
 * innermost declaration whose lines cover it (declarations come in source order).
 */
export function declarationChunks(bytes: Uint8Array, declarations: readonly { span: { start: number; end: number } }[]): Array<Chunk & { owner: number | null }> {
  if (declarations.length === 0) return chunkLines(bytes).map((c) => ({ ...c, owner: null }));
  // A declaration's lines: from the start of its first line past the ending of its last (the
  // line holding its last byte; an empty span at 0 covers nothing).
  const ranges = declarations.map((d) => ({ start: lineStartAt(bytes, d.span.start), end: d.span.end <= 0 ? 0 : nextLineStart(bytes, d.span.end - 1) }));
  const cuts = new Set<number>([0, bytes.length]);
  for (const r of ranges) {
    cuts.add(r.start);
    cuts.add(r.end);
  }
  const points = [...cuts].sort((a, b) => a - b);
  // Declarations by line start (stable, so a later one on the same line is the inner one).
  const order = ranges.map((_, i) => i).sort((a, b) => ranges[a].start - ranges[b].start || a - b);
  const open: number[] = [];
  const out: Array<Chunk & { owner: number | null }> = [];
  let next = 0;
  let line = 1;
  for (let p = 0; p + 1 < points.length; p++) {
    const [a, b] = [points[p], points[p + 1]];
    while (next < order.length && ranges[order[next]].start <= a) open.push(order[next++]);
    // Closed declarations leave the stack; one that does not cover `a` is never the owner.
    for (let i = open.length - 1; i >= 0; i--) if (ranges[open[i]].end <= a) open.splice(i, 1);
    let owner: number | null = null;
    for (let i = open.length - 1; i >= 0 && owner === null; i--) if (ranges[open[i]].end >= b) owner = open[i];
    for (const c of chunkLines(bytes, a, b, line)) out.push({ ...c, owner });
    line += countBreaks(bytes, a, b);
  }
  return out;
}

/** A declaration's doc text is cut at this many bytes: the opening says what it is for. */
const DOC_BYTES_MAX = 2048;
/** A comment line: `//`, `/*`, ` *`, `#` (not a Rust `#[attribute]`), `--`. */
const COMMENT_LINE = /^\s*(?:\/\/|\/\*|\*|#(?!\[)|--)/;
/** The end of a block header (Python): the first `:` that ends its line. */
const HEADER_END = /:[ \t]*(?:#[^\n]*)?\n/;
/** A string literal opening the block: a docstring. */
const DOCSTRING = /^\s*[rRuU]?("""|'''|"|')/;

const utf8 = new TextDecoder('utf-8');

/**
 * A declaration's documentation, as words for the full-text index: the comment lines attached
 * before the item (JSDoc, `///`, `#`), and a docstring that opens its body (Python). Decorators
 * and attributes in the same span are code, not prose, and are left out.
 */
export function declarationDoc(bytes: Uint8Array, span: { start: number; end: number }, item: { start: number; end: number }): string {
  const parts: string[] = [];
  if (item.start > span.start) {
    const lead = utf8.decode(bytes.subarray(span.start, item.start));
    for (const line of lead.split('\n')) if (COMMENT_LINE.test(line)) parts.push(line);
  }
  const head = utf8.decode(bytes.subarray(item.start, Math.min(item.end, item.start + DOC_BYTES_MAX * 2)));
  const header = HEADER_END.exec(head);
  const body = header ? header.index + header[0].length : -1;
  const m = body < 0 ? null : DOCSTRING.exec(head.slice(body));
  if (m) {
    const open = body + m[0].length;
    const close = head.indexOf(m[1], open);
    parts.push(head.slice(open, close < 0 ? head.length : close));
  }
  return indexText(parts.join('\n').slice(0, DOC_BYTES_MAX));
}
