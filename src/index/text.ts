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

/** Text as the full-text index should see it: original words plus camelCase parts. */
export function indexText(text: string): string {
  let out = '';
  let last = 0;
  for (const m of text.matchAll(IDENT)) {
    const word = m[0];
    const parts = camelParts(word);
    if (parts.length > 1) {
      const end = m.index + word.length;
      out += text.slice(last, end) + ' ' + parts.join(' ') + ' ';
      last = end;
    }
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

export interface Chunk {
  start: number;
  end: number;
  /** 1-based line of `start`. */
  line: number;
}

const CHUNK_LINES = 40;
const CHUNK_BYTES = 4096;

/** Splits a file into line-aligned chunks of at most 40 lines or about 4 KiB. */
export function chunkLines(bytes: Uint8Array): Chunk[] {
  const chunks: Chunk[] = [];
  let start = 0;
  let line = 1;
  let lines = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] !== 0x0a) continue;
    lines++;
    if (lines >= CHUNK_LINES || i + 1 - start >= CHUNK_BYTES) {
      chunks.push({ start, end: i + 1, line });
      start = i + 1;
      line += lines;
      lines = 0;
    }
  }
  if (start < bytes.length) chunks.push({ start, end: bytes.length, line });
  return chunks;
}

/** Declaration text kept in the full-text index (a large class's tail adds little signal). */
export const DECLARATION_TEXT_MAX = 8192;
