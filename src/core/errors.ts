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
  /** Actions for the cases the default does not fit, by name; a site picks one, never writes its own. */
  variants?: Readonly<Partial<Record<ActionVariant, string>>>;
}

/**
 * The cases a code's default action does not fit: a workspace directory that does not exist,
 * a limit with no configuration key to raise, a capability no configuration provides.
 */
export type ActionVariant = 'workspace' | 'fixed' | 'unserved' | 'operator';

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
    variants: { workspace: 'start rift inside an existing directory, or name one with --workspace DIR' },
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
    // Most limits are fixed; only a few have a `rift.toml` key to raise.
    variants: { fixed: 'resize the request below the named limit' },
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
    // What waiting does not mend (a language engine that gave up restarting).
    variants: { operator: 'resend once the cause named above is fixed; waiting alone does not help' },
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
    // A capability no configuration of this build can provide.
    variants: { unserved: 'adjust the request to a served capability' },
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
  /** The registry's action for this case, where the code's default does not fit. */
  action?: ActionVariant;
}

/** The action a code directs, in its default form or the named variant (which the code must define). */
export function actionOf(code: ErrorCode, variant?: ActionVariant): string {
  const d = ERROR_REGISTRY[code];
  if (variant === undefined) return d.action;
  const action = d.variants?.[variant];
  if (action === undefined) throw new Error(`error code ${code} has no action variant ${variant}`);
  return action;
}

export function renderError(code: ErrorCode, evidence: Evidence, variant?: ActionVariant): string {
  const d = ERROR_REGISTRY[code];
  const action = actionOf(code, variant);
  if (evidence.length === 0) return `${d.explanation}; ${action}`;
  const parts = evidence.map(([k, v]) => `${k} ${String(v)}`);
  return `${d.explanation}: ${parts.join(', ')}; ${action}`;
}

/** The program's own error. The wire error (-32000 + ErrorData) is made only at the transport edge. */
export class RiftError extends Error {
  readonly code: ErrorCode;
  readonly evidence: Evidence;
  readonly retry: Retry;
  readonly phase: Phase | undefined;
  readonly limit: LimitEvidence | undefined;

  constructor(code: ErrorCode, evidence: Evidence = [], options: RiftErrorOptions = {}) {
    super(options.message ?? renderError(code, evidence, options.action));
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

/**
 * `limit_exceeded` that always carries which limit and by how much. Only a limit that is a
 * `rift.toml` key (`configurable`) advises raising it in the workspace configuration.
 */
export function limitExceeded(field: string, limit: number, required: number, evidence: Evidence = [], configurable = false): RiftError {
  return new RiftError(
    'limit_exceeded',
    [['limit', field], ['maximum', limit], ['required', required], ...evidence],
    { limit: { field, limit, required }, action: configurable ? undefined : 'fixed' },
  );
}

/** `storage_failure` naming the project path (never an absolute one) and the errno. */
export function storageFailure(path: string, e: unknown): RiftError {
  return new RiftError('storage_failure', [
    ['path', path],
    ['io', (e as NodeJS.ErrnoException).code ?? (e as Error).message],
  ]);
}

/**
 * `capability_unavailable` for a named capability (reference D.3). `configurable` says whether
 * some configuration serves it (a provider to enable); otherwise the advice is only to adjust.
 */
export function capabilityUnavailable(capability: string, evidence: Evidence = [], configurable = false): RiftError {
  return new RiftError('capability_unavailable', [['capability', capability], ...evidence], { action: configurable ? undefined : 'unserved' });
}

export function isRiftError(e: unknown): e is RiftError {
  return e instanceof RiftError;
}
