import { existsSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import { digest8 } from '../core/digest.ts';
import { RiftError, capabilityUnavailable, invalidField } from '../core/errors.ts';
import { nodeId, symbolId } from '../core/ids.ts';
import { GET_SYMBOL_LIMIT_DEFAULT } from '../core/limits.ts';
import { extensionOf, projectPathViolation, underFloor } from '../core/path.ts';
import type { GetSymbolInput, GetSymbolResult, NodesInput, NodesResult } from '../protocol/read.ts';
import { nodesAt } from '../syntax/nodes.ts';
import { initSyntax } from '../syntax/runtime.ts';
import type { LanguageId } from '../syntax/types.ts';
import type { Indexer } from '../index/indexer.ts';
import { nfcConflict } from '../workspace/walk.ts';
import type { SymbolRow } from '../index/store.ts';
import { ReadGate, pageLimit, pagination } from './read-gate.ts';

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

  async getSymbol(input: GetSymbolInput): Promise<GetSymbolResult> {
    const limit = pageLimit(input.limit, GET_SYMBOL_LIMIT_DEFAULT);
    const pageIndex = input.page_index ?? 0;
    const include = new Set(input.include ?? ['source']);
    await this.gate.admit(input.rev);
    if (include.has('history')) throw capabilityUnavailable('symbol history');

    const store = this.indexer.store;
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
    return { hits, pagination: pagination(pageIndex, total, limit), warnings: this.gate.warnings() };
  }

  async nodes(input: NodesInput): Promise<NodesResult> {
    const violation = projectPathViolation(input.path);
    if (violation) throw invalidField('path', violation);
    await this.gate.admit(input.rev);
    await initSyntax();
    // From here on the answer is read synchronously: one committed state of the store.
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
    if (visible && language !== null && !file) {
      // A file that exists but was left out of the index: its bytes cannot be served as source.
      const reason = leftOutReason(this.root, input.path, store.skippedFile(input.path)?.reason, selection.config.source.max_file_bytes);
      if (reason) throw new RiftError('content_unavailable', [['path', input.path], ['reason', reason]]);
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
    return { nodes, warnings: this.gate.warnings() };
  }
}

/** Why the indexer left a file out, as a reason a caller can act on. */
const SKIP_REASONS: Readonly<Record<string, string>> = {
  not_utf8: 'the file is not valid UTF-8',
  nul_byte: 'the file contains a NUL byte',
  too_large: 'the file is over [source].max_file_bytes',
  unreadable: 'the file could not be read',
  non_nfc: 'its name on disk is not Unicode NFC; rename it to its NFC form',
  nfc_collision: 'more than one name on disk normalizes (NFC) to this path',
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
