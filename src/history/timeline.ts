import { classifyBytes } from '../workspace/read.ts';
import { IncrementalTree, SyntaxLimitError, type ByteEdit } from '../syntax/runtime.ts';
import type { LanguageId } from '../syntax/types.ts';
import { classify, lineStart, locateDeclaration, type DeclarationParts, type DeclarationPlace, type Located, type VersionKind } from './classify.ts';
import type { Repository } from './git.ts';

// A declaration's timeline: the commits touching its current path along first parents from
// the served revision, newest first, each classified against the state before it. A commit
// whose file does not parse contributes nothing and is not a "before" either: the next
// commit compares against the last state that parsed.
//
// Most commits touching a file leave a given declaration alone, so the walk reads each version
// as an edit of the one after it (the span their common prefix and suffix leave) and looks at
// the declaration again only when that edit may have changed it, the way `git log -L` follows a
// line range: an edit reaching the declaration's lines or the line above them, the header line
// of a declaration containing it (whose name is part of its qualified name), or lines after it
// before any line that closes it (a line indented no deeper than its first one). Any other edit
// leaves the declaration as it was, moved by the edit's length. A look is a parse reusing the
// previous version's tree (tree-sitter's incremental parse), skipped outright when the version
// does not hold the declaration's name. What a version skipped this way does elsewhere is not
// seen: a syntax error elsewhere in it, or an edit between a container's header and the
// declaration that re-nests it, counts as leaving the declaration alone.

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
  const stats: WalkStats = { commits: 0, logMs: 0, fetched: 0, fetchMs: 0, parsed: 0, parseMs: 0 };
  let t = performance.now();
  // One commit more than the bound tells whether the walk stopped early, and gives the
  // oldest kept commit its "before".
  const log = await repo.log(commit, path, max + 1);
  stats.logMs = performance.now() - t;
  stats.commits = log.length;
  const complete = log.length <= max;
  const states: State[] = [];
  const name = Buffer.from(shortName(qname));
  /** What a parsed version held, by blob id (a file reverted to earlier bytes is not parsed again). */
  const seen = new Map<string, { state: State; located: Located | null }>();
  const tree = new IncrementalTree(language);
  const blobs = repo.blobs(log.flatMap((e) => (e.blob === null ? [] : [e.blob])));
  try {
    /** The declaration in the version the tree holds, while it is known to stand there. */
    let located: Located | null = null;
    for (const [i, entry] of log.entries()) {
      if (entry.blob === null) {
        states.push(null);
        located = null;
        continue;
      }
      t = performance.now();
      const bytes = (await blobs.next()).value ?? null;
      stats.fetched++;
      stats.fetchMs += performance.now() - t;
      if (i > 0 && entry.blob === log[i - 1].blob) {
        states.push(states[i - 1]);
        continue;
      }
      if (bytes === null || bytes.length > maxFileBytes || classifyBytes(bytes) !== 'ok') {
        states.push('unparseable');
        located = null;
        continue;
      }
      const newer = tree.bytes;
      const edit = tree.advance(bytes);
      const known = seen.get(entry.blob);
      if (known) {
        states.push(known.state);
        located = known.located;
        continue;
      }
      if (located !== null && newer !== null && (edit === null || !mayChange(newer, edit, located.place))) {
        states.push(located.parts);
        if (edit) located = { parts: located.parts, place: moved(located.place, edit) };
        continue;
      }
      // Nothing before the top-level declaration holding it changed: its subtree is enough.
      const outerItem = located !== null && edit !== null && edit.start > located.place.outerItem && !/^[^.:]*~/.test(qname) ? located.place.outerItem : null;
      let state: State;
      located = null;
      if (!bytes.includes(name)) state = null;
      else {
        t = performance.now();
        try {
          const found = tree.parse((parsed, source) => locateDeclaration(language, parsed, source, qname, outerItem));
          if (found !== null && found !== 'unparseable') located = found;
          state = found === null || found === 'unparseable' ? found : found.parts;
        } catch (e) {
          if (!(e instanceof SyntaxLimitError)) throw e;
          state = 'unparseable';
        }
        stats.parsed++;
        stats.parseMs += performance.now() - t;
      }
      seen.set(entry.blob, { state, located });
      states.push(state);
    }
  } finally {
    tree.close();
    await blobs.return(undefined);
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

/** The declared name as it is written: the last part of the qualified name, no overload suffix. */
function shortName(qname: string): string {
  const last = qname.split(/\.|::/).pop()!;
  return last.replace(/~\d+$/, '');
}

/**
 * Whether `edit` (of `bytes`, the version holding the declaration at `place`) may have changed
 * the declaration or its qualified name (see the top of this file).
 */
function mayChange(bytes: Uint8Array, edit: ByteEdit, place: DeclarationPlace): boolean {
  const reaches = (r: { start: number; end: number }) => {
    const first = lineStart(bytes, r.start);
    const above = first === 0 ? 0 : lineStart(bytes, first - 1);
    return edit.oldEnd >= above && edit.start <= r.end;
  };
  if (reaches(place.span) || place.headers.some(reaches)) return true;
  if (edit.start <= place.span.end) return false;
  // After the declaration: a line before the edit indented no deeper than its first line (and
  // not a comment, which may sit anywhere) closes it; without one the edit may extend it.
  for (let nl = bytes.indexOf(0x0a, place.span.end); nl !== -1 && nl + 1 < edit.start; nl = bytes.indexOf(0x0a, nl + 1)) {
    let first = nl + 1;
    while (first < bytes.length && (bytes[first] === 0x20 || bytes[first] === 0x09)) first++;
    if (first >= edit.start) break;
    const c = bytes[first];
    const blank = c === 0x0a || c === 0x0d || first >= bytes.length;
    if (!blank && c !== 0x23 && c !== 0x2f && first - (nl + 1) <= place.indent) return false;
  }
  return true;
}

/** A place after an edit that left it alone: what lies after the edit moves by its length. */
function moved(place: DeclarationPlace, edit: ByteEdit): DeclarationPlace {
  const delta = edit.newEnd - edit.oldEnd;
  const at = (offset: number) => (offset >= edit.oldEnd ? offset + delta : offset);
  const shift = (r: { start: number; end: number }) => ({ start: at(r.start), end: at(r.end) });
  return { span: shift(place.span), indent: place.indent, headers: place.headers.map(shift), outerItem: at(place.outerItem) };
}
