import { sha256Hex } from '../core/digest.ts';
import { lineBreakAt, lineStartAt } from '../core/lines.ts';
import { classifyBytes } from '../workspace/read.ts';
import { IncrementalTree, initSyntax, SyntaxLimitError, type ByteEdit } from '../syntax/runtime.ts';
import { DECLARING_KEYWORDS, TEXT_LAYOUT } from '../syntax/layout.ts';
import type { ByteRange, LanguageId } from '../syntax/types.ts';
import { classify, declarationEnd, locateDeclaration, locateInSlice, locateNested, type PartParser, type DeclarationParts, type DeclarationPlace, type Located, type VersionKind } from './classify.ts';
import { Feed } from './feed.ts';
import { BufferPool, type LogEntry, type Repository } from './git.ts';

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
// caller) is looked at by parsing that declaration alone — or, when the edit starts inside a
// declaration held by another (a method of a long class), its own lines alone below its holders'
// header lines — where it is assumed to stand: its start
// as it was when the edit starts inside it, else where its first line (below the line that was
// above it) is found once; its end moved by the edit's length when the edit ends inside it, else
// found by its lines (`declarationEnd`). The part is shown right when it parses without errors as
// exactly one declaration spanning all of it; otherwise the whole file is parsed as before. An
// edit before the declaration that may add or remove a declaration of a name its qualified name
// is made of (which would number it `~2`, or no longer), or between a container's header and the
// declaration that may close the container (a line indented no deeper than its header, or more
// closing braces than opening), is always looked at by a parse. What a version skipped this way
// does elsewhere is not seen: a syntax error elsewhere in it counts as leaving the declaration
// alone.
//
// A part parsed alone reuses the tree of the last part of its kind the walk parsed (the
// versions' parts differ by the commits' edits, so tree-sitter reparses little of each).
//
// The walk's newest version is where the index says the declaration stands, when the index
// holds those bytes (`WalkHint`): it is looked at by parsing the declaration holding it alone.
//
// The walk starts with `git log`: a first segment walks the versions as git finds them (in a
// parse worker, when a runner is given), and a second takes the older half of what the first
// has not walked yet, side by side with it: as soon as git has listed that half's first version
// were the log to reach its bound (on a long history the log itself takes a while), else once
// the log has ended. The second's worker starts with the log's first version, so its blob
// process runs and it knows the declaration in the walk's newest version (its seed) before it
// has versions of its own.

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
  /** Of the parsed, those where a part of the file holding it was parsed alone. */
  alone: number;
  /** Of those, the ones where it was parsed by its own lines below its holders' header lines. */
  nested: number;
}

export type State = DeclarationParts | null | 'unparseable';

/** Consecutive versions of one file, newest first, walked as one unit (here or in a worker). */
export interface SegmentJob {
  /** The workspace root (git runs there). */
  cwd: string;
  /** The workspace's path inside the repository (as `Repository.prefix`). */
  prefix: string;
  /**
   * Each version's blob id, null where the commit deleted the file: those known when the walk
   * starts; the rest arrive through the feed it is walked with (`streamed`).
   */
  blobs: Array<string | null>;
  /** Whether more versions arrive after `blobs` (the walk's first segment, while `git log` runs). */
  streamed: boolean;
  /** At most this many versions in all. */
  bound: number;
  language: LanguageId;
  qname: string;
  maxFileBytes: number;
  /** Where the declaration stands in bytes known beforehand (see `WalkHint`). */
  hint?: WalkHint;
  /**
   * A version newer than the segment's, the walk's newest (the second segment's): when the hint
   * shows the declaration in it, the segment starts from it instead of parsing its own newest
   * version whole.
   */
  seed?: string;
}

/**
 * The declaration as the index holds it, for a walk's first version: the digest of the indexed
 * file's bytes and the span of the outermost declaration holding it (it, at the top level).
 * A version with those bytes (most often the newest: the working tree is its commit) is looked
 * at by parsing that declaration alone, not the whole file.
 */
export interface WalkHint {
  sha256: string;
  outer: ByteRange;
}

