import { z } from 'zod';
import { Digest, ProjectionId } from './common.ts';
import { Diagnostic } from './change.ts';

// execute (spec "Execution"; reference A.8, F.16). The language is a bare string as everywhere
// on this wire (decisions.md); `sandbox` says whether the OS sandbox held the run.

export const ExecuteInput = z
  .object({
    language: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._+-]{0,63}(?::[a-z0-9][a-z0-9._+-]{0,63})?$/, { error: 'not a language selector (`name` or `name:dialect`, lowercase)' })
      .describe('The language to run, exactly as [execution].allow names it: `javascript` (node), `python` (python3), `bash`, `sh`'),
    block: z
      .object({
        source: z.string().min(1).describe('The code to run; at most [execution].max_code bytes (default 16 KiB)'),
        working_directory: z
          .string()
          .optional()
          .describe('Directory inside the execution copy to run in, as a project path ("" or omitted: the copy\'s root)'),
      })
      .strict(),
    projection: ProjectionId.optional().describe('Projection whose own execution copy to run in, refreshed from the projection\'s tree, instead of the workspace\'s'),
  })
  .strict();
export type ExecuteInput = z.infer<typeof ExecuteInput>;

export const CapturedText = z
  .object({
    text: z.string().describe('The stream\'s first bytes as UTF-8 (at most [execution].max_output bytes, cut at a character boundary)'),
    captured_bytes: z.number().int().min(0).describe('UTF-8 bytes of text'),
    total_bytes: z.number().int().min(0).describe('Bytes the stream carried in all'),
    truncated: z.boolean().describe('True when text holds less than the whole stream'),
    digest: Digest.describe('First 8 hex of the SHA-256 of the whole stream (all total_bytes), so truncated outputs still compare'),
  })
  .strict()
  .meta({ id: 'CapturedText' });
export type CapturedText = z.infer<typeof CapturedText>;

export const ExecuteResult = z
  .object({
    snapshot: z
      .object({ tree_revision: Digest.describe('Tree revision (the index\'s formula) of the files the run saw in the execution copy') })
      .strict(),
    language: z.string(),
    result: z
      .object({
        status: z.enum(['completed', 'failed']).describe('completed: exited 0; failed: exited non-zero, killed by a signal, or timed out'),
        exit_code: z.number().int().nullable().describe('null when killed (timeout or signal)'),
        stdout: CapturedText,
        stderr: CapturedText,
        diagnostics: z.array(Diagnostic).describe('How a failed run ended: rift.execute.timed_out, rift.execute.signalled, rift.execute.output_drained'),
      })
      .strict(),
    budget: z
      .object({
        timeout_ms: z.number().int().min(1).describe('[execution].max_timeout: the run was killed (with its process group) past it'),
        output_bytes: z.number().int().min(0).describe('[execution].max_output: bytes kept per stream'),
      })
      .strict(),
    sandbox: z
      .object({
        kind: z.enum(['bubblewrap', 'none']).describe('bubblewrap: network off, only the execution copy writable; none: the server\'s own permissions'),
        reason: z.string().optional().describe('Why no sandbox held the run (kind none)'),
      })
      .strict(),
  })
  .strict();
export type ExecuteResult = z.infer<typeof ExecuteResult>;
