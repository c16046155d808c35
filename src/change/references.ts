import type { Location } from 'vscode-languageserver-protocol';
import { RiftError } from '../core/errors.ts';
import { REMOVE_REFERENCES_REPORTED_MAX } from '../core/limits.ts';
import { EngineDeclined, fileUri, unavailableDetail, uriToPath, type LspClient } from '../engine/client.ts';
import { LineIndex } from '../engine/position.ts';
import type { EngineHandle } from '../engine/registry.ts';
import type { ChangeWarning } from '../protocol/change.ts';
import type { ChangeContext } from './plan.ts';
import { count, failed, refuse, type Address } from './refusal.ts';

// The reference check before a removal (reference F.13 rules 149–152, decisions.md): a standing
// reference refuses `no_references` unless forced; no engine, or one without
// textDocument/references, applies with `rift.remove.references_unchecked` naming why; an empty
// answer from an engine that has not confirmed readiness is `temporarily_unavailable`, or with
// force `rift.remove.readiness_unconfirmed`.

const isIdentByte = (b: number | undefined) =>
  b !== undefined && (b >= 0x80 || b === 0x24 || b === 0x5f || (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a));

/** Offset of a declaration's name: its first whole-word occurrence inside the declaration node. */
export function nameOffset(bytes: Buffer, itemStart: number, itemEnd: number, name: string): number {
  const needle = Buffer.from(name, 'utf8');
  for (let at = bytes.indexOf(needle, itemStart); at >= 0 && at + needle.length <= itemEnd; at = bytes.indexOf(needle, at + 1)) {
    if (!isIdentByte(bytes[at - 1]) && !isIdentByte(bytes[at + needle.length])) return at;
  }
  return itemStart;
}

/** A started engine with the addressed document open at the bytes the change resolved against. */
export interface Connected {
  handle: EngineHandle;
  client: LspClient;
  uri: string;
  lines: LineIndex;
}

export async function connect(ctx: ChangeContext, handle: EngineHandle, path: string, bytes: Buffer): Promise<Connected> {
  const client = await handle.client();
  ctx.engines.syncDocument(client, handle.language, path, bytes);
  return { handle, client, uri: fileUri(ctx.root, path), lines: new LineIndex(bytes, client.encoding) };
}

export interface RemovalTarget {
  address: Address;
  path: string;
  bytes: Buffer;
  /** Where the declaration's name stands. */
  nameAt: number;
  /** The bytes the removal takes out: references inside them go with it. */
  removed: { start: number; end: number };
  force: boolean;
}

/** Warnings the removal carries; throws the refusal or `temporarily_unavailable` when it must not apply. */
export async function checkReferences(ctx: ChangeContext, t: RemovalTarget): Promise<ChangeWarning[]> {
  const found = ctx.engines.lookup(t.path, ctx.config);
  if (!found.ok) return [unchecked(found.reason)];
  let c: Connected;
  try {
    c = await connect(ctx, found.handle, t.path, t.bytes);
  } catch (e) {
    return [unchecked(`${found.handle.name} is unavailable: ${unavailableDetail(e)}`)];
  }
  if (!c.client.capabilities.referencesProvider) return [unchecked(`${c.handle.name} does not advertise textDocument/references`)];
  await c.client.waitReady(c.handle.readyTimeoutMs);
  let locations: Location[] | null;
  try {
    locations = await c.client.request<Location[] | null>('textDocument/references', {
      textDocument: { uri: c.uri },
      position: c.lines.position(t.nameAt),
      context: { includeDeclaration: false },
    });
  } catch (e) {
    if (e instanceof EngineDeclined) return [unchecked(`${c.handle.name} could not list references: ${e.message}`)];
    throw e;
  }
  // Readiness is judged when the answer arrives: an engine still loading answers from a partial view.
  const ready = c.client.ready;
  const standing = (locations ?? []).flatMap((l) => {
    const path = uriToPath(ctx.root, l.uri);
    if (path === null) return [{ path: l.uri, line: l.range.start.line + 1 }];
    if (path === t.path) {
      const at = c.lines.offset(l.range.start);
      if (at !== null && at >= t.removed.start && at < t.removed.end) return [];
    }
    return [{ path, line: l.range.start.line + 1 }];
  });
  standing.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line));
  if (standing.length > 0) {
    const references = standing.slice(0, REMOVE_REFERENCES_REPORTED_MAX);
    if (t.force) {
      const more = standing.length - references.length;
      return [
        {
          kind: 'rift.remove.references_forced',
          message: `removed although ${c.handle.name} reports ${standing.length} standing reference${standing.length === 1 ? '' : 's'}${more > 0 ? ` (${more} not listed)` : ''}: ${references.map((r) => `${r.path}:${r.line}`).join(', ')}`,
          references,
        },
      ];
    }
    const paths = [...new Set(references.map((r) => r.path))].filter((p) => !p.startsWith('file:')).slice(0, 64);
    throw refuse('unmet_precondition', [failed('no_references', [t.address], paths, count(0), count(standing.length))]);
  }
  if (!ready) {
    if (t.force) {
      return [{ kind: 'rift.remove.readiness_unconfirmed', message: `${c.handle.name} answered no references before confirming it had loaded the project; removed because force was set` }];
    }
    throw new RiftError(
      'temporarily_unavailable',
      [
        ['engine', c.handle.name],
        ['detail', 'the engine answered no references before confirming its readiness (still loading); resend once it has loaded, or set force'],
      ],
      { phase: 'check' },
    );
  }
  return [];
}

export function unchecked(reason: string): ChangeWarning {
  return {
    kind: 'rift.remove.references_unchecked',
    message: `references were not checked: ${reason}, so nothing confirmed the declaration is unused`,
    reason,
  };
}
