import { classifyBytes } from '../workspace/read.ts';
import type { LanguageId } from '../syntax/types.ts';
import { classify, declarationParts, type DeclarationParts, type VersionKind } from './classify.ts';
import type { Repository } from './git.ts';

// A declaration's timeline: the commits touching its current path along first parents from
// the served revision, newest first, each classified against the state before it. A commit
// whose file does not parse contributes nothing and is not a "before" either: the next
// commit compares against the last state that parsed.

export interface TimelineVersion {
  revision: string;
  path: string;
  kind: VersionKind;
  timestamp: string;
  author: string;
  summary: string | null;
}

export interface Timeline {
  versions: TimelineVersion[];
  /** True when the walk reached the path's first commit (not stopped by `max`). */
  complete: boolean;
  stats: WalkStats;
}

/** Where a walk spent its time (logged per walk; bench/history.ts reports it). */
export interface WalkStats {
  /** Commits the log listed (the bound plus one at most). */
  commits: number;
  logMs: number;
  /** Blobs read from git, and the time spent waiting for them. */
  fetched: number;
  fetchMs: number;
  /** Blobs parsed, and the time spent parsing them. */
  parsed: number;
  parseMs: number;
}

type State = DeclarationParts | null | 'unparseable';

export async function timeline(
  repo: Repository,
  commit: string,
  path: string,
  language: LanguageId,
  qname: string,
  max: number,
  maxFileBytes: number,
): Promise<Timeline> {
  // One commit more than the bound tells whether the walk stopped early, and gives the
  // oldest kept commit its "before".
  const stats: WalkStats = { commits: 0, logMs: 0, fetched: 0, fetchMs: 0, parsed: 0, parseMs: 0 };
  let t = performance.now();
  const log = await repo.log(commit, path, max + 1);
  stats.logMs = performance.now() - t;
  stats.commits = log.length;
  const complete = log.length <= max;
  const states: State[] = [];
  const parsed = new Map<string, State>();
  // Most commits touching a file leave a given declaration alone. A top-level declaration
  // whose exact text (docs, decorators and all) still stands in the older file is the same
  // declaration there, so that file need not be parsed. (A member's text can stay while its
  // container is renamed, so members are always parsed.)
  const topLevel = !qname.includes('.') && !qname.includes('::');
  let newest: DeclarationParts | null = null;
  for (const entry of log) {
    if (entry.blob === null) {
      states.push(null);
      continue;
    }
    let state = parsed.get(entry.blob);
    if (state === undefined) {
      t = performance.now();
      const bytes = await repo.blob(entry.blob);
      stats.fetched++;
      stats.fetchMs += performance.now() - t;
      if (bytes === null || bytes.length > maxFileBytes || classifyBytes(bytes) !== 'ok') state = 'unparseable';
      else if (topLevel && newest !== null && bytes.includes(newest.text)) state = newest;
      else {
        t = performance.now();
        state = declarationParts(language, bytes, qname);
        stats.parsed++;
        stats.parseMs += performance.now() - t;
      }
      parsed.set(entry.blob, state);
    }
    if (state !== null && state !== 'unparseable') newest = state;
    states.push(state);
  }
  const versions: TimelineVersion[] = [];
  const kept = complete ? log.length : max;
  for (let i = 0; i < kept; i++) {
    const after = states[i];
    if (after === 'unparseable') continue;
    let j = i + 1;
    while (j < states.length && states[j] === 'unparseable') j++;
    // Past the oldest commit the path did not exist; past the bound nothing is known.
    if (j >= states.length && !complete) continue;
    const before = j < states.length ? (states[j] as DeclarationParts | null) : null;
    const kind = classify(before, after);
    if (kind === null) continue;
    const e = log[i];
    versions.push({ revision: e.commit, path, kind, timestamp: e.timestamp, author: e.author, summary: e.summary === '' ? null : e.summary });
  }
  return { versions, complete, stats };
}
