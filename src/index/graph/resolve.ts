import { posix } from 'node:path';
import { BoundedCache } from '../../core/bounded-cache.ts';
import type { DeclRow, GraphStore, ImportRow, RecordedFile, RefRow } from './graph-store.ts';
import { FAMILY_LANGUAGES, familyOf, FileSet, type LanguageFamily, type ModuleTarget } from './modules.ts';

// Name resolution for the binding provider. A reference resolves, in order, through: the scope
// chain of its own file; the names its file imports (following re-exports and wildcard imports
// into the modules they name); the file's package (Go and Java directories); and, for members,
// `this` / `self`, the field types and local types the syntax stated, and the bases of a type.
// What resolves this way carries `derivation: "resolution"`. A name nothing binds may still
// match exactly one declaration of its kind in the workspace: that link is a guess, and carries
// `derivation: "heuristic"` — except for names so common across standard libraries (`get`,
// `map`, `len`) that a unique workspace declaration says nothing.

export type Derivation = 'resolution' | 'heuristic';

export interface Resolved {
  from: DeclRow;
  to: DeclRow;
  kind: string;
  derivation: Derivation;
  /** True when the target was reached through one of the file's imports. */
  viaImport: boolean;
}

interface Found {
  decl: DeclRow;
  derivation: Derivation;
  viaImport: boolean;
}

interface FileCtx {
  id: number;
  path: string;
  language: string;
  family: LanguageFamily;
  decls: DeclRow[];
  byQname: Map<string, DeclRow>;
  /** Declarations by short name (a large file holds thousands; a lookup reads only its name's). */
  byName: Map<string, DeclRow[]>;
  imports: ImportRow[];
  /** The modules each specifier written here names (a file's references go through its imports again and again). */
  modules: Map<string, ModuleTarget[]>;
}

/** A binding resolves to a declaration or to modules (a namespace import, a Go package, `import a.b`). */
type Bound = { decl: DeclRow } | { modules: ModuleTarget[] } | null;

const TYPE_KINDS = new Set(['class', 'interface', 'struct', 'enum', 'trait', 'record', 'annotation_type', 'type', 'type_alias']);
const SCOPE_KINDS = new Set([...TYPE_KINDS, 'namespace', 'module']);
const DEPTH_MAX = 6;
/**
 * What one resolver keeps of the files, names and types it has looked at. A full pass visits
 * every file, so unbounded caches held the whole tree's declarations in memory (on 8 copies of
 * Debian's stdlib the pass needed more than a 128 MB heap, and bounded it fits); references are
 * resolved file by file, so a bounded cache keeps the files in use and the modules they import.
 * Measured on a full pass over 32 stdlib copies (57k files, 2.4M declarations): 1,024 files and
 * 65,536 named rows held ~50 MB (peak RSS 273 MB); 512 and 16,384 hold a third of it (230 MB)
 * at 4 % more CPU; 256 and 8,192 cost 12 % more CPU and no less memory.
 */
const FILES_CACHED = 512;
const NAMES_CACHED = 8192;
/** Declarations held by the cache of declarations by name (a common name has thousands). */
const NAMED_ROWS_CACHED = 16384;

