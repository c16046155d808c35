import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { ServeEvent } from '../../src/protocol/serve.ts';
import { RIFT_ARGS } from '../support/rift-process.ts';

// Spawns `rift --serve` and reads its stdout as JSON lines; every wait is bounded, and every
// event is checked against its wire schema when the client closes.


export type Ev = Record<string, any> & { event: string };

export class ServeClient {
  readonly events: Ev[] = [];
  readonly raw: string[] = [];
  stderr = '';
  exit: Promise<number | null>;
  private buf = '';
  private waiters: Array<() => void> = [];
  readonly child: ChildProcessWithoutNullStreams;
  readonly spawnedAt = performance.now();

  constructor(args: string[], cwd: string, home: string) {
    this.child = spawn(process.execPath, [...RIFT_ARGS, '--serve', ...args], {
      cwd,
      env: { PATH: process.env.PATH, HOME: home, RIFT_HOME: home, RIFT_LOG: 'error' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (d: string) => {
      this.buf += d;
      let nl;
      while ((nl = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        this.raw.push(line);
        try {
          this.events.push(JSON.parse(line));
        } catch {
          this.events.push({ event: '__not_json__', line });
        }
      }
      for (const w of this.waiters.splice(0)) w();
    });
    this.child.stderr.on('data', (d) => (this.stderr += d));
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 60_000);
    this.exit = new Promise((resolve) =>
      this.child.on('close', (code) => {
        clearTimeout(timer);
        for (const w of this.waiters.splice(0)) w();
        resolve(code);
      }),
    );
  }

  send(cmd: unknown): void {
    this.child.stdin.write(typeof cmd === 'string' ? `${cmd}\n` : `${JSON.stringify(cmd)}\n`);
  }

  /** Waits until `pred` holds for the event list from `from` on; returns the matching event. */
  async waitFor(pred: (e: Ev) => boolean, opts: { from?: number; timeoutMs?: number } = {}): Promise<Ev> {
    const deadline = Date.now() + (opts.timeoutMs ?? 15_000);
    for (;;) {
      const hit = this.events.slice(opts.from ?? 0).find(pred);
      if (hit) return hit;
      if (this.child.exitCode !== null || Date.now() > deadline) {
        throw new Error(`timed out waiting; events: ${JSON.stringify(this.events.map((e) => e.event))}\nstderr: ${this.stderr}`);
      }
      await new Promise<void>((r) => {
        const t = setTimeout(r, Math.max(1, Math.min(200, deadline - Date.now())));
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  event(name: string, from = 0): Promise<Ev> {
    return this.waitFor((e) => e.event === name, { from });
  }

  /** Sends hello with `fields` and resolves with the capabilities event answering it. */
  hello(fields: Record<string, unknown>): Promise<Ev> {
    const from = this.events.length;
    this.send({ cmd: 'hello', ...fields });
    return this.event('capabilities', from);
  }

  /** Sends a prompt and resolves with the events of that turn (through done). */
  async turn(text: string): Promise<Ev[]> {
    const from = this.events.length;
    this.send({ cmd: 'prompt', text });
    await this.waitFor((e) => e.event === 'done', { from });
    const end = this.events.findIndex((e, i) => i >= from && e.event === 'done');
    return this.events.slice(from, end + 1);
  }

  since(from: number): Ev[] {
    return this.events.slice(from);
  }

  /** Events that do not match their protocol/serve.ts schema exactly (none, on a conforming wire). */
  offSchema(): Ev[] {
    return this.events.filter((e) => !ServeEvent.safeParse(e).success);
  }

  /** Ends stdin and waits for the exit; every event seen must have matched its schema. */
  async close(): Promise<number | null> {
    this.child.stdin.end();
    const code = await this.exit;
    const off = this.offSchema();
    if (off.length > 0) throw new Error(`events off their wire schema: ${JSON.stringify(off).slice(0, 2000)}`);
    return code;
  }
}
