// The one error registry (reference D.2). Every error renders as
// `explanation: key value, key value; action`; call sites add evidence, never prose.

export type ErrorCode =
  | 'invalid_request'
  | 'permission_denied'
  | 'resource_not_found'
  | 'content_unavailable'
  | 'cursor_invalid'
  | 'cursor_expired'
  | 'cancelled'
  | 'limit_exceeded'
  | 'storage_failure'
  | 'internal_error'
  | 'unsupported_path'
  | 'temporarily_unavailable'
  | 'configuration_invalid'
  | 'capability_unavailable';

export type Retry = 'never' | 'same_request' | 'operator_action';
export type Phase = 'read' | 'resolve' | 'check' | 'change';

interface Descriptor {
  explanation: string;
  retry: Retry;
  action: string;
}

export const ERROR_REGISTRY: Readonly<Record<ErrorCode, Descriptor>> = {
  invalid_request: {
    explanation: 'the request does not match the documented form',
    retry: 'never',
    action: 'correct the reported field and resend the request',
  },
  permission_denied: {
    explanation: 'the request addresses state outside what the workspace allows',
    retry: 'never',
    action: 'address paths inside the workspace root, without symlink components',
  },
  resource_not_found: {
    explanation: 'the requested resource does not exist in the current snapshot',
    retry: 'operator_action',
    action: 'search or list first, then retry with an identity that answer returned',
  },
  content_unavailable: {
    explanation: 'the addressed content exists but its bytes cannot be served',
    retry: 'never',
    action: 'request the declaration without its body, or read a source-backed unit',
  },
  cursor_invalid: {
    explanation: 'the cursor does not continue the request it was sent with',
    retry: 'never',
    action: 'page with the cursor exactly as returned, on the request that minted it',
  },
  cursor_expired: {
    explanation: "the cursor's captured results are no longer retained",
    retry: 'never',
    action: 'restart the request from its first page',
  },
  cancelled: {
    explanation: 'the request was cancelled before it completed',
    retry: 'same_request',
    action: 'resend the request if the result is still needed',
  },
  limit_exceeded: {
    explanation: 'the request exceeded a declared resource limit',
    retry: 'never',
    action: 'resize the request below the named limit, or raise that limit in the workspace configuration',
  },
  storage_failure: {
    explanation: 'workspace state could not be read or written',
    retry: 'same_request',
    action: 'check filesystem permissions and free space, then retry',
  },
  internal_error: {
    explanation: 'the server failed in a way it did not classify',
    retry: 'same_request',
    action: 'retry once, and report the full message if the failure repeats',
  },
  unsupported_path: {
    explanation: 'the path cannot be addressed by this workspace',
    retry: 'never',
    action: 'use a workspace-relative path with `/` separators and no `.` or `..` components',
  },
  temporarily_unavailable: {
    explanation: 'the server cannot serve this request yet',
    retry: 'same_request',
    action: 'resend the same request after a short delay',
  },
  configuration_invalid: {
    explanation: 'the workspace configuration failed validation',
    retry: 'operator_action',
    action: 'correct the reported configuration field, then retry',
  },
  capability_unavailable: {
    explanation: 'no configured provider serves this request',
    retry: 'operator_action',
    action: 'adjust the request to a served capability, or configure a provider that serves it',
  },
};

export const ERROR_CODES = Object.keys(ERROR_REGISTRY) as ErrorCode[];

/** Ordered evidence: `[key, value]` pairs rendered as `key value`. */
export type Evidence = ReadonlyArray<readonly [string, string | number | boolean]>;

export interface LimitEvidence {
  field: string;
  limit: number;
  required: number;
}

export interface RiftErrorOptions {
  retry?: Retry;
  phase?: Phase;
  limit?: LimitEvidence;
  /** A message rendered already: an error relayed from another rift process keeps its words. */
  message?: string;
}

export function renderError(code: ErrorCode, evidence: Evidence): string {
  const d = ERROR_REGISTRY[code];
  if (evidence.length === 0) return `${d.explanation}; ${d.action}`;
  const parts = evidence.map(([k, v]) => `${k} ${String(v)}`);
  return `${d.explanation}: ${parts.join(', ')}; ${d.action}`;
}

/** The program's own error. The wire error (-32000 + ErrorData) is made only at the transport edge. */
export class RiftError extends Error {
  readonly code: ErrorCode;
  readonly evidence: Evidence;
  readonly retry: Retry;
  readonly phase: Phase | undefined;
  readonly limit: LimitEvidence | undefined;

  constructor(code: ErrorCode, evidence: Evidence = [], options: RiftErrorOptions = {}) {
    super(options.message ?? renderError(code, evidence));
    this.name = 'RiftError';
    this.code = code;
    this.evidence = evidence;
    this.retry = options.retry ?? ERROR_REGISTRY[code].retry;
    this.phase = options.phase;
    this.limit = options.limit;
  }
}

/** `invalid_request` naming a field and its violation (reference D.3). */
export function invalidField(field: string, violation: string): RiftError {
  return new RiftError('invalid_request', [
    ['field', field],
    ['violation', violation],
  ]);
}

/** `limit_exceeded` that always carries which limit and by how much. */
export function limitExceeded(field: string, limit: number, required: number, evidence: Evidence = []): RiftError {
  return new RiftError(
    'limit_exceeded',
    [['limit', field], ['maximum', limit], ['required', required], ...evidence],
    { limit: { field, limit, required } },
  );
}

/** `storage_failure` naming the project path (never an absolute one) and the errno. */
export function storageFailure(path: string, e: unknown): RiftError {
  return new RiftError('storage_failure', [
    ['path', path],
    ['io', (e as NodeJS.ErrnoException).code ?? (e as Error).message],
  ]);
}

/** `capability_unavailable` for a named capability (reference D.3). */
export function capabilityUnavailable(capability: string, evidence: Evidence = []): RiftError {
  return new RiftError('capability_unavailable', [['capability', capability], ...evidence]);
}

export function isRiftError(e: unknown): e is RiftError {
  return e instanceof RiftError;
}
