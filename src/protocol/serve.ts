import { z } from 'zod';

// The serve protocol v1 (spec serve-protocol-v1.md; exact shapes in serve-reference A.3/A.4):
// every command and every event, one schema each; the TypeScript types are inferred from them.
// A missing field takes the reference's default (A.3: `edit_review` false, `apply` deny, an
// answer's `text` "", a prompt's `text` "" which is ignored, an `id` 0 which matches nothing);
// a field that is present with the wrong type is a `warning` whose text names the field. Unknown fields are ignored, as v1's
// additive rule asks of both sides.

export const PROTOCOL_VERSION = 1;

export const COMMANDS = ['hello', 'prompt', 'answer', 'edit_decision', 'cancel', 'undo', 'list_sessions', 'list_models', 'set_model', 'set_approval'] as const;
export type CommandName = (typeof COMMANDS)[number];

/** `<cmd> needs a [<type> ]'<field>' field`, the reference's wording for a bad field (A.3). */
const needs = (cmd: CommandName, field: string, type?: string) => ({ error: `${cmd} needs a ${type ? `${type} ` : ''}'${field}' field` });

const flag = z.unknown().optional().transform((v) => v === true);

const Hello = z.object({
  cmd: z.literal('hello'),
  /** Missing or not a boolean: false. */
  edit_review: flag,
  /** Applied only when a boolean. */
  approve: z.unknown().optional().transform((v) => (typeof v === 'boolean' ? v : undefined)),
});

const Prompt = z.object({ cmd: z.literal('prompt'), text: z.string(needs('prompt', 'text', 'string')).default('') });

const Answer = z.object({
  cmd: z.literal('answer'),
  id: z.number(needs('answer', 'id', 'number')).default(0),
  text: z.string(needs('answer', 'text', 'string')).default(''),
});

const EditDecision = z.object({
  cmd: z.literal('edit_decision'),
  id: z.number(needs('edit_decision', 'id', 'number')).default(0),
  apply: z.boolean(needs('edit_decision', 'apply', 'boolean')).default(false),
  content: z.string(needs('edit_decision', 'content', 'string')).optional(),
});

const SetModel = z.object({
  cmd: z.literal('set_model'),
  model: z.string(needs('set_model', 'model')).refine((m) => m.trim() !== '', needs('set_model', 'model')),
});

const SetApproval = z.object({ cmd: z.literal('set_approval'), approve: z.boolean(needs('set_approval', 'approve', 'boolean')) });

const bare = <C extends CommandName>(cmd: C) => z.object({ cmd: z.literal(cmd) });

export const CommandSchemas = {
  hello: Hello,
  prompt: Prompt,
  answer: Answer,
  edit_decision: EditDecision,
  cancel: bare('cancel'),
  undo: bare('undo'),
  list_sessions: bare('list_sessions'),
  list_models: bare('list_models'),
  set_model: SetModel,
  set_approval: SetApproval,
} as const satisfies Record<CommandName, z.ZodType>;

export type Command = { [K in CommandName]: z.infer<(typeof CommandSchemas)[K]> }[CommandName];

export const UNKNOWN_CMD = `unknown cmd (expected ${COMMANDS.join('/')})`;

/** A stdin line's JSON as a command, or the warning text that answers it. */
export function parseCommand(value: unknown): { ok: true; command: Command } | { ok: false; warning: string } {
  const cmd = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as { cmd?: unknown }).cmd : undefined;
  if (typeof cmd !== 'string' || !(COMMANDS as readonly string[]).includes(cmd)) return { ok: false, warning: UNKNOWN_CMD };
  const parsed = CommandSchemas[cmd as CommandName].safeParse(value);
  if (parsed.success) return { ok: true, command: parsed.data as Command };
  return { ok: false, warning: parsed.error.issues[0].message };
}

// Events (rift → stdout).

const int = z.number().int();
const count = int.min(0);

