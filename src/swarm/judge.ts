import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAgentConfig } from '../agent/base/config.ts';
import type { Message } from '../agent/base/types.ts';
import { buildRoute } from '../agent/providers/routing.ts';
import { SWARM_JUDGE_PATCH_BYTES_MAX } from '../core/limits.ts';
import type { CandidateResult } from './run.ts';

// The judge (`--judge MODEL`): one model sees the task and every candidate's outcome and diff,
// and answers through structured output whose schema allows only the names of candidates that
// produced a patch, or "none". An answer off the schema is asked for once more; a second miss,
// or a model that cannot be reached, is "no verdict" — never an exception for the caller.

export interface Verdict {
  /** A candidate's name, `none`, or null for no verdict. */
  winner: string | null;
  reason: string;
}

const SYSTEM = `You are the referee of a coding race. Several candidates worked the same task, each in its own copy of the repository. You see the task and, for each candidate, how its run ended, whether the task's tests passed in its copy, and its change as a unified diff. Pick the one change that best does the task — correct, complete, and no larger than needed — or "none" when no change does it. Answer only with JSON: {"winner": "<candidate name or none>", "reason": "<one line>"}.`;

/** The JSON schema of the judge's answer over `names` (the candidates with a patch) and "none". */
export function verdictSchema(names: readonly string[]): Record<string, unknown> {
  return {
    type: 'object',
    properties: { winner: { type: 'string', enum: [...names, 'none'] }, reason: { type: 'string' } },
    required: ['winner', 'reason'],
    additionalProperties: false,
  };
}

/** What the judge is shown: the task, then one section per candidate (its patch cut at SWARM_JUDGE_PATCH_BYTES_MAX). */
export function judgeBrief(repo: string, task: string, results: readonly CandidateResult[]): string {
  const parts = [`Task:\n${task}`];
  for (const r of results) {
    const tests = r.tests === null ? 'not run' : r.tests ? 'passed' : 'failed';
    let body = '(no change)';
    if (r.patch) {
      const bytes = readFileSync(join(repo, r.patch));
      body = bytes.subarray(0, SWARM_JUDGE_PATCH_BYTES_MAX).toString('utf8');
      if (bytes.length > SWARM_JUDGE_PATCH_BYTES_MAX) body += `\n[diff cut at ${SWARM_JUDGE_PATCH_BYTES_MAX} of ${bytes.length} bytes]`;
    }
    parts.push(`Candidate ${r.name} (model ${r.model}${r.temperature !== undefined ? `, temperature ${r.temperature}` : ''}): ${r.status}${r.detail ? ` — ${r.detail}` : ''}; tests ${tests}; ${r.filesChanged} file(s) changed\n${r.diffstat}\n${body}`);
  }
  return parts.join('\n\n');
}

/** Parses one answer against the schema; null when it does not follow it. */
export function parseVerdict(text: string, names: readonly string[]): Verdict | null {
  let v: unknown;
  try {
    v = JSON.parse(text.trim());
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null) return null;
  const { winner, reason } = v as { winner?: unknown; reason?: unknown };
  if (typeof winner !== 'string' || typeof reason !== 'string' || ![...names, 'none'].includes(winner)) return null;
  return { winner, reason: reason.replace(/\s+/g, ' ').trim() };
}

export interface JudgeOptions {
  cwd: string;
  repo: string;
  task: string;
  model: string;
  host?: string;
  signal?: AbortSignal;
}

export async function judge(o: JudgeOptions, results: readonly CandidateResult[]): Promise<Verdict> {
  const names = results.filter((r) => r.patch !== null).map((r) => r.name);
  if (names.length === 0) return { winner: 'none', reason: 'no candidate produced a change' };
  const { config } = loadAgentConfig(o.cwd, { host: o.host });
  let route;
  try {
    route = buildRoute(o.model, config);
  } catch (e) {
    return { winner: null, reason: `no verdict: ${(e as Error).message}` };
  }
  const messages: Message[] = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: judgeBrief(o.repo, o.task, results) },
  ];
  const format = { name: 'verdict', schema: verdictSchema(names) };
  for (let attempt = 0; attempt < 2; attempt++) {
    let text: string;
    try {
      const out = await route.provider.chat({ model: route.model, messages, tools: [], numCtx: config.numCtx, temperature: 0, format }, () => {}, o.signal);
      text = out.message.content;
    } catch (e) {
      return { winner: null, reason: `no verdict: the judge ${o.model} could not answer: ${(e as Error).message}` };
    }
    const v = parseVerdict(text, names);
    if (v) return v;
    messages.push(
      { role: 'assistant', content: text },
      { role: 'user', content: `That answer does not follow the required form. Reply with only a JSON object {"winner": one of ${JSON.stringify([...names, 'none'])}, "reason": "<one line>"}.` },
    );
  }
  return { winner: null, reason: `no verdict: the judge ${o.model} answered off the schema twice` };
}
