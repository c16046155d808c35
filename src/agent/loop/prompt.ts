import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// System prompt composition (reference B.10): the base prompt, then the project's guides
// within one budget. A project can add guidance but never replace the system prompt.

export const GUIDE_FILES = ['RIFT.md', 'AGENTS.md', 'CLAUDE.md'] as const;
export const GUIDES_CHARS_MAX = 6000;

const BASE = `You are Rift, a coding agent working in {cwd}. {shell}
Rules:
- Call tools only through the tool-calling mechanism; never write tool calls as JSON or XML in your reply.
- Find code with get_symbol, grep or glob; read the ranges you need; read a file before editing it.
- For multi-step work, plan(set=[...]) first and tick steps with plan(done=N).
- Change files with edit (exact old_string) or write; then verify (run the tests or the build with bash).
- When a tool fails, read the error and fix the call; never repeat an identical call.
- If the request is ambiguous, ask one clarifying question with ask_user.
- When done, reply with a brief plain-text summary. Put file contents you show in fenced blocks. Be concise.`;

export function basePrompt(cwd: string): string {
  const shell = process.platform === 'win32' ? 'The bash tool runs commands through cmd.exe.' : 'The bash tool runs commands through POSIX sh (sh -c).';
  return BASE.replace('{cwd}', cwd).replace('{shell}', shell);
}

/** RIFT.md, AGENTS.md, CLAUDE.md from the project root, in order, 6000 chars in total. */
export function projectGuides(cwd: string, budget: number = GUIDES_CHARS_MAX): string {
  let out = '';
  let left = budget;
  for (const name of GUIDE_FILES) {
    const p = join(cwd, name);
    if (left <= 0 || !existsSync(p)) continue;
    let text: string;
    try {
      text = readFileSync(p, 'utf8').trim();
    } catch {
      continue;
    }
    if (text === '') continue;
    let body = text;
    if (body.length > left) body = `${body.slice(0, left)}\n[${name} truncated]`;
    left -= Math.min(text.length, left);
    out += `\n\nProject guide (from ${name} — instructions for agents working in this repo):\n${body}`;
  }
  return out;
}

export function systemPrompt(cwd: string): string {
  return basePrompt(cwd) + projectGuides(cwd);
}
