import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import {
  RequestError, type AgentContext, type ClientCapabilities, type ContentBlock, type PermissionOption, type SessionConfigOption, type SessionUpdate, type StopReason, type ToolCallContent,
} from '@agentclientprotocol/sdk';
import { z } from 'zod';
import type { AgentFlags, McpServerConfig } from '../agent/base/config.ts';
import type { CommandRun } from '../agent/base/tasks.ts';
import { ToolError } from '../agent/base/tool.ts';
import type { AgentEvent } from '../agent/base/types.ts';
import { expandSkill } from '../agent/extensions/skills.ts';
import { AgentAssembly } from '../agent/loop/assembly.ts';
import type { AskRequest, Gate, ReviewDecision, ReviewRequest } from '../agent/policy/gate.ts';
import { discoverModels } from '../agent/providers/discovery.ts';
import { BASH_OUTPUT_BYTES_MAX } from '../agent/tools/bash.ts';
import type { CommandRunner, EditorFiles } from '../agent/tools/context.ts';
import { ACP_DIFF_BYTES_MAX } from '../core/limits.ts';
import { historyUpdates, promptText } from './conversation.ts';
import { permissionOptions } from './permission.ts';
import { describeToolCall, planEntries, type ToolCallView } from './tool-calls.ts';

// One ACP session: an agent assembled for the session's folder, its turns mapped onto
// `session/update`, its questions onto `session/request_permission` (and, for editors that
// opted in, rift's per-hunk review extension), and the editor's files and terminal used when
// it offers them. Updates go out in order through one queue; a prompt answers only after every
// update of its turn was sent.

/** rift's extensions, advertised under `_meta.rift` of the capabilities (docs/acp.md). */
export const EXT_UNDO = '_rift/undo';
export const EXT_EDIT_REVIEW = '_rift/edit_review';

export const APPROVAL_ASK = 'ask';
export const APPROVAL_AUTO = 'auto';

const ReviewReply = z.object({ apply: z.boolean(), content: z.string().optional() });

export interface SessionOptions {
  cwd: string;
  /** A saved session to reopen (`session/load`). */
  resume?: string;
  mcpServers: readonly McpServerConfig[];
  version: string;
  flags: AgentFlags;
  approve: boolean | undefined;
  noIndex: boolean;
  caps: ClientCapabilities;
  peer: () => AgentContext;
  /** Diagnostics for stderr. */
  log: (text: string) => void;
}

interface LiveCall {
  id: string;
  view: ToolCallView;
  /** Text of each changed file before the call (null: absent, or too large / binary to show). */
  before: Map<string, string | null>;
  /** What the editor was asked to write during the call. */
  written: Map<string, string>;
  /** The messages before the call: its result is the first tool message after them. */
  mark: number;
  ok?: boolean;
  terminalId?: string;
}

const text = (t: string): ContentBlock => ({ type: 'text', text: t });

/** A file's text for a diff, or null when it is absent, binary or too large to show. */
function diffText(abs: string): string | null {
  try {
    const st = statSync(abs);
    if (!st.isFile() || st.size > ACP_DIFF_BYTES_MAX) return null;
    const bytes = readFileSync(abs);
    return bytes.subarray(0, 8192).includes(0) ? null : bytes.toString('utf8');
  } catch {
    return null;
  }
}

export class AcpSession {
  private out: Promise<void> = Promise.resolve();
  private seq = 0;
  private live: LiveCall | null = null;
  private finished: LiveCall | null = null;
  /** The running turn, if any. */
  turn: AbortController | null = null;
  private trustOffered = false;
  private unusable: string | null;
  private models: string[] = [];
  /** The review request a client without the review extension gets as a plain question with a diff. */
  private reviewed: ReviewRequest | null = null;
  private closed = false;

  private constructor(
    readonly id: string,
    readonly cwd: string,
    readonly assembly: AgentAssembly,
    private readonly o: SessionOptions,
    /** Warnings noted while no turn runs, shown at the start of the next one. */
    private readonly held: string[],
  ) {
    const u = assembly.unusable;
    this.unusable = !u ? null : u.stage === 'route' ? `model '${assembly.config.model}' is not usable: ${u.message} — pick another in the session's model option` : `${u.message} — fix the server or pick another model in the session's model option`;
  }

