import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

// The undo journal (reference A.18): the true prior bytes of every file write/edit touched,
// first touch per (turn, path), for the last 20 turns. Bash changes are not tracked.

export const UNDO_TURNS_MAX = 20;

interface TurnEntry {
  /** Absolute path → prior bytes, or null when the file did not exist. */
  prior: Map<string, Uint8Array | null>;
}

export interface UndoResult {
  restored: string[];
}

export class UndoJournal {
  private readonly turns: TurnEntry[] = [];
  private current: TurnEntry | null = null;

  beginTurn(): void {
    this.current = { prior: new Map() };
    this.turns.push(this.current);
    while (this.turns.length > UNDO_TURNS_MAX) this.turns.shift();
  }

  /** Call before the first write of a path in this turn; later calls keep the first state. */
  record(absPath: string): void {
    if (!this.current) this.beginTurn();
    const t = this.current!;
    if (t.prior.has(absPath)) return;
    t.prior.set(absPath, existsSync(absPath) ? new Uint8Array(readFileSync(absPath)) : null);
  }

  get canUndo(): boolean {
    return this.turns.some((t) => t.prior.size > 0);
  }

  /** What the next undo would restore: the prior state of each file of the most recent turn that changed files. */
  peek(): ReadonlyMap<string, Uint8Array | null> | null {
    for (let i = this.turns.length - 1; i >= 0; i--) if (this.turns[i].prior.size > 0) return this.turns[i].prior;
    return null;
  }

  /**
   * Restores the most recent turn that changed files and consumes it, so repeated undos walk
   * back. Returns null when nothing is tracked.
   */
  undo(): UndoResult | null {
    while (this.turns.length > 0) {
      const t = this.turns.pop()!;
      if (t === this.current) this.current = null;
      if (t.prior.size === 0) continue;
      const restored: string[] = [];
      for (const [path, bytes] of [...t.prior.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
        if (bytes === null) rmSync(path, { force: true });
        else {
          mkdirSync(dirname(path), { recursive: true });
          writeFileSync(path, bytes);
        }
        restored.push(path);
      }
      return { restored };
    }
    return null;
  }
}

export const NOTHING_TO_UNDO = 'nothing to undo (only write/edit tool changes are tracked)';

export function undoMessage(r: UndoResult): string {
  return `restored to pre-turn state:\n${r.restored.map((p) => `  ${p}`).join('\n')}\n(note: changes made via bash are not tracked)`;
}