export interface SegmentResult {
  /** The declaration in each version, aligned with the job's blobs. */
  states: State[];
  stats: Pick<WalkStats, 'fetched' | 'fetchMs' | 'parsed' | 'parseMs' | 'alone' | 'nested'>;
}

/**
 * Walks a segment elsewhere (a worker thread); `lane` tells segments of one walk apart. The
 * segment's versions are `ids` (a streamed job's still arriving); `walked` hears how many of
 * them were walked, now and then.
 */
export type SegmentRunner = (job: SegmentJob, lane: number, ids: Feed<string | null>, walked: (n: number) => void) => Promise<SegmentResult>;

/** A walk is split in two segments walked side by side when a runner is given and the second would be at least this long. */
const SEGMENT_MIN = 64;
/** Versions a streamed segment is given beyond those it walked (more than the blob reader reads ahead). */
const STREAM_AHEAD = 64;
/** A segment says how far it walked every this many versions. */
const PROGRESS_EVERY = 16;

export async function timeline(
  repo: Repository,
  commit: string,
  path: string,
  language: LanguageId,
  qname: string,
  max: number,
  maxFileBytes: number,
  runner?: SegmentRunner,
  hint?: WalkHint,
): Promise<Timeline> {
  const stats: WalkStats = { commits: 0, logMs: 0, fetched: 0, fetchMs: 0, parsed: 0, parseMs: 0, alone: 0, nested: 0 };
  const t = performance.now();
  const job = (blobs: Array<string | null>, streamed: boolean): SegmentJob => ({ cwd: repo.cwd, prefix: repo.prefix, blobs, streamed, bound: streamed ? max + 1 : blobs.length, language, qname, maxFileBytes, hint });
  // With a runner the walk runs there (the workers: off the thread answering requests); a long
  // one as two segments side by side, on both cores. Each starts from its newest version, found
  // by the hint when it holds (the second's from the walk's newest), else parsed whole;
  // otherwise they walk alike.
  const walk = (segment: SegmentJob, lane: number, ids: Feed<string | null>, progress: (n: number) => void) =>
    // A worker that fails (or exits) leaves its segment to this thread.
    runner ? runner(segment, lane, ids, progress).catch(() => walkSegment(repo, segment, ids)) : walkSegment(repo, segment, ids, progress);
  // The first segment starts with the log, walking versions as git finds them, kept a little
  // ahead of it. The second starts as soon as git has found the first version (its worker's blob
  // process and its seed ready before it has versions to walk), and takes the older half of what
  // the first has not walked yet: once the log has come that far, were it to list as many
  // commits as the bound allows (a long log then runs beside both segments), else once it has
  // ended — nothing when that half would be short.
  const log: LogEntry[] = [];
  const first = new Feed<string | null>();
  const second = new Feed<string | null>();
  /** Where the second segment starts in the log, once decided. */
  let from = -1;
  let walked = 0;
  const lanes: Array<Promise<SegmentResult>> = [];
  const blobsOf = (entries: LogEntry[]) => entries.map((e) => e.blob);
  const split = (at: number) => {
    first.push(blobsOf(log.slice(first.items.length, at)));
    first.end();
    from = at;
    second.push(blobsOf(log.slice(at)));
  };
  const supply = () => {
    if (runner && lanes.length === 1 && log.length > 0) {
      const seed = hint && log[0].blob !== null ? { seed: log[0].blob } : {};
      lanes.push(walk({ ...job([], true), ...seed }, 1, second, () => undefined));
    }
    if (from >= 0) {
      if (from + second.items.length < log.length) second.push(blobsOf(log.slice(from + second.items.length)));
      return;
    }
    const upTo = runner ? Math.min(log.length, walked + STREAM_AHEAD) : log.length;
    if (upTo > first.items.length) first.push(blobsOf(log.slice(first.items.length, upTo)));
    if (!runner) return;
    const at = Math.max(first.items.length, (max + 1 + walked) >> 1);
    if (max + 1 - at >= SEGMENT_MIN && log.length >= at) split(at);
  };
  lanes.push(
    walk(job([], true), 0, first, (n) => {
      walked = n;
      if (!first.done) supply();
    }),
  );
  try {
    // One commit more than the bound tells whether the walk stopped early, and gives the
    // oldest kept commit its "before".
    for await (const e of repo.logEntries(commit, path, max + 1)) {
      log.push(e);
      supply();
    }
  } catch (e) {
    // A failed log still ends the segments (their walks are not waited for).
    if (!first.done) first.end();
    second.end();
    for (const lane of lanes) lane.catch(() => undefined);
    throw e;
  }
  stats.logMs = performance.now() - t;
  stats.commits = log.length;
  const complete = log.length <= max;
  if (from < 0) {
    const at = runner ? Math.max(first.items.length, (log.length + walked) >> 1) : log.length;
    split(log.length - at >= SEGMENT_MIN ? at : log.length);
  } else supply();
  second.end();
  const results = await Promise.all(lanes);
  const states = results.flatMap((r) => r.states);
  for (const r of results) {
    stats.fetched += r.stats.fetched;
    stats.fetchMs += r.stats.fetchMs;
    stats.parsed += r.stats.parsed;
    stats.parseMs += r.stats.parseMs;
    stats.alone += r.stats.alone;
    stats.nested += r.stats.nested;
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
    const first = lineStartAt(bytes, r.start);
    const above = first === 0 ? 0 : lineStartAt(bytes, first - 1);
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
  const find = (start: number, end: number) => foundOnce(newer, older, start, end);
  const closer = closingLine(newer, place, newer.length);
  const delta = find(place.span.start, closer === null ? newer.length : lineBreakAt(newer, closer));
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

/**
 * How far the text of `newer` from the line above the one holding `start` to `end` moved in
 * `older`, where it is found once (from `after` on), at a line start; null when it is not.
 */
function foundOnce(newer: Uint8Array, older: Uint8Array, start: number, end: number, after = 0): number | null {
  const from = lineStartAt(newer, start);
  const above = from === 0 ? 0 : lineStartAt(newer, from - 1);
  const text = newer.subarray(above, end);
  const haystack = Buffer.from(older.buffer, older.byteOffset, older.length);
  const at = haystack.indexOf(text, after);
  // Found at a line start (a blank line above matches any line's end otherwise), and once.
  if (at < 0 || (at > 0 && older[at - 1] !== 0x0a) || haystack.indexOf(text, at + 1) >= 0) return null;
  return at - above;
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
function outerSlice(language: LanguageId, newer: Uint8Array, bytes: Uint8Array, edit: ByteEdit, place: DeclarationPlace, names: Names): { start: number; end: number } | null {
  const o = place.outer;
  if (o === null) return null;
  if (edit.start > o.start) {
    const end = endAfter(language, bytes, edit, o.start, o.end, o.start + o.head - 1);
    return end === null ? null : { start: o.start, end };
  }
  const old = Buffer.from(newer.buffer, newer.byteOffset, newer.length);
  const haystack = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  // Its first line with the line above it (docs or decorators added there would be its own),
  // found once at a line start.
  const above = o.start === 0 ? 0 : lineStartAt(old, o.start - 1);
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

/**
 * The lines of the declaration at `place` (in `newer`, the version before `bytes`) in `bytes`,
 * when it is held by a declaration around it in the text (not a Go method's receiver type), with
 * where it and its holders' headers stand: as they did when `edit` starts inside it, else as
 * found again (`refound`); its end moved by the edit when the edit ends inside it, else found by
 * its lines (`declarationEnd`). Null otherwise.
 */
function nestedLines(language: LanguageId, newer: Uint8Array, bytes: Uint8Array, edit: ByteEdit, place: DeclarationPlace, names: Names): Nested | null {
  const { span, outer } = place;
  if (outer === null || outer.start >= span.start) return null;
  const found = edit.start > span.start ? { start: span.start, headers: place.headers } : refound(language, newer, bytes, edit, place, names);
  if (found === null) return null;
  const end = endAfter(language, bytes, edit, found.start, span.end, found.start);
  return end === null ? null : { ...found, lines: { start: lineStartAt(bytes, found.start), end } };
}

/** A declaration held by others, in the next version: where it starts, its lines and its holders' headers (innermost first). */
interface Nested {
  start: number;
  lines: ByteRange;
  headers: ByteRange[];
}

/**
 * Where the declaration at `place` (in `newer`) and the headers of the declarations holding it
 * stand in `bytes` after `edit`, which starts before it. Its holders' headers are where they were
 * when the edit starts after the innermost one's; else each is found again with the line above
 * it, once, at a line start (when the outermost holder is its outermost container, so that every
 * header is one holding it), each inside the one around it. It is where its first line with the
 * line above it (docs or decorators added there would be its own) is found once, at a line start
 * after the innermost header and not before the edit. Nothing between a header and what it holds
 * may close the holder (`stillHeld`), and no declaration of its name, or of its outermost
 * container's, is added or removed before it. Null when any of that fails.
 */
function refound(language: LanguageId, newer: Uint8Array, bytes: Uint8Array, edit: ByteEdit, place: DeclarationPlace, names: Names): { start: number; headers: ByteRange[] } | null {
  const { span } = place;
  const innerEnd = (headers: ByteRange[]) => headers.reduce((n, h) => Math.max(n, h.end), 0);
  let headers = place.headers;
  if (edit.start <= innerEnd(headers)) {
    if (place.outer!.start !== headers[headers.length - 1].start) return null;
    headers = [];
    for (const h of place.headers) {
      const delta = foundOnce(newer, bytes, h.start, h.end);
      if (delta === null) return null;
      headers.push({ start: h.start + delta, end: h.end + delta });
    }
  }
  const inner = innerEnd(headers);
  const delta = foundOnce(newer, bytes, span.start, lineBreakAt(newer, span.start) + 1, lineStartAt(bytes, inner));
  if (delta === null) return null;
  const start = span.start + delta;
  if (start < edit.start || !heldBy(language, bytes, headers, start)) return null;
  const tops: [number, number] = [place.headers[place.headers.length - 1].start, headers[headers.length - 1].start];
  return renumbers(newer, bytes, edit, names, tops, [span.start, start]) ? null : { start, headers };
}

/**
 * Whether the declaration starting at `start` in `bytes` is held by the declarations whose header
 * lines `headers` lists (innermost first) where they stand there: each header before what it
 * holds, with nothing between them that may close the holder (`stillHeld`).
 */
function heldBy(language: LanguageId, bytes: Uint8Array, headers: readonly ByteRange[], start: number): boolean {
  let inside = lineStartAt(bytes, start);
  for (const h of headers) {
    if (h.end >= inside || !stillHeld(language, bytes, h.end, inside)) return false;
    inside = lineStartAt(bytes, h.start);
  }
  return true;
}

/**
 * Whether `edit`, reaching between the header of the outermost declaration holding the
 * declaration at `place` (in `bytes`, the version after it) and its start, may have closed a
 * holder before it: a class closed and another opened there would make it the other's.
 */
function renests(language: LanguageId, bytes: Uint8Array, edit: ByteEdit, place: DeclarationPlace): boolean {
  const { headers, outer, span } = place;
  if (outer === null || outer.start >= span.start || outer.start !== headers[headers.length - 1].start) return false;
  if (edit.start >= span.start || edit.newEnd <= outer.start) return false;
  return !heldBy(language, bytes, headers, span.start);
}

/** Whether nothing in `bytes` from `from` (a header line's end) to `to` (a line start) may close the declaration that header opens. */
function stillHeld(language: LanguageId, bytes: Uint8Array, from: number, to: number): boolean {
  if (TEXT_LAYOUT[language].blocks !== 'indent') {
    let depth = 0;
    for (let i = from; i < to; i++) {
      if (bytes[i] === 0x7b) depth++;
      else if (bytes[i] === 0x7d && --depth < 0) return false;
    }
    return depth === 0;
  }
  const indentOf = (lineStart: number) => {
    let i = lineStart;
    while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x09)) i++;
    return i;
  };
  const headerLine = lineStartAt(bytes, from);
  const depth = indentOf(headerLine) - headerLine;
  for (let nl = bytes.indexOf(0x0a, from); nl !== -1 && nl + 1 < to; nl = bytes.indexOf(0x0a, nl + 1)) {
    const first = indentOf(nl + 1);
    const c = bytes[first];
    if (first < to && c !== 0x0a && c !== 0x0d && first - (nl + 1) <= depth) return false;
  }
  return true;
}

/**
 * Where a declaration starting at `start` ends in `bytes` after `edit`, which starts inside it:
 * where it ended (`end`, -1 when unknown) moved by the edit when the edit ends inside it; else
 * found by its lines (`declarationEnd`) read from the edit, or from its last line when the edit
 * starts past its end (its lines up to there are as they were), and never from before `head`
 * (the end of its header, whose lines are its own however they are indented).
 */
function endAfter(language: LanguageId, bytes: Uint8Array, edit: ByteEdit, start: number, end: number, head: number): number | null {
  if (end >= 0 && edit.oldEnd < end) return end + edit.newEnd - edit.oldEnd;
  return declarationEnd(language, bytes, start, Math.max(end >= 0 ? Math.min(edit.start, end - 1) : edit.start, head));
}

/**
 * The declaration in `bytes` after `edit` reached it at `place` (in `newer`), found by parsing
 * a part of the file alone: its own lines below its holders' headers when the edit starts inside
 * it and it is held by another declaration, else the outermost declaration holding it. Null when
 * neither shows it; each parse tried is counted in `stats`.
 */
function parsedAlone(language: LanguageId, newer: Uint8Array, bytes: Uint8Array, edit: ByteEdit, place: DeclarationPlace, names: Names, qname: string, trees: PartTrees, stats: SegmentResult['stats']): Located | null {
  const timed = <T>(parse: () => T): T => timedParse(stats, parse);
  const nested = nestedLines(language, newer, bytes, edit, place, names);
  if (nested !== null) {
    const { lines, start, headers } = nested;
    const parts = timed(() => locateNested(language, bytes, headers, lines, start, qname, trees.nested));
    if (parts !== null) {
      stats.nested++;
      // Its holders' headers stand where they were found; the holder outermost in the text ends
      // where it did, moved, unless the edit reached past it.
      const o = place.outer!;
      const held = place.headers.findIndex((h) => h.start === o.start);
      const end = o.end >= 0 && edit.oldEnd < o.end ? o.end + edit.newEnd - edit.oldEnd : -1;
      const outerItem = place.outerItem + headers[headers.length - 1].start - place.headers[place.headers.length - 1].start;
      return { parts, place: { span: { start, end: lines.end }, indent: place.indent, headers, outerItem, outer: { ...o, start: headers[held].start, end } } };
    }
  }
  const slice = outerSlice(language, newer, bytes, edit, place, names);
  return slice === null ? null : timed(() => locateInSlice(language, bytes, slice, qname, trees.outer));
}

/**
 * The parsers of a walk's parts, one per kind (a declaration's own lines below its holders'
 * headers; the outermost declaration holding it): each reuses the tree of the part of its kind it
 * parsed last, which the next version's differs from by little more than the commit's edit.
 */
interface PartTrees {
  nested: PartParser;
  outer: PartParser;
  close(): void;
}

function partTrees(language: LanguageId): PartTrees {
  const trees = [new IncrementalTree(language), new IncrementalTree(language)];
  const parser = (tree: IncrementalTree): PartParser => (_language, bytes, fn) => {
    tree.advance(bytes);
    return tree.parse(fn);
  };
  return { nested: parser(trees[0]), outer: parser(trees[1]), close: () => trees.forEach((t) => t.close()) };
}

/** The declaration in `bytes` when they are the bytes the hint was taken from: its outermost holder parsed alone. */
function hinted(language: LanguageId, bytes: Uint8Array, hint: WalkHint, qname: string, trees: PartTrees, stats: SegmentResult['stats']): Located | null {
  if (hint.outer.end > bytes.length || sha256Hex(bytes) !== hint.sha256) return null;
  return timedParse(stats, () => locateInSlice(language, bytes, hint.outer, qname, trees.outer));
}

/** Runs one parse, counted in `stats` with its time. */
function timedParse<T>(stats: SegmentResult['stats'], parse: () => T): T {
  const t = performance.now();
  try {
    return parse();
  } finally {
    stats.parsed++;
    stats.parseMs += performance.now() - t;
  }
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
function renumbers(newer: Uint8Array, bytes: Uint8Array, edit: ByteEdit, names: Names, tops: [number, number], starts: [number, number]): boolean {
  // The numbering is the count of same-named declarations before it: what both sides of the
  // edit hold alike (text between two changed places, or a mere mention) changes nothing.
  // Both sides are read from where the first of them starts to differ: the edit, or the start of
  // the declaration itself when the edit starts inside it on one side and it stands after the
  // edit on the other (its first line then repeated by text inserted before it).
  const before = (name: Buffer, [oldAt, newAt]: [number, number]) => {
    const from = Math.min(edit.start, oldAt, newAt);
    return declarations(newer, from, Math.min(edit.oldEnd, oldAt), name, names.bare) !== declarations(bytes, from, Math.min(edit.newEnd, newAt), name, names.bare);
  };
  return before(names.outer, tops) || before(names.own, starts);
}

/** The names a declaration added before the walked one would take its qualified name by: its outermost and its own. */
interface Names {
  outer: Buffer;
  own: Buffer;
  /** Whether a method or field is declared by its name alone, no keyword before it (TypeScript, JavaScript, Java). */
  bare: boolean;
}

/** A declaring keyword (or a Go receiver after `func`) ending where a name starts. */
const DECLARING = new RegExp(`\\b(?:${DECLARING_KEYWORDS.join('|')})(?:\\s*\\([^)\\n]*\\))?\\s+$`, 'u');
/** How far before a name its declaring keyword is looked for. */
const DECLARING_REACH = 512;
/** An assignment after a name (`name = …`, `name: T = …`), not a key in a literal (`name: …`) or a comparison. */
const ASSIGNED = /^[ \t]*(?::[^\n=]*)?=(?![=>])/u;
const IDENTIFIER = /^[\p{L}\p{N}_$]/u;
/** What may stand before a name declared by itself on its line: modifiers, types, annotations, `*` (no `.`: `this.m(…)` is a call). */
const BARE_BEFORE = /^[\p{L}\p{N}_$@<>[\],?* \t]*$/u;
/** What follows a name declared by itself: parameters (`m(`, `m<T>(`), a type or a value (`m: T`, `m = …`, `m;`), optional or not. */
const BARE_AFTER = /^[ \t]*[?!]?[ \t]*[<(=;:]/;

/**
 * How many times the text of `b` from `from` to `to` may declare `name`: the name after a
 * declaring keyword, assigned at a line's start, or (`bare`) standing after modifiers and types
 * alone on its line before parameters, a type or a value — a guess that errs towards more. Each
 * occurrence of the name is looked at where it stands: a long text costs little more than
 * finding the name in it.
 */
function declarations(b: Uint8Array, from: number, to: number, name: Buffer, bare: boolean): number {
  // The name is looked for up to `to` only (a search of the whole text would read on to its end).
  const text = Buffer.from(b.buffer, b.byteOffset, Math.min(to, b.length));
  let count = 0;
  for (let at = text.indexOf(name, from); at >= 0; at = text.indexOf(name, at + 1)) {
    const after = at + name.length;
    // The whole name, not the start of a longer one.
    if (after < to && IDENTIFIER.test(text.toString('utf8', after, Math.min(to, after + 4)))) continue;
    let blank = at;
    while (blank > from && (text[blank - 1] === 0x20 || text[blank - 1] === 0x09)) blank--;
    const assigned = (blank === from || text[blank - 1] === 0x0a) && ASSIGNED.test(text.toString('utf8', after, Math.min(to, lineBreakAt(text, after) + 1)));
    if (assigned || DECLARING.test(text.toString('utf8', Math.max(from, at - DECLARING_REACH), at))) count++;
    else if (bare && BARE_BEFORE.test(text.toString('utf8', Math.max(from, lineStartAt(text, at)), at)) && BARE_AFTER.test(text.toString('utf8', after, Math.min(to, lineBreakAt(text, after))))) count++;
  }
  return count;
}

/** The declaration in each version of a segment (see the top of this file for how it looks). */
export async function walkSegment(repo: Repository, job: SegmentJob, ids = Feed.of(job.blobs), walked?: (n: number) => void): Promise<SegmentResult> {
  // Here or in a worker: the grammars are loaded once, on the first walk of a thread that has not parsed yet.
  await initSyntax();
  const states: State[] = [];
  const stats: SegmentResult['stats'] = { fetched: 0, fetchMs: 0, parsed: 0, parseMs: 0, alone: 0, nested: 0 };
  const { language, qname, maxFileBytes } = job;
  let t = 0;
  const name = Buffer.from(shortName(qname));
  const names: Names = { outer: Buffer.from(qname.split(/\.|::/)[0].replace(/~\d+$/, '')), own: name, bare: TEXT_LAYOUT[language].bareMembers };
  /** What a parsed version held, by blob id (a file reverted to earlier bytes is not parsed again). */
  const seen = new Map<string, { state: State; located: Located | null }>();
  const tree = new IncrementalTree(language);
  const trees = partTrees(language);
  // Each version is read into a buffer of the last versions' that nothing reads any more.
  const pool = new BufferPool();
  // The seed is read first, the segment's versions right behind it.
  const seed = job.seed !== undefined ? repo.version(job.seed) : null;
  seed?.catch(() => undefined); // awaited below
  const blobs = repo.blobs(ids, pool);
  /** The bytes the previous iteration was done with. */
  let done: Uint8Array | null = null;
  try {
    /** The declaration in the version the tree holds, while it is known to stand there. */
    let located: Located | null = null;
    const seedBytes = seed === null ? null : await seed.catch(() => null);
    if (seedBytes && job.hint) {
      located = hinted(language, seedBytes, job.hint, qname, trees, stats);
      if (located !== null) {
        stats.alone++;
        tree.advance(seedBytes);
      }
    }
    for (let i = 0; await ids.has(i); i++) {
      if (walked && i % PROGRESS_EVERY === 0) walked(i);
      const id = ids.items[i];
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
      if (i > 0 && id === ids.items[i - 1]) {
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
        const place: DeclarationPlace | null = edit === null ? located.place : !mayChange(newer, edit, located.place) ? moved(located.place, edit) : relocated(newer, bytes, located.place);
        if (place !== null && (edit === null || (!renumbers(newer, bytes, edit, names, [top(located.place), top(place)], [located.place.span.start, place.span.start]) && !renests(language, bytes, edit, place)))) {
          states.push(located.parts);
          located = { parts: located.parts, place };
          continue;
        }
      }
      // An edit reaching it, or the walk's newest version as the index holds it: a part of the
      // file holding it parsed alone.
      const alone: Located | null =
        located !== null && newer !== null && edit !== null
          ? parsedAlone(language, newer, bytes, edit, located.place, names, qname, trees, stats)
          : i === 0 && job.hint !== undefined && job.seed === undefined
            ? hinted(language, bytes, job.hint, qname, trees, stats)
            : null;
      if (alone !== null) {
        stats.alone++;
        located = alone;
        seen.set(id, { state: alone.parts, located: alone });
        states.push(alone.parts);
        continue;
      }
      // Nothing before the top-level declaration holding it changed: its subtree is enough.
      const outerItem: number | null = located !== null && edit !== null && edit.start > located.place.outerItem && !/^[^.:]*~/.test(qname) ? located.place.outerItem : null;
      let state: State;
      located = null;
      if (!bytes.includes(name)) state = null;
      else {
        t = performance.now();
        try {
          const found: Located | null | 'unparseable' = tree.parse((parsed, source) => locateDeclaration(language, parsed, source, qname, outerItem));
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
    trees.close();
    await blobs.return(undefined);
  }
  return { states, stats };
}
