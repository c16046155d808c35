import { ERROR_REGISTRY, RiftError, type Phase } from '../core/errors.ts';
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
