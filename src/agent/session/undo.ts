import { FILE_BYTES_MAX } from '../../core/limits.ts';
import type { WorkspaceFiles } from '../../services/workspace-files.ts';

// The undo journal (reference A.18): the true prior bytes of every file write/edit touched,
// first touch per (turn, path), for the last 20 turns. Bash changes are not tracked. Undo
// publishes the prior bytes atomically, like the writes it reverts.

export const UNDO_TURNS_MAX = 20;

/** A file as the tools address it: its workspace, project path ('' for the root, links resolved), and the same file under cwd as rules and the user see it. */
export interface ProjectFile {
  files: WorkspaceFiles;
  path: string;
  abs: string;
}

interface TurnEntry {
  /** Shown path → the file and its prior bytes, or null when it did not exist. */
  prior: Map<string, { file: ProjectFile; bytes: Uint8Array | null }>;
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

  /** Call before the first write of a file in this turn with the bytes it holds; later calls keep the first state. */
  record(file: ProjectFile, bytes: Uint8Array | null): void {
    if (!this.current) this.beginTurn();
    const t = this.current!;
    if (!t.prior.has(file.abs)) t.prior.set(file.abs, { file, bytes });
  }

  get canUndo(): boolean {
    return this.turns.some((t) => t.prior.size > 0);
  }

  /** What the next undo would restore: the prior state of each file of the most recent turn that changed files. */
  peek(): ReadonlyMap<string, Uint8Array | null> | null {
    for (let i = this.turns.length - 1; i >= 0; i--) {
      const prior = this.turns[i].prior;
      if (prior.size > 0) return new Map([...prior].map(([abs, p]) => [abs, p.bytes]));
    }
    return null;
  }

  /**
   * Restores the most recent turn that changed files and consumes it, so repeated undos walk
   * back. Returns null when nothing is tracked.
   */
  async undo(): Promise<UndoResult | null> {
    while (this.turns.length > 0) {
      const t = this.turns.pop()!;
      if (t === this.current) this.current = null;
      if (t.prior.size === 0) continue;
      const restored: string[] = [];
      for (const [abs, { file, bytes }] of [...t.prior.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
        await file.files.restore(file.path, bytes, FILE_BYTES_MAX);
        restored.push(abs);
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
