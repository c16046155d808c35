/** @jsxRuntime automatic @jsxImportSource react */
// (The pragma lets tsx run this file from any folder; tsc takes the same setting from tsconfig.)
import { PassThrough } from 'node:stream';
import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { Box, render, Text, useStdout, type Instance } from 'ink';
import type { Line } from './transcript.ts';
import type { Row, RowStyle } from './view.ts';

// The Ink layer, kept thin: finished lines are written once above the live region and never
// redrawn; the live rows are drawn below them, one truncated <Text> per row. All state lives
// in the controller; this component only holds the rows of the last frame.

export interface Frame {
  lines: Line[];
  rows: Row[];
}

export interface Look {
  color?: string;
  bold?: boolean;
  dimColor?: boolean;
  italic?: boolean;
  inverse?: boolean;
}

export const COLOR: Record<RowStyle, Look> = {
  user: { color: 'cyan', bold: true },
  reply: {},
  blank: {},
  code: { color: 'yellow' },
  heading: { bold: true },
  thinking: { color: 'gray', italic: true },
  ok: { color: 'green' },
  fail: { color: 'red' },
  add: { color: 'green' },
  del: { color: 'red' },
  meta: { color: 'cyan' },
  info: { color: 'blue' },
  warn: { color: 'yellow' },
  dim: { color: 'gray' },
  agent: { color: 'magenta' },
  status: { inverse: true, bold: true },
  select: { color: 'cyan', bold: true },
  frame: { color: 'gray' },
  cursor: { inverse: true },
  hint: { color: 'gray' },
};

/** NO_COLOR (no-color.org): no colour at all; weight, dimness and inverse still mark structure. */
const MONO: Record<RowStyle, Look> = {
  user: { bold: true },
  reply: {},
  blank: {},
  code: {},
  heading: { bold: true },
  thinking: { dimColor: true, italic: true },
  ok: {},
  fail: { bold: true },
  add: {},
  del: {},
  meta: {},
  info: {},
  warn: { bold: true },
  dim: { dimColor: true },
  agent: {},
  status: { inverse: true, bold: true },
  select: { inverse: true },
  frame: { dimColor: true },
  cursor: { inverse: true },
  hint: { dimColor: true },
};

const SGR: Record<string, number> = { cyan: 36, yellow: 33, gray: 90, green: 32, red: 31, blue: 34, magenta: 35 };

/** A finished line as the terminal gets it: SGR attributes around the text, reset after. */
export function paint(text: string, look: Look): string {
  const codes: number[] = [];
  if (look.bold) codes.push(1);
  if (look.dimColor) codes.push(2);
  if (look.italic) codes.push(3);
  if (look.inverse) codes.push(7);
  if (look.color) codes.push(SGR[look.color]);
  return codes.length === 0 ? text : `\x1b[${codes.join(';')}m${text}\x1b[0m`;
}

function App({ subscribe, looks }: { subscribe: (push: (f: Frame) => void) => void; looks: Record<RowStyle, Look> }) {
  const { write } = useStdout();
  // Lines wait here until a commit writes them, so frames React batches into one lose none.
  const pending = useRef<Line[]>([]);
  const [frame, setFrame] = useState<{ rows: Row[]; seq: number }>({ rows: [], seq: 0 });
  useEffect(
    () =>
      subscribe((f) => {
        if (f.lines.length > 0) pending.current = pending.current.concat(f.lines);
        setFrame((p) => ({ rows: f.rows, seq: p.seq + 1 }));
      }),
    [subscribe],
  );
  // After the commit (Ink has drawn the new rows, unless its throttle defers them), the frame's
  // finished lines go out once through Ink's stdout channel: the same erase-write-redraw
  // <Static> does, without Ink laying each line out cell by cell (≈0.4 ms a line here, which
  // a fast stream of hundreds of lines a frame cannot afford). The terminal wraps them.
  useLayoutEffect(() => {
    const lines = pending.current;
    pending.current = [];
    if (lines.length > 0) write(`${lines.map((l) => paint(l.text, looks[l.style])).join('\n')}\n`);
  }, [frame, write, looks]);
  return (
    <Box flexDirection="column">
      {frame.rows.map((r, i) => (
        // One pre-painted string per row: a handful of nested <Text>s per row cost Ink more than the painting.
        <Text key={i} wrap="truncate-end">
          {r.map((seg) => (seg.style ? paint(seg.text, looks[seg.style]) : seg.text)).join('')}
        </Text>
      ))}
    </Box>
  );
}

export interface MountOptions {
  subscribe: (push: (f: Frame) => void) => void;
  noColor: boolean;
  stdout: NodeJS.WriteStream;
  /** Ink's own per-render timing (the benchmark reads it). */
  onRender?: (ms: number) => void;
}

/**
 * Mounts the UI. Ink gets a stdin it never reads: the controller decodes keys itself, so Ink
 * must not take raw mode or swallow Ctrl-C. Ink may draw at 60 fps, above the scheduler's own
 * rate, so it never delays a frame the scheduler asked for. Each frame rewrites the live rows
 * whole inside a synchronized update (Ink's incremental mode left stale rows behind under
 * tmux); the live region is a few rows, so that costs little.
 */
export function mount(o: MountOptions): Instance {
  const stdin = new PassThrough() as unknown as NodeJS.ReadStream;
  return render(<App subscribe={o.subscribe} looks={o.noColor ? MONO : COLOR} />, {
    stdout: o.stdout,
    stdin,
    exitOnCtrlC: false,
    patchConsole: false,
    maxFps: 60,
    onRender: o.onRender ? ({ renderTime }) => o.onRender!(renderTime) : undefined,
  });
}
