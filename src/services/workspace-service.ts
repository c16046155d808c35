import { digest8 } from '../core/digest.ts';
import { invalidField } from '../core/errors.ts';
import { WORKSPACE_PAGE_SOURCES_MAX } from '../core/limits.ts';
import type { ConfigLoader } from '../config/loader.ts';
import { languageFor, type LanguageEntry } from '../config/workspace-config.ts';
import type { WorkspaceResource } from '../protocol/resources.ts';
import { SYNTAX_LANGUAGES } from '../syntax/types.ts';
import type { Indexer } from '../index/indexer.ts';
import type { EngineRegistry } from '../engine/registry.ts';
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

/** What the language engines report about themselves, one language at a time. */
export interface EngineStates {
  status(entry: LanguageEntry): EngineStatus;
}

/**
 * The engine registry's live states on the wire's scale: a language with no engine (none
 * configured or found, `lsp = false`, disabled, or a command the project is not trusted to run)
 * is `not_configured`, with the reason as detail; an engine not started yet is `configured`;
 * starting, loading a project and restarting after a crash are `starting`.
 */
export function registryEngineStates(registry: EngineRegistry): EngineStates {
  return {
    status(entry) {
      const s = registry.states().find((x) => x.language === entry.id);
      if (!s) return { engine: null, state: 'not_configured' };
      const out = (state: EngineState, detail?: string): EngineStatus => (detail === undefined ? { engine: s.engine, state } : { engine: s.engine, state, detail });
      switch (s.state) {
        case 'unavailable':
          return out('not_configured', s.reason);
        case 'idle':
          return out('configured');
        case 'stopped':
          return out('configured', 'stopped with the workspace');
        case 'starting':
          return out('starting', 'process starting');
        case 'loading':
          return out('starting', 'loading the project');
        case 'restarting':
          return out('starting', `restarting after a crash (${s.restarts ?? 0} so far)${s.reason ? `: ${s.reason}` : ''}`);
        case 'ready':
          return out('ready');
        case 'failed':
          return out('failed', s.reason ?? 'the engine failed');
      }
    },
  };
}

export class WorkspaceService {
  constructor(
    private readonly config: ConfigLoader,
    private readonly indexer: Indexer,
    private readonly engines: EngineStates,
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
