import { lstatSync, readdirSync, rmSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { DAMAGED_STORES_KEPT, STORE_OPEN_BACKOFF_MAX_MS, storeBusyWaitMs } from '../core/limits.ts';
import { log } from '../core/log.ts';
import { ensureStateDir, entryKind, setAside, STATE_DIR } from '../workspace/state-dir.ts';
import { Store } from './store.ts';

// Opening the persistent index so that a damaged one never stops rift. The store is derived
// data: anything wrong with `.rift/rift.db` (not a database, truncated, corrupt pages, a
// schema that does not match, a directory, FIFO or symlink in its place, unwritable) is set
// aside under a `.damaged-<time>` name, logged, and a fresh store is built from the tree.
// When nothing can be written under `.rift/` the index is kept in memory for the process.

const DB_FILE = 'rift.db';
/** SQLite's companions of a WAL database: they belong to the file and go where it goes. */
const COMPANIONS = ['-wal', '-shm'];

const SQLITE_DAMAGE = /^SQLITE_(CORRUPT|NOTADB|CANTOPEN|READONLY|IOERR_SHORT_READ)/;
/** A schema that does not match what the prepared statements expect. */
const SCHEMA_MISMATCH = /^(no such (table|column)|table \S+ has (\d+ columns|no column named))/;

/** Whether SQLite found the file itself corrupt (as opposed to a table missing or a busy lock). */
export function isCorruption(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^SQLITE_(CORRUPT|NOTADB)/.test(code);
}

/** Why an error from SQLite means the store itself is unusable (as opposed to busy or out of memory), or null. */
export function storeDamage(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !code.startsWith('SQLITE_')) return null;
  if (SQLITE_DAMAGE.test(code)) return code;
  if (code === 'SQLITE_ERROR' && SCHEMA_MISMATCH.test((err as Error).message)) return 'schema mismatch';
  return null;
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}


/** Removes all but the newest `keep` set-aside stores (each with its companions) from `dir`. */
function pruneSetAside(dir: string, keep: number): void {
  const stamps = new Map<string, string[]>();
  for (const name of readdirSync(dir)) {
    const m = /^rift\.db(?:-wal|-shm)?\.damaged-(.+)$/.exec(name);
    if (!m) continue;
    const group = stamps.get(m[1]);
    if (group) group.push(name);
    else stamps.set(m[1], [name]);
  }
  const oldest = [...stamps.keys()].sort().slice(0, Math.max(0, stamps.size - keep));
  for (const stamp of oldest) for (const name of stamps.get(stamp)!) rmSync(join(dir, name), { recursive: true, force: true });
}

/** Opens the database file and reads enough of it to know it is a store of this schema. */
function openChecked(file: string, root: string): Store {
  const store = Store.openFile(file, root);
  try {
    store.counts();
    store.meta('tree_revision');
    return store;
  } catch (e) {
    store.close();
    throw e;
  }
}

/** Why the database file or a companion cannot be opened as it stands (not a regular file), or null. */
function shapeDamage(dir: string): string | null {
  for (const name of [DB_FILE, ...COMPANIONS.map((c) => DB_FILE + c)]) {
    const st = lstatOrNull(join(dir, name));
    if (st && !st.isFile()) return `${name} is ${entryKind(st)}`;
  }
  return null;
}

/**
 * The workspace's store: `.rift/rift.db` when it opens as a store, else a fresh one after the
 * damaged file is set aside, else (nothing writable under `.rift/`) one in memory. Never throws
 * for the store's sake; rift starts either way.
 */
export function openStore(root: string): Store {
  let dir: string;
  try {
    dir = ensureStateDir(root);
  } catch (e) {
    return inMemory(root, (e as NodeJS.ErrnoException).code ?? (e as Error).message);
  }
  const file = join(dir, DB_FILE);
  let damage = shapeDamage(dir);
  if (damage === null) {
    const started = performance.now();
    for (let wait = 1; ; wait = Math.min(wait * 2, STORE_OPEN_BACKOFF_MAX_MS)) {
      try {
        return openChecked(file, root);
      } catch (e) {
        // Busy is not damage: other processes opening or writing the store at the same moment
        // (eight servers started at once on a fresh tree) hold it for a moment. Most waits happen
        // inside SQLite (its busy timeout); some lock steps answer busy at once, so try again.
        const waited = performance.now() - started;
        if (isContended(e) && waited < storeBusyWaitMs()) {
          sleepSync(wait);
          continue;
        }
        damage = storeDamage(e);
        if (damage === null) {
          const code = (e as { code?: string }).code ?? (e as Error).message;
          return inMemory(root, isContended(e) ? `${code}: other processes held it for ${Math.round(waited)} ms` : code);
        }
        break;
      }
    }
  }
  return replaceDamaged(root, damage);
}

/**
 * Whether SQLite says another connection holds a lock the step needs (extended codes included),
 * or changed the schema under a statement more often than SQLite re-prepares it.
 */
function isContended(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^SQLITE_(BUSY|LOCKED|PROTOCOL|SCHEMA)(_|$)/.test(code);
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Sets the damaged store of `root` aside and opens a fresh one (in memory when that fails).
 * The caller has closed its connection to the damaged file.
 */
export function replaceDamaged(root: string, reason: string): Store {
  const dir = join(root, STATE_DIR);
  let kept: string;
  try {
    // Damaged copies are kept for inspection, but never pile up.
    pruneSetAside(dir, DAMAGED_STORES_KEPT - 1);
    kept = setAside(dir, [DB_FILE, ...COMPANIONS.map((c) => DB_FILE + c)]);
  } catch (e) {
    return inMemory(root, `${reason}, and it cannot be set aside (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  log('warn', 'index.store', 'damaged index set aside; rebuilding it from the tree', { reason, kept: `${STATE_DIR}/${kept}` });
  try {
    return openChecked(join(dir, DB_FILE), root);
  } catch (e) {
    return inMemory(root, (e as { code?: string }).code ?? (e as Error).message);
  }
}

function inMemory(root: string, reason: string): Store {
  log('warn', 'index.store', `index kept in memory: ${STATE_DIR}/${DB_FILE} cannot be used`, { reason });
  return Store.memory(root);
}
