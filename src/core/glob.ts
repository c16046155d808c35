import picomatch from 'picomatch';

// The one glob engine, on picomatch, in named dialects:
//   source  `[source]`, request `paths`, `[languages.*]`, `[search.text]`, hooks (decisions.md):
//           gitignore-style meaning over project paths. A pattern without `/` matches a name at
//           any depth; one containing `/` is anchored at the workspace root; `*` does not cross
//           `/`, `**` does; a trailing `/` matches directories only; a pattern that matches a
//           directory matches everything below it (`GlobSet`).
//   path    permission rules on paths (reference C.4): the whole path, `*` within one
//           directory, `**` across.
//   tool    the agent's `glob` tool (reference B.2, globset with `*` crossing `/`).
//   flat    permission rules on commands and URLs: only `*` is special and matches anything.
// Every picomatch dialect is POSIX: `[!a]` negates a class and `[[:alpha:]]` names one.

export type GlobDialect = 'path' | 'tool' | 'flat';

export type PatternViolation = 'empty' | 'absolute' | 'backslash' | 'control_character' | 'dot_segment' | 'invalid_glob';

const PICOMATCH: picomatch.PicomatchOptions = { dot: true, posix: true };
const DIALECT: Record<Exclude<GlobDialect, 'flat'>, picomatch.PicomatchOptions> = {
  path: PICOMATCH,
  // picomatch's bash mode treats a single `*` like `**`: it crosses `/` as globset's does.
  tool: { ...PICOMATCH, bash: true },
};

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Whether picomatch accepts the pattern, brackets balanced. */
function compiles(pattern: string): boolean {
  try {
    picomatch.makeRe(pattern, { ...PICOMATCH, strictBrackets: true });
  } catch {
    return false;
  }
  return !/\[(?![^\]]*\])/.test(pattern);
}

/** Why a `source`-dialect pattern (a project-path glob) is invalid, or null. */
export function patternViolation(pattern: string): PatternViolation | null {
  if (pattern.length === 0) return 'empty';
  if (pattern.startsWith('/') || /^[A-Za-z]:/.test(pattern)) return 'absolute';
  if (pattern.includes('\\')) return 'backslash';
  if (CONTROL.test(pattern)) return 'control_character';
  const body = pattern.endsWith('/') ? pattern.slice(0, -1) : pattern;
  if (body.length === 0) return 'empty';
  for (const s of body.split('/')) if (s === '.' || s === '..') return 'dot_segment';
  return compiles(body) ? null : 'invalid_glob';
}

/**
 * A matcher for one pattern of the `path`, `tool` or `flat` dialect. Throws when picomatch
 * cannot compile the pattern (unbalanced brackets or braces).
 */
export function compileGlob(pattern: string, dialect: GlobDialect): (text: string) => boolean {
  if (dialect === 'flat') return flatMatcher(pattern);
  if (!compiles(pattern) || unbalancedBraces(pattern)) throw new Error(`invalid glob ${JSON.stringify(pattern)}`);
  const test = picomatch(pattern, DIALECT[dialect]);
  // picomatch's matcher takes a second argument (return an object); callers pass it to filter().
  return (text) => test(text);
}

function unbalancedBraces(pattern: string): boolean {
  let depth = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') i++;
    else if (c === '{') depth++;
    else if (c === '}' && --depth < 0) return true;
  }
  return depth !== 0;
}

/**
 * Only `*` is special, matching any run of characters (newlines and `/` included). picomatch
 * cannot say this: in its bash mode `?`, brackets and braces stay special and `*` stops at a
 * newline, and a command line or URL holds all of those literally.
 */
function flatMatcher(pattern: string): (text: string) => boolean {
  const parts = pattern.split('*');
  return (text) => {
    if (parts.length === 1) return text === pattern;
    const first = parts[0];
    const last = parts[parts.length - 1];
    if (text.length < first.length + last.length || !text.startsWith(first) || !text.endsWith(last)) return false;
    let at = first.length;
    const end = text.length - last.length;
    for (let i = 1; i < parts.length - 1; i++) {
      const found = text.indexOf(parts[i], at);
      if (found < 0 || found + parts[i].length > end) return false;
      at = found + parts[i].length;
    }
    return true;
  };
}

interface Compiled {
  dirOnly: boolean;
  test: (path: string) => boolean;
  /**
   * Text every path the pattern matches holds (the longest literal run of its last segment), so
   * a path without it is passed over with no regular expression run; '' when the pattern has none
   * (or braces, extglobs, classes or escapes, whose literals are not plain).
   */
  literal: string;
  /** Whether the pattern could still match something below a directory (its segments). */
  below: (dirSegments: readonly string[]) => boolean;
}

/** Slash-less patterns reach any depth; braces, extglobs and negations can hide slashes or invert meaning. */
function compileBelow(body: string): Compiled['below'] {
  if (!body.includes('/') || /[{}()]/.test(body) || body.startsWith('!')) return () => true;
  const segments = body.split('/').map((s) => (s.includes('**') ? null : picomatch(s, PICOMATCH)));
  return (dir) => {
    for (let i = 0; i < dir.length; i++) {
      if (i >= segments.length) return true;
      const seg = segments[i];
      if (seg === null) return true;
      if (!seg(dir[i])) return false;
    }
    return true;
  };
}

/** The longest run of plain characters in a pattern's last segment, or '' (see `Compiled.literal`). */
function requiredLiteral(body: string): string {
  const last = body.slice(body.lastIndexOf('/') + 1);
  if (/[\\[\]{}()!+@]/.test(last)) return '';
  return last.split(/[*?]+/).reduce((a, b) => (b.length > a.length ? b : a), '');
}

/** A set of `source`-dialect patterns. */
export class GlobSet {
  readonly patterns: readonly string[];
  private readonly compiled: Compiled[];

  /** Throws when a pattern is invalid; callers validate first with `patternViolation`. */
  constructor(patterns: readonly string[]) {
    this.patterns = patterns;
    this.compiled = patterns.map((p) => {
      const violation = patternViolation(p);
      if (violation) throw new Error(`invalid glob ${JSON.stringify(p)}: ${violation}`);
      const dirOnly = p.endsWith('/');
      const body = dirOnly ? p.slice(0, -1) : p;
      const anchored = body.includes('/') ? body : `**/${body}`;
      const test = picomatch(anchored, PICOMATCH);
      return { dirOnly, test: (path: string) => test(path), below: compileBelow(body), literal: requiredLiteral(body) };
    });
  }

  get empty(): boolean {
    return this.compiled.length === 0;
  }

  /** Whether the path (a file unless `isDir`) or any of its ancestor directories matches. */
  matches(path: string, isDir = false): boolean {
    // A pattern matches the path when it matches the path or one of its ancestors, each of which
    // the path holds as its start: one whose literal the path lacks matches none of them.
    const live = this.compiled.filter((c) => c.literal === '' || path.includes(c.literal));
    if (live.length === 0) return false;
    const segments = path.split('/');
    for (let i = 1; i <= segments.length; i++) {
      const prefix = segments.slice(0, i).join('/');
      const prefixIsDir = i < segments.length || isDir;
      for (const c of live) {
        if (c.dirOnly && !prefixIsDir) continue;
        if (c.test(prefix)) return true;
      }
    }
    return false;
  }

  /**
   * Whether some pattern could match a path below the directory `dir` (a pruning hint for
   * walks: true whenever it cannot tell; files are always checked with `matches`).
   */
  mayMatchBelow(dir: string): boolean {
    const segments = dir.split('/');
    return this.compiled.some((c) => c.below(segments));
  }
}
