import { invalidField } from '../core/errors.ts';
import { addLogSink, LEVEL_ORDER, log, type Level, type LogEvent } from '../core/log.ts';
import { LOG_FLUSH_MS, LOG_QUEUE_MAX } from '../core/limits.ts';
import type { ConfigLoader } from '../config/loader.ts';
import { defaultConfig, type LogsConfig } from '../config/workspace-config.ts';
import type { LogsResource } from '../protocol/resources.ts';
import { LogStore, type NewLogRecord } from '../index/log-store.ts';
import { pagination } from './read-gate.ts';

// `rift://logs` (spec "Server logs"; reference B.1, F.9 rules 91–95). Events the `[logs]`
// capture filter admits enter a bounded queue; one writer drains it into the workspace
// database. A full queue drops later events and the writer records how many it dropped.
// Reading never waits on the index or the configuration gate: the records are most useful
// exactly when every other read refuses.

/** The target the capture's own records carry. */
const SELF_TARGET = 'logs.capture';

export class LogCapture {
  private readonly queue: NewLogRecord[] = [];
  private dropped = 0;
  private timer: NodeJS.Timeout | null = null;
  private store: LogStore | null = null;
  private unavailable: string | null = null;
  private writing = false;
  private lastGood: LogsConfig = defaultConfig().logs;
  private readonly removeSink: () => void;

  constructor(
    private readonly root: string,
    private readonly config: ConfigLoader,
  ) {
    this.open();
    this.removeSink = addLogSink((e) => this.admit(e));
  }

  /** The `[logs]` table of the accepted configuration, or the last one accepted while the file is invalid. */
  private settings(): LogsConfig {
    const accepted = this.config.tryCurrent();
    if (!(accepted instanceof Error)) this.lastGood = accepted.config.logs;
    return this.lastGood;
  }

  private open(): void {
    if (this.store !== null) return;
    try {
      this.store = LogStore.open(this.root);
      this.unavailable = null;
    } catch (e) {
      this.unavailable = `the log store could not be opened: ${reason(e)}`;
    }
  }

  private admit(e: LogEvent): void {
    if (this.writing && e.target === SELF_TARGET) return; // the writer's own trouble is not re-queued
    if (LEVEL_ORDER[e.level] > LEVEL_ORDER[this.settings().capture as Level]) return;
    if (this.queue.length >= LOG_QUEUE_MAX) {
      this.dropped++;
      return;
    }
    this.queue.push(record(e));
    this.schedule(LOG_FLUSH_MS);
  }

  private schedule(ms: number): void {
    if (this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush();
    }, ms);
    this.timer.unref();
  }

  /** Writes what the queue holds, plus a record of the events dropped since the last write. */
  flush(): void {
    if (this.queue.length === 0 && this.dropped === 0) return;
    this.open();
    if (this.store === null) return;
    const batch = this.queue.slice();
    const dropped = this.dropped;
    if (dropped > 0) {
      batch.push(
        record({ level: 'warn', target: SELF_TARGET, message: `dropped ${dropped} log events: the capture queue was full`, fields: { dropped }, at: Date.now() }),
      );
    }
    this.writing = true;
    try {
      this.store.append(batch, this.settings().retention_records);
      this.queue.splice(0, this.queue.length);
      this.dropped -= dropped;
    } catch (e) {
      // A locked database (another process writing) keeps the events queued for a later try.
      log('debug', SELF_TARGET, 'log write deferred', { io: (e as NodeJS.ErrnoException).code ?? 'unknown' });
      this.schedule(LOG_FLUSH_MS * 4);
    } finally {
      this.writing = false;
    }
  }

  /** One page of records, newest first (`[logs] page_records` per page). */
  read(pageIndex: number): LogsResource {
    if (!Number.isSafeInteger(pageIndex) || pageIndex < 0) throw invalidField('page_index', 'not a non-negative integer');
    const perPage = this.settings().page_records;
    this.flush();
    if (this.store === null) {
      return { records: [], record_count: 0, pagination: pagination(0, 0, perPage), unavailable: this.unavailable ?? 'the log store is not open' };
    }
    try {
      const { rows, total } = this.store.read(pageIndex * perPage, perPage);
      return {
        records: rows.map((r) => {
          const out: LogsResource['records'][number] = {
            id: r.id,
            recorded_at_ms: r.recorded_at_ms,
            level: r.level as Level,
            target: r.target,
            component: r.component,
            operation: r.operation,
            message: r.message,
            fields: JSON.parse(r.fields) as Record<string, string | number | boolean>,
          };
          if (r.elapsed_ms !== null) out.elapsed_ms = r.elapsed_ms;
          return out;
        }),
        record_count: total,
        pagination: pagination(pageIndex, total, perPage),
      };
    } catch (e) {
      return { records: [], record_count: 0, pagination: pagination(0, 0, perPage), unavailable: `the log store could not be read: ${reason(e)}` };
    }
  }

  close(): void {
    this.removeSink();
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.flush();
    this.store?.close();
    this.store = null;
  }
}

/** What went wrong, without a path: a system call's code, else SQLite's own words. */
function reason(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  return err.syscall !== undefined ? (err.code ?? 'io error') : err.message;
}

/** A log event as a record: `component` is the target's first segment, `operation` the target; a span's `elapsed_ms` is lifted out. */
function record(e: LogEvent): NewLogRecord {
  const { elapsed_ms, ...fields } = e.fields;
  const component = e.target.split('.')[0];
  return {
    recorded_at_ms: e.at,
    level: e.level,
    target: `rift::${component}`,
    component,
    operation: e.target,
    message: e.message,
    fields,
    elapsed_ms: typeof elapsed_ms === 'number' ? elapsed_ms : null,
  };
}