/** Member names standard libraries use everywhere: a workspace declaration of one is no evidence. */
const COMMON_NAMES: Readonly<Record<LanguageFamily, ReadonlySet<string>>> = {
  ecmascript: new Set(
    ('map filter reduce forEach find findIndex some every includes indexOf join push pop shift unshift slice splice sort concat keys values entries ' +
      'get set has add delete clear then catch finally toString valueOf call apply bind replace split trim match test exec startsWith endsWith ' +
      'emit on off once write end close open read next return throw resolve reject parse stringify assign create from of log error warn info debug ' +
      'length size flat flatMap fill reverse at charAt charCodeAt padStart padEnd toLowerCase toUpperCase localeCompare dispose destroy run start stop init')
      .split(' '),
  ),
  // Python's builtins are never workspace declarations, whatever a test fixture redefines.
  python: new Set(
    ('append extend insert pop remove clear copy count index sort reverse get keys values items update setdefault join split strip lstrip rstrip ' +
      'replace format startswith endswith lower upper encode decode read write close open add discard match search group groups sub find exists ' +
      'run start stop send recv put wait result cancel done next iter len str repr hash init call enter exit ' +
      'abs all any ascii bin bool breakpoint bytearray bytes callable chr classmethod compile complex delattr dict dir divmod enumerate eval exec ' +
      'filter float frozenset getattr globals hasattr help hex id input int isinstance issubclass locals map max memoryview min object oct ord ' +
      'pow print property range reversed round set setattr slice sorted staticmethod sum super tuple type vars zip __import__ ' +
      'BaseException Exception ArithmeticError AssertionError AttributeError EOFError ImportError ModuleNotFoundError IndexError KeyError ' +
      'KeyboardInterrupt LookupError MemoryError NameError NotImplementedError OSError OverflowError RecursionError ReferenceError RuntimeError ' +
      'StopIteration StopAsyncIteration SyntaxError SystemError SystemExit TypeError UnboundLocalError UnicodeError ValueError ZeroDivisionError ' +
      'Warning UserWarning DeprecationWarning RuntimeWarning FileNotFoundError PermissionError TimeoutError ConnectionError NotADirectoryError')
      .split(' '),
  ),
  rust: new Set(
    ('new default clone to_string to_owned into from iter iter_mut into_iter map and_then unwrap unwrap_or expect ok err is_some is_none push pop ' +
      'insert remove get get_mut len is_empty contains collect fmt eq cmp partial_cmp hash as_ref as_mut borrow borrow_mut lock read write ' +
      'send recv next filter find extend join split trim parse drop deref build run start ' +
      'Vec String Option Some None Result Ok Err Box Rc Arc Cell RefCell Mutex RwLock HashMap HashSet BTreeMap BTreeSet VecDeque Path PathBuf ' +
      'println print eprintln eprint format write writeln vec assert assert_eq assert_ne panic todo unimplemented unreachable matches dbg')
      .split(' '),
  ),
  go: new Set(('String Error Len Less Swap Read Write Close Get Set Add Delete Lock Unlock Run Start Stop Next Done Err Value Load Store New Init').split(' ')),
  java: new Set(
    ('equals hashCode toString get set put add remove size isEmpty contains iterator next hasNext close run start stop apply accept test length ' +
      'append build of valueOf compareTo clone getClass println print format stream map filter collect ' +
      'String Object Integer Long Double Boolean List Map Set ArrayList HashMap HashSet Optional Exception RuntimeException IllegalArgumentException ' +
      'IllegalStateException StringBuilder System Math Thread')
      .split(' '),
  ),
};

/** What a resolver derives from the graph's file list: file ids by path, files by id, the module index. */
interface FileIndex {
  ctxByPath: ReadonlyMap<string, number>;
  fileById: ReadonlyMap<number, { path: string; language: string }>;
  files: FileSet;
}

/**
 * By the file list it was built from: `GraphStore.recorded()` answers the same map until the
 * files change, so the resolvers of successive edits share one index (72k files: ~100 ms and a
 * FileSet's garbage per edit at 32 stdlib copies).
 */
const fileIndexes = new WeakMap<ReadonlyMap<string, RecordedFile>, FileIndex>();

function fileIndex(recorded: ReadonlyMap<string, RecordedFile>): FileIndex {
  let index = fileIndexes.get(recorded);
  if (index === undefined) {
    const ctxByPath = new Map<string, number>();
    const fileById = new Map<number, { path: string; language: string }>();
    for (const [path, f] of recorded) {
      ctxByPath.set(path, f.id);
      fileById.set(f.id, { path, language: f.language });
    }
    index = { ctxByPath, fileById, files: new FileSet([...recorded].map(([path, f]) => ({ path, language: f.language }))) };
    fileIndexes.set(recorded, index);
  }
  return index;
}

/** The files of `recorded` by id, as the resolvers over it share them. */
export function recordedById(recorded: ReadonlyMap<string, RecordedFile>): ReadonlyMap<number, { path: string; language: string }> {
  return fileIndex(recorded).fileById;
}

export class Resolver {
  private readonly files: FileSet;
  private readonly ctxs = new BoundedCache<number, FileCtx>(FILES_CACHED);
  private readonly ctxByPath: ReadonlyMap<string, number>;
  private readonly fileById: ReadonlyMap<number, { path: string; language: string }>;
  private readonly named = new BoundedCache<string, DeclRow[]>(NAMED_ROWS_CACHED, (rows) => rows.length + 1);
  private readonly typeCache = new BoundedCache<string, DeclRow | null>(NAMES_CACHED);
  private readonly baseCache = new BoundedCache<string, DeclRow[]>(NAMES_CACHED);
  /** The one method a member name guesses, by family and name (`guessMember`). */
  private readonly methodGuesses = new BoundedCache<string, DeclRow | null>(NAMES_CACHED);
  /**
   * What the guesses need of every declaration carrying a name (see `guesses`), by family and
   * name: computed once per name, so a guess costs the same however many declarations share it
   * (a name declared in each of many packages was filtered again for every reference to it).
   * Bounded by the rows it holds, as `named` is.
   */
  private readonly guessCache = new BoundedCache<string, Guesses>(NAMED_ROWS_CACHED, (g) => g.bare.size + 1);
  /**
   * What an import of a file binds, by the import's row (held by its file's context, so an entry
   * lives as long as that context is cached). A module path may name many files (each package
   * of a monorepo with its own `utils`), and a name none of them exports was looked for in each,
   * for every reference through that import, loading each file's context.
   */
  private readonly bindings = new WeakMap<ImportRow, Bound>();
  /**
   * What a module exports under a name, as `exported` finds it from outside (depth 0), by the
   * module's target (held by the context of the file that resolved it, as `bindings`; a target
   * is only ever looked into with that file's family).
   */
  private readonly exports = new WeakMap<ModuleTarget, Map<string, DeclRow | null>>();
  private readonly words = new Map<string, string>();

