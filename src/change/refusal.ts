import { cutUtf8 } from '../core/lines.ts';
import { PRECONDITION_TEXT_BYTES_MAX } from '../core/limits.ts';
import type { Diagnostic, OperationPrecondition, PreconditionValue, RefusedResult } from '../protocol/change.ts';

// Refusals are results, never errors (spec "Change results"). Resolution throws a
// `Refusal` wherever it meets one; the pipeline turns it into the `refused` result.

export type Address = OperationPrecondition['addresses'][number];

export class Refusal extends Error {
  readonly result: RefusedResult;
  constructor(result: RefusedResult) {
    super(`change refused: ${result.reason}`);
    this.name = 'Refusal';
    this.result = result;
  }
}

export function isRefusal(e: unknown): e is Refusal {
  return e instanceof Refusal;
}

export const bool = (value: boolean): PreconditionValue => ({ kind: 'boolean', value });
export const count = (value: number): PreconditionValue => ({ kind: 'count', value });
export const text = (value: string): PreconditionValue => ({ kind: 'text', value: cutUtf8(value, PRECONDITION_TEXT_BYTES_MAX) });

export function failed(
  kind: OperationPrecondition['kind'],
  addresses: Address[],
  paths: string[],
  expected: PreconditionValue,
  observed: PreconditionValue,
): OperationPrecondition {
  return { kind, status: 'failed', addresses, paths, expected, observed };
}

export function refuse(reason: RefusedResult['reason'], preconditions: OperationPrecondition[], diagnostics: Diagnostic[] = []): Refusal {
  return new Refusal({ status: 'refused', reason, preconditions, diagnostics });
}

/** `unmet_precondition` / `target_exists`: the addressed target is missing (or, for creation, present). */
export function targetExists(addresses: Address[], paths: string[], expected: boolean): Refusal {
  return refuse('unmet_precondition', [failed('target_exists', addresses, paths, bool(expected), bool(!expected))]);
}

/** `unmet_precondition` / `target_is_file`: something other than a regular file occupies the target. */
export function targetIsFile(addresses: Address[], path: string): Refusal {
  return refuse('unmet_precondition', [failed('target_is_file', addresses, [path], bool(true), bool(false))]);
}

/** `unmet_precondition` / `writable`: the file's mode forbids changing it (0444 and the like). */
export function notWritable(addresses: Address[], path: string, mode: number): Refusal {
  const octal = (mode & 0o7777).toString(8).padStart(4, '0');
  return refuse('unmet_precondition', [failed('writable', addresses, [path], text('a file its owner may write'), text(`mode ${octal}`))]);
}

/** `unmet_precondition` / `source_unchanged` with expected and observed texts (digests or hunk evidence). */
export function sourceChanged(addresses: Address[], paths: string[], expected: string, observed: string): Refusal {
  return refuse('unmet_precondition', [failed('source_unchanged', addresses, paths, text(expected), text(observed))]);
}

/** A diagnostic authored by rift itself (no span, no language; callers add them where they apply). */
export function riftDiagnostic(severity: Diagnostic['severity'], code: string, message: string): Diagnostic {
  return {
    severity,
    code,
    message: cutUtf8(message, 4096),
    span: null,
    related: [],
    tags: [],
    reliability: 'reliable',
    continuation: 'unknown',
    extensions: {},
    language: null,
  };
}

/** `unsupported`, naming the policy or capability that stops the change. */
export function unsupported(message: string): Refusal {
  return refuse('unsupported', [], [riftDiagnostic('error', 'rift.change.unsupported', message)]);
}
