import { posix } from 'node:path';

// Where a module a file imports lives, per language, over the set of files the graph holds:
// relative ES specifiers with TypeScript's extension substitution, Python packages (relative
// and absolute, matched by path suffix), Go import paths (matched to a directory by suffix),
// Java packages and classes, Rust `crate::` / `self::` / `super::` paths and workspace crates.
// A module outside the workspace resolves to nothing.

/** A module: a file, and the qualified-name prefix inside it (`` for the file itself). */
export interface ModuleTarget {
  path: string;
  scope: string;
}

export type LanguageFamily = 'ecmascript' | 'python' | 'rust' | 'go' | 'java';

/** The languages of each family (the inverse of `familyOf`). */
export const FAMILY_LANGUAGES: Readonly<Record<LanguageFamily, readonly string[]>> = {
  ecmascript: ['typescript', 'tsx', 'javascript'],
  python: ['python'],
  rust: ['rust'],
  go: ['go'],
  java: ['java'],
};

export function familyOf(language: string): LanguageFamily | null {
  switch (language) {
    case 'typescript':
    case 'tsx':
    case 'javascript':
      return 'ecmascript';
    case 'python':
    case 'rust':
    case 'go':
    case 'java':
      return language;
    default:
      return null;
  }
}

const ES_EXTENSIONS = ['.ts', '.tsx', '.d.ts', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'];
/** TypeScript resolves `./x.js` to `./x.ts` (ESM output names in TypeScript sources). */
const ES_SUBSTITUTES: Readonly<Record<string, readonly string[]>> = {
  '.js': ['.ts', '.tsx', '.d.ts'],
  '.jsx': ['.tsx'],
  '.mjs': ['.mts', '.d.mts'],
  '.cjs': ['.cts', '.d.cts'],
};

/** The files of one resolution pass, indexed the ways module lookups need. */
export class FileSet {
  private readonly paths = new Set<string>();
  private readonly byDir = new Map<string, string[]>();
  /** Python modules by their last name (`c` for `x/c.py` and `x/c/__init__.py`). */
  private readonly pyByName = new Map<string, string[]>();
  /** Directories holding Go files, by their base name. */
  private readonly goDirsByName = new Map<string, string[]>();
  /** Java files by their class name, and Java directories by their base name. */
  private readonly javaByName = new Map<string, string[]>();
  private readonly javaDirsByName = new Map<string, string[]>();

  constructor(files: Iterable<{ path: string; language: string }>) {
    for (const { path, language } of files) {
      this.paths.add(path);
      const dir = posix.dirname(path);
      push(this.byDir, dir, path);
      const base = posix.basename(path);
      if (language === 'python') {
        const stem = base.replace(/\.pyi?$/, '');
        push(this.pyByName, stem === '__init__' ? posix.basename(dir) : stem, path);
      } else if (language === 'go') {
        this.addDir(this.goDirsByName, dir);
      } else if (language === 'java') {
        push(this.javaByName, base.replace(/\.java$/, ''), path);
        this.addDir(this.javaDirsByName, dir);
      }
    }
  }

  private readonly dirsSeen = new Set<string>();

  private addDir(map: Map<string, string[]>, dir: string): void {
    const key = `${map === this.goDirsByName ? 'go' : 'java'}:${dir}`;
    if (this.dirsSeen.has(key)) return;
    this.dirsSeen.add(key);
    push(map, posix.basename(dir), dir);
  }

  has(path: string): boolean {
    return this.paths.has(path);
  }

  /** Files directly in `dir`. */
  inDir(dir: string): readonly string[] {
    return this.byDir.get(dir) ?? [];
  }

  /** The modules `specifier`, written in `fromPath`, may name; nearest first. */
  resolve(family: LanguageFamily, fromPath: string, specifier: string): ModuleTarget[] {
    switch (family) {
      case 'ecmascript':
        return this.ecmascript(fromPath, specifier);
      case 'python':
        return this.python(fromPath, specifier);
      case 'go':
        return this.go(fromPath, specifier);
      case 'java':
        return this.java(fromPath, specifier);
      case 'rust':
        return this.rust(fromPath, specifier);
    }
  }

  private ecmascript(fromPath: string, specifier: string): ModuleTarget[] {
    if (!specifier.startsWith('./') && !specifier.startsWith('../') && specifier !== '.' && specifier !== '..') return [];
    const base = posix.normalize(posix.join(posix.dirname(fromPath), specifier));
    if (base.startsWith('../') || base === '..') return [];
    const candidates: string[] = [];
    const ext = posix.extname(base);
    for (const sub of ES_SUBSTITUTES[ext] ?? []) candidates.push(base.slice(0, -ext.length) + sub);
    candidates.push(base);
    for (const e of ES_EXTENSIONS) candidates.push(base + e);
    for (const e of ES_EXTENSIONS) candidates.push(`${base}/index${e}`);
    const found = candidates.find((c) => this.paths.has(c));
    return found === undefined ? [] : [{ path: found, scope: '' }];
  }

  private python(fromPath: string, specifier: string): ModuleTarget[] {
    const dots = /^\.*/.exec(specifier)![0].length;
    const rest = specifier.slice(dots).split('.').filter((s) => s !== '');
    if (dots > 0) {
      let dir = posix.dirname(fromPath);
      for (let i = 1; i < dots; i++) dir = posix.dirname(dir);
      const base = rest.length === 0 ? dir : posix.join(dir, ...rest);
      const found = pythonFiles(base).find((c) => this.paths.has(normal(c)));
      return found === undefined ? [] : [{ path: normal(found), scope: '' }];
    }
    if (rest.length === 0) return [];
    const suffixes = pythonFiles(rest.join('/'));
    const matches: string[] = [];
    const rooted: string[] = [];
    for (const p of this.pyByName.get(rest[rest.length - 1]) ?? []) {
      const s = suffixes.find((s) => p === s || p.endsWith('/' + s));
      if (s === undefined) continue;
      matches.push(p);
      // An absolute import starts at a directory on Python's path, which is not itself inside a
      // package: `import abc` in importlib/resources/ names the top-level abc, not
      // importlib/resources/abc.py. (When no candidate stands so, all are kept.)
      const root = p.slice(0, p.length - s.length);
      if (root === '' || !(this.paths.has(`${root}__init__.py`) || this.paths.has(`${root}__init__.pyi`))) rooted.push(p);
    }
    return crowdCut(nearest(rooted.length > 0 ? rooted : matches, fromPath), fromPath).map((path) => ({ path, scope: '' }));
  }

  private go(fromPath: string, specifier: string): ModuleTarget[] {
    const segments = specifier.split('/');
    let best: string[] = [];
    let bestLength = 0;
    for (const dir of this.goDirsByName.get(segments[segments.length - 1]) ?? []) {
      const parts = dir === '.' ? [] : dir.split('/');
      let n = 0;
      while (n < parts.length && n < segments.length && parts[parts.length - 1 - n] === segments[segments.length - 1 - n]) n++;
      if (n > bestLength) {
        best = [dir];
        bestLength = n;
      } else if (n === bestLength && n > 0) best.push(dir);
    }
    const dir = nearest(best, fromPath)[0];
    return dir === undefined ? [] : this.inDir(dir).filter((p) => p.endsWith('.go')).map((path) => ({ path, scope: '' }));
  }

  private java(fromPath: string, specifier: string): ModuleTarget[] {
    const segments = specifier.split('.');
    const asPath = segments.join('/');
    const out: ModuleTarget[] = [];
    // A package: every file of the directory it names.
    const dirs = (this.javaDirsByName.get(segments[segments.length - 1]) ?? []).filter((d) => d === asPath || d.endsWith('/' + asPath));
    const dir = nearest(dirs, fromPath)[0];
    if (dir !== undefined) for (const path of this.inDir(dir)) if (path.endsWith('.java')) out.push({ path, scope: '' });
    // A class (a static import's owner): its file, scoped to the class.
    const classes = (this.javaByName.get(segments[segments.length - 1]) ?? []).filter((p) => p === `${asPath}.java` || p.endsWith(`/${asPath}.java`));
    const file = nearest(classes, fromPath)[0];
    if (file !== undefined) out.push({ path: file, scope: segments[segments.length - 1] });
    return out;
  }

  private rust(fromPath: string, specifier: string): ModuleTarget[] {
    const segments = specifier.split('::').filter((s) => s !== '');
    if (segments.length === 0) return [];
    let module: ModuleTarget | null;
    let i = 1;
    const head = segments[0];
    if (head === 'crate') module = this.rustCrateRoot(fromPath);
    else if (head === 'self') module = { path: fromPath, scope: '' };
    else if (head === 'super') module = this.rustParent(fromPath);
    else {
      // A child module of this one, a module of the crate root (2015 paths), or a workspace crate.
      i = 0;
      module = { path: fromPath, scope: '' };
      const child = this.rustChild(module, head, false);
      const root = this.rustCrateRoot(fromPath);
      if (child !== null) module = child;
      else if (root !== null && this.rustChild(root, head, false) !== null) module = root;
      else {
        const krate = this.rustWorkspaceCrate(head);
        if (krate === null) return [];
        module = krate;
        i = 1;
      }
    }
    for (; module !== null && i < segments.length; i++) {
      const s = segments[i];
      module = s === 'super' ? this.rustParent(module.path) : s === 'self' ? module : this.rustChild(module, s, true);
    }
    return module === null ? [] : [module];
  }

  /** The module file `mod name` of `parent` stands for, else (when `inline` allows) an inline module. */
  private rustChild(parent: ModuleTarget, name: string, inline: boolean): ModuleTarget | null {
    if (parent.scope === '') {
      const dir = rustModuleDir(parent.path);
      for (const c of [`${dir}/${name}.rs`, `${dir}/${name}/mod.rs`]) {
        const p = normal(c);
        if (this.paths.has(p)) return { path: p, scope: '' };
      }
    }
    return inline ? { path: parent.path, scope: parent.scope === '' ? name : `${parent.scope}::${name}` } : null;
  }

  private rustParent(path: string): ModuleTarget | null {
    const dir = rustModuleDir(path);
    const up = posix.dirname(dir);
    const base = posix.basename(dir);
    for (const c of [`${up}/${base}.rs`, `${dir}/mod.rs`, `${up}/mod.rs`, `${up}/lib.rs`, `${up}/main.rs`]) {
      const p = normal(c);
      if (p !== path && this.paths.has(p)) return { path: p, scope: '' };
    }
    return this.rustCrateRoot(path);
  }

  private rustCrateRoot(fromPath: string): ModuleTarget | null {
    const base = posix.basename(fromPath);
    if ((base === 'lib.rs' || base === 'main.rs') && this.paths.has(fromPath)) return { path: fromPath, scope: '' };
    for (let dir = posix.dirname(fromPath); ; dir = posix.dirname(dir)) {
      for (const root of ['lib.rs', 'main.rs']) {
        const p = normal(`${dir}/${root}`);
        if (this.paths.has(p)) return { path: p, scope: '' };
      }
      if (dir === '.' || dir === '/' || dir === '') return null;
    }
  }

  private rustWorkspaceCrate(name: string): ModuleTarget | null {
    for (const dirName of new Set([name, name.replace(/_/g, '-')])) {
      for (const c of [`${dirName}/src/lib.rs`, `crates/${dirName}/src/lib.rs`]) if (this.paths.has(c)) return { path: c, scope: '' };
    }
    return null;
  }
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function normal(p: string): string {
  const n = posix.normalize(p);
  return n.startsWith('./') ? n.slice(2) : n;
}

function pythonFiles(base: string): string[] {
  return [`${base}.py`, `${base}.pyi`, `${base}/__init__.py`, `${base}/__init__.pyi`];
}

/** The directory a Rust file's child modules live in. */
function rustModuleDir(path: string): string {
  const base = posix.basename(path);
  const dir = posix.dirname(path);
  if (base === 'lib.rs' || base === 'main.rs' || base === 'mod.rs') return dir;
  return `${dir}/${base.slice(0, -3)}`;
}

/**
 * Python takes the first module of a name on its path. Where many files carry a module's name (a
 * monorepo's `utils`, `config`, or vendored copies of a package), those sharing the most leading
 * directories with the importing file are its candidates, and the rest, more than
 * PYTHON_FARTHER_MAX of them, are not looked into: a name the nearest ones do not declare is not
 * searched for among the crowd (which cost every such reference a look into each of them). A few
 * farther ones stay behind the nearest, nearest first.
 */
function crowdCut(ordered: string[], fromPath: string): string[] {
  if (ordered.length <= PYTHON_FARTHER_MAX + 1) return ordered;
  const from = posix.dirname(fromPath).split('/');
  const shared = (p: string) => {
    const dirs = posix.dirname(p).split('/');
    let n = 0;
    while (n < dirs.length && n < from.length && dirs[n] === from[n]) n++;
    return n;
  };
  const depths = ordered.map(shared);
  const best = Math.max(...depths);
  const nearestOnes = ordered.filter((_, i) => depths[i] === best);
  return ordered.length - nearestOnes.length > PYTHON_FARTHER_MAX ? nearestOnes : ordered;
}

/** Files of a Python module's name beyond the nearest ones that are still looked into (see `crowdCut`). */
const PYTHON_FARTHER_MAX = 3;

/** Candidates ordered by the length of the directory prefix they share with `fromPath`, then by path. */
function nearest(paths: readonly string[], fromPath: string): string[] {
  const score = (p: string) => {
    let n = 0;
    const max = Math.min(p.length, fromPath.length);
    while (n < max && p[n] === fromPath[n]) n++;
    return n;
  };
  return [...paths].sort((a, b) => score(b) - score(a) || a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
}
