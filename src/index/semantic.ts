import Database from 'better-sqlite3';
import { join } from 'node:path';
import { sha256Hex } from '../core/digest.ts';
import { EMBED_TIMEOUT_MS, SEMANTIC_BATCH_SIZE, SEMANTIC_CANDIDATES_MAX, SEMANTIC_TEXT_BYTES_MAX } from '../core/limits.ts';
import { log } from '../core/log.ts';
import { semanticModelDir, semanticModelTrustKey, type SearchSemanticConfig } from '../config/workspace-config.ts';
import { ensureStateDir } from '../workspace/state-dir.ts';
import { onnxEmbedder } from './onnx-embedder.ts';
import type { Store } from './store.ts';

// The semantic tier: one vector per declaration from an embedding server (Ollama's /api/embed
// or an OpenAI-compatible /v1/embeddings) or from an ONNX model run in this process (a
// directory the project's rift.toml names, loaded only once the user trusts it: see
// onnx-embedder.ts), and the declarations nearest a query's vector.
//
// A declaration's embedded text is its qualified name and the first bytes of its source (doc
// comment and signature come first); vectors live in `.rift/vectors.db` keyed by model and the
// SHA-256 of that text, so a declaration that did not change is never embedded again and every
// revision or projection holding the same declaration shares its vector. Preparation runs in
// the background after each published index batch, in batches of SEMANTIC_BATCH_SIZE. The
// nearest-neighbour search is an exact scan over unit vectors held in memory (a dot product per
// declaration: ~10 ms per 100k 384-dimension vectors), so it needs no extension.
// When the server cannot be reached or answers an error, the tier is unavailable for the rest
// of this process and says why; it never goes quiet.

export const DEFAULT_EMBEDDING_MODEL = 'nomic-embed-text';

export type SemanticStatus =
  | { kind: 'off' }
  | { kind: 'preparing'; prepared: number; total: number }
  | { kind: 'ready' }
  | { kind: 'unavailable'; reason: string };

/** One declaration the semantic lane found, with its cosine similarity to the query. */
export interface SemanticHit {
  id: number;
  qname: string;
  similarity: number;
}

interface Entry {
  id: number;
  qname: string;
  digest: string;
}

/** What the tier embeds with, and the model name its vectors are stored under. */
interface Embedder {
  model: string;
  embed(texts: readonly string[], stop: AbortSignal): Promise<Float32Array[]>;
}

