import { existsSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { digest8 } from '../core/digest.ts';
import { RiftError, capabilityUnavailable, invalidField, limitExceeded } from '../core/errors.ts';
import { nodeId, symbolId } from '../core/ids.ts';
import { GET_SYMBOL_LIMIT_DEFAULT, RESULTS_MAX } from '../core/limits.ts';
import { extensionOf, projectPathViolation, underFloor } from '../core/path.ts';
import type { ConfigLoader } from '../config/loader.ts';
import type { ReadWarning } from '../protocol/common.ts';
import type { GetSymbolInput, GetSymbolResult, NodesInput, NodesResult } from '../protocol/read.ts';
import { nodesAt } from '../syntax/nodes.ts';
import type { LanguageId } from '../syntax/types.ts';
import type { Indexer } from '../index/indexer.ts';
import type { SymbolRow } from '../index/store.ts';

// Transport-free reads (spec "Reads"). Each read awaits readiness, then answers from
// the store synchronously: one committed state, never two.

type Node = NodesResult['nodes'][number];
type Hit = GetSymbolResult['hits'][number];

const REVISION_ID = /^[A-Za-z0-9._/-]+$/;
const utf8 = new TextDecoder('utf-8');

export class ReadService {
  constructor(
    private readonly root: string,
    private readonly config: ConfigLoader,
    private readonly indexer: Indexer,
  ) {}

  async getSymbol(input: GetSymbolInput): Promise<GetSymbolResult> {
    const limit = pageLimit(input.limit, GET_SYMBOL_LIMIT_DEFAULT);
    const pageIndex = input.page_index ?? 0;
    const include = new Set(input.include ?? ['source']);
    await this.ready(input.rev);
    if (include.has('history')) throw capabilityUnavailable('symbol history');

    const store = this.indexer.store;
    const { total, rows } = store.findSymbols({ query: input.name, offset: pageIndex * limit, limit });
    const contents = new Map<string, Uint8Array | null>();
    const hits: Hit[] = rows.map((row) => {
      const hit: Hit = {
        symbol: symbolRecord(row),
        path: row.path,
        range: { start: row.span_start, end: row.span_end },
        line: row.line,
      };
      if (include.has('source')) {
        if (!contents.has(row.path)) {
          const f = store.file(row.path);
          contents.set(row.path, f ? store.content(f.id) : null);
        }
        const bytes = contents.get(row.path);
        if (bytes) {
          const span = bytes.subarray(row.span_start, row.span_end);
          hit.node = {
            id: nodeId(row.language, row.path, row.span_start, row.span_end, digest8(span)),
            symbol: hit.symbol.id,
            language: row.language,
            kind: row.node_kind,
            facets: ['declaration', 'definition'],
            range: { start: row.span_start, end: row.span_end },
          };
          hit.source = { path: row.path, range: hit.range, text: utf8.decode(span) };
        }
      }
      return hit;
    });
    return { hits, pagination: pagination(pageIndex, total, limit), warnings: this.warnings() };
  }

  async nodes(input: NodesInput): Promise<NodesResult> {
    const violation = projectPathViolation(input.path);
    if (violation) throw invalidField('path', violation);
    await this.ready(input.rev);
    const selection = this.indexer.currentSelection();
    const visible = !underFloor(input.path) && this.indexer.isVisible(input.path);
    const language = visible ? selection.syntaxLanguage(input.path) : null;
    const store = this.indexer.store;
    const file = visible ? store.file(input.path) : null;
    if (visible && language === null && (file || existsSync(join(this.root, input.path)))) {
      const ext = extensionOf(input.path);
      throw capabilityUnavailable('syntax nodes', [
        ['path', input.path],
        ext === null ? ['extension', 'none — the path carries no extension'] : ['extension', ext],
      ]);
    }
    const bytes = file && language ? store.content(file.id) : null;
    if (!file || !bytes || !language) {
      throw new RiftError('resource_not_found', [['path', input.path]]);
    }
    const declarations = store.symbolsOfFile(input.path);
    const nodes: Node[] = nodesAt(language as LanguageId, bytes, input.position).map((n) => {
      const linked = declarations.find(
        (d) =>
          (d.span_start === n.range.start && d.span_end === n.range.end) ||
          (d.item_start === n.range.start && d.item_end === n.range.end),
      );
      const node: Node = {
        id: nodeId(language, input.path, n.range.start, n.range.end, digest8(bytes.subarray(n.range.start, n.range.end))),
        language,
        kind: n.kind,
        facets: n.facets as Node['facets'],
        range: { start: n.range.start, end: n.range.end },
      };
      if (linked) node.symbol = symbolId(language, input.path, linked.qname);
      return node;
    });
    return { nodes, warnings: this.warnings() };
  }

  /** Configuration gate, revision admission, and the index built under the accepted configuration. */
  private async ready(rev: string | undefined): Promise<void> {
    const accepted = this.config.current();
    if (rev !== undefined) {
      if (rev.length === 0) throw invalidField('rev', 'empty');
      if (rev.length > 128) throw invalidField('rev', 'too_long');
      if (!REVISION_ID.test(rev)) throw invalidField('rev', 'charset_forbidden');
      if (!accepted.config.providers.history.enabled) {
        throw capabilityUnavailable('revision reads (providers.history disabled)');
      }
      if (!hasGitRepository(this.root)) {
        throw new RiftError('capability_unavailable', [
          ['workspace', realpathSync(this.root)],
          ['requires', 'a git repository — run `git init`, or omit `rev` to read the current tree'],
        ]);
      }
      throw capabilityUnavailable('revision reads');
    }
    await this.indexer.ensureBuilt(accepted.config);

  }

  private warnings(): ReadWarning[] {
    const observed = this.indexer.observedRevision();
    if (!observed) return [];
    return [
      {
        kind: 'stale_index',
        message: `the index holds tree ${observed.indexed} while the workspace holds ${observed.captured}; the answer may miss external edits still being indexed`,
        captured: observed.captured,
        indexed: observed.indexed,
      },
    ];
  }
}

function pageLimit(limit: number | undefined, fallback: number): number {
  if (limit === undefined) return fallback;
  if (limit === 0) throw invalidField('limit', 'zero');
  if (limit > RESULTS_MAX) throw limitExceeded('limit', RESULTS_MAX, limit);
  return limit;
}

function pagination(pageIndex: number, total: number, limit: number) {
  return { page_index: pageIndex, total_pages: Math.max(1, Math.ceil(total / limit)) };
}

export function symbolRecord(row: SymbolRow): Hit['symbol'] {
  const record: Hit['symbol'] = {
    id: symbolId(row.language, row.path, row.qname),
    language: row.language,
    name: row.qname,
    kind: row.kind,
    facets: (row.facets ? row.facets.split(',') : []) as Hit['symbol']['facets'],
    visibility: row.visibility,
  };
  if (row.container) record.container = symbolId(row.language, row.path, row.container);
  return record;
}

function hasGitRepository(root: string): boolean {
  let dir = root;
  for (;;) {
    if (existsSync(join(dir, '.git'))) return true;
    const parent = dirname(dir);
    if (parent === dir) return false;
    dir = parent;
  }
}
