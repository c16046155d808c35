import picomatch from 'picomatch';

// The one glob engine (decisions.md): gitignore-style meaning over project-relative paths.
// A pattern without `/` matches a name at any depth; a pattern containing `/` is anchored
// at the workspace root; `*` does not cross `/`, `**` does; a trailing `/` matches
// directories only. A pattern that matches a directory matches everything below it.

export type PatternViolation = 'empty' | 'absolute' | 'backslash' | 'control_character' | 'dot_segment' | 'invalid_glob';

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

export function patternViolation(pattern: string): PatternViolation | null {
  if (pattern.length === 0) return 'empty';
  if (pattern.startsWith('/') || /^[A-Za-z]:/.test(pattern)) return 'absolute';
  if (pattern.includes('\\')) return 'backslash';
  if (CONTROL.test(pattern)) return 'control_character';
  const body = pattern.endsWith('/') ? pattern.slice(0, -1) : pattern;
  if (body.length === 0) return 'empty';
  for (const s of body.split('/')) if (s === '.' || s === '..') return 'dot_segment';
  try {
    picomatch.makeRe(body, { dot: true, strictBrackets: true });
  } catch {
    return 'invalid_glob';
  }
  if (/\[(?![^\]]*\])/.test(body)) return 'invalid_glob';
  return null;
}

interface Compiled {
  dirOnly: boolean;
  test: (path: string) => boolean;
}

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
      const test = picomatch(anchored, { dot: true });
      return { dirOnly, test };
    });
  }

  get empty(): boolean {
    return this.compiled.length === 0;
  }

  /** Whether the path (a file unless `isDir`) or any of its ancestor directories matches. */
  matches(path: string, isDir = false): boolean {
    if (this.compiled.length === 0) return false;
    const segments = path.split('/');
    for (let i = 1; i <= segments.length; i++) {
      const prefix = segments.slice(0, i).join('/');
      const prefixIsDir = i < segments.length || isDir;
      for (const c of this.compiled) {
        if (c.dirOnly && !prefixIsDir) continue;
        if (c.test(prefix)) return true;
      }
    }
    return false;
  }

}
