// Diagnostics go to stderr, one line per event, never carrying the workspace root or
// request contents (callers pass only counts, durations, and project-relative labels).

export type Level = 'error' | 'warn' | 'info' | 'debug';

const ORDER: Record<Level, number> = { error: 0, warn: 1, info: 2, debug: 3 };

let threshold: Level = (process.env.RIFT_LOG as Level | undefined) ?? 'info';
if (!(threshold in ORDER)) threshold = 'info';

export function setLogLevel(level: Level): void {
  threshold = level;
}

export function log(level: Level, target: string, message: string, fields: Record<string, string | number | boolean> = {}): void {
  if (ORDER[level] > ORDER[threshold]) return;
  const extra = Object.entries(fields)
    .map(([k, v]) => `${k}=${typeof v === 'string' && /\s/.test(v) ? JSON.stringify(v) : String(v)}`)
    .join(' ');
  const time = new Date().toISOString();
  process.stderr.write(`${time} ${level.toUpperCase().padEnd(5)} ${target}: ${message}${extra ? ' ' + extra : ''}\n`);
}