  static async open(o: SessionOptions): Promise<AcpSession> {
    let session: AcpSession | undefined;
    const gate: Gate = {
      interactive: true,
      ask: (req, signal) => session!.ask(req, signal),
      review: (req, signal) => session!.review(req, signal),
    };
    const held: string[] = [];
    const note = (n: string) => {
      o.log(n);
      if (!n.startsWith('warning: ')) return;
      // Between turns the client may not know the session yet: held for the next prompt.
      if (session?.turn) session.warn(n.slice('warning: '.length));
      else held.push(n.slice('warning: '.length));
    };
    const assembly = await AgentAssembly.create({
      cwd: o.cwd,
      version: o.version,
      flags: o.flags,
      session: { resume: o.resume },
      approve: o.approve,
      gate,
      note,
      editorFiles: editorFiles(o, () => session!),
      runner: o.caps.terminal === true ? terminalRunner(o, () => session!) : undefined,
    });
    session = new AcpSession(basename(assembly.session.path, '.json'), o.cwd, assembly, o, held);
    assembly.agent.tasks.setSink((e) => session!.forward(e));
    if (!o.noIndex) void assembly.openCode(o.cwd);
    await assembly.attachMcpServers(o.mcpServers);
    session.models = await discoverModels(assembly.config, assembly.agent.route.address, process.env);
    return session;
  }

  /** The conversation so far as updates (session/load replays it before answering). */
  async replay(): Promise<void> {
    for (const u of historyUpdates(this.assembly.agent.messages, this.cwd)) this.send(u);
    await this.flush();
  }

  /** Skills and rift's own commands, as the client's slash commands. */
  announceCommands(): void {
    const commands = [
      { name: 'undo', description: 'Restore the files the last turn changed (write, edit, replace_symbol, patch)' },
      ...this.assembly.skills.map((s) => ({ name: s.name, description: s.description || `skill ${s.name}`, input: { hint: 'what to apply it to' } })),
    ];
    this.send({ sessionUpdate: 'available_commands_update', availableCommands: commands });
  }

  configOptions(): SessionConfigOption[] {
    const current = this.assembly.agent.route.address;
    const models = this.models.includes(current) ? this.models : [current, ...this.models];
    return [
      {
        id: 'model',
        name: 'Model',
        category: 'model',
        type: 'select',
        currentValue: current,
        options: models.map((m) => ({ value: m, name: m })),
      },
      {
        id: 'approval',
        name: 'Approval',
        category: 'mode',
        description: 'Whether edits, commands and MCP tool calls wait for your answer',
        type: 'select',
        currentValue: this.assembly.approval.approve ? APPROVAL_ASK : APPROVAL_AUTO,
        options: [
          { value: APPROVAL_ASK, name: 'Ask', description: 'Ask before each edit, command or MCP tool call that no allow rule covers' },
          { value: APPROVAL_AUTO, name: 'Auto-approve', description: 'Run them without asking; deny rules still refuse' },
        ],
      },
    ];
  }

  async setConfig(configId: string, value: unknown): Promise<SessionConfigOption[]> {
    if (typeof value !== 'string') throw RequestError.invalidParams({ value }, `'value' of ${configId} must be one of the option's values (a string)`);
    if (configId === 'approval') {
      if (value !== APPROVAL_ASK && value !== APPROVAL_AUTO) throw RequestError.invalidParams({ configId, value }, `'value' must be '${APPROVAL_ASK}' or '${APPROVAL_AUTO}'`);
      this.assembly.approval.approve = value === APPROVAL_ASK;
      return this.configOptions();
    }
    if (configId === 'model') {
      if (this.turn) throw RequestError.invalidRequest({ configId }, 'a turn is running — cancel it or wait before switching models');
      try {
        const note = await this.assembly.agent.switchModel(value, this.assembly.config, this.assembly.config.numCtxExplicit);
        if (note.trim() !== '') this.o.log(note.trim());
      } catch (e) {
        throw RequestError.invalidParams({ configId, value }, `model switch failed: ${(e as Error).message}`);
      }
      this.unusable = null;
      if (!this.models.includes(value)) this.models.unshift(value);
      return this.configOptions();
    }
    throw RequestError.invalidParams({ configId }, `unknown 'configId' ${JSON.stringify(configId)}; this agent has 'model' and 'approval'`);
  }

