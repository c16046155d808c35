import type { z } from 'zod';
import type { PlanItem as PlanItemSchema, TurnEvent, TurnStats as TurnStatsSchema } from '../../protocol/serve.ts';

// Neutral types shared by the providers, the loop and the front ends (reference B.1).
// Provider wire shapes are translated to and from these at the provider edge only.

export type Role = 'system' | 'user' | 'assistant' | 'tool';

export interface ToolCall {
  id?: string;
  function: { index?: number; name: string; arguments: Record<string, unknown> };
}

export interface Message {
  role: Role;
  content: string;
  thinking?: string;
  tool_calls?: ToolCall[];
  tool_name?: string;
  tool_call_id?: string;
  images?: string[];
}

export interface ToolDef {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface ChatRequest {
  model: string;
  messages: Message[];
  tools: ToolDef[];
  /** undefined: omit (server default); false: the model cannot think. */
  think?: boolean;
  numCtx: number;
  temperature: number;
  numPredict?: number;
  /** A JSON schema the reply's content must follow (structured output: Ollama `format`, OpenAI `response_format`). */
  format?: { name: string; schema: Record<string, unknown> };
  /** Summaries run non-streaming (B.6). */
  stream?: boolean;
}

export interface CallStats {
  prompt_eval_count: number;
  eval_count: number;
  total_duration_ns: number;
  eval_duration_ns: number;
}

export interface ChatOutcome {
  message: Message;
  done_reason?: string;
  stats: CallStats;
  truncation_suspected: boolean;
}

export type StreamDelta =
  | { kind: 'thinking'; text: string }
  | { kind: 'content'; text: string }
  | { kind: 'tool_call'; call: ToolCall };

/** An assistant message as providers return it and the loop records it: empty thinking and calls omitted. */
export function assistantMessage(content: string, thinking: string | undefined, calls: ToolCall[]): Message {
  const message: Message = { role: 'assistant', content };
  if (thinking) message.thinking = thinking;
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

export interface ModelInfo {
  capabilities: string[];
  /** From `<arch>.context_length` (Ollama) or the server's model listing (OpenAI-compatible). */
  contextLength?: number;
}

export interface Provider {
  readonly kind: 'ollama' | 'openai';
  readonly baseUrl: string;
  tags(signal?: AbortSignal): Promise<string[]>;
  show(model: string, signal?: AbortSignal): Promise<ModelInfo>;
  chat(req: ChatRequest, onDelta: (d: StreamDelta) => void, signal?: AbortSignal): Promise<ChatOutcome>;
}

export type TurnStats = z.infer<typeof TurnStatsSchema>;

export function zeroStats(): TurnStats {
  return { iterations: 0, prompt_tokens: 0, billed_prompt_tokens: 0, output_tokens: 0, duration_ms: 0, tokens_per_sec: 0 };
}

export type PlanItem = z.infer<typeof PlanItemSchema>;

/** Every event the engine produces (serve-protocol-v1 turn flow; schemas in protocol/serve.ts). Front ends map these onto their wire. */
export type AgentEvent = TurnEvent;

export type EventSink = (e: AgentEvent) => void;

/** Failure counters for traces (B.12); internal, never on the serve wire. */
export interface FailureCounters {
  truncations: number;
  textual_recoveries: number;
  alias_hits: number;
  doom_loop_trips: number;
  unknown_tools: number;
  tool_errors: number;
  apply_nudges: number;
  greedy_retries: number;
  template_strips: number;
  compact_prunes: number;
  compact_summaries: number;
  stuck_turns: number;
}

export function zeroFailures(): FailureCounters {
  return {
    truncations: 0, textual_recoveries: 0, alias_hits: 0, doom_loop_trips: 0, unknown_tools: 0, tool_errors: 0,
    apply_nudges: 0, greedy_retries: 0, template_strips: 0, compact_prunes: 0, compact_summaries: 0, stuck_turns: 0,
  };
}
