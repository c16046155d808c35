// Diagnostics go to stderr, one line per event, never carrying the workspace root or
// request contents (callers pass only counts, durations, and project-relative labels).
// Sinks (the `rift://logs` capture) see every event and filter by their own level.

export type Level = 'error' | 'warn' | 'info' | 'debug' | 'trace';

export const LEVEL_ORDER: Readonly<Record<Level, number>> = { error: 0, warn: 1, info: 2, debug: 3, trace: 4 };

export type LogFields = Record<string, string | number | boolean>;

export interface LogEvent {
  level: Level;
  target: string;
  message: string;
  fields: LogFields;
  /** Milliseconds since the epoch. */
  at: number;
}

export type LogSink = (event: LogEvent) => void;

let threshold: Level = (process.env.RIFT_LOG as Level | undefined) ?? 'info';
if (!(threshold in LEVEL_ORDER)) threshold = 'info';

const sinks = new Set<LogSink>();

export function setLogLevel(level: Level): void {
  threshold = level;
}

/** Adds a sink for every event; returns its removal. */
export function addLogSink(sink: LogSink): () => void {
  sinks.add(sink);
  return () => sinks.delete(sink);
}

export function log(level: Level, target: string, message: string, fields: LogFields = {}): void {
  const toStderr = LEVEL_ORDER[level] <= LEVEL_ORDER[threshold];
  if (!toStderr && sinks.size === 0) return;
  const at = Date.now();
  for (const sink of sinks) sink({ level, target, message, fields, at });
  if (!toStderr) return;
  const extra = Object.entries(fields)
    .map(([k, v]) => `${k}=${typeof v === 'string' && /\s/.test(v) ? JSON.stringify(v) : String(v)}`)
    .join(' ');
  const time = new Date(at).toISOString();
  process.stderr.write(`${time} ${level.toUpperCase().padEnd(5)} ${target}: ${message}${extra ? ' ' + extra : ''}\n`);
}