  /** `_rift/undo`: refused while a turn runs. */
  async undo(): Promise<{ ok: boolean; message: string }> {
    if (this.turn) return { ok: false, message: 'undo is not available while a turn is running' };
    return this.undoNow();
  }

  private async undoNow(): Promise<{ ok: boolean; message: string }> {
    const e = await this.assembly.agent.undo();
    return { ok: e.event === 'info', message: e.event === 'info' || e.event === 'warning' ? e.text : '' };
  }

  async prompt(blocks: readonly ContentBlock[]): Promise<StopReason> {
    if (this.turn) throw RequestError.invalidRequest(undefined, 'a turn is running in this session — cancel it or wait for its answer');
    const ctl = new AbortController();
    this.turn = ctl;
    try {
      for (const w of this.held.splice(0)) this.warn(w);
      await this.offerTrust(ctl.signal);
      if (ctl.signal.aborted) return 'cancelled';
      let input = promptText(blocks);
      const command = /^\/(\S+)\s*([\s\S]*)$/.exec(input);
      if (command?.[1] === 'undo') {
        this.send({ sessionUpdate: 'agent_message_chunk', content: text((await this.undoNow()).message) });
        await this.flush();
        return 'end_turn';
      }
      if (command && this.assembly.skills.some((s) => s.name === command[1])) {
        const expanded = expandSkill(`/skill:${command[1]} ${command[2]}`, this.assembly.skills);
        if ('text' in expanded) input = expanded.text;
      }
      if (input === '') throw RequestError.invalidParams({ prompt: blocks.length }, "'prompt' holds no text");
      if (this.unusable) throw RequestError.internalError(undefined, this.unusable);
      // The turn offers every MCP server that could start (a dead one is only a warning).
      await this.assembly.mcp.ready();
      const r = await this.assembly.agent.runTurn(input, (e) => this.forward(e), ctl.signal);
      await this.flush();
      switch (r.outcome) {
        case 'cancelled':
          return 'cancelled';
        case 'max_iterations':
          return 'max_turn_requests';
        case 'error':
          throw RequestError.internalError(undefined, `the model request failed: ${r.error ?? 'unknown error'}`);
        default:
          return 'end_turn';
      }
    } finally {
      await this.flush();
      this.turn = null;
      this.live = null;
    }
  }

  cancel(): void {
    this.turn?.abort();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.turn?.abort();
    await this.assembly.close();
  }

  /**
   * The repository's trust questions, once, before the first turn (as `rift --serve` asks them
   * at its first prompt): each a permission request with "trust" (kept: `allow_always`) and
   * "skip". With auto-approve on they are only noted.
   */
  private async offerTrust(signal: AbortSignal): Promise<void> {
    if (this.trustOffered) return;
    this.trustOffered = true;
    for (const r of this.assembly.trustRequests) {
      if (!this.assembly.approval.approve) {
        this.info(r.skippedNote);
        continue;
      }
      const id = `trust-${++this.seq}`;
      this.send({ sessionUpdate: 'tool_call', toolCallId: id, title: r.question, kind: 'other', status: 'pending', content: [{ type: 'content', content: text(r.detail.join('\n')) }] });
      const options: PermissionOption[] = [
        { optionId: 'trust', name: 'trust', kind: 'allow_always' },
        { optionId: 'skip', name: 'skip', kind: 'reject_once' },
      ];
      const picked = await this.requestPermission(id, undefined, options, signal);
      if (picked !== 'trust') {
        this.send({ sessionUpdate: 'tool_call_update', toolCallId: id, status: 'failed', content: [{ type: 'content', content: text('skipped') }] });
        continue;
      }
      const out = await this.assembly.trust(r);
      const lines = [out.info, ...(out.persistError ? [`could not persist the decision: ${out.persistError}`] : []), ...(out.modelError ? [`model switch failed: ${out.modelError}`] : [])];
      this.send({ sessionUpdate: 'tool_call_update', toolCallId: id, status: 'completed', content: [{ type: 'content', content: text(lines.join('\n')) }] });
      if (out.model) this.unusable = null;
      if (out.model || out.approve !== undefined) this.send({ sessionUpdate: 'config_option_update', configOptions: this.configOptions() });
    }
  }