export const TurnStats = z.object({
  iterations: count,
  prompt_tokens: count,
  billed_prompt_tokens: count,
  output_tokens: count,
  duration_ms: count,
  tokens_per_sec: z.number().min(0),
});

export const PlanItem = z.object({ text: z.string(), done: z.boolean() });

const event = <E extends string, S extends z.ZodRawShape>(name: E, shape: S) => z.object({ event: z.literal(name), ...shape }).strict();

const Text = { text: z.string() };

/** The events an agent turn (or a background task between turns) produces. */
export const TurnEvent = z.discriminatedUnion('event', [
  event('iteration', { n: int.min(1) }),
  event('thinking', Text),
  event('content', Text),
  event('tool_start', { name: z.string(), args: z.record(z.string(), z.unknown()) }),
  event('tool_result', { name: z.string(), ok: z.boolean(), preview: z.string() }),
  event('edit_diff', { path: z.string(), added: count, removed: count, diff: z.array(z.string()) }),
  event('plan', { items: z.array(PlanItem) }),
  event('info', Text),
  event('warning', Text),
  event('subagent_started', { tag: z.string(), model: z.string(), label: z.string() }),
  event('subagent', { tag: z.string(), text: z.string(), warn: z.boolean() }),
  event('subagent_finished', { tag: z.string(), steps: count }),
  event('task_started', { id: int.min(1), label: z.string() }),
  event('task_finished', { id: int.min(1), label: z.string(), ok: z.boolean(), preview: z.string() }),
  event('done', { stats: TurnStats }),
  event('context', { used: count, limit: count }),
]);

export const Segment = z.union([
  z.object({ same: z.literal(true), lines: z.array(z.string()) }).strict(),
  z.object({ same: z.literal(false), old: z.array(z.string()), new: z.array(z.string()) }).strict(),
]);

export const HistoryMessage = z.object({ role: z.enum(['user', 'assistant']), text: z.string() }).strict();

export const SessionItem = z
  .object({ path: z.string(), title: z.string(), saved_at: count, cwd: z.string(), model: z.string(), turns: count })
  .strict();

/** Events of the serve session itself: startup, questions, answers to commands. */
export const SessionEvent = z.discriminatedUnion('event', [
  event('ready', {
    model: z.string(),
    session: z.string(),
    cwd: z.string(),
    version: z.string(),
    protocol_version: z.literal(PROTOCOL_VERSION),
    num_ctx: count,
    approve: z.boolean(),
    skills: z.array(z.object({ name: z.string(), description: z.string() }).strict()),
    commands: z.array(z.enum(COMMANDS)),
  }),
  event('capabilities', { protocol_version: z.literal(PROTOCOL_VERSION), edit_review: z.boolean(), approve: z.boolean() }),
  event('history', { messages: z.array(HistoryMessage) }),
  event('ask', { id: int.min(1), question: z.string(), detail: z.array(z.string()), choices: z.array(z.string()) }),
  event('edit_review', { id: int.min(1), tool: z.enum(['edit', 'write']), path: z.string(), old: z.string(), new: z.string(), segments: z.array(Segment) }),
  event('edit_review_closed', { id: int.min(1) }),
  /** rift addition (additive in v1): a pending ask dropped because its turn was cancelled. */
  event('ask_closed', { id: int.min(1) }),
  event('sessions', { items: z.array(SessionItem) }),
  event('models', { models: z.array(z.string()), current: z.string() }),
  event('model_changed', { model: z.string(), num_ctx: count, note: z.string() }),
  event('approval_changed', { approve: z.boolean() }),
]);

export type TurnEvent = z.infer<typeof TurnEvent>;
export type SessionEvent = z.infer<typeof SessionEvent>;
export type ServeEvent = TurnEvent | SessionEvent;

/** Every event on the wire: a turn event or a session event. */
export const ServeEvent = z.union([TurnEvent, SessionEvent]);
