// Slash commands: the table, parsing and completion. Pure; the controller runs them.

export interface SlashCommand {
  name: string;
  /** Argument synopsis shown in help and completion. */
  args: string;
  summary: string;
  /** Allowed while a turn runs (read-only or a shared switch). */
  midTurn: boolean;
}

export const COMMANDS: readonly SlashCommand[] = [
  { name: 'help', args: '', summary: 'commands and keys', midTurn: true },
  { name: 'model', args: '[name]', summary: 'switch the model live, same conversation (no name: pick one)', midTurn: false },
  { name: 'approve', args: '[on|off]', summary: 'approval on: edits and commands ask first (off = /yolo)', midTurn: true },
  { name: 'yolo', args: '', summary: 'auto-approve: edits and commands apply without asking', midTurn: true },
  { name: 'clear', args: '', summary: 'start a fresh conversation (this one stays resumable)', midTurn: false },
  { name: 'compact', args: '', summary: 'compact the conversation now (old outputs pruned, history summarized)', midTurn: false },
  { name: 'sessions', args: '', summary: 'list saved sessions', midTurn: true },
  { name: 'resume', args: '[n|path]', summary: 'continue a saved session (no argument: pick one)', midTurn: false },
  { name: 'skills', args: '', summary: 'list skills and plugin commands', midTurn: true },
  { name: 'skill:', args: '<name> [task]', summary: 'run a skill or plugin command', midTurn: false },
  { name: 'plan', args: '', summary: "show the agent's live plan", midTurn: true },
  { name: 'undo', args: '', summary: "revert the last turn's file changes (write/edit only)", midTurn: false },
  { name: 'diff', args: '', summary: 'show the changes /undo would revert', midTurn: true },
  { name: 'tools', args: '', summary: 'list the tools the model can call', midTurn: true },
  { name: 'init', args: '', summary: 'have the model explore the repository and write AGENTS.md', midTurn: false },
  { name: 'swarm', args: '[--models a,b] [--judge M] <task>', summary: 'race several models on the task in git worktrees, judge, pick one to merge', midTurn: false },
  { name: 'export', args: '[file]', summary: 'write the transcript as Markdown (default rift-transcript-<session>.md)', midTurn: true },
  { name: 'exit', args: '', summary: 'quit (Ctrl-C twice does too)', midTurn: true },
];

export type Parsed =
  | { kind: 'prompt'; text: string }
  | { kind: 'command'; command: SlashCommand; args: string }
  | { kind: 'skill'; text: string }
  | { kind: 'unknown'; name: string };

/** A line starting with `/` is a command; `//` escapes a prompt that starts with a slash. */
export function parseInput(raw: string): Parsed {
  const text = raw.trim();
  if (text.startsWith('//')) return { kind: 'prompt', text: raw.trim().slice(1) };
  if (!text.startsWith('/')) return { kind: 'prompt', text: raw };
  if (text.startsWith('/skill:')) return { kind: 'skill', text };
  const m = /^\/(\S+)\s*([\s\S]*)$/.exec(text)!;
  const command = COMMANDS.find((c) => c.name === m[1]);
  if (!command) return { kind: 'unknown', name: m[1] };
  return { kind: 'command', command, args: m[2].trim() };
}

export interface Candidate {
  /** Text that replaces the input from `from` on. */
  value: string;
  label: string;
  hint: string;
}

export interface CompletionContext {
  skills: ReadonlyArray<{ name: string; description: string }>;
  /** Models found by the last discovery (empty until one ran). */
  models: readonly string[];
}

export interface Completion {
  from: number;
  items: Candidate[];
}

/**
 * Candidates for the input as typed: command names after `/`, skill names after `/skill:`,
 * models after `/model `, `on`/`off` after `/approve `. Null when nothing applies.
 */
export function complete(input: string, ctx: CompletionContext): Completion | null {
  if (!input.startsWith('/') || input.includes('\n')) return null;
  if (input.startsWith('/skill:')) {
    const typed = input.slice('/skill:'.length);
    if (/\s/.test(typed)) return null;
    const items = ctx.skills
      .filter((s) => s.name.startsWith(typed))
      .map((s) => ({ value: `/skill:${s.name} `, label: `/skill:${s.name}`, hint: s.description }));
    return items.length > 0 ? { from: 0, items } : null;
  }
  const space = input.indexOf(' ');
  if (space < 0) {
    const typed = input.slice(1);
    const items: Candidate[] = [];
    for (const c of COMMANDS) {
      if (!c.name.startsWith(typed)) continue;
      if (c.name === 'skill:') {
        for (const s of ctx.skills) items.push({ value: `/skill:${s.name} `, label: `/skill:${s.name}`, hint: s.description });
      } else items.push({ value: `/${c.name}${c.args ? ' ' : ''}`, label: `/${c.name}${c.args ? ` ${c.args}` : ''}`, hint: c.summary });
    }
    if (items.length === 1 && items[0].value === input) return null;
    return items.length > 0 ? { from: 0, items } : null;
  }
  const name = input.slice(1, space);
  const arg = input.slice(space + 1);
  if (/\s/.test(arg)) return null;
  const options = name === 'model' ? ctx.models : name === 'approve' ? ['on', 'off'] : [];
  const items = options
    .filter((o) => o.startsWith(arg) && o !== arg)
    .map((o) => ({ value: o, label: o, hint: '' }));
  return items.length > 0 ? { from: space + 1, items } : null;
}
