import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addLogSink, type LogEvent } from '../../src/core/log.ts';
import { Engine } from '../../src/services/engine.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// A server whose first reconcile parsed little warms tree-sitter on one worker with one of the
// tree's own files: the largest of the most common language up to 128 KB. One-shot commands
// (no workers) and servers whose first build parsed many files do not.

function pyFile(bytes: number, name: string): string {
  const line = `def ${name}_fn():\n    return ${JSON.stringify('x'.repeat(40))}\n\n`;
  return line.repeat(Math.ceil(bytes / line.length));
}

async function warmEvents(root: string, watch: boolean, expected: boolean): Promise<LogEvent[]> {
  const events: LogEvent[] = [];
  const remove = addLogSink((e) => {
    if (e.target === 'index.warm') events.push(e);
  });
  const engine = await Engine.open(root, { watch });
  try {
    await engine.build();
    // The warm-up runs after the build, off it: wait until it has said how it went (or, where
    // none is expected, long enough for one started to have parsed a small file).
    for (let i = 0; events.length === 0 && i < (expected ? 200 : 10); i++) await new Promise((r) => setTimeout(r, 50));
    return events;
  } finally {
    remove();
    await engine.close();
  }
}

test('a server started on a warm index parses its largest file of the most common language (up to 128 KB) once; a cold one and one-shot builds do not', async () => {
  const root = tempWorkspace({
    'small.py': pyFile(200, 'small'),
    'pkg/mid.py': pyFile(60 * 1024, 'mid'),
    'pkg/huge.py': pyFile(200 * 1024, 'huge'),
    'web/a.ts': `export function a(): number {\n  return 1;\n}\n`.repeat(3000),
    'web/b.ts': 'export const b = 1;\n',
  });
  try {
    assert.deepEqual(await warmEvents(root, false, false), [], 'the one-shot build (no workers)');
    const events = await warmEvents(root, true, true);
    assert.equal(events.length, 1, JSON.stringify(events));
    assert.equal(events[0].message, 'parse runtime warmed');
    assert.equal(events[0].fields.path, 'pkg/mid.py');
  } finally {
    removeWorkspace(root);
  }
  const files: Record<string, string> = {};
  for (let i = 0; i < 70; i++) files[`m${i}.py`] = `def f${i}():\n    return ${i}\n`;
  const cold = tempWorkspace(files);
  try {
    assert.deepEqual(await warmEvents(cold, true, false), [], 'a first build that parsed 70 files warmed the runtime itself');
  } finally {
    removeWorkspace(cold);
  }
});
