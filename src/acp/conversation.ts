import { fileURLToPath } from 'node:url';
import type { ContentBlock, SessionUpdate } from '@agentclientprotocol/sdk';
import type { Message } from '../agent/base/types.ts';
import { CANCEL_NOTE } from '../agent/loop/agent.ts';
import { describeToolCall } from './tool-calls.ts';

// The conversation both ways: a `session/prompt`'s content blocks as the text the agent reads,
// and a saved conversation replayed as `session/update` notifications (`session/load` replays
// the whole history before it answers).

function uriPath(uri: string): string {
  try {
    return uri.startsWith('file://') ? fileURLToPath(uri) : uri;
  } catch {
    return uri;
  }
}

/**
 * Text, resource links (named as `@path`) and embedded text resources (quoted in full, so the
 * editor's unsaved buffer is what the model reads) become one prompt. Rift advertises neither
 * image nor audio prompts; a client that sends one anyway gets it named, not silently dropped.
 */
export function promptText(blocks: readonly ContentBlock[]): string {
  const parts: string[] = [];
  for (const b of blocks) {
    switch (b.type) {
      case 'text':
        parts.push(b.text);
        break;
      case 'resource_link':
        parts.push(`@${uriPath(b.uri)}`);
        break;
      case 'resource': {
        const r = b.resource;
        if ('text' in r && typeof r.text === 'string') parts.push(`\n<context file="${uriPath(r.uri)}">\n${r.text}\n</context>\n`);
        else parts.push(`[attached binary resource ${uriPath(r.uri)} omitted: rift reads text resources only]`);
        break;
      }
      default:
        parts.push(`[${b.type} content omitted: rift does not accept ${b.type} prompts]`);
    }
  }
  return parts.join(' ').trim();
}

const text = (t: string): ContentBlock => ({ type: 'text', text: t });

/** The saved messages as the updates a client would have seen: user and agent text, thinking, and each tool call with its result. */
export function historyUpdates(messages: readonly Message[], cwd: string): SessionUpdate[] {
  const results = new Map<string, string>();
  for (const m of messages) if (m.role === 'tool' && m.tool_call_id) results.set(m.tool_call_id, m.content);
  const out: SessionUpdate[] = [];
  messages.forEach((m, i) => {
    if (m.role === 'user') {
      if (m.content.startsWith('[system]')) return;
      const content = m.content.startsWith(CANCEL_NOTE) ? m.content.slice(CANCEL_NOTE.length) : m.content;
      out.push({ sessionUpdate: 'user_message_chunk', content: text(content) });
    } else if (m.role === 'assistant') {
      if (m.thinking) out.push({ sessionUpdate: 'agent_thought_chunk', content: text(m.thinking) });
      if (m.content !== '') out.push({ sessionUpdate: 'agent_message_chunk', content: text(m.content) });
      (m.tool_calls ?? []).forEach((c, j) => {
        const view = describeToolCall(c.function.name, c.function.arguments ?? {}, cwd);
        const result = c.id ? results.get(c.id) : undefined;
        out.push({
          sessionUpdate: 'tool_call',
          toolCallId: `history-${i}-${j}`,
          title: view.title,
          kind: view.kind,
          status: result === undefined || result.startsWith('ERROR:') ? 'failed' : 'completed',
          locations: view.locations,
          rawInput: c.function.arguments ?? {},
          ...(result !== undefined ? { content: [{ type: 'content', content: text(result) }] } : {}),
        });
      });
    }
  });
  return out;
}