  /** Engine events onto the wire (turn events, and background task reports between turns). */
  forward(e: AgentEvent): void {
    if (e.event !== 'edit_diff' && e.event !== 'plan') this.complete();
    switch (e.event) {
      case 'thinking':
        return this.send({ sessionUpdate: 'agent_thought_chunk', content: text(e.text) });
      case 'content':
        return this.send({ sessionUpdate: 'agent_message_chunk', content: text(e.text) });
      case 'tool_start':
        return this.startCall(e.name, e.args);
      case 'tool_result':
        if (this.live) {
          this.live.ok = e.ok;
          this.finished = this.live;
          this.live = null;
        }
        return;
      case 'plan':
        return this.send({ sessionUpdate: 'plan', entries: planEntries(e.items) });
      case 'warning':
        return this.warn(e.text);
      case 'info':
        return this.info(e.text);
      case 'subagent_started':
        return this.info(`[${e.tag}] started on ${e.model}: ${e.label}`);
      case 'subagent':
        return e.warn ? this.warn(`[${e.tag}] ${e.text}`) : this.info(`[${e.tag}] ${e.text}`);
      case 'subagent_finished':
        return this.info(`[${e.tag}] finished after ${e.steps} step(s)`);
      case 'task_started':
        return this.info(`background task #${e.id} started: ${e.label}`);
      case 'task_finished':
        return this.info(`background task #${e.id} ${e.ok ? 'finished' : 'failed'}: ${e.label}${e.preview ? `\n${e.preview}` : ''}`);
      case 'context':
        return this.send({ sessionUpdate: 'usage_update', used: e.used, size: e.limit });
      default:
        return;
    }
  }

  private startCall(name: string, args: Record<string, unknown>): void {
    const view = describeToolCall(name, args, this.cwd);
    const call: LiveCall = { id: `call-${++this.seq}`, view, before: new Map(view.changes.map((p) => [p, diffText(p)])), written: new Map(), mark: this.assembly.agent.messages.length };
    this.live = call;
    this.send({ sessionUpdate: 'tool_call', toolCallId: call.id, title: view.title, kind: view.kind, status: 'pending', locations: view.locations, rawInput: args });
  }

  /** The last call's final update: its status, its result as text, its diffs and its terminal. */
  private complete(): void {
    const call = this.finished;
    if (!call) return;
    this.finished = null;
    const result = this.assembly.agent.messages.slice(call.mark).find((m) => m.role === 'tool')?.content ?? '';
    const content: ToolCallContent[] = [];
    if (call.terminalId) content.push({ type: 'terminal', terminalId: call.terminalId });
    for (const [path, before] of call.before) {
      const after = call.written.get(path) ?? diffText(path);
      if (!call.ok || after === null || after === before) continue;
      content.push({ type: 'diff', path, oldText: before, newText: after });
    }
    if (result !== '') content.push({ type: 'content', content: text(result) });
    this.send({ sessionUpdate: 'tool_call_update', toolCallId: call.id, status: call.ok ? 'completed' : 'failed', content });
  }

  private warn(t: string): void {
    if (this.o.caps.session?.notices) this.send({ sessionUpdate: 'notice', severity: 'warning', title: t });
    else this.send({ sessionUpdate: 'agent_thought_chunk', content: text(`\nwarning: ${t}\n`) });
  }

  private info(t: string): void {
    if (this.o.caps.session?.notices) this.send({ sessionUpdate: 'notice', severity: 'info', title: t });
    else this.send({ sessionUpdate: 'agent_thought_chunk', content: text(`\n${t}\n`) });
  }