  constructor(private readonly graph: GraphStore) {
    ({ ctxByPath: this.ctxByPath, fileById: this.fileById, files: this.files } = fileIndex(graph.recorded()));
  }

  /** The declaration a reference names, wherever it is made (a file-scope call included). */
  target(ref: RefRow): DeclRow | null {
    const ctx = this.ctx(ref.file_id);
    return ctx === null ? null : (this.find(ctx, ref)?.decl ?? null);
  }

  /** What a reference links, 0, 1 or 2 edges: the reference itself and, through an import, `imports`. */
  resolve(ref: RefRow): Resolved[] {
    const ctx = this.ctx(ref.file_id);
    const family = ctx?.family;
    if (ctx === null || family === undefined || ref.from_qname === '') return [];
    const from = ctx.byQname.get(ref.from_qname) ?? this.typeNamed(ctx, ref.from_qname, ref.from_qname);
    if (from === null) return [];
    const found = this.find(ctx, ref);
    if (found === null || (found.decl.path === from.path && found.decl.qname === from.qname && ref.kind !== 'calls')) return [];
    let kind = ref.kind;
    // Calling a class constructs it (Python `Foo()`, a Rust tuple struct).
    if (kind === 'calls' && TYPE_KINDS.has(found.decl.kind)) kind = 'constructs';
    const out: Resolved[] = [{ from, to: found.decl, kind, derivation: found.derivation, viaImport: found.viaImport }];
    if (found.viaImport) out.push({ from, to: found.decl, kind: 'imports', derivation: found.derivation, viaImport: true });
    return out;
  }

