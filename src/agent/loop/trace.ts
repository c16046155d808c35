import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { TurnResult } from './agent.ts';

// Traces (reference B.12): one JSON line per turn, appended, for comparing models and
// spotting the failure modes local models have (truncation, textual calls, loops).

export interface TraceContext {
  model: string;
  provider: string;
  numCtx: number;
  prompt: string;
}

export function traceRecord(ctx: TraceContext, r: TurnResult, now: Date = new Date()): Record<string, unknown> {
  return {
    ts: now.toISOString(),
    model: ctx.model,
    provider: ctx.provider,
    num_ctx: ctx.numCtx,
    prompt: ctx.prompt.slice(0, 240),
    outcome: r.outcome,
    iterations: r.stats.iterations,
    prompt_tokens: r.stats.prompt_tokens,
    billed_prompt_tokens: r.stats.billed_prompt_tokens,
    output_tokens: r.stats.output_tokens,
    duration_ms: r.stats.duration_ms,
    tools: r.tools,
    failures: r.failures,
    ...(r.error ? { error: r.error } : {}),
  };
}

export function appendTrace(path: string, record: Record<string, unknown>): void {
  mkdirSync(dirname(path), { recursive: true });
  appendFileSync(path, `${JSON.stringify(record)}\n`);
}
