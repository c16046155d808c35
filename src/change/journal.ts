import { closeSync, constants, fsyncSync, openSync, readFileSync, readdirSync, renameSync, rmdirSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { sha256Hex } from '../core/digest.ts';
import { log } from '../core/log.ts';
import { DirHandle } from '../workspace/safe-open.ts';

// The change journal (issue 10): each change in flight owns `.rift/changes/<id>/`, holding its
// staged bytes, a hard link to every original, and — from just before its first rename until
// its commit — `intent.json`, naming every file with the digests of its old and new bytes.
// Only the holder of the tree lock ever has a change in flight, so whoever takes the lock and
// finds a change directory knows its owner died, and recovers it:
//
// - no intent record: nothing was renamed yet (or the change had committed); the directory
//   holds only extra links and staged copies, and goes;
// - an intent record: the change is rolled back — each file still holding its new bytes (or,
//   once transform hooks ran, any bytes but its old ones) gets its original back, created
//   directories are removed, and hooks the dead process started are killed first. Then the
//   directory goes.
//
// Nothing is deleted that might be the only copy of a file. A file holding neither its old nor
// its new bytes (someone wrote it since, or a power cut lost a staged file's data) is left as
// found, and the directory — its originals included — is kept as `<id>.kept` for an operator;
// so is one whose rollback failed part-way. One whose intent record cannot be read stays as it is.

export const CHANGES_DIR = join('.rift', 'changes');
export const INTENT_FILE = 'intent.json';
const INTENT_TEMP = 'intent.tmp';
/** A generous bound for the intent record itself (64 files of paths and digests). */
const INTENT_BYTES_MAX = 1024 * 1024;
/** Environment variable tagging every transform hook with the change that started it. */
export const CHANGE_TAG = 'RIFT_CHANGE';

export interface IntentFile {
  target: string;
  link: boolean;
  /** Name of the kept original in the change directory; null when the target was created. */
  before: string | null;
  before_sha256: string | null;
  /** SHA-256 of the published bytes; null for a deletion. */
  after_sha256: string | null;
}

export interface Intent {
  version: 1;
  /** `hooks` once transform hooks may have rewritten the files. */
  phase: 'publish' | 'hooks';
  /** Directories the change creates for its files, shallow first. */
  dirs: string[];
  files: IntentFile[];
}

const baseName = (path: string) => path.slice(path.lastIndexOf('/') + 1);
const parentOf = (path: string) => (path.includes('/') ? dirname(path) : '');

/** `.rift/changes` opened through the root, or null when it does not exist (and `create` is false). */
export function openChangesDir(root: DirHandle, create: boolean): DirHandle | null {
  try {
    const rift = root.child('.rift', create);
    try {
      return rift.child('changes', create);
    } finally {
      rift.close();
    }
  } catch (e) {
    if (!create && (e as { reason?: string }).reason === 'missing') return null;
    throw e;
  }
}

/** Writes the intent record whole (temp file, fsync, rename, fsync of the directory). */
export function writeIntent(stage: DirHandle, intent: Intent): void {
  const bytes = Buffer.from(`${JSON.stringify(intent)}\n`);
  const fd = openSync(stage.entry(INTENT_TEMP), constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o600);
  try {
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(stage.entry(INTENT_TEMP), stage.entry(INTENT_FILE));
  fsyncSync(stage.fd);
}

/** Removes a change directory and everything in it. */
export function removeChangeDir(changes: DirHandle, stage: DirHandle, id: string): boolean {
  try {
    for (const name of stage.list()) unlinkSync(stage.entry(name));
    rmdirSync(changes.entry(id));
    return true;
  } catch (e) {
    log('warn', 'change.journal', 'change directory not removed', { change: id, io: (e as NodeJS.ErrnoException).code ?? 'error' });
    return false;
  }
}

function readIntent(stage: DirHandle): Intent | null | 'unreadable' {
  const state = stage.look(INTENT_FILE, INTENT_BYTES_MAX);
  if (state.kind === 'absent') return null;
  if (state.kind !== 'file' || state.bytes === null) return 'unreadable';
  try {
    const intent = JSON.parse(state.bytes.toString('utf8')) as Intent;
    if (intent.version !== 1 || !Array.isArray(intent.files) || !Array.isArray(intent.dirs)) return 'unreadable';
    return intent;
  } catch {
    return 'unreadable';
  }
}

/** Sets a change directory aside as `<id>.kept`, where recovery no longer looks. */
function keepForOperator(changes: DirHandle, id: string): void {
  try {
    renameSync(changes.entry(id), changes.entry(`${id}${KEPT_SUFFIX}`));
    log('error', 'change.journal', 'an interrupted change could not be rolled back whole; its originals are kept', { dir: `${CHANGES_DIR}/${id}${KEPT_SUFFIX}` });
  } catch (e) {
    log('error', 'change.journal', 'could not set an interrupted change aside', { change: id, io: (e as NodeJS.ErrnoException).code ?? 'error' });
  }
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Kills every process tagged with `id` (transform hooks of a dead change, and what they
 * started), so none writes after the rollback. Linux: the tag is read from /proc/<pid>/environ.
 * Done only after two scans a moment apart find none: a hook caught between fork and exec
 * shows its parent's environment until it execs.
 */
async function killTagged(id: string): Promise<void> {
  const tag = Buffer.from(`${CHANGE_TAG}=${id}\0`);
  let quiet = 0;
  for (let round = 0; round < 50 && quiet < 2; round++) {
    let names: string[];
    try {
      names = readdirSync('/proc');
    } catch {
      return;
    }
    let found = 0;
    for (const name of names) {
      if (!/^[0-9]+$/.test(name) || Number(name) === process.pid) continue;
      let env: Buffer;
      try {
        env = readFileSync(`/proc/${name}/environ`);
      } catch {
        continue;
      }
      const at = env.indexOf(tag);
      if (at < 0 || (at > 0 && env[at - 1] !== 0)) continue;
      try {
        process.kill(Number(name), 'SIGKILL');
        found++;
      } catch {
        // already gone
      }
    }
    quiet = found === 0 ? quiet + 1 : 0;
    await pause(10);
  }
}

function digestOf(state: ReturnType<DirHandle['look']>): string | null {
  return state.kind === 'file' && state.bytes !== null ? sha256Hex(state.bytes) : null;
}

/** What a rollback did: the paths it restored, and whether the change's directory must be kept. */
interface Rollback {
  restored: string[];
  keep: boolean;
}

/** Suffix of a change directory kept for an operator; recovery passes over it. */
export const KEPT_SUFFIX = '.kept';

/** Rolls one change back from its intent record. */
function rollBack(root: DirHandle, stage: DirHandle, id: string, intent: Intent): Rollback {
  const restored: string[] = [];
  let keep = false;
  for (const f of [...intent.files].reverse()) {
    let dir: DirHandle | null = null;
    try {
      dir = openDir(root, parentOf(f.target), f.before !== null);
      if (dir === null) continue; // a created file whose directory is gone: nothing to undo
      const name = baseName(f.target);
      const now = dir.look(name, Number.MAX_SAFE_INTEGER);
      const isBefore = f.link ? now.kind === 'link' : f.before_sha256 === null ? now.kind === 'absent' : digestOf(now) === f.before_sha256;
      if (isBefore) continue;
      const isAfter = f.after_sha256 === null ? now.kind === 'absent' : digestOf(now) === f.after_sha256;
      if (now.kind === 'other' || (intent.phase === 'publish' && !isAfter)) {
        log('warn', 'change.journal', 'file holds neither its old nor its new bytes; left as found, originals kept', { change: id, path: f.target });
        keep = true;
        continue;
      }
      if (f.before !== null) renameSync(stage.entry(f.before), dir.entry(name));
      else if (now.kind !== 'absent') unlinkSync(dir.entry(name));
      restored.push(f.target);
    } catch (e) {
      keep = true;
      log('error', 'change.journal', 'could not restore a file of an interrupted change', { change: id, path: f.target, io: (e as NodeJS.ErrnoException).code ?? 'error' });
    } finally {
      dir?.close();
    }
  }
  for (const d of [...intent.dirs].reverse()) {
    let parent: DirHandle | null = null;
    try {
      parent = openDir(root, parentOf(d), false);
      if (parent) rmdirSync(parent.entry(baseName(d)));
    } catch {
      // not empty (someone else's files) or already gone
    } finally {
      parent?.close();
    }
  }
  return { restored, keep };
}

/** The directory at project path `dir` through the root, created with its parents when asked; null when missing. */
function openDir(root: DirHandle, dir: string, create: boolean): DirHandle | null {
  let current = root;
  const opened: DirHandle[] = [];
  try {
    for (const segment of dir === '' ? [] : dir.split('/')) {
      current = current.child(segment, create);
      opened.push(current);
    }
  } catch (e) {
    for (const h of opened) h.close();
    if ((e as { reason?: string }).reason === 'missing') return null;
    throw e;
  }
  for (const h of opened.slice(0, -1)) h.close();
  // The caller closes what it gets, so the root comes back as a handle of its own.
  return opened.length > 0 ? current : DirHandle.open(root.abs);
}

const kept = (id: string) => id.endsWith(KEPT_SUFFIX);

/** Whether any change directory waits for recovery (cheap; no lock needed to look). */
export function hasInterruptedChanges(rootPath: string): boolean {
  try {
    return readdirSync(join(rootPath, CHANGES_DIR)).some((id) => !kept(id));
  } catch {
    return false;
  }
}

/**
 * Recovers every change directory under the tree (the caller holds the tree lock, so none
 * belongs to a live change); returns the project paths whose bytes it restored.
 */
export async function recoverChanges(rootPath: string): Promise<string[]> {
  if (!hasInterruptedChanges(rootPath)) return [];
  let root: DirHandle;
  let changes: DirHandle | null;
  try {
    root = DirHandle.open(rootPath);
  } catch (e) {
    // The change that follows meets the same disk and reports it; recovery is tried again then.
    log('error', 'change.journal', 'cannot open the workspace to recover interrupted changes', { io: (e as NodeJS.ErrnoException).code ?? 'error' });
    return [];
  }
  const touched: string[] = [];
  try {
    try {
      changes = openChangesDir(root, false);
    } catch (e) {
      log('error', 'change.journal', 'cannot open .rift/changes to recover interrupted changes', { io: (e as NodeJS.ErrnoException).code ?? 'error' });
      return [];
    }
    if (!changes) return [];
    try {
      for (const id of changes.list()) {
        if (kept(id)) continue;
        let stage: DirHandle;
        try {
          stage = changes.child(id, false);
        } catch {
          continue; // not a change directory
        }
        try {
          const intent = readIntent(stage);
          if (intent === 'unreadable') {
            log('error', 'change.journal', 'interrupted change has an unreadable intent record; left for an operator', { change: id });
            continue;
          }
          if (intent !== null) {
            if (intent.phase === 'hooks') await killTagged(id);
            const { restored, keep } = rollBack(root, stage, id, intent);
            touched.push(...restored);
            log('warn', 'change.journal', 'rolled back an interrupted change', { change: id, files: restored.length });
            if (keep) {
              keepForOperator(changes, id);
              continue;
            }
          }
          removeChangeDir(changes, stage, id);
        } finally {
          stage.close();
        }
      }
    } finally {
      changes.close();
    }
  } finally {
    root.close();
  }
  return touched;
}
