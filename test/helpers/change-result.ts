// The ChangeResult fields tests read, loosely typed: one shape for every change-tool test.

export type ChangeWarningSeen = { kind: string; message: string; [field: string]: unknown };

export interface ChangeResultSeen {
  status: string;
  reason?: string;
  preconditions?: Array<{ kind: string; status: string; addresses: unknown[]; paths: string[]; expected: unknown; observed: unknown }>;
  diagnostics?: Array<{ code: string | null; message: string; severity: string }>;
  summary?: {
    files: Array<{ path: string; change: string }>;
    diagnostics: Array<{ code: string | null; message: string; severity: string; span: unknown; extensions: Record<string, unknown>; language: string | null }>;
    warnings: ChangeWarningSeen[];
  };
}
