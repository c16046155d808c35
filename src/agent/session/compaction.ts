import type { Message, Provider, ToolDef } from '../base/types.ts';

// The context estimate (reference A.12) and two-stage compaction (B.6): prune old tool output,
// then, if still over budget, replace earlier history with a model-written summary.

export const OUTPUT_RESERVE = 4096;
export const SAFETY_MARGIN = 1024;
export const PRUNE_MIN_CHARS = 800;
export const PRUNE_KEEP_CHARS = 200;
export const SUMMARY_ENTRY_CHARS_MAX = 1500;
export const SUMMARY_ARGS_CHARS_MAX = 400;
export const SUMMARY_PREDICT = 1500;
export const KEEP_USER_TURNS = 2;

export const SUMMARY_SYSTEM = `You compress coding-agent conversations. Summarize the transcript into exactly these sections:
## Goal
## Constraints
## Progress (files changed, commands run, results)
## Key Decisions
## Next Steps / Critical Context
Be specific about file paths and findings. No preamble.`;

export const SUMMARY_PREFIX = '[Earlier conversation was compacted. Summary:]\n';

export function tokens(text: string): number {
  return Math.floor(Buffer.byteLength(text) / 4) + 1;
}

export function toolsOverhead(tools: readonly ToolDef[]): number {
  return tools.length === 0 ? 0 : tokens(JSON.stringify(tools));
}

export function unscaledEstimate(messages: readonly Message[], overhead: number): number {
  let n = overhead;
  for (const m of messages) {
    n += tokens(m.content) + 8;
    if (m.thinking) n += tokens(m.thinking);
    for (const c of m.tool_calls ?? []) n += tokens(JSON.stringify(c.function));
  }
  return n;
}

export function estimate(messages: readonly Message[], overhead: number, calibration: number): number {
  return Math.ceil(unscaledEstimate(messages, overhead) * calibration);
}

/** EMA toward the server's own count, clamped so one odd reply cannot swing the gauge. */
export function calibrate(calibration: number, promptEvalCount: number, unscaled: number): number {
  if (promptEvalCount <= 0 || unscaled <= 0) return calibration;
  const ratio = promptEvalCount / unscaled;
  return Math.min(3, Math.max(0.5, 0.7 * calibration + 0.3 * ratio));
}

export function usableBudget(numCtx: number): number {
  return Math.max(numCtx - OUTPUT_RESERVE - SAFETY_MARGIN, Math.floor(numCtx / 2));
}

/** A real user turn: not a tool result, not an engine note. */
export function isUserTurn(m: Message): boolean {
  return m.role === 'user' && !m.content.startsWith('[system]') && !m.content.startsWith(SUMMARY_PREFIX);
}

/** Index of the first message of the last `n` user turns (messages.length when there are none). */
export function turnStart(messages: readonly Message[], n: number): number {
  let seen = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (isUserTurn(messages[i]) && ++seen === n) return i;
  }
  return seen > 0 ? messages.findIndex(isUserTurn) : messages.length;
}

/** Stage 1: elide long tool outputs and drop thinking before the last two user turns. Returns how many were touched. */
export function pruneOldOutputs(messages: Message[]): number {
  const end = turnStart(messages, KEEP_USER_TURNS);
  let touched = 0;
  for (let i = 0; i < end; i++) {
    const m = messages[i];
    if (m.role === 'tool' && m.content.length > PRUNE_MIN_CHARS && !m.content.includes('elided')) {
      const cut = m.content.length - PRUNE_KEEP_CHARS;
      m.content = `${m.content.slice(0, PRUNE_KEEP_CHARS)}\n[... elided ${cut} bytes to save context; re-run the tool if you need this again]`;
      touched++;
    } else if (m.role === 'assistant' && m.thinking) {
      delete m.thinking;
      touched++;
    }
  }
  return touched;
}

function cap(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

/** The history before the current turn as a transcript, capped at `maxChars` (40% head, 60% tail). */
export function transcript(messages: readonly Message[], maxChars: number): string {
  const entries: string[] = [];
  for (const m of messages) {
    if (m.role === 'system') continue;
    if (m.role === 'user') entries.push(`USER: ${cap(m.content, SUMMARY_ENTRY_CHARS_MAX)}`);
    else if (m.role === 'tool') entries.push(`TOOL RESULT: ${cap(m.content, SUMMARY_ENTRY_CHARS_MAX)}`);
    else {
      if (m.content.trim()) entries.push(`ASSISTANT: ${cap(m.content, SUMMARY_ENTRY_CHARS_MAX)}`);
      for (const c of m.tool_calls ?? []) entries.push(`ASSISTANT CALLED: ${c.function.name}(${cap(JSON.stringify(c.function.arguments), SUMMARY_ARGS_CHARS_MAX)})`);
    }
  }
  const whole = entries.join('\n\n');
  if (whole.length <= maxChars) return whole;
  const headBudget = Math.floor(maxChars * 0.4);
  const tailBudget = maxChars - headBudget;
  const head: string[] = [];
  const tail: string[] = [];
  let used = 0;
  let i = 0;
  for (; i < entries.length && used + entries[i].length <= headBudget; i++) {
    head.push(entries[i]);
    used += entries[i].length + 2;
  }
  used = 0;
  let j = entries.length - 1;
  for (; j >= i && used + entries[j].length <= tailBudget; j--) {
    tail.unshift(entries[j]);
    used += entries[j].length + 2;
  }
  return [...head, `[... ${j - i + 1} messages omitted for length ...]`, ...tail].join('\n\n');
}

export interface SummaryTarget {
  provider: Provider;
  model: string;
  numCtx: number;
}

/**
 * Stage 2: summarizes everything before the last user turn with a non-streaming, tool-less
 * call and rebuilds the history as [system…, summary, current turn]. Throws on failure.
 */
export async function summarizeHistory(messages: Message[], target: SummaryTarget, usable: number, signal?: AbortSignal): Promise<void> {
  const cut = turnStart(messages, 1);
  const systems = messages.filter((m, i) => m.role === 'system' && i < cut);
  const earlier = messages.slice(0, cut).filter((m) => m.role !== 'system');
  if (earlier.length === 0) return;
  const out = await target.provider.chat(
    {
      model: target.model,
      messages: [
        { role: 'system', content: SUMMARY_SYSTEM },
        { role: 'user', content: transcript(earlier, usable * 3) },
      ],
      tools: [],
      think: false,
      numCtx: target.numCtx,
      temperature: 0,
      numPredict: SUMMARY_PREDICT,
      stream: false,
    },
    () => {},
    signal,
  );
  const summary = out.message.content.trim();
  if (summary === '') throw new Error('the model returned an empty summary');
  const current = messages.slice(cut);
  messages.splice(0, messages.length, ...systems, { role: 'user', content: `${SUMMARY_PREFIX}${summary}` }, ...current);
}