  private send(update: SessionUpdate): void {
    if (this.closed) return;
    const peer = this.o.peer();
    this.out = this.out.then(() => peer.notify('session/update', { sessionId: this.id, update })).catch((e: Error) => this.o.log(`acp: session/update not sent: ${e.message}`));
  }

  /** Resolves once every update queued so far was written. */
  private flush(): Promise<void> {
    return this.out;
  }

  /** A permission request about `toolCallId`; the selected option id, or null when cancelled or dropped. */
  private async requestPermission(toolCallId: string, content: ToolCallContent[] | undefined, options: PermissionOption[], signal: AbortSignal): Promise<string | null> {
    await this.flush();
    if (signal.aborted || this.closed) return null;
    try {
      const r = await this.o.peer().request(
        'session/request_permission',
        { sessionId: this.id, toolCall: { toolCallId, ...(content ? { content } : {}) }, options },
        { cancellationSignal: signal, stopWaitingOnCancel: true },
      );
      return r.outcome.outcome === 'selected' ? r.outcome.optionId : null;
    } catch (e) {
      if (!signal.aborted) this.o.log(`acp: permission request failed: ${(e as Error).message}`);
      return null;
    }
  }

  /** Gate.ask: the question about the running tool call (or one of its own), answered by option. */
  async ask(req: AskRequest, signal: AbortSignal): Promise<string | null> {
    const { options, answers } = permissionOptions(req);
    const reviewed = this.reviewed;
    this.reviewed = null;
    if (options.length === 0) return null;
    let id = this.live?.id;
    const own = id === undefined;
    if (own) {
      id = `ask-${++this.seq}`;
      this.send({ sessionUpdate: 'tool_call', toolCallId: id, title: req.question, kind: 'other', status: 'pending' });
    }
    const content: ToolCallContent[] = [{ type: 'content', content: text([req.question, ...req.detail].join('\n')) }];
    if (reviewed) content.unshift({ type: 'diff', path: reviewed.path, oldText: reviewed.old === '' ? null : reviewed.old, newText: reviewed.new });
    const picked = await this.requestPermission(id!, content, options, signal);
    const answer = picked === null ? undefined : answers.get(picked);
    if (answer?.rejectAlways) this.assembly.approval.rejectAlways(answer.rejectAlways);
    if (own) this.send({ sessionUpdate: 'tool_call_update', toolCallId: id!, status: answer?.allows ? 'completed' : 'failed' });
    else if (answer?.allows) this.send({ sessionUpdate: 'tool_call_update', toolCallId: id!, status: 'in_progress' });
    return answer?.choice ?? null;
  }

  /**
   * Gate.review: with the client's opt-in (`_meta.rift.editReview`), rift's per-hunk review as
   * the `_rift/edit_review` request; otherwise the plain question that follows shows the diff.
   */
  async review(req: ReviewRequest, signal: AbortSignal): Promise<ReviewDecision | null | 'unavailable'> {
    const live = this.live;
    if (!optedIn(this.o.caps, 'editReview') || !live || signal !== this.turn?.signal) {
      this.reviewed = req;
      return 'unavailable';
    }
    await this.flush();
    try {
      const reply = await this.o.peer().request(
        EXT_EDIT_REVIEW,
        { sessionId: this.id, toolCallId: live.id, tool: req.tool, path: req.path, old: req.old, new: req.new, segments: req.segments },
        { cancellationSignal: signal, stopWaitingOnCancel: true },
      );
      const parsed = ReviewReply.safeParse(reply);
      if (!parsed.success) {
        this.o.log(`acp: ${EXT_EDIT_REVIEW} answered without a boolean 'apply'; treated as deny`);
        return null;
      }
      if (parsed.data.apply) this.send({ sessionUpdate: 'tool_call_update', toolCallId: live.id, status: 'in_progress' });
      return parsed.data.apply ? (parsed.data.content === undefined ? { apply: true } : { apply: true, content: parsed.data.content }) : { apply: false };
    } catch (e) {
      if (!signal.aborted) this.o.log(`acp: ${EXT_EDIT_REVIEW} failed: ${(e as Error).message}`);
      return null;
    }
  }

