import { digest8 } from '../core/digest.ts';
import { invalidField } from '../core/errors.ts';
import { WORKSPACE_PAGE_SOURCES_MAX } from '../core/limits.ts';
import type { ConfigLoader } from '../config/loader.ts';
import { languageFor, type LanguageEntry } from '../config/workspace-config.ts';
import type { WorkspaceResource } from '../protocol/resources.ts';
import { SYNTAX_LANGUAGES } from '../syntax/types.ts';
import type { Indexer } from '../index/indexer.ts';
import { sourcePage } from '../index/resource-queries.ts';
import { pagination } from './read-gate.ts';

// `rift://workspace` (spec "Workspace"; reference B.2, F.9 rules 96–97): the accepted
// configuration beside one page of the captured source catalog. Language and hook summaries
// repeat on every page so each page reads alone.

export type EngineState = WorkspaceResource['languages'][number]['lsp']['state'];

export interface EngineStatus {
  engine: string | null;
  state: EngineState;
  /** Why an engine failed, or what it is waiting for. */
  detail?: string;
}

/**
 * What the language engines report about themselves. Until engines run in-process, the
 * configuration alone answers: `not_configured` without an `lsp` key, `configured` with one.
 * An engine host replaces this with `starting`, `ready` or `failed` as its processes go.
 */
export interface EngineStates {
  status(entry: LanguageEntry): EngineStatus;
}

export const configuredEngineStates: EngineStates = {
  status: (entry) => (entry.lsp === null ? { engine: null, state: 'not_configured' } : { engine: entry.lsp, state: 'configured' }),
};

export class WorkspaceService {
  constructor(
    private readonly config: ConfigLoader,
    private readonly indexer: Indexer,
    private readonly engines: EngineStates = configuredEngineStates,
  ) {}

  read(pageIndex: number): WorkspaceResource {
    if (!Number.isSafeInteger(pageIndex) || pageIndex < 0) throw invalidField('page_index', 'not a non-negative integer');
    const accepted = this.config.current();
    const { config } = accepted;
    const allowed = (id: string) => config.execution.allow.some((a) => a === id || a.startsWith(`${id}:`));
    const { rows, total } = sourcePage(this.indexer.store, pageIndex * WORKSPACE_PAGE_SOURCES_MAX, WORKSPACE_PAGE_SOURCES_MAX);
    return {
      configuration_revision: accepted.revision ?? digest8(new Uint8Array()),
      languages: config.languages.map((l) => {
        const status = this.engines.status(l);
        const lsp: WorkspaceResource['languages'][number]['lsp'] = { engine: status.engine, state: status.state };
        if (status.detail !== undefined) lsp.detail = status.detail;
        return {
          id: l.id,
          enabled: l.enabled,
          include: [...l.include],
          exclude: [...l.exclude],
          syntax: SYNTAX_LANGUAGES.has(l.id),
          execution: allowed(l.id),
          lsp,
        };
      }),
      hooks: config.hooks.map((h) => ({ id: h.id, kind: h.kind, role: h.role, include: [...h.include], exclude: [...h.exclude] })),
      source: rows.map((f) => {
        // The entry that claims the path now, custom languages (no syntax provider) included.
        const entry = languageFor(config, f.path);
        return { path: f.path, digest: f.sha256.slice(0, 8), languages: entry === null ? [] : [entry.id] };
      }),
      pagination: pagination(pageIndex, total, WORKSPACE_PAGE_SOURCES_MAX),
    };
  }
}
