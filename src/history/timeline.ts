import { classifyBytes } from '../workspace/read.ts';
import { IncrementalTree, SyntaxLimitError, type ByteEdit } from '../syntax/runtime.ts';
import type { LanguageId } from '../syntax/types.ts';
import { classify, declarationEnd, lineStart, locateDeclaration, locateInSlice, type DeclarationParts, type DeclarationPlace, type Located, type VersionKind } from './classify.ts';
import { BufferPool, type Repository } from './git.ts';

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
// does not hold the declaration's name. An edit reaching the outermost declaration holding it
// (most commits touching a function change its body, often with lines elsewhere: an import, a
// caller) is looked at by parsing that declaration alone, where it is assumed to stand: its start
// as it was when the edit starts inside it, else where its first line (below the line that was
// above it) is found once; its end moved by the edit's length when the edit ends inside it, else
// found by its lines (`declarationEnd`). The part is shown right when it parses without errors as
// exactly one declaration spanning all of it; otherwise the whole file is parsed as before. An
// edit before the declaration that may add or remove a declaration of a name its qualified name
// is made of (which would number it `~2`, or no longer) is always looked at by a parse. What a
// version skipped this way does elsewhere is not seen: a syntax error elsewhere in it, or an edit
// between a container's header and the declaration that re-nests it, counts as leaving the
// declaration alone.

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
  /** Of the parsed, those where the outermost declaration holding it was parsed alone. */
  alone: number;
}

export type State = DeclarationParts | null | 'unparseable';

/** Consecutive versions of one file, newest first, walked as one unit (here or in a worker). */
export interface SegmentJob {
  /** The workspace root (git runs there). */
  cwd: string;
  /** The workspace's path inside the repository (as `Repository.prefix`). */
  prefix: string;
  /** Each version's blob id, null where the commit deleted the file. */
  blobs: Array<string | null>;
  language: LanguageId;
  qname: string;
  maxFileBytes: number;
}

export interface SegmentResult {
  /** The declaration in each version, aligned with the job's blobs. */
  states: State[];
  stats: Pick<WalkStats, 'fetched' | 'fetchMs' | 'parsed' | 'parseMs' | 'alone'>;
}

/** Walks a segment elsewhere (a worker thread); `lane` tells segments of one walk apart. */
export type SegmentRunner = (job: SegmentJob, lane: number) => Promise<SegmentResult>;

/** A walk this long is split in two halves walked side by side when a runner is given (a shorter one is walked there whole). */
const SEGMENT_MIN = 64;

