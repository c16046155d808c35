import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { parseSymbolId } from '../../core/ids.ts';
import { userDirs } from '../base/config.ts';
import type { Message } from '../base/types.ts';

// Session files (reference A.13): `<data>/sessions/<unix_secs>[-n].json`, reserved at start with
// an exclusive create (released at exit when no turn saved into it), saved atomically after
// every turn, loaded leniently.

export const SESSION_BYTES_MAX = 10 * 1024 * 1024;
export const SESSIONS_LISTED_MAX = 200;
export const TITLE_CHARS_MAX = 100;
const RESUME_BRIEF = '[system] session resumed —';

export interface SessionData {
  /** Bare model name (provider prefix stripped). */
  model: string;
  saved_at: number;
  cwd: string;
  messages: Message[];
}

export interface SessionItem {
  path: string;
  title: string;
  saved_at: number;
  cwd: string;
  model: string;
  turns: number;
}

export interface LoadResult {
  messages: Message[];
  /** A note for stderr when the session started fresh. */
  note?: string;
}

const BRIEF_FILES_MAX = 20;
const READ_TOOLS = new Set(['read']);
const WRITE_TOOLS = new Set(['write', 'edit']);
const LOOKUP_TOOLS = new Set(['grep', 'glob', 'ls', 'search', 'get_symbol']);

