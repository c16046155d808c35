import { ERROR_CODES, ERROR_REGISTRY, RiftError, type ErrorCode, type Phase } from '../core/errors.ts';
import type { ErrorData } from '../protocol/common.ts';

// The one place a RiftError becomes the wire error: JSON-RPC -32000 with ErrorData.

export const RIFT_ERROR_CODE = -32000;

export function toErrorData(err: unknown, phase: Phase): ErrorData {
  const e =
    err instanceof RiftError
      ? err
      : new RiftError('internal_error', [['detail', err instanceof Error ? err.message.slice(0, 512) : String(err).slice(0, 512)]]);
  const data: ErrorData = {
    code: e.code,
    message: e.message.slice(0, 4096),
    retry: e.retry ?? ERROR_REGISTRY[e.code].retry,
    phase: e.phase ?? phase,
    diagnostics: [],
    causes: [],
  };
  if (e.code === 'limit_exceeded' && e.limit) data.limit = e.limit;
  return data;
}

/** An Error the SDK serializes as `{code: -32000, message, data}` without rewording the message. */
export function wireError(err: unknown, phase: Phase): Error {
  const data = toErrorData(err, phase);
  return Object.assign(new Error(data.message), { code: RIFT_ERROR_CODE, data });
}

/**
 * The RiftError a wire error carries, for a client of another rift process (the agent talking
 * to the workspace server); null when the error is not ErrorData.
 */
export function fromWireError(err: unknown): RiftError | null {
  const e = err as { code?: unknown; data?: Partial<ErrorData> };
  const data = e?.data;
  if (e?.code !== RIFT_ERROR_CODE || !data || typeof data.code !== 'string' || !ERROR_CODES.includes(data.code as ErrorCode)) return null;
  return new RiftError(data.code as ErrorCode, [], {
    message: typeof data.message === 'string' ? data.message : undefined,
    retry: data.retry,
    phase: data.phase,
    limit: data.limit,
  });
}

/** The answer to a change whose server stopped before replying: it may have applied, so it is never resent. */
export function changeOutcomeUnknown(): RiftError {
  return new RiftError('temporarily_unavailable', [
    ['outcome', 'unknown: the workspace server stopped before answering this change, so it may have applied'],
    ['next', 'read the target again (get_symbol, nodes or search) to see whether it applied, then decide whether to send it again'],
  ], { retry: 'operator_action' });
}
