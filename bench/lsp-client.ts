import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

// A minimal Language Server Protocol client for the benchmarks: Content-Length framing over a
// child's stdio, requests with ids, and answers to the requests servers send back
// (configuration, progress tokens, capability registration).

export class LspClient {
  private readonly child: ChildProcessWithoutNullStreams;
  private buffer = Buffer.alloc(0);
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  stderr = '';

  constructor(command: string, args: readonly string[], cwd: string) {
    this.child = spawn(command, args, { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (d: Buffer) => this.receive(d));
    this.child.stderr.on('data', (d: Buffer) => {
      this.stderr = (this.stderr + d.toString()).slice(-8192);
    });
    this.child.on('exit', () => {
      for (const p of this.pending.values()) p.reject(new Error(`language server exited: ${this.stderr.slice(-500)}`));
      this.pending.clear();
    });
  }

  request<T>(method: string, params: unknown): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.send({ jsonrpc: '2.0', id, method, params });
    });
  }

  notify(method: string, params: unknown): void {
    this.send({ jsonrpc: '2.0', method, params });
  }

  async close(): Promise<void> {
    try {
      await Promise.race([this.request('shutdown', null), new Promise((r) => setTimeout(r, 5000))]);
      this.notify('exit', null);
    } finally {
      setTimeout(() => this.child.kill('SIGKILL'), 2000).unref();
    }
  }

  private send(message: unknown): void {
    const body = Buffer.from(JSON.stringify(message), 'utf8');
    this.child.stdin.write(`Content-Length: ${body.length}\r\n\r\n`);
    this.child.stdin.write(body);
  }

  private receive(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const headerEnd = this.buffer.indexOf('\r\n\r\n');
      if (headerEnd < 0) return;
      const header = this.buffer.subarray(0, headerEnd).toString('ascii');
      const length = Number(/Content-Length: *(\d+)/i.exec(header)?.[1] ?? NaN);
      if (!Number.isFinite(length) || this.buffer.length < headerEnd + 4 + length) return;
      const body = this.buffer.subarray(headerEnd + 4, headerEnd + 4 + length).toString('utf8');
      this.buffer = this.buffer.subarray(headerEnd + 4 + length);
      this.dispatch(JSON.parse(body) as { id?: number; method?: string; params?: unknown; result?: unknown; error?: { message: string } });
    }
  }

  private dispatch(m: { id?: number; method?: string; params?: unknown; result?: unknown; error?: { message: string } }): void {
    if (m.method !== undefined) {
      if (m.id === undefined) return; // a notification (diagnostics, logs)
      let result: unknown = null;
      if (m.method === 'workspace/configuration') {
        const items = (m.params as { items?: unknown[] }).items ?? [];
        result = items.map(() => ({}));
      }
      this.send({ jsonrpc: '2.0', id: m.id, result });
      return;
    }
    const p = m.id === undefined ? undefined : this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id!);
    if (m.error) p.reject(new Error(m.error.message));
    else p.resolve(m.result);
  }
}

export interface Position {
  line: number;
  character: number;
}

/** A file's text with conversions between UTF-8 byte offsets and LSP positions (UTF-16 within a line). */
export class TextIndex {
  readonly text: string;
  private readonly lineStarts: number[] = [0];
  private readonly lineStartBytes: number[] = [0];

  constructor(readonly bytes: Buffer) {
    this.text = bytes.toString('utf8');
    for (let i = 0; i < bytes.length; i++) if (bytes[i] === 10) this.lineStartBytes.push(i + 1);
    for (let i = 0; i < this.text.length; i++) if (this.text.charCodeAt(i) === 10) this.lineStarts.push(i + 1);
  }

  positionAt(offset: number): Position {
    let lo = 0;
    let hi = this.lineStartBytes.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.lineStartBytes[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    const character = this.bytes.subarray(this.lineStartBytes[lo], offset).toString('utf8').length;
    return { line: lo, character };
  }

  offsetAt(p: Position): number {
    const start = this.lineStarts[p.line];
    if (start === undefined) return this.bytes.length;
    return this.lineStartBytes[p.line] + Buffer.byteLength(this.text.slice(start, start + p.character), 'utf8');
  }
}
