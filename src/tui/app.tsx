/** @jsxRuntime automatic @jsxImportSource react */
// (The pragma lets tsx run this file from any folder; tsc takes the same setting from tsconfig.)
import { PassThrough } from 'node:stream';
import { useEffect, useState } from 'react';
import { Box, render, Static, Text, type Instance } from 'ink';
import type { Line } from './transcript.ts';
import type { Row, RowStyle } from './view.ts';

// The Ink layer, kept thin: finished lines go through <Static> (written once, never redrawn),
// the live rows are drawn below them, one truncated <Text> per row. All state lives in the
// controller; this component only holds what the last frame delivered.

export interface Frame {
  lines: Line[];
  rows: Row[];
}

interface Look {
  color?: string;
  bold?: boolean;
  dimColor?: boolean;
  italic?: boolean;
  inverse?: boolean;
}

const COLOR: Record<RowStyle, Look> = {
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

function App({ subscribe, looks }: { subscribe: (push: (f: Frame) => void) => void; looks: Record<RowStyle, Look> }) {
  const [state, setState] = useState<{ lines: Line[]; rows: Row[] }>({ lines: [], rows: [] });
  useEffect(() => {
    // One state update per frame: the transcript grows by the new lines only.
    subscribe((f) => setState((s) => ({ lines: f.lines.length > 0 ? s.lines.concat(f.lines) : s.lines, rows: f.rows })));
  }, [subscribe]);
  return (
    <>
      <Static items={state.lines}>
        {(l) => (
          <Text key={l.id} {...looks[l.style]}>
            {l.text === '' ? ' ' : l.text}
          </Text>
        )}
      </Static>
      <Box flexDirection="column">
        {state.rows.map((r, i) => (
          <Text key={i} wrap="truncate-end">
            {r.map((s, j) => (
              <Text key={j} {...(s.style ? looks[s.style] : {})}>
                {s.text}
              </Text>
            ))}
          </Text>
        ))}
      </Box>
    </>
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