export async function timeline(
  repo: Repository,
  commit: string,
  path: string,
  language: LanguageId,
  qname: string,
  max: number,
  maxFileBytes: number,
  runner?: SegmentRunner,
): Promise<Timeline> {
  const stats: WalkStats = { commits: 0, logMs: 0, fetched: 0, fetchMs: 0, parsed: 0, parseMs: 0, alone: 0 };
  const t = performance.now();
  // One commit more than the bound tells whether the walk stopped early, and gives the
  // oldest kept commit its "before".
  const log = await repo.log(commit, path, max + 1);
  stats.logMs = performance.now() - t;
  stats.commits = log.length;
  const complete = log.length <= max;
  const blobs = log.map((e) => e.blob);
  // With a runner the walk runs there (the workers: off the thread answering requests), a long
  // one as two halves side by side, on both cores. Each half starts by parsing its newest
  // version whole, instead of taking it from the version after it; otherwise they walk alike.
  const halves = runner && blobs.length >= 2 * SEGMENT_MIN ? [blobs.slice(0, blobs.length >> 1), blobs.slice(blobs.length >> 1)] : [blobs];
  const results = await Promise.all(
    halves.map((part, lane) => {
      const job: SegmentJob = { cwd: repo.cwd, prefix: repo.prefix, blobs: part, language, qname, maxFileBytes };
      // A worker that fails (or exits) leaves its part to this thread.
      return runner ? runner(job, lane).catch(() => walkSegment(repo, job)) : walkSegment(repo, job);
    }),
  );
  const states = results.flatMap((r) => r.states);
  for (const r of results) {
    stats.fetched += r.stats.fetched;
    stats.fetchMs += r.stats.fetchMs;
    stats.parsed += r.stats.parsed;
    stats.parseMs += r.stats.parseMs;
    stats.alone += r.stats.alone;
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
  return closingLine(bytes, place, edit.start) === null;
}

/**
 * The start of the first line after the declaration, starting before `limit`, that closes it:
 * indented no deeper than its first line, not blank and not a comment. Null when none does.
 */
function closingLine(bytes: Uint8Array, place: DeclarationPlace, limit: number): number | null {
  for (let nl = bytes.indexOf(0x0a, place.span.end); nl !== -1 && nl + 1 < limit; nl = bytes.indexOf(0x0a, nl + 1)) {
    let first = nl + 1;
    while (first < bytes.length && (bytes[first] === 0x20 || bytes[first] === 0x09)) first++;
    if (first >= limit) break;
    const c = bytes[first];
    const blank = c === 0x0a || c === 0x0d || first >= bytes.length;
    if (!blank && c !== 0x23 && c !== 0x2f && first - (nl + 1) <= place.indent) return nl + 1;
  }
  return null;
}

/**
 * Where the declaration stands in `older` when the text that decides it is there unchanged, once:
 * from the line above it through the line closing it, and each container's header with the
 * line above it. Null when any of them changed, or occurs more than once.
 */
function relocated(newer: Uint8Array, older: Uint8Array, place: DeclarationPlace): DeclarationPlace | null {
  const find = (start: number, end: number): number | null => {
    const from = lineStart(newer, start);
    const above = from === 0 ? 0 : lineStart(newer, from - 1);
    const text = newer.subarray(above, end);
    const haystack = Buffer.from(older.buffer, older.byteOffset, older.length);
    const at = haystack.indexOf(text);
    // Found at a line start (a blank line above matches any line's end otherwise), and once.
    if (at < 0 || (at > 0 && older[at - 1] !== 0x0a) || haystack.indexOf(text, at + 1) >= 0) return null;
    return at - above;
  };
  const closer = closingLine(newer, place, newer.length);
  const lineEnd = closer === null ? newer.length : newer.indexOf(0x0a, closer);
  const delta = find(place.span.start, lineEnd < 0 ? newer.length : lineEnd);
  if (delta === null) return null;
  const headers = [];
  for (const h of place.headers) {
    const d = find(h.start, h.end);
    if (d === null) return null;
    headers.push({ start: h.start + d, end: h.end + d });
  }
  const outer = place.headers.length === 0 ? delta : headers[headers.length - 1].start - place.headers[place.headers.length - 1].start;
  // The outermost declaration holding it starts where its header now does (it, when it is the
  // declaration itself, whose end is then known too, found whole).
  const o = place.outer;
  const self = o !== null && o.start === place.span.start;
  const held = o === null || self ? -1 : place.headers.findIndex((h) => h.start === o.start);
  const outerSpan = self ? { ...o, start: o.start + delta, end: o.end >= 0 ? o.end + delta : -1 } : held >= 0 ? { ...o!, start: headers[held].start, end: -1 } : null;
  return { span: { start: place.span.start + delta, end: place.span.end + delta }, indent: place.indent, headers, outerItem: place.outerItem + outer, outer: outerSpan };
}

/** A place after an edit that left it alone: what lies after the edit moves by its length. */
function moved(place: DeclarationPlace, edit: ByteEdit): DeclarationPlace {
  const delta = edit.newEnd - edit.oldEnd;
  const at = (offset: number) => (offset >= edit.oldEnd ? offset + delta : offset);
  const shift = (r: { start: number; end: number }) => ({ start: at(r.start), end: at(r.end) });
  // The outermost declaration starts where it did unless the edit reached its start, and ends
  // where it did when the edit lies inside it or clear of it; else its end is no longer known.
  const o = place.outer;
  const known = o !== null && o.end >= 0 && (edit.start >= o.end || edit.oldEnd < o.end);
  const outer = o === null ? null : edit.oldEnd <= o.start ? { ...o, ...shift(o) } : edit.start > o.start ? { ...o, end: known ? at(o.end) : -1 } : null;
  return { span: shift(place.span), indent: place.indent, headers: place.headers.map(shift), outerItem: at(place.outerItem), outer };
}

/**
 * Where the outermost declaration holding the declaration at `place` (in `newer`) stands in
 * `bytes`, the next version, after `edit` reached it: its start as it was when the edit starts
 * inside it, else where its first line is found once, below the line that was above it, with no
 * declaration of its name added or removed before it; its end moved by the edit when the edit
 * ends inside it, else found again by its lines (`declarationEnd`, read from its body when its
 * header is as it was). Null when any of that fails.
 */
function outerSlice(language: LanguageId, newer: Uint8Array, bytes: Uint8Array, edit: ByteEdit, place: DeclarationPlace, names: { outer: string; own: string }): { start: number; end: number } | null {
  const o = place.outer;
  if (o === null) return null;
  if (edit.start > o.start) {
    const end = o.end >= 0 && edit.oldEnd < o.end ? o.end + edit.newEnd - edit.oldEnd : declarationEnd(language, bytes, o.start, Math.max(edit.start, o.start + o.head - 1));
    return end === null ? null : { start: o.start, end };
  }
  const old = Buffer.from(newer.buffer, newer.byteOffset, newer.length);
  const haystack = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  // Its first line with the line above it (docs or decorators added there would be its own),
  // found once at a line start.
  const above = o.start === 0 ? 0 : lineStart(old, o.start - 1);
  const first = old.subarray(above, Math.min(old.indexOf(0x0a, o.start) + 1 || old.length, o.start + o.head));
  const at = haystack.indexOf(first);
  if (at < 0 || (at > 0 && bytes[at - 1] !== 0x0a) || (o.start === 0 && at !== 0) || haystack.indexOf(first, at + 1) >= 0) return null;
  const start = at + o.start - above;
  // (What lies inside it is numbered by its parse alone, as in the file.)
  if (renumbers(newer, bytes, edit, names, [o.start, start], [o.start, start])) return null;
  // Its body is read for where it ends after its header, when that is as it was (else after its first line).
  const header = old.subarray(o.start, o.start + o.head);
  const same = header.equals(haystack.subarray(start, start + o.head));
  const end = declarationEnd(language, bytes, start, same ? start + o.head - 1 : start);
  return end === null ? null : { start, end };
}

/** Where the outermost declaration holding the declaration at `place` starts (its outermost header). */
function top(place: DeclarationPlace): number {
  return place.headers.length === 0 ? place.span.start : place.headers[place.headers.length - 1].start;
}

/**
 * Whether `edit` may have added or removed, before a declaration, declarations of a name its
 * qualified name is made of — one added there would take its name (numbering it `~2`), one
 * removed give it one: `outer`, its outermost name, before the outermost declaration holding
 * it (starting at `tops`: in `newer`, in `bytes`), and `own`, its own name, before it (`starts`).
 */
function renumbers(newer: Uint8Array, bytes: Uint8Array, edit: ByteEdit, names: { outer: string; own: string }, tops: [number, number], starts: [number, number]): boolean {
  const text = (b: Uint8Array, end: number) => Buffer.from(b.buffer, b.byteOffset, b.length).toString('utf8', edit.start, Math.max(edit.start, end));
  // The numbering is the count of same-named declarations before it: what both sides of the
  // edit hold alike (text between two changed places, or a mere mention) changes nothing.
  const before = (name: string, [oldAt, newAt]: [number, number]) =>
    edit.start < oldAt && declarations(text(newer, Math.min(edit.oldEnd, oldAt)), name) !== declarations(text(bytes, Math.min(edit.newEnd, newAt)), name);
  return before(names.outer, tops) || before(names.own, starts);
}

/**
 * How many times `text` may declare `name`: the name after a declaring keyword (or a Go
 * receiver), or assigned at a line's start (a guess that errs towards more).
 */
function declarations(text: string, name: string): number {
  const n = `${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\p{L}\\p{N}_$])`;
  const keyword = '\\b(?:def|class|function|func|fn|struct|enum|trait|interface|type|impl|for|const|let|var|static|mod|record)';
  // An assignment (`name = …`, `name: T = …`), not a key in a literal (`name: …`) or a comparison.
  return text.match(new RegExp(`${keyword}(?:\\s*\\([^)\\n]*\\))?\\s+${n}|(?:^|\\n)[ \\t]*${n}[ \\t]*(?::[^\\n=]*)?=(?![=>])`, 'gu'))?.length ?? 0;
}

/** The declaration in each version of a segment (see the top of this file for how it looks). */
export async function walkSegment(repo: Repository, job: SegmentJob): Promise<SegmentResult> {
  const states: State[] = [];
  const stats: SegmentResult['stats'] = { fetched: 0, fetchMs: 0, parsed: 0, parseMs: 0, alone: 0 };
  const { blobs: ids, language, qname, maxFileBytes } = job;
  let t = 0;
  const name = Buffer.from(shortName(qname));
  /** The names a declaration added before it would take its qualified name by: its outermost and its own. */
  const names = { outer: qname.split(/\.|::/)[0].replace(/~\d+$/, ''), own: shortName(qname) };
  /** What a parsed version held, by blob id (a file reverted to earlier bytes is not parsed again). */
  const seen = new Map<string, { state: State; located: Located | null }>();
  const tree = new IncrementalTree(language);
  // Each version is read into a buffer of the last versions' that nothing reads any more.
  const pool = new BufferPool();
  const blobs = repo.blobs(
    ids.flatMap((id) => (id === null ? [] : [id])),
    pool,
  );
  /** The bytes the previous iteration was done with. */
  let done: Uint8Array | null = null;
  try {
    /** The declaration in the version the tree holds, while it is known to stand there. */
    let located: Located | null = null;
    for (const [i, id] of ids.entries()) {
      if (done !== null) pool.give(done);
      done = null;
      if (id === null) {
        states.push(null);
        located = null;
        continue;
      }
      t = performance.now();
      const bytes = (await blobs.next()).value ?? null;
      stats.fetched++;
      stats.fetchMs += performance.now() - t;
      if (i > 0 && id === ids[i - 1]) {
        done = bytes;
        states.push(states[i - 1]);
        continue;
      }
      if (bytes === null || bytes.length > maxFileBytes || classifyBytes(bytes) !== 'ok') {
        done = bytes;
        states.push('unparseable');
        located = null;
        continue;
      }
      const newer = tree.bytes;
      const edit = tree.advance(bytes);
      // The tree now holds this version: the one it held is read below for the last time.
      done = newer;
      const known = seen.get(id);
      if (known) {
        states.push(known.state);
        located = known.located;
        continue;
      }
      if (located !== null && newer !== null) {
        // An edit clear of the declaration moves it; one spanning it (a commit changing lines
        // above and below) may still leave it, and what surrounds it, as it was.
        const place = edit === null ? located.place : !mayChange(newer, edit, located.place) ? moved(located.place, edit) : relocated(newer, bytes, located.place);
        if (place !== null && (edit === null || !renumbers(newer, bytes, edit, names, [top(located.place), top(place)], [located.place.span.start, place.span.start]))) {
          states.push(located.parts);
          located = { parts: located.parts, place };
          continue;
        }
      }
      // An edit reaching the outermost declaration holding it: that declaration parsed alone.
      const slice = located !== null && newer !== null && edit !== null ? outerSlice(language, newer, bytes, edit, located.place, names) : null;
      if (slice !== null) {
        t = performance.now();
        const alone = locateInSlice(language, bytes, slice, qname);
        stats.parsed++;
        stats.parseMs += performance.now() - t;
        if (alone !== null) {
          stats.alone++;
          located = alone;
          seen.set(id, { state: alone.parts, located: alone });
          states.push(alone.parts);
          continue;
        }
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
      seen.set(id, { state, located });
      states.push(state);
    }
  } finally {
    tree.close();
    await blobs.return(undefined);
  }
  return { states, stats };
}
