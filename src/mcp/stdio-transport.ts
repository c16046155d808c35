import process from 'node:process';
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { limitExceeded } from '../core/errors.ts';
import { SERVER_REQUEST_BYTES_MAX } from '../core/limits.ts';
import { log } from '../core/log.ts';
import { RIFT_ERROR_CODE, toErrorData } from './errors.ts';

// MCP over stdio, one JSON-RPC message per line, with a bound on the line. The SDK's own stdio
// transport closes itself (and so ends the server or proxy) when a line outgrows its buffer; here
// an oversized line is drained without being held, and its request answered `limit_exceeded`
// naming the limit and the size, while the server goes on serving.

/** Bytes of an oversized line kept at each end: enough to find its `id` wherever the client put it. */
const EDGE_BYTES = 64 * 1024;

interface Oversized {
  head: Buffer;
  tail: Buffer;
  bytes: number;
}

export class BoundedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private pieces: Buffer[] = [];
  private pending = 0;
  private oversized: Oversized | null = null;
  private started = false;

  constructor(
    private readonly input: Readable = process.stdin,
    private readonly output: Writable = process.stdout,
    private readonly maxLineBytes = SERVER_REQUEST_BYTES_MAX,
  ) {}

  async start(): Promise<void> {
    if (this.started) throw new Error('BoundedStdioTransport already started');
    this.started = true;
    this.input.on('data', this.onData);
    this.input.on('error', this.onInputError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.write(serializeMessage(message))) resolve();
      else this.output.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    this.input.off('data', this.onData);
    this.input.off('error', this.onInputError);
    if (this.input.listenerCount('data') === 0) this.input.pause();
    this.pieces = [];
    this.oversized = null;
    this.onclose?.();
  }

  private readonly onInputError = (error: Error): void => {
    this.onerror?.(error);
  };

  private readonly onData = (chunk: Buffer): void => {
    let at = 0;
    while (at < chunk.length) {
      const newline = chunk.indexOf(0x0a, at);
      this.take(chunk.subarray(at, newline < 0 ? chunk.length : newline));
      if (newline < 0) return;
      this.endLine();
      at = newline + 1;
    }
  };

  /** Adds a piece of the current line; past the bound only its ends and its length are kept. */
  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    const o = this.oversized;
    if (o) {
      o.bytes += piece.length;
      o.tail = Buffer.concat([o.tail, piece]).subarray(-EDGE_BYTES);
      return;
    }
    if (this.pending + piece.length <= this.maxLineBytes) {
      this.pieces.push(piece);
      this.pending += piece.length;
      return;
    }
    const line = Buffer.concat([...this.pieces, piece]);
    this.oversized = { head: Buffer.from(line.subarray(0, EDGE_BYTES)), tail: Buffer.from(line.subarray(-EDGE_BYTES)), bytes: line.length };
    this.pieces = [];
    this.pending = 0;
  }

  private endLine(): void {
    const o = this.oversized;
    if (o) {
      this.oversized = null;
      void this.refuse(o);
      return;
    }
    const text = Buffer.concat(this.pieces).toString('utf8').replace(/\r$/, '');
    this.pieces = [];
    this.pending = 0;
    if (text.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(text);
    } catch (e) {
      this.onerror?.(e as Error);
      return;
    }
    this.onmessage?.(message);
  }

  /** Answers an oversized request with `limit_exceeded`; a notification (no id) is only logged. */
  private async refuse(o: Oversized): Promise<void> {
    const id = requestIdOf(o.head.toString('utf8'), o.tail.toString('utf8'));
    log('warn', 'mcp', 'request over the size limit refused', { bytes: o.bytes, limit: this.maxLineBytes, answered: id !== undefined });
    if (id === undefined) return;
    const data = toErrorData(limitExceeded('request_bytes', this.maxLineBytes, o.bytes), 'read');
    await this.send({ jsonrpc: '2.0', id, error: { code: RIFT_ERROR_CODE, message: data.message, data } });
  }
}

/**
 * The top-level `id` of a JSON-RPC message known only by its ends: read from the head by
 * walking the members before it, or from the tail when `id` is the last member.
 */
export function requestIdOf(head: string, tail: string): RequestId | undefined {
  try {
    return idFromHead(head) ?? idFromTail(tail);
  } catch {
    return undefined; // not JSON where it matters: nothing to answer
  }
}

// `"id": <number or string>` closing the top-level object (a nested member would be followed
// by at least one more closing bracket).
const TAIL_ID = /"id"\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.)*")\s*\}\s*$/;

function idFromTail(tail: string): RequestId | undefined {
  const m = TAIL_ID.exec(tail.replace(/\r$/, ''));
  return m ? (JSON.parse(m[1]) as RequestId) : undefined;
}

/** Walks the top-level members at the start of the message; undefined when the head ends first. */
function idFromHead(text: string): RequestId | undefined {
  let i = 0;
  const ws = () => {
    while (i < text.length && /\s/.test(text[i])) i++;
  };
  /** The end of the JSON string starting at `i` (its closing quote + 1), or -1 when cut off. */
  const stringEnd = (from: number): number => {
    for (let j = from + 1; j < text.length; j++) {
      if (text[j] === '\\') j++;
      else if (text[j] === '"') return j + 1;
    }
    return -1;
  };
  /** The end of the value starting at `i`, or -1 when cut off. */
  const valueEnd = (from: number): number => {
    const c = text[from];
    if (c === '"') return stringEnd(from);
    if (c === '{' || c === '[') {
      let depth = 0;
      for (let j = from; j < text.length; j++) {
        const d = text[j];
        if (d === '"') {
          const end = stringEnd(j);
          if (end < 0) return -1;
          j = end - 1;
        } else if (d === '{' || d === '[') depth++;
        else if (d === '}' || d === ']') {
          depth--;
          if (depth === 0) return j + 1;
        }
      }
      return -1;
    }
    let j = from;
    while (j < text.length && !/[,}\]\s]/.test(text[j])) j++;
    return j < text.length ? j : -1;
  };
  ws();
  if (text[i] !== '{') return undefined;
  i++;
  for (;;) {
    ws();
    if (text[i] !== '"') return undefined;
    const keyEnd = stringEnd(i);
    if (keyEnd < 0) return undefined;
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = keyEnd;
    ws();
    if (text[i] !== ':') return undefined;
    i++;
    ws();
    const end = valueEnd(i);
    if (end < 0) return undefined;
    if (key === 'id') {
      const value = JSON.parse(text.slice(i, end)) as unknown;
      return typeof value === 'number' || typeof value === 'string' ? value : undefined;
    }
    i = end;
    ws();
    if (text[i] !== ',') return undefined;
    i++;
  }
}
