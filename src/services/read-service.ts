import { existsSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import { digest8 } from '../core/digest.ts';
import { log } from '../core/log.ts';
import { RiftError, capabilityUnavailable, invalidField } from '../core/errors.ts';
import type { WorkspaceConfig } from '../config/workspace-config.ts';
import type { ReadWarning } from '../protocol/common.ts';
import { nodeId, symbolId } from '../core/ids.ts';
import { GET_SYMBOL_LIMIT_DEFAULT, PARSE_TIME_MAX_MS, SYNTAX_DEPTH_MAX, SYNTAX_NODES_MAX } from '../core/limits.ts';
import { extensionOf, projectPathViolation, underFloor } from '../core/path.ts';
import type { GetSymbolInput, GetSymbolResult, NodesInput, NodesResult } from '../protocol/read.ts';
import { nodesAt } from '../syntax/nodes.ts';
import { initSyntax } from '../syntax/runtime.ts';
import type { LanguageId } from '../syntax/types.ts';
import type { Indexer } from '../index/indexer.ts';
import { nfcConflict } from '../workspace/walk.ts';
import type { Store, SymbolRow } from '../index/store.ts';
import { timeline, type SegmentRunner, type WalkHint } from '../history/timeline.ts';
import { type ReadGate, pageLimit, pagination } from './read-gate.ts';

// Transport-free reads (spec "Reads"). Each read awaits readiness, then answers from
// the store synchronously: one committed state, never two.

type Node = NodesResult['nodes'][number];
type Hit = GetSymbolResult['hits'][number];

const utf8 = new TextDecoder('utf-8');

export class ReadService {
  constructor(
    private readonly root: string,
    private readonly gate: ReadGate,
    private readonly indexer: Indexer,
  ) {}

  getSymbol(input: GetSymbolInput): Promise<GetSymbolResult> {
    return this.gate.answer(() => this.findSymbol(input));
  }

  nodes(input: NodesInput): Promise<NodesResult> {
    return this.gate.answer(() => this.nodesAt(input));
  }

  private async findSymbol(input: GetSymbolInput): Promise<GetSymbolResult> {
    const limit = pageLimit(input.limit, GET_SYMBOL_LIMIT_DEFAULT);
    const pageIndex = input.page_index ?? 0;
    const include = new Set(input.include ?? ['source']);
    const rev = input.rev === undefined ? null : await this.gate.admitRevision(input.rev);
    const config = rev ? rev.config : await this.gate.admit();
    if (include.has('history')) await this.gate.checkHistory(config);

    // Synchronous up to the history walk: one committed state of the store.
    const store = rev ? rev.snapshot.store : this.indexer.store;
    const { total, rows } = store.findSymbols({ query: input.name, offset: pageIndex * limit, limit });
    const hits: Hit[] = rows.map((row) => {
      const hit: Hit = {
        symbol: symbolRecord(row),
        path: row.path,
        range: { start: row.span_start, end: row.span_end },
        line: row.line,
      };
      if (include.has('source')) {
        // A file changed behind the index has no source here: its spans describe bytes it no
        // longer holds, and the drift makes the result warn `stale_index`.
        const span = store.indexedRange(row.path, row.span_start, row.span_end);
        if (span) {
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
    const warnings = rev ? [] : this.gate.warnings();
    if (include.has('history')) {
      warnings.push(...(await this.attachHistory(store, hits, rows, rev?.snapshot.commit ?? null, config)));
    }
    const result: GetSymbolResult = { hits, pagination: pagination(pageIndex, total, limit), warnings };
    if (rev) result.revision = rev.snapshot.commit;
    return result;
  }

  /**
   * Each hit's timeline, walked from the served commit (HEAD for a working-tree read; a
   * repository with no commit yet has no history to tell).
   */
  private async attachHistory(store: Store, hits: Hit[], rows: readonly SymbolRow[], commit: string | null, config: WorkspaceConfig): Promise<ReadWarning[]> {
    const revisions = this.gate.revisions;
    const repo = await revisions.repository();
    const from = commit ?? (await repo.resolve('HEAD'));
    const max = config.providers.history.max_revisions;
    const warnings: ReadWarning[] = [];
    // A server walks in its parse workers, off the thread answering requests.
    const pool = this.indexer.workers();
    const runner: SegmentRunner | undefined = pool ? (job, lane, ids, walked) => pool.walkSegment(job, lane, ids, walked) : undefined;
    for (const [i, hit] of hits.entries()) {
      const row = rows[i];
      if (typeof from !== 'string' && !from.ok) {
        hit.history = { symbol: hit.symbol.id, versions: [], complete: true };
        continue;
      }
      const start = typeof from === 'string' ? from : from.commit;
      const t = await timeline(repo, start, row.path, row.language as LanguageId, row.qname, max, config.source.max_file_bytes, runner, walkHint(store, row));
      hit.history = { symbol: hit.symbol.id, versions: t.versions, complete: t.complete };
      log('info', 'history.walk', 'history walked', {
        commits: t.stats.commits, versions: t.versions.length, log_ms: Math.round(t.stats.logMs), fetched: t.stats.fetched,
        fetch_ms: Math.round(t.stats.fetchMs), parsed: t.stats.parsed, alone: t.stats.alone, nested: t.stats.nested, parse_ms: Math.round(t.stats.parseMs),
      });
      if (!t.complete) {
        warnings.push({
          kind: 'history_truncated',
          message: `the history of ${hit.symbol.id} stopped after ${max} revisions ([providers.history] max_revisions) before its introduction`,
          symbol: hit.symbol.id,
          max_revisions: max,
        });
      }
    }
    return warnings;
  }

  private async nodesAt(input: NodesInput): Promise<NodesResult> {
    const violation = projectPathViolation(input.path);
    if (violation) throw invalidField('path', violation);
    if (input.rev !== undefined) return this.revisionNodes(input, input.rev);
    await this.gate.admit();
    await initSyntax();
    // From here on the answer is read synchronously: one committed state of the store.
    const selection = this.indexer.currentSelection();
    const visible = !underFloor(input.path) && this.indexer.isVisible(input.path);
    const language = visible ? selection.syntaxLanguage(input.path) : null;
    const store = this.indexer.store;
    const file = visible ? store.file(input.path) : null;
    if (visible && language === null && (file || existsSync(join(this.root, input.path)))) throw noSyntax(input.path);
    if (visible && language !== null && !file) {
      // A file that exists but was left out of the index: its bytes cannot be served as source.
      const reason = leftOutReason(this.root, input.path, store.skippedFile(input.path)?.reason, selection.config.source.max_file_bytes);
      if (reason) throw new RiftError('content_unavailable', [['path', input.path], ['reason', reason]]);
    }
    if (file && language !== null && !file.parsed && file.unparsed) {
      // The indexer could not bound this file's parse; parsing it here would not either.
      throw new RiftError('content_unavailable', [['path', input.path], ['reason', describeSkip(file.unparsed)]]);
    }
    if (!file && language && this.indexer.building && existsSync(join(this.root, input.path))) {
      throw new RiftError('temporarily_unavailable', [
        ['path', input.path],
        ['reason', 'the index is still being built and has not reached this file'],
      ]);
    }
    if (!file || !language) throw new RiftError('resource_not_found', [['path', input.path]]);
    const bytes = store.indexedBytes(input.path);
    if (!bytes) {
      // The file changed behind the index, which now re-reads it: no node can be given for
      // bytes the index does not hold, and the old ones are never served.
      throw new RiftError('temporarily_unavailable', [
        ['path', input.path],
        ['reason', 'stale_index: the file changed on disk since it was indexed and is being re-indexed'],
      ]);
    }
    return { nodes: nodesOf(store, language, input.path, bytes, input.position), warnings: this.gate.warnings() };
  }

  /** `nodes` at a revision: the committed file, under the same selection as the working tree. */
  private async revisionNodes(input: NodesInput, rev: string): Promise<NodesResult> {
    const { snapshot } = await this.gate.admitRevision(rev);
    await initSyntax();
    const path = input.path;
    const visible = !underFloor(path) && snapshot.visibility.isVisible(path);
    const language = visible ? snapshot.selection.syntaxLanguage(path) : null;
    const store = snapshot.store;
    const file = visible ? store.file(path) : null;
    if (file && language === null) throw noSyntax(path);
    const skipped = visible ? store.skippedFile(path) : null;
    if (skipped) throw new RiftError('content_unavailable', [['path', path], ['rev', rev], ['reason', describeSkip(skipped.reason)]]);
    const bytes = file && language ? store.indexedBytes(path) : null;
    if (!bytes || !language) throw new RiftError('resource_not_found', [['path', path], ['rev', rev]]);
    return { nodes: nodesOf(store, language, path, bytes, input.position), revision: snapshot.commit, warnings: [] };
  }
}

/** The named nodes containing `position` in a stored file's bytes, linked to its declarations. */
function nodesOf(store: Store, language: string, path: string, bytes: Uint8Array, position: number): Node[] {
  const declarations = store.symbolsOfFile(path);
  return nodesAt(language as LanguageId, bytes, position).map((n) => {
    const linked = declarations.find(
      (d) =>
        (d.span_start === n.range.start && d.span_end === n.range.end) ||
        (d.item_start === n.range.start && d.item_end === n.range.end),
    );
    const node: Node = {
      id: nodeId(language, path, n.range.start, n.range.end, digest8(bytes.subarray(n.range.start, n.range.end))),
      language,
      kind: n.kind,
      facets: n.facets as Node['facets'],
      range: { start: n.range.start, end: n.range.end },
    };
    if (linked) node.symbol = symbolId(language, path, linked.qname);
    return node;
  });
}

function noSyntax(path: string): RiftError {
  const ext = extensionOf(path);
  return capabilityUnavailable('syntax nodes', [
    ['path', path],
    ext === null ? ['extension', 'none — the path carries no extension'] : ['extension', ext],
  ], true);
}

/** Why the indexer left a file out, as a reason a caller can act on. */
const SKIP_REASONS: Readonly<Record<string, string>> = {
  not_utf8: 'the file is not valid UTF-8',
  nul_byte: 'the file contains a NUL byte',
  too_large: 'the file is over [source].max_file_bytes',
  unreadable: 'the file could not be read',
  non_nfc: 'its name on disk is not Unicode NFC; rename it to its NFC form',
  nfc_collision: 'more than one name on disk normalizes (NFC) to this path',
  parse_time: `its parse ran past ${PARSE_TIME_MAX_MS} ms and was cancelled; it is searchable as text`,
  syntax_nodes: `its syntax tree has more than ${SYNTAX_NODES_MAX} nodes; it is searchable as text`,
  syntax_depth: `its syntax tree is nested deeper than ${SYNTAX_DEPTH_MAX}; it is searchable as text`,
  parse_error: 'the syntax provider failed on it; it is searchable as text',
  worker_exit: 'reading and parsing it ended the parse worker twice (out of memory, or a crash)',
  symlink: 'it is a symbolic link (walks never follow links)',
  not_regular: 'it is not a regular file',
  depth: 'it lies deeper than the workspace depth bound',
};

/** A skip reason the indexer recorded, in words. */
export function describeSkip(reason: string): string {
  return SKIP_REASONS[reason] ?? reason;
}

/**
 * Why an existing visible file is not in the index: what the indexer recorded, its size over
 * the bound, or its Unicode form (F.2 rule 24); null when none applies (it does not exist).
 */
function leftOutReason(root: string, path: string, recorded: string | undefined, maxFileBytes: number): string | null {
  if (recorded) return SKIP_REASONS[recorded] ?? recorded;
  const form = nfcConflict(root, path);
  if (form) return SKIP_REASONS[form];
  try {
    const st = lstatSync(join(root, path));
    return st.isFile() && st.size > maxFileBytes ? `${st.size} bytes, over [source].max_file_bytes` : null;
  } catch {
    return null;
  }
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

/**
 * Where the index that served `row` holds it, for its history walk: its file's digest and the
 * span of the outermost declaration holding it in the text (containers that do not hold its
 * span, a Go method's receiver type, end the climb).
 */
function walkHint(store: Store, row: SymbolRow): WalkHint | undefined {
  const file = store.file(row.path);
  if (!file) return undefined;
  const rows = store.symbolsOfFile(row.path);
  let outer = { start: row.span_start, end: row.span_end };
  for (let c = row.container; c !== null; ) {
    const holder = rows.find((r) => r.qname === c);
    if (!holder || holder.span_start > outer.start || outer.end > holder.span_end) break;
    outer = { start: holder.span_start, end: holder.span_end };
    c = holder.container;
  }
  return { sha256: file.sha256, outer };
}
