import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { isAbsolute, relative, sep } from 'node:path';
import { decodeIdPath } from '../../core/ids.ts';
import { lineNumberAt } from '../../core/lines.ts';
import type { Diagnostic } from '../../protocol/change.ts';
import type { ToolContext } from './context.ts';

// What the language engines say about files the agent wrote, as lines the model reads after a
// write, edit, replace_symbol, patch or rename_symbol: errors and warnings with path, line and the
// engine that reported them.

export const DIAGNOSTICS_SHOWN_MAX = 8;

function pathOf(d: Diagnostic): string | null {
  const unit = d.span?.unit;
  return unit?.startsWith('rift://file/') ? decodeIdPath(unit.slice('rift://file/'.length)) : null;
}

/** `error src/a.ts:3: message (typescript-language-server 2322)`, errors and warnings first-come, bounded. */
export function renderDiagnostics(diagnostics: readonly Diagnostic[], root: string): string[] {
  const shown = diagnostics.filter((d) => d.severity === 'error' || d.severity === 'warning');
  const lines = shown.slice(0, DIAGNOSTICS_SHOWN_MAX).map((d) => {
    const path = pathOf(d);
    let where = '';
    if (path !== null && d.span) {
      const abs = `${root}/${path}`;
      const line = existsSync(abs) ? lineNumberAt(readFileSync(abs), d.span.range.start) : null;
      where = line === null ? ` ${path}` : ` ${path}:${line}`;
    }
    const engine = typeof d.extensions.engine === 'string' ? d.extensions.engine : null;
    const by = [engine, d.code].filter((x) => x !== null && x !== '').join(' ');
    return `${d.severity}${where}: ${d.message.split('\n')[0]}${by ? ` (${by})` : ''}`;
  });
  if (shown.length > lines.length) lines.push(`… ${shown.length - lines.length} more`);
  return lines;
}

/** The engine diagnostics of one file the agent just wrote, as a block to append ('' when clean or unserved). */
export async function engineReport(ctx: ToolContext, abs: string): Promise<string> {
  const engines = ctx.code.engines;
  if (!engines) return '';
  let rel: string;
  try {
    rel = relative(engines.root, realpathSync(abs));
  } catch {
    return '';
  }
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return '';
  const path = rel.split(sep).join('/');
  let diagnostics: Diagnostic[];
  try {
    diagnostics = await engines.diagnosticsAfter([{ path, bytes: readFileSync(abs) }]);
  } catch {
    return ''; // an invalid rift.toml: the write stands, the engines are not consulted
  }
  const lines = renderDiagnostics(diagnostics, engines.root);
  return lines.length === 0 ? '' : `\nThe language engine reports:\n${lines.map((l) => `  ${l}`).join('\n')}`;
}