  /** The editor wrote `content` during the running call (its diff shows that text). */
  noteWrite(path: string, content: string): void {
    this.live?.written.set(path, content);
  }

  /** The running call now shows the editor's terminal running its command. */
  noteTerminal(terminalId: string): string | undefined {
    const live = this.live;
    if (!live) return undefined;
    live.terminalId = terminalId;
    this.send({ sessionUpdate: 'tool_call_update', toolCallId: live.id, status: 'in_progress', content: [{ type: 'terminal', terminalId }] });
    return live.id;
  }
}

/** Whether the client opted into one of rift's extensions (`clientCapabilities._meta.rift.<name>: true`). */
export function optedIn(caps: ClientCapabilities, name: string): boolean {
  const rift = caps._meta?.rift;
  return !!rift && typeof rift === 'object' && (rift as Record<string, unknown>)[name] === true;
}

/** The editor's buffers, when it offers `fs`: reads see unsaved changes, writes land in the editor. */
function editorFiles(o: SessionOptions, session: () => AcpSession): EditorFiles | undefined {
  const fs = o.caps.fs;
  if (!fs?.readTextFile && !fs?.writeTextFile) return undefined;
  return {
    ...(fs.readTextFile
      ? {
          read: async (path: string, signal: AbortSignal) => {
            try {
              const r = await o.peer().request('fs/read_text_file', { sessionId: session().id, path }, { cancellationSignal: signal, stopWaitingOnCancel: true });
              return r.content;
            } catch (e) {
              // The disk answers instead: the editor may not hold files outside its project.
              if (!signal.aborted) o.log(`acp: fs/read_text_file failed (${(e as Error).message}); reading the disk`);
              return null;
            }
          },
        }
      : {}),
    ...(fs.writeTextFile
      ? {
          write: async (path: string, content: string, signal: AbortSignal) => {
            // An editor saves into folders that exist; a new file's folder is made first, as on disk.
            mkdirSync(dirname(path), { recursive: true });
            try {
              await o.peer().request('fs/write_text_file', { sessionId: session().id, path, content }, { cancellationSignal: signal, stopWaitingOnCancel: true });
            } catch (e) {
              throw new ToolError(signal.aborted ? 'cancelled by user' : `the editor refused to write ${path}: ${(e as Error).message}`);
            }
            session().noteWrite(path, content);
          },
        }
      : {}),
  };
}

/**
 * bash's foreground commands in the editor's terminal, when it offers one: the command line
 * (already inside rift's sandbox wrapper) runs there, the tool call shows it live, and the
 * output comes back to the model as it would from a child process.
 */
function terminalRunner(o: SessionOptions, session: () => AcpSession): CommandRunner {
  return async (argv, { cwd, signal, timeoutMs }): Promise<CommandRun> => {
    if (signal.aborted) throw new ToolError('cancelled by user');
    const s = session();
    const handle = await o.peer().createTerminal({ sessionId: s.id, command: argv[0], args: argv.slice(1), cwd, outputByteLimit: BASH_OUTPUT_BYTES_MAX });
    try {
      s.noteTerminal(handle.id);
      let timedOut = false;
      let timer: NodeJS.Timeout | undefined;
      const stop = new Promise<'stopped'>((resolve) => {
        timer = setTimeout(() => {
          timedOut = true;
          resolve('stopped');
        }, timeoutMs);
        signal.addEventListener('abort', () => resolve('stopped'), { once: true });
      });
      const exit = await Promise.race([handle.waitForExit(), stop]);
      clearTimeout(timer);
      if (exit === 'stopped') await handle.kill().catch(() => {});
      const output = await handle.currentOutput();
      if (signal.aborted) throw new ToolError('cancelled by user');
      const status = exit === 'stopped' ? output.exitStatus : exit;
      return { code: status?.exitCode ?? null, signal: (status?.signal ?? null) as NodeJS.Signals | null, timedOut, stdout: output.output, stderr: '', output: output.output };
    } finally {
      await handle.release().catch(() => {});
    }
  };
}
