import type { ToolCall } from '../base/types.ts';

// Repairs for local models' output (reference B.4, H): tool calls written as text — bare
// JSON, fenced JSON, or the XML-style form qwen3-coder emits — and leaked template tokens.

export interface RecoveryNames {
  /** Registered tool names; JSON recovery accepts only these, exactly. */
  names: readonly string[];
  /** Registered names and aliases; the XML form is unambiguous enough to accept aliases. */
  known: (name: string) => boolean;
  paramType: (tool: string, key: string) => string | undefined;
}

const TEMPLATE_TOKEN = /<\|[^<>]{0,48}>/g;

/** Strips `<|im_end|>`-style tokens the server failed to consume; returns null when none were present. */
export function stripTemplateTokens(text: string): string | null {
  const out = text.replace(TEMPLATE_TOKEN, '');
  return out === text ? null : out;
}

function stripFence(text: string): string {
  const m = /^```[\w-]*\s*\n?([\s\S]*?)\n?```$/.exec(text);
  return m ? m[1].trim() : text;
}

function fromJson(content: string, names: readonly string[]): ToolCall[] | null {
  const text = stripFence(content.trim());
  if (!text.startsWith('{') && !text.startsWith('[')) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const list = Array.isArray(parsed) ? parsed : [parsed];
  if (list.length === 0) return null;
  const calls: ToolCall[] = [];
  for (const [index, item] of list.entries()) {
    if (!item || typeof item !== 'object' || Array.isArray(item)) return null;
    const o = item as Record<string, unknown>;
    if (typeof o.name !== 'string' || !names.includes(o.name)) return null;
    const args = o.arguments ?? o.parameters;
    if (!args || typeof args !== 'object' || Array.isArray(args)) return null;
    calls.push({ function: { index, name: o.name, arguments: args as Record<string, unknown> } });
  }
  return calls;
}

const XML_FUNCTION = /<function=([\w.-]+)>([\s\S]*?)<\/function>/g;
const XML_PARAM = /<parameter=([\w.-]+)>([\s\S]*?)<\/parameter>/g;

function fromXml(content: string, r: RecoveryNames): ToolCall[] | null {
  // Only when the reply is nothing but calls (optionally inside <tool_call> wrappers).
  const rest = content.replace(XML_FUNCTION, '').replace(/<\/?tool_call>/g, '').trim();
  if (rest !== '') return null;
  const calls: ToolCall[] = [];
  for (const m of content.matchAll(XML_FUNCTION)) {
    const name = m[1];
    if (!r.known(name)) return null;
    const args: Record<string, unknown> = {};
    for (const p of m[2].matchAll(XML_PARAM)) {
      const raw = p[2].replace(/^\n/, '').replace(/\n$/, '');
      args[p[1]] = typed(raw, r.paramType(name, p[1]));
    }
    calls.push({ function: { index: calls.length, name, arguments: args } });
  }
  return calls.length > 0 ? calls : null;
}

function typed(raw: string, type: string | undefined): unknown {
  if (type === undefined || type === 'string') return raw;
  try {
    return JSON.parse(raw.trim());
  } catch {
    return raw;
  }
}

/** All or nothing: either every call in the text is valid, or nothing is recovered. */
export function recoverTextualToolCalls(content: string, r: RecoveryNames): ToolCall[] | null {
  const trimmed = content.trim();
  if (trimmed === '') return null;
  return fromJson(trimmed, r.names) ?? (trimmed.includes('<function=') ? fromXml(trimmed, r) : null);
}