/** Paths a patch touches: its `+++ b/…` headers (the `--- a/…` one for a deletion); a tab ends a header's path. */
function patchPaths(patch: string): string[] {
  const out: string[] = [];
  let minus = '';
  const header = (line: string) => line.slice(4).split('\t')[0].trim();
  for (const line of patch.split('\n')) {
    if (line.startsWith('--- ')) minus = header(line).replace(/^a\//, '');
    else if (line.startsWith('+++ ')) {
      const plus = header(line);
      out.push(plus === '/dev/null' ? minus : plus.replace(/^b\//, ''));
    }
  }
  return out.filter((p) => p !== '' && p !== '/dev/null');
}

function fileList(label: string, files: Set<string>): string {
  const shown = [...files].slice(0, BRIEF_FILES_MAX);
  const more = files.size > shown.length ? ` (+${files.size - shown.length} more)` : '';
  return `${label}: ${shown.join(', ')}${more}`;
}

/**
 * The hidden brief appended on resume (reference B.13): what the earlier turns already read,
 * changed and ran, so the model continues instead of re-exploring. Null when the history holds
 * no tool use.
 */
export function resumeBrief(messages: readonly Message[]): string | null {
  const read = new Set<string>();
  const written = new Set<string>();
  let lookups = 0;
  let commands = 0;
  let calls = 0;
  for (const m of messages) {
    for (const c of m.role === 'assistant' ? (m.tool_calls ?? []) : []) {
      calls++;
      const name = c.function.name;
      const args = c.function.arguments ?? {};
      const path = typeof args.path === 'string' ? args.path : '';
      if (READ_TOOLS.has(name) && path) read.add(path);
      else if (WRITE_TOOLS.has(name) && path) written.add(path);
      else if (name === 'patch' && typeof args.patch === 'string') for (const p of patchPaths(args.patch)) written.add(p);
      else if ((name === 'replace_symbol' || name === 'rename_symbol') && typeof args.symbol === 'string') {
        const at = parseSymbolId(args.symbol);
        if (at) written.add(at.path);
      }
      if (LOOKUP_TOOLS.has(name)) lookups++;
      else if (name === 'bash') commands++;
    }
  }
  if (calls === 0) return null;
  const lines = [
    `${RESUME_BRIEF} the conversation above is your own earlier work in this directory. Continue from it: do NOT re-explore files you already read unless the next request needs something new or a file may have changed since.`,
  ];
  if (read.size > 0) lines.push(fileList('Files you read', read));
  if (written.size > 0) lines.push(fileList('Files you wrote or edited', written));
  lines.push(`Earlier lookups: ${lookups}; shell commands: ${commands}.`);
  if (messages.some((m) => m.role === 'tool' && m.content.includes('[... elided '))) {
    lines.push('Some earlier tool outputs were elided to save context; re-run a tool only if you need that output again.');
  }
  return lines.join('\n');
}

function realUserTexts(messages: readonly Message[]): string[] {
  return messages
    .filter((m) => m.role === 'user' && !m.content.startsWith('[system]') && m.content.trim() !== '')
    .map((m) => m.content);
}

export const Session = {
  dir(env: NodeJS.ProcessEnv = process.env): string {
    return join(userDirs(env).data, 'sessions');
  },

  /** Reserves a fresh file name with an exclusive create (a zero-byte file until the first save). */
  reserve(dir: string, now: number = Date.now()): string {
    mkdirSync(dir, { recursive: true });
    const secs = Math.floor(now / 1000);
    for (let n = 0; n < 10_000; n++) {
      const path = join(dir, n === 0 ? `${secs}.json` : `${secs}-${n}.json`);
      try {
        closeSync(openSync(path, 'wx'));
        return path;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
    }
    throw new Error(`could not reserve a session file in ${dir}`);
  },

  /**
   * Removes a reservation no turn ever saved into (still zero bytes), so a process that ran no
   * turn leaves no session behind. A saved session is never touched.
   */
  release(path: string): void {
    try {
      if (statSync(path).size === 0) unlinkSync(path);
    } catch {
      // already gone, or unreadable: nothing to release
    }
  },

  /**
   * Writes to a temp file, fsyncs and renames over the target: a reader (or a crash) sees the
   * old file or the new one, never half of either. Old whole turns are dropped past 10 MB.
   */
  save(path: string, data: SessionData): void {
    const text = serialize({ ...data, messages: capMessages(data) });
    const tmp = `${path}.${process.pid}.tmp`;
    const fd = openSync(tmp, 'w');
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  },

  load(path: string): LoadResult {
    if (!existsSync(path)) return { messages: [], note: 'session file not found — starting fresh' };
    const text = readFileSync(path, 'utf8');
    if (text.trim() === '') return { messages: [], note: 'session has no saved turns yet — starting fresh' };
    try {
      const data = JSON.parse(text) as Partial<SessionData>;
      if (!data || !Array.isArray(data.messages)) throw new Error('no messages array');
      return { messages: normalize(data.messages) };
    } catch (e) {
      const aside = `${path}.corrupt`;
      try {
        renameSync(path, aside);
      } catch {
        // leave it where it is; we still start fresh
      }
      return { messages: [], note: `warning: session file is corrupt (${(e as Error).message}); moved it to ${aside} — starting fresh` };
    }
  },

  /** The non-empty session with the newest mtime, for --continue. */
  newest(dir: string): string | null {
    const files = sessionFiles(dir).filter((f) => f.size > 0);
    return files[0]?.path ?? null;
  },

  list(dir: string): SessionItem[] {
    const items: SessionItem[] = [];
    for (const f of sessionFiles(dir)) {
      if (f.size === 0) continue;
      try {
        const data = JSON.parse(readFileSync(f.path, 'utf8')) as SessionData;
        if (!Array.isArray(data.messages)) continue;
        const users = realUserTexts(data.messages);
        const first = users.map((u) => u.split('\n').find((l) => l.trim() !== '') ?? '').find((l) => l !== '');
        items.push({
          path: f.path,
          title: first ? first.slice(0, TITLE_CHARS_MAX) : '(empty session)',
          saved_at: typeof data.saved_at === 'number' ? data.saved_at : Math.floor(f.mtimeMs / 1000),
          cwd: typeof data.cwd === 'string' ? data.cwd : '',
          model: typeof data.model === 'string' ? data.model : '',
          turns: users.length,
        });
      } catch {
        // unreadable or corrupt: skipped in the index
      }
      if (items.length >= SESSIONS_LISTED_MAX) break;
    }
    return items;
  },
};

function sessionFiles(dir: string): Array<{ path: string; size: number; mtimeMs: number }> {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => n.endsWith('.json'))
    .flatMap((n) => {
      const path = join(dir, n);
      try {
        const s = statSync(path);
        return s.isFile() ? [{ path, size: s.size, mtimeMs: s.mtimeMs }] : [];
      } catch {
        return [];
      }
    })
    .sort((a, b) => b.mtimeMs - a.mtimeMs || (a.path < b.path ? 1 : -1));
}

function serialize(data: SessionData): string {
  return `${JSON.stringify(data, null, 2)}\n`;
}

/** Drops whole turns from the front (cutting only at user messages), keeping system messages and the last turn. */
export function capMessages(data: SessionData, max: number = SESSION_BYTES_MAX): Message[] {
  let messages = data.messages;
  if (Buffer.byteLength(serialize(data)) <= max) return messages;
  const systems = messages.filter((m) => m.role === 'system');
  let rest = messages.filter((m) => m.role !== 'system');
  for (;;) {
    const starts = rest.map((m, i) => (m.role === 'user' && i > 0 ? i : -1)).filter((i) => i > 0);
    if (starts.length === 0) break;
    rest = rest.slice(starts[0]);
    messages = [...systems, ...rest];
    if (Buffer.byteLength(serialize({ ...data, messages })) <= max) break;
  }
  return messages;
}

/** Old histories: ids for tool calls without one; tool results paired to calls by name, in order. */
function normalize(raw: unknown[]): Message[] {
  const out: Message[] = [];
  const open: Array<{ id: string; name: string }> = [];
  raw.forEach((r, idx) => {
    if (!r || typeof r !== 'object') return;
    const m = r as Message;
    if (typeof m.role !== 'string' || typeof m.content !== 'string') return;
    if (m.role === 'user' && m.content.startsWith(RESUME_BRIEF)) return;
    const msg: Message = { ...m };
    if (msg.role === 'assistant' && msg.tool_calls) {
      msg.tool_calls = msg.tool_calls.map((c, i) => {
        const id = c.id ?? `call_${idx}_${i}`;
        open.push({ id, name: c.function.name });
        return { ...c, id };
      });
    }
    if (msg.role === 'tool' && !msg.tool_call_id) {
      const k = open.findIndex((o) => o.name === msg.tool_name);
      if (k >= 0) msg.tool_call_id = open.splice(k, 1)[0].id;
    } else if (msg.role === 'tool') {
      const k = open.findIndex((o) => o.id === msg.tool_call_id);
      if (k >= 0) open.splice(k, 1);
    }
    out.push(msg);
  });
  return out;
}