  private find(ctx: FileCtx, ref: RefRow): Found | null {
    const name = ref.name;
    const typeLike = ref.kind === 'extends' || ref.kind === 'implements' || ref.kind === 'embeds' || ref.kind === 'constructs';
    switch (ref.receiver) {
      case 'none':
        return this.name(ctx, name, ref.from_qname, { types: typeLike || ref.kind === 'references' ? 'prefer' : 'any', heuristic: ref.kind !== 'references' });
      case 'self': {
        const type = this.enclosingType(ctx, ref.from_qname);
        if (type === null) return null;
        if (name === 'constructor') return this.constructorOf(type) ?? wrap(type);
        return wrap(this.member(type, name));
      }
      case 'super': {
        const type = this.enclosingType(ctx, ref.from_qname);
        if (type === null) return null;
        for (const base of this.bases(type)) {
          if (name === 'constructor') return this.constructorOf(base) ?? wrap(base);
          const m = this.member(base, name);
          if (m !== null) return wrap(m);
        }
        return null;
      }
      case 'field': {
        const type = this.throughFields(this.enclosingType(ctx, ref.from_qname), ref.text ?? '');
        return type === null ? null : wrap(this.member(type, name));
      }
      case 'typed': {
        const [stated, fields] = (ref.text ?? '').split('#');
        const type = this.throughFields(this.typeNamed(ctx, stated, ref.from_qname), fields ?? '');
        return type === null ? null : wrap(this.member(type, name));
      }
      case 'local':
        return this.guessMember(ctx.family, name);
      case 'name':
        return this.throughName(ctx, ref.text ?? '', name, ref.from_qname, typeLike);
      case 'path':
        return this.throughPath(ctx, ref.text ?? '', name, ref.from_qname, typeLike);
      default:
        return null;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Files

  private ctx(fileId: number): FileCtx | null {
    const cached = this.ctxs.get(fileId);
    if (cached) return cached;
    const file = this.fileById.get(fileId);
    const family = file === undefined ? null : familyOf(file.language);
    if (file === undefined || family === null) return null;
    const { path, language } = file;
    const decls = this.shared(this.graph.declsOf(fileId));
    const byName = new Map<string, DeclRow[]>();
    for (const d of decls) {
      const list = byName.get(d.name);
      if (list) list.push(d);
      else byName.set(d.name, [d]);
    }
    const ctx: FileCtx = { id: fileId, path, language, family, decls, byQname: new Map(decls.map((d) => [d.qname, d])), byName, imports: this.graph.importsOf(fileId), modules: new Map() };
    this.ctxs.set(fileId, ctx);
    return ctx;
  }

  /**
   * `rows` as read, made to share the strings this resolver holds already: their file's path and
   * language, their kind and facets, and `name` when it is the name they were read by. The caches
   * hold tens of thousands of rows, each read with copies of its own.
   */
  private shared(rows: DeclRow[], name?: string): DeclRow[] {
    for (const d of rows) {
      const file = this.fileById.get(d.fileId);
      if (file !== undefined) {
        d.path = file.path;
        d.language = file.language;
      }
      if (name !== undefined) d.name = name;
      d.kind = this.word(d.kind);
      d.facets = this.word(d.facets);
    }
    return rows;
  }

  /** One copy of each of the few strings many rows repeat (kinds, facets). */
  private word(s: string): string {
    const held = this.words.get(s);
    if (held !== undefined) return held;
    this.words.set(s, s);
    return s;
  }

  /** The modules `specifier`, written in the file of `ctx`, may name (FileSet.resolve), once per file and specifier. */
  private modulesFor(ctx: FileCtx, specifier: string): ModuleTarget[] {
    let found = ctx.modules.get(specifier);
    if (found === undefined) {
      found = this.files.resolve(ctx.family, ctx.path, specifier);
      ctx.modules.set(specifier, found);
    }
    return found;
  }

  private ctxOf(path: string): FileCtx | null {
    const id = this.ctxByPath.get(path);
    return id === undefined ? null : this.ctx(id);
  }

  private declsNamed(name: string): DeclRow[] {
    let list = this.named.get(name);
    if (!list) {
      list = this.shared(this.graph.declsNamed(name), name);
      this.named.set(name, list);
    }
    return list;
  }

  // ---------------------------------------------------------------------------------------------
  // Names

  /** A bare name as `from` sees it: scope chain, imports, package, then (when allowed) a unique guess. */
  private name(ctx: FileCtx, name: string, from: string, opts: { types: 'only' | 'prefer' | 'any'; heuristic: boolean }): Found | null {
    const local = this.inFile(ctx, name, from, opts.types);
    if (local !== null) return { decl: local, derivation: 'resolution', viaImport: false };
    if (ctx.family === 'java') {
      // A bare name in a class body means a member of the enclosing classes or their bases.
      for (let type = this.enclosingType(ctx, from); type !== null; type = this.outerType(type)) {
        const m = this.member(type, name);
        if (m !== null) return wrap(m);
      }
    }
    for (const b of ctx.imports) {
      if (b.local !== name || b.module === '') continue;
      const bound = this.binding(ctx, b, 0);
      if (bound !== null && 'decl' in bound) return { decl: bound.decl, derivation: 'resolution', viaImport: true };
    }
    for (const b of ctx.imports) {
      if (b.local !== '*') continue;
      for (const m of this.modulesFor(ctx, b.module)) {
        const d = this.exported(m, name, 0, ctx.family);
        if (d !== null) return { decl: d, derivation: 'resolution', viaImport: true };
      }
    }
    if (ctx.family === 'go' || ctx.family === 'java') {
      const d = this.inPackage(ctx, name, opts.types);
      if (d !== null) return { decl: d, derivation: 'resolution', viaImport: false };
    }
    if (!opts.heuristic || ctx.family === 'ecmascript' || COMMON_NAMES[ctx.family].has(name)) return null;
    // A bound name no import explains (a builtin, a star import from outside) is still a
    // guess when one declaration of its kind in the workspace carries it.
    const g = this.guesses(ctx.family, name);
    const unique = (opts.types === 'only' ? g.types : g.bare).pick(ctx.path);
    return unique === null ? null : { decl: unique, derivation: 'heuristic', viaImport: false };
  }

  /** The declarations named `name` in `family` that a guess may pick, computed once per name. */
  private guesses(family: LanguageFamily, name: string): Guesses {
    const key = `${family}\0${name}`;
    let g = this.guessCache.get(key);
    if (g === undefined) {
      const bare: DeclRow[] = [];
      for (const d of this.declsNamed(name)) {
        if (familyOf(d.language) !== family) continue;
        if (d.container === null || d.facets.includes('static')) bare.push(d);
      }
      g = { bare: new Candidates(bare), types: new Candidates(bare.filter((d) => TYPE_KINDS.has(d.kind))) };
      this.guessCache.set(key, g);
    }
    return g;
  }

  /** A declaration of this file the scope chain of `from` reaches; the innermost wins, a type when `prefer`red. */
  private inFile(ctx: FileCtx, name: string, from: string, types: 'only' | 'prefer' | 'any'): DeclRow | null {
    const sep = ctx.family === 'rust' ? '::' : '.';
    let best: DeclRow | null = null;
    let bestScore = -1;
    for (const d of ctx.byName.get(name) ?? []) {
      const scopeLike = SCOPE_KINDS.has(d.kind);
      if (types === 'only' && !scopeLike) continue;
      let depth = 0;
      if (d.container !== null) {
        // Members of types are not bare names (Java aside); nested functions and modules are.
        const owner = ctx.byQname.get(d.container);
        if (from !== d.container && !from.startsWith(d.container + sep)) continue;
        if (owner !== undefined && TYPE_KINDS.has(owner.kind) && ctx.family !== 'java') continue;
        depth = d.container.split(sep).length;
      } else if (containerOf(d.qname, sep) !== null) {
        continue; // a member of a type declared elsewhere (a Rust `impl`, a Go receiver)
      }
      const score = depth * 2 + (types === 'prefer' && scopeLike ? 1 : 0);
      if (score > bestScore) {
        best = d;
        bestScore = score;
      }
    }
    return best;
  }

  /** A package-level declaration of the same directory (Go packages, Java packages). */
  private inPackage(ctx: FileCtx, name: string, types: 'only' | 'prefer' | 'any'): DeclRow | null {
    const dir = posix.dirname(ctx.path);
    for (const d of this.declsNamed(name)) {
      if (d.path === ctx.path || posix.dirname(d.path) !== dir || familyOf(d.language) !== ctx.family || d.container !== null) continue;
      if (d.qname !== name) continue; // a Go method `T.M` is not a package-level M
      if (types === 'only' && !TYPE_KINDS.has(d.kind)) continue;
      return d;
    }
    return null;
  }

  private binding(ctx: FileCtx, b: ImportRow, depth: number): Bound {
    if (depth > 0) return this.bindingOnce(ctx, b, depth);
    let bound = this.bindings.get(b);
    if (bound === undefined) {
      bound = this.bindingOnce(ctx, b, 0);
      this.bindings.set(b, bound);
    }
    return bound;
  }

  private bindingOnce(ctx: FileCtx, b: ImportRow, depth: number): Bound {
    if (depth > DEPTH_MAX) return null;
    if (b.module === '') {
      // A same-file alias (`export { a as b }`, `export default a`): what `a` means here.
      if (b.imported === null) return null;
      const d = this.inFile(ctx, b.imported, '', 'any');
      if (d !== null) return { decl: d };
      for (const other of ctx.imports) {
        if (other.local === b.imported && other.module !== '') return this.binding(ctx, other, depth + 1);
      }
      return null;
    }
    const modules = this.modulesFor(ctx, b.module);
    if (b.imported === null) return modules.length === 0 ? null : { modules };
    for (const m of modules) {
      const d = this.exported(m, b.imported, depth + 1, ctx.family);
      if (d !== null) return { decl: d };
    }
    // `from pkg import mod` and `use crate::a::b` may name a module rather than a declaration.
    if (ctx.family === 'python' || ctx.family === 'rust') {
      const sep = ctx.family === 'rust' ? '::' : b.module.endsWith('.') ? '' : '.';
      const sub = this.modulesFor(ctx, `${b.module}${sep}${b.imported}`);
      if (sub.length > 0) return { modules: sub };
    }
    return null;
  }

  /** The declaration module `m` exports under `name`, following its re-exports. */
  private exported(m: ModuleTarget, name: string, depth: number, family: LanguageFamily): DeclRow | null {
    if (depth > 0) return this.exportedOnce(m, name, depth, family);
    let names = this.exports.get(m);
    if (names === undefined) {
      names = new Map();
      this.exports.set(m, names);
    }
    let d = names.get(name);
    if (d === undefined) {
      d = this.exportedOnce(m, name, 0, family);
      names.set(name, d);
    }
    return d;
  }

  private exportedOnce(m: ModuleTarget, name: string, depth: number, family: LanguageFamily): DeclRow | null {
    if (depth > DEPTH_MAX) return null;
    const ctx = this.ctxOf(m.path);
    if (ctx === null) return null;
    const sep = family === 'rust' ? '::' : '.';
    const qname = m.scope === '' ? name : `${m.scope}${sep}${name}`;
    const direct = ctx.byQname.get(qname);
    if (direct !== undefined) return direct;
    if (m.scope !== '') return null;
    if (family === 'go' || family === 'java') return null; // packages export only what they declare
    for (const b of ctx.imports) {
      if (b.local !== name || !b.reexport) continue;
      const bound = this.binding(ctx, b, depth + 1);
      if (bound !== null && 'decl' in bound) return bound.decl;
    }
    for (const b of ctx.imports) {
      if (b.local !== '*' || !b.reexport) continue;
      for (const sub of this.modulesFor(ctx, b.module)) {
        const d = this.exported(sub, name, depth + 1, family);
        if (d !== null) return d;
      }
    }
    return null;
  }

  // ---------------------------------------------------------------------------------------------
  // Qualified references

  /** `x.m()` / `X::m()` / `pkg.F()`: `x` a field, a module variable, an import, or a type in scope. */
  private throughName(ctx: FileCtx, receiver: string, name: string, from: string, typeLike: boolean): Found | null {
    if (ctx.family === 'java') {
      for (let type = this.enclosingType(ctx, from); type !== null; type = this.outerType(type)) {
        const t = this.fieldType(type, receiver);
        if (t !== null) return wrap(this.member(t, name));
      }
    }
    const stated = this.graph.memberType(ctx.id, '', receiver);
    if (stated !== null) {
      const t = this.typeNamed(ctx, stated, from);
      return t === null ? null : wrap(this.member(t, name));
    }
    for (const b of ctx.imports) {
      if (b.local !== receiver || b.module === '') continue;
      const bound = this.binding(ctx, b, 0);
      if (bound === null) return null; // bound to something outside the workspace
      if ('modules' in bound) {
        for (const m of bound.modules) {
          const d = this.exported(m, name, 0, ctx.family);
          if (d !== null) return { decl: d, derivation: 'resolution', viaImport: true };
        }
        return null;
      }
      const m = this.member(bound.decl, name);
      return m === null ? null : { decl: m, derivation: 'resolution', viaImport: true };
    }
    const scope = this.name(ctx, receiver, from, { types: 'only', heuristic: false });
    if (scope !== null) return wrap(this.member(scope.decl, name));
    if (ctx.family === 'rust') {
      for (const m of this.modulesFor(ctx, `self::${receiver}`)) {
        const d = this.exported(m, name, 0, 'rust');
        if (d !== null) return wrap(d);
      }
    }
    return typeLike ? null : this.guessMember(ctx.family, name);
  }

  /** `a::b::f()`, `a.b.f()`, `a.b.C.m()`: the head binds a module or a type; the rest walks down it. */
  private throughPath(ctx: FileCtx, path: string, name: string, from: string, typeLike: boolean): Found | null {
    const sep = ctx.family === 'rust' ? '::' : '.';
    const segments = path.split(sep);
    const head = segments[0];
    const rest = segments.slice(1);
    if (ctx.family === 'rust' && (head === 'crate' || head === 'self' || head === 'super')) {
      return this.inModules(this.modulesFor(ctx, path), name, ctx.family, false);
    }
    // A field (Java, used bare) or a module-level binding with a stated type, then its fields.
    const fields = rest.join('.');
    if (ctx.family === 'java') {
      for (let type = this.enclosingType(ctx, from); type !== null; type = this.outerType(type)) {
        const t = this.fieldType(type, head);
        if (t === null) continue;
        const target = this.throughFields(t, fields);
        return target === null ? null : wrap(this.member(target, name));
      }
    }
    const stated = this.graph.memberType(ctx.id, '', head);
    if (stated !== null) {
      const t = this.throughFields(this.typeNamed(ctx, stated, from), fields);
      return t === null ? null : wrap(this.member(t, name));
    }
    for (const b of ctx.imports) {
      if (b.local !== head || b.module === '') continue;
      const bound = this.binding(ctx, b, 0);
      if (bound === null) return null;
      if ('modules' in bound) {
        // `import a.b` binds `a`; `a.b.f()` names module `a.b`.
        const module = b.imported === null ? b.module : `${b.module}${sep}${b.imported}`;
        const full = ctx.family === 'python' && b.imported === null ? [head, ...rest].join('.') : [module, ...rest].join(sep);
        const found = this.inModules(this.modulesFor(ctx, full), name, ctx.family, true);
        if (found !== null) return found;
        return this.walkMembers(bound.modules, rest, name, ctx.family, true);
      }
      return this.walkDecl(bound.decl, rest, name, true);
    }
    const scope = this.name(ctx, head, from, { types: 'only', heuristic: false });
    if (scope !== null) return this.walkDecl(scope.decl, rest, name, false);
    // A fully qualified name (Java `a.b.C.m()`, Rust `module::f()` of this crate).
    const direct = this.inModules(this.modulesFor(ctx, path), name, ctx.family, false);
    if (direct !== null) return direct;
    return typeLike ? null : this.guessMember(ctx.family, name);
  }

  private inModules(modules: readonly ModuleTarget[], name: string, family: LanguageFamily, viaImport: boolean): Found | null {
    for (const m of modules) {
      const d = this.exported(m, name, 0, family);
      if (d !== null) return { decl: d, derivation: 'resolution', viaImport };
    }
    return null;
  }

  private walkMembers(modules: readonly ModuleTarget[], rest: readonly string[], name: string, family: LanguageFamily, viaImport: boolean): Found | null {
    if (rest.length === 0) return this.inModules(modules, name, family, viaImport);
    for (const m of modules) {
      const d = this.exported(m, rest[0], 0, family);
      if (d !== null) return this.walkDecl(d, rest.slice(1), name, viaImport);
    }
    return null;
  }

  private walkDecl(decl: DeclRow, rest: readonly string[], name: string, viaImport: boolean): Found | null {
    let d: DeclRow | null = decl;
    for (const s of rest) {
      d = d === null ? null : this.member(d, s);
      if (d === null) return null;
    }
    const m = d === null ? null : this.member(d, name);
    return m === null ? null : { decl: m, derivation: 'resolution', viaImport };
  }

  // ---------------------------------------------------------------------------------------------
  // Types and members

  /** The type a type text (`Store`, `st.Store`, `crate::a::B`) names as `from` sees it. */
  private typeNamed(ctx: FileCtx, text: string, from: string): DeclRow | null {
    if (text === '') return null;
    const key = `${ctx.id}\0${text}\0${from}`;
    const cached = this.typeCache.get(key);
    if (cached !== undefined) return cached;
    this.typeCache.set(key, null); // a cycle (a type naming itself through aliases) resolves to nothing
    const sep = ctx.family === 'rust' ? '::' : '.';
    const cut = text.lastIndexOf(sep);
    let found: Found | null;
    if (cut < 0) found = this.name(ctx, text, from, { types: 'only', heuristic: true });
    else {
      const head = text.slice(0, cut);
      const last = text.slice(cut + sep.length);
      found = head.includes(sep) ? this.throughPath(ctx, head, last, from, true) : this.throughName(ctx, head, last, from, true);
    }
    const decl = found !== null && SCOPE_KINDS.has(found.decl.kind) ? found.decl : null;
    this.typeCache.set(key, decl);
    return decl;
  }

  /** The type `from` is a member of: the nearest enclosing type, declared here or (Rust `impl`, Go receivers) elsewhere. */
  private enclosingType(ctx: FileCtx, from: string): DeclRow | null {
    const sep = ctx.family === 'rust' ? '::' : '.';
    for (let prefix = containerOf(from, sep); prefix !== null; prefix = containerOf(prefix, sep)) {
      const d = ctx.byQname.get(prefix);
      if (d !== undefined) {
        if (TYPE_KINDS.has(d.kind)) return d;
        continue;
      }
      // Not declared in this file: the type an `impl` block or a Go receiver names.
      const cut = prefix.lastIndexOf(sep);
      const t = this.typeNamed(ctx, cut < 0 ? prefix : prefix.slice(cut + sep.length), from);
      if (t !== null) return t;
    }
    return null;
  }

  private outerType(type: DeclRow): DeclRow | null {
    const ctx = this.ctx(type.fileId);
    if (ctx === null) return null;
    for (let c = type.container; c !== null; ) {
      const d = ctx.byQname.get(c);
      if (d === undefined) return null;
      if (TYPE_KINDS.has(d.kind)) return d;
      c = d.container;
    }
    return null;
  }

  /** A member `name` of `type`: declared in it (in any `impl` / receiver file for Rust and Go), else in its bases. */
  private member(type: DeclRow, name: string, depth = 0, seen = new Set<string>()): DeclRow | null {
    const key = `${type.path}\0${type.qname}`;
    if (depth > DEPTH_MAX || seen.has(key)) return null;
    seen.add(key);
    const family = familyOf(type.language);
    const sep = family === 'rust' ? '::' : '.';
    const ctx = this.ctx(type.fileId);
    const direct = ctx?.byQname.get(`${type.qname}${sep}${name}`);
    if (direct !== undefined) return direct;
    if (family === 'rust' || family === 'go') {
      // Methods live where their `impl` block or receiver does.
      const suffix = `${type.name}${sep}${name}`;
      const dir = posix.dirname(type.path);
      const candidates = this.declsNamed(name).filter(
        (d) => familyOf(d.language) === family && (d.qname === suffix || d.qname.endsWith(sep + suffix)) && (family === 'rust' || posix.dirname(d.path) === dir),
      );
      const near = new Candidates(candidates).pick(type.path) ?? candidates[0];
      if (near !== undefined) return near;
    }
    for (const base of this.bases(type)) {
      const m = this.member(base, name, depth + 1, seen);
      if (m !== null) return m;
    }
    return null;
  }

  /** The types `type` extends, implements or embeds. */
  private bases(type: DeclRow): DeclRow[] {
    const key = `${type.path}\0${type.qname}`;
    const cached = this.baseCache.get(key);
    if (cached !== undefined) return cached;
    this.baseCache.set(key, []);
    const out: DeclRow[] = [];
    // A Rust `impl Trait for Type` may sit in another file; other languages state bases in place.
    const rust = familyOf(type.language) === 'rust';
    for (const ref of rust ? this.graph.basesNamed(type.qname) : this.graph.basesNamedIn(type.qname, type.fileId)) {
      if (ref.path !== type.path && familyOf(ref.language) !== 'rust') continue;
      const ctx = this.ctx(ref.file_id);
      if (ctx === null) continue;
      const found = ref.receiver === 'none' ? this.typeNamed(ctx, ref.name, ref.from_qname) : (this.find(ctx, ref)?.decl ?? null);
      if (found !== null && SCOPE_KINDS.has(found.kind) && !(found.path === type.path && found.qname === type.qname)) out.push(found);
    }
    this.baseCache.set(key, out);
    return out;
  }

  /** The type reached from `type` through a `.`-joined field path (`` is `type` itself). */
  private throughFields(type: DeclRow | null, path: string): DeclRow | null {
    let t = type;
    if (path === '') return t;
    for (const field of path.split('.')) {
      if (t === null) return null;
      t = this.fieldType(t, field);
    }
    return t;
  }

  /** The stated type of field `field` of `type` (or of its bases), resolved where the field is declared. */
  private fieldType(type: DeclRow, field: string, depth = 0): DeclRow | null {
    if (depth > DEPTH_MAX) return null;
    const ctx = this.ctx(type.fileId);
    if (ctx === null) return null;
    const stated = this.graph.memberType(ctx.id, type.qname, field);
    if (stated !== null) return this.typeNamed(ctx, stated, `${type.qname}${ctx.family === 'rust' ? '::' : '.'}${field}`);
    for (const base of this.bases(type)) {
      const t = this.fieldType(base, field, depth + 1);
      if (t !== null) return t;
    }
    return null;
  }

  private constructorOf(type: DeclRow): Found | null {
    const ctx = this.ctx(type.fileId);
    if (ctx === null) return null;
    for (const d of ctx.decls) {
      if (d.container === type.qname && d.facets.split(',').includes('constructor')) return wrap(d);
    }
    return null;
  }

  /** A member reached through a receiver of unknown type: a unique, uncommon method name is a guess. */
  private guessMember(family: LanguageFamily, name: string): Found | null {
    if (COMMON_NAMES[family].has(name)) return null;
    // Only whether exactly one method of the family carries the name: two rows tell, where
    // reading every declaration of it (a name each copy of a library declares: thousands) took
    // most of an edit's resolve on a large tree.
    const key = `${family}\0${name}`;
    let method = this.methodGuesses.get(key);
    if (method === undefined) {
      const rows = this.graph.methodsNamed(name, FAMILY_LANGUAGES[family], 2);
      method = rows.length === 1 ? this.shared(rows, name)[0] : null;
      this.methodGuesses.set(key, method);
    }
    return method === null ? null : { decl: method, derivation: 'heuristic', viaImport: false };
  }
}

function wrap(d: DeclRow | null): Found | null {
  return d === null ? null : { decl: d, derivation: 'resolution', viaImport: false };
}

function containerOf(qname: string, sep: string): string | null {
  const base = qname.replace(/~\d+$/, '');
  const cut = base.lastIndexOf(sep);
  return cut < 0 ? null : base.slice(0, cut);
}

interface Guesses {
  /** Declarations a bare name may mean: not members, or static ones. */
  bare: Candidates;
  /** Of those, the types. */
  types: Candidates;
}

/**
 * Candidates of one guess: the one candidate, or the only one in the nearest directory (null when
 * the choice is ambiguous); grouped by directory once, so each pick looks up one directory.
 */
class Candidates {
  private byDir: Map<string, DeclRow[]> | null = null;

  constructor(private readonly all: readonly DeclRow[]) {}

  get size(): number {
    return this.all.length;
  }

  /** The one candidate, or the only one in `fromPath`'s directory. */
  pick(fromPath: string): DeclRow | null {
    if (this.all.length <= 1) return this.all[0] ?? null;
    if (this.byDir === null) {
      this.byDir = new Map();
      for (const c of this.all) {
        const dir = posix.dirname(c.path);
        const list = this.byDir.get(dir);
        if (list) list.push(c);
        else this.byDir.set(dir, [c]);
      }
    }
    const same = this.byDir.get(posix.dirname(fromPath));
    return same?.length === 1 ? same[0] : null;
  }
}