/** Calls one embedding API; rejects with a message naming what failed. */
async function embedHttp(config: SearchSemanticConfig, texts: readonly string[], stop: AbortSignal): Promise<Float32Array[]> {
  const model = config.model ?? DEFAULT_EMBEDDING_MODEL;
  const url = `${config.url}${config.provider === 'ollama' ? '/api/embed' : '/v1/embeddings'}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, input: texts }),
      signal: AbortSignal.any([AbortSignal.timeout(EMBED_TIMEOUT_MS), stop]),
    });
  } catch (e) {
    const cause = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message;
    throw new Error(`the embedding server at ${url} could not be reached (${cause}); start it or fix [search.semantic] url`);
  }
  const text = await res.text();
  if (!res.ok) throw new Error(`the embedding server at ${url} answered HTTP ${res.status} for model ${model}: ${text.slice(0, 200)}`);
  let body: { embeddings?: unknown; data?: Array<{ index?: number; embedding?: unknown }> };
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`the embedding server at ${url} answered something that is not JSON`);
  }
  const vectors = config.provider === 'ollama'
    ? body.embeddings
    : [...(body.data ?? [])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0)).map((d) => d.embedding);
  if (!Array.isArray(vectors) || vectors.length !== texts.length || !vectors.every((v) => Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'number'))) {
    throw new Error(`the embedding server at ${url} answered without one vector per input`);
  }
  return (vectors as number[][]).map(unit);
}

function unit(v: readonly number[]): Float32Array {
  const out = Float32Array.from(v);
  let norm = 0;
  for (const x of out) norm += x * x;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < out.length; i++) out[i] /= norm;
  return out;
}

export class SemanticTier {
  private db: Database.Database | null = null;
  /** Unit vectors of the configured model by text digest. */
  private readonly vectors = new Map<string, Float32Array>();
  private loadedModel: string | null = null;
  /** The declarations of the last prepared store state. */
  private entries: Entry[] = [];
  private unavailable: string | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private closed = false;
  /** Aborts the request in flight when the tier closes, so closing never waits on a slow server. */
  private readonly stop = new AbortController();
  private progress = { prepared: 0, total: 0 };
  /** Declaration texts this process has embedded (a query's text aside). */
  embedded = 0;

  constructor(
    private readonly root: string,
    /** The index as it is now (the indexer replaces a damaged one). */
    private readonly store: () => Store,
    private readonly config: () => SearchSemanticConfig,
    /** Whether the user trusts a trust-store key (an in-process model the project names). */
    private readonly trusted: (key: string) => boolean = () => false,
  ) {}

  status(): SemanticStatus {
    const config = this.config();
    if (!config.enabled) return { kind: 'off' };
    this.checkTrust(config);
    if (this.unavailable !== null) return { kind: 'unavailable', reason: this.unavailable };
    if (this.running !== null || this.progress.prepared < this.progress.total) return { kind: 'preparing', ...this.progress };
    return { kind: 'ready' };
  }

  /** Starts (or queues one more) background preparation of the store's declarations. */
  schedule(): void {
    const config = this.config();
    if (this.closed || !config.enabled) return;
    this.checkTrust(config);
    if (this.unavailable !== null) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.prepare();
        } while (this.again && !this.closed && this.unavailable === null);
      } catch (e) {
        if (!this.closed) this.fail((e as Error).message);
      } finally {
        this.running = null;
      }
    })();
  }

  /** Resolves when no preparation is running. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /**
   * The declarations nearest `query`, best first, among those that carry a vector. Null when
   * the tier is off or unavailable (the status says which).
   */
  async nearest(query: string): Promise<SemanticHit[] | null> {
    const config = this.config();
    if (!config.enabled || this.closed) return null;
    this.checkTrust(config);
    if (this.unavailable !== null) return null;
    if (this.entries.length === 0 && !this.running) this.schedule();
    let q: Float32Array;
    try {
      [q] = await (await this.embedder(config)).embed([query], this.stop.signal);
    } catch (e) {
      if (!this.closed) this.fail((e as Error).message);
      return null;
    }
    const scored: SemanticHit[] = [];
    for (const e of this.entries) {
      const v = this.vectors.get(e.digest);
      if (!v || v.length !== q.length) continue;
      let dot = 0;
      for (let i = 0; i < q.length; i++) dot += q[i] * v[i];
      if (dot > 0) scored.push({ id: e.id, qname: e.qname, similarity: dot });
    }
    return scored.sort((a, b) => b.similarity - a.similarity || a.id - b.id).slice(0, SEMANTIC_CANDIDATES_MAX);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stop.abort();
    await this.idle().catch(() => undefined);
    this.db?.close();
    this.db = null;
  }

  /**
   * Makes the tier unavailable (for the rest of this process, as the contract has it) when an
   * in-process model's directory is not trusted when the tier first needs it: the user's `rift
   * trust` counts from the next start.
   */
  private checkTrust(config: SearchSemanticConfig): void {
    if (this.unavailable !== null) return;
    const key = semanticModelTrustKey(this.root, config);
    if (key === null || this.trusted(key)) return;
    this.fail(
      `rift.toml names an ONNX embedding model this machine has not trusted (${semanticModelDir(this.root, config)}); run \`rift trust\` in the workspace to allow it, then restart rift (\`rift server --stop\` ends a shared server)`,
    );
  }

  private async embedder(config: SearchSemanticConfig): Promise<Embedder> {
    if (config.provider === 'onnx') {
      const model = await onnxEmbedder(semanticModelDir(this.root, config)!);
      return { model: model.id, embed: (texts) => model.embed(texts) };
    }
    return { model: config.model ?? DEFAULT_EMBEDDING_MODEL, embed: (texts, stop) => embedHttp(config, texts, stop) };
  }

  private fail(reason: string): void {
    if (this.unavailable !== null) return;
    this.unavailable = reason;
    log('warn', 'search.semantic', 'semantic ranking unavailable', { reason });
  }

  private open(model: string): Database.Database {
    if (!this.db) {
      this.db = new Database(join(ensureStateDir(this.root), 'vectors.db'));
      this.db.pragma('journal_mode = WAL');
      this.db.exec(`CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, digest TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (model, digest)) WITHOUT ROWID`);
    }
    if (this.loadedModel !== model) {
      this.vectors.clear();
      for (const r of this.db.prepare(`SELECT digest, vector FROM vectors WHERE model = ?`).all(model) as Array<{ digest: string; vector: Buffer }>) {
        this.vectors.set(r.digest, new Float32Array(r.vector.buffer.slice(r.vector.byteOffset, r.vector.byteOffset + r.vector.byteLength)));
      }
      this.loadedModel = model;
    }
    return this.db;
  }

  /** Embeds every declaration of the store whose text has no vector yet. */
  private async prepare(): Promise<void> {
    const embedder = await this.embedder(this.config());
    const model = embedder.model;
    const db = this.open(model);
    const entries: Entry[] = [];
    const pending = new Map<string, string>();
    const store = this.store();
    for (const f of store.files()) {
      const symbols = store.symbolsOfFile(f.path);
      if (symbols.length === 0) continue;
      const bytes = store.indexedBytes(f.path);
      if (!bytes) continue;
      for (const s of symbols) {
        const source = Buffer.from(bytes.subarray(s.span_start, Math.min(s.span_end, s.span_start + SEMANTIC_TEXT_BYTES_MAX))).toString('utf8');
        const text = `${s.qname}\n${source}`;
        const digest = sha256Hex(text);
        entries.push({ id: s.id, qname: s.qname, digest });
        if (!this.vectors.has(digest)) pending.set(digest, text);
      }
    }
    this.entries = entries;
    // Declarations per pending text (identical declarations share one vector).
    const uses = new Map<string, number>();
    for (const e of entries) if (pending.has(e.digest)) uses.set(e.digest, (uses.get(e.digest) ?? 0) + 1);
    let prepared = entries.length - [...uses.values()].reduce((a, b) => a + b, 0);
    this.progress = { prepared, total: entries.length };
    const insert = db.prepare(`INSERT OR REPLACE INTO vectors (model, digest, vector) VALUES (?, ?, ?)`);
    const batch: Array<[string, string]> = [];
    const flush = async () => {
      const vectors = await embedder.embed(batch.map(([, text]) => text), this.stop.signal);
      this.embedded += batch.length;
      db.transaction(() => {
        batch.forEach(([digest], i) => {
          insert.run(model, digest, Buffer.from(vectors[i].buffer));
          this.vectors.set(digest, vectors[i]);
          prepared += uses.get(digest) ?? 0;
        });
      })();
      batch.length = 0;
      this.progress = { prepared, total: entries.length };
    };
    for (const item of pending) {
      if (this.closed) return;
      batch.push(item);
      if (batch.length >= SEMANTIC_BATCH_SIZE) await flush();
    }
    if (batch.length > 0 && !this.closed) await flush();
  }
}
