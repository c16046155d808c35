// Python import rewrites for a module that moves (move_file when the language engine proposes
// none, docs/languages.md "Python module moves"). A file's module name comes from its path under
// a module root; every `import` / `from … import` that resolves to the moved module is rewritten
// to its new name, and the moved file's own relative imports are re-based for its new package.
// What the syntax cannot tie to an import statement (a string naming the module, `__all__`,
// a dotted use with no `import` of the module in the file) is reported, never guessed at.

import type { Node } from 'web-tree-sitter';
import { withTree } from './runtime.ts';
import type { SourceText } from './text.ts';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A module's dotted name split into parts, and the package its relative imports resolve against. */
export interface PythonModule {
  name: string[];
  package: string[];
}

/**
 * The module a project path names, or null when it names none: not a `.py` file, or a path
 * segment that is not an identifier. `srcRoot`: `src/` is a module root (it holds no
 * `__init__.py`), so files below it are named from there; every other file is named from the
 * workspace root. Directories with or without `__init__.py` are packages alike (PEP 420).
 */
export function pythonModuleOf(path: string, srcRoot: boolean): PythonModule | null {
  if (!path.endsWith('.py')) return null;
  let parts = path.slice(0, -3).split('/');
  if (srcRoot && parts[0] === 'src' && parts.length > 1) parts = parts.slice(1);
  if (!parts.every((p) => IDENTIFIER.test(p))) return null;
  if (parts[parts.length - 1] === '__init__') {
    const name = parts.slice(0, -1);
    return name.length === 0 ? null : { name, package: name };
  }
  return { name: parts, package: parts.slice(0, -1) };
}

export interface ModuleMove {
  /** The moved module's name before and after. */
  from: string[];
  to: string[];
}

/** An occurrence left as it was, 1-based line and why. */
export interface Unrewritten {
  line: number;
  reason: string;
}

export interface ImportRewrite {
  /** The file's bytes with its imports rewritten, or null when nothing changed. */
  after: Buffer | null;
  unrewritten: Unrewritten[];
}

interface Edit {
  start: number;
  end: number;
  text: string;
}

const dotted = (parts: readonly string[]) => parts.join('.');
const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((p, i) => p === b[i]);
const squeeze = (s: string) => s.replace(/\s+/g, '');

/** The absolute module a relative import names from `pkg`, or null when it climbs out of the top-level package. */
function resolveRelative(pkg: readonly string[], dots: number, rest: readonly string[]): string[] | null {
  const up = dots - 1;
  if (up >= pkg.length) return null;
  return [...pkg.slice(0, pkg.length - up), ...rest];
}

/**
 * `module` written for a `from … import` in package `pkg`: relative (as few dots as reach it)
 * when the statement was relative and both share a top-level package, else absolute.
 */
function moduleText(module: readonly string[], pkg: readonly string[], relative: boolean): string {
  if (!relative) return dotted(module);
  let common = 0;
  while (common < pkg.length && common < module.length && pkg[common] === module[common]) common++;
  if (common === 0) return dotted(module);
  return '.'.repeat(1 + pkg.length - common) + dotted(module.slice(common));
}

/**
 * Rewrites one file's references to a moved module. `before` is the package the file's relative
 * imports resolve against now; `after` where they resolve once the move applies (the moved file's
 * new package, otherwise the same). A file that is no module (`before` null) keeps its relative
 * imports and has only its absolute ones rewritten.
 */
export function rewritePythonImports(bytes: Uint8Array, before: string[] | null, after: string[] | null, move: ModuleMove, packageInit = false): ImportRewrite {
  return withTree('python', bytes, (tree, source) => {
    const edits: Edit[] = [];
    const unrewritten: Unrewritten[] = [];
    const note = (n: Node, reason: string) => unrewritten.push({ line: n.startPosition.row + 1, reason });
    const old = dotted(move.from);
    const leaf = move.from[move.from.length - 1];
    let plainImport = false;
    // Importing a submodule binds its name in the parent package, so the parent's __init__.py
    // may use `m` after `from .m import *` without ever importing `m` itself.
    const parentInit = packageInit && before !== null && same(before, move.from.slice(0, -1));
    let bindsLeaf = false;
    let firstImportOfModule: Node | null = null;

    for (const n of tree.rootNode.descendantsOfType(['import_statement', 'import_from_statement'])) {
      if (n === null) continue;
      if (n.type === 'import_statement') {
        for (const part of n.childrenForFieldName('name')) {
          if (part === null) continue;
          const aliased = part.type === 'aliased_import';
          const name = aliased ? part.childForFieldName('name') : part;
          if (name === null || squeeze(name.text) !== old) continue;
          // `import m` binds `m`: keep that binding when the new name starts elsewhere.
          const text = !aliased && move.from.length === 1 ? `${dotted(move.to)} as ${old}` : dotted(move.to);
          if (!aliased && move.from.length > 1) plainImport = true;
          edits.push({ start: name.startIndex, end: name.endIndex, text });
        }
      } else fromImport(n);
    }

    if (parentInit && firstImportOfModule !== null && !bindsLeaf && usesBareName(tree.rootNode, leaf)) {
      const n: Node = firstImportOfModule;
      const whole = statementLine(source, n);
      if (whole === null) note(n, `the package uses ${leaf}, which this import bound implicitly, and the import shares its line with other code`);
      else edits.push({ start: n.endIndex, end: n.endIndex, text: whole.eol + whole.indent + movedLine(leaf, after ?? before ?? [], true) });
    }

    for (const n of tree.rootNode.descendantsOfType(['attribute', 'string'])) {
      if (n === null) continue;
      if (n.type === 'attribute') {
        if (squeeze(n.text) !== old) continue;
        if (plainImport) edits.push({ start: n.startIndex, end: n.endIndex, text: dotted(move.to) });
        else note(n, `the dotted use ${old} is not tied to an \`import ${old}\` in this file`);
        continue;
      }
      const content = n.namedChildren.filter((c) => c?.type === 'string_content').map((c) => c!.text).join('');
      if (content === old) note(n, `the string "${old}" names the module (importlib, __import__, configuration); rift does not rewrite strings`);
      else if (content === leaf && inAll(n) && before !== null && same(before, move.from.slice(0, -1))) {
        note(n, `__all__ lists "${content}"; rift does not rewrite __all__`);
      }
    }

    function fromImport(n: Node): void {
      const moduleNode = n.childForFieldName('module_name');
      if (moduleNode === null) return;
      let module: string[] | null;
      const relative = moduleNode.type === 'relative_import';
      if (relative) {
        if (before === null) return;
        const prefix = moduleNode.namedChildren.find((c) => c?.type === 'import_prefix');
        const rest = moduleNode.namedChildren.find((c) => c?.type === 'dotted_name');
        module = resolveRelative(before, squeeze(prefix?.text ?? '.').length, rest ? squeeze(rest.text).split('.') : []);
        if (module === null) return;
      } else module = squeeze(moduleNode.text).split('.');
      const pkg = after ?? before ?? [];
      const target = same(module, move.from) ? move.to : module;
      if (target !== module) firstImportOfModule ??= n;
      const canRelative = relative && after !== null;
      // An import whose module and package both stay keeps its text, however it was spelled.
      const unchanged = target === module && before !== null && same(pkg, before);
      const written = (m: string[]) => (unchanged && m === module ? moduleNode.text : moduleText(m, pkg, canRelative));
      const newModule = written(target);

      // `from pkg import m` where `pkg.m` is the moved module: the name moves out of this statement.
      const names = n.childrenForFieldName('name').filter((x): x is Node => x !== null);
      for (const p of names) if ((p.type === 'aliased_import' ? p.childForFieldName('alias') : p)?.text === leaf) bindsLeaf = true;
      const movedNames = same(module, move.from.slice(0, -1))
        ? names.filter((p) => squeeze((p.type === 'aliased_import' ? p.childForFieldName('name') : p)?.text ?? '') === leaf)
        : [];
      if (movedNames.length === 0) {
        if (newModule !== moduleNode.text) edits.push({ start: moduleNode.startIndex, end: moduleNode.endIndex, text: newModule });
        return;
      }
      const whole = statementLine(source, n);
      if (whole === null) {
        note(n, `the import shares its line with other code, so rift cannot split it`);
        return;
      }
      if (n.descendantsOfType('comment').some((c) => c !== null)) {
        note(n, `the import holds comments rift would lose rewriting it`);
        return;
      }
      const lines: string[] = [];
      const others = names.filter((p) => !movedNames.includes(p));
      if (others.length > 0) lines.push(`from ${written(module)} import ${others.map((p) => p.text).join(', ')}`);
      for (const p of movedNames) lines.push(movedLine(p.type === 'aliased_import' ? p.childForFieldName('alias')!.text : leaf, pkg, canRelative));
      edits.push({ start: n.startIndex, end: n.endIndex, text: lines.join(whole.eol + whole.indent) });
    }

    return { after: splice(source, edits), unrewritten };

    /** The statement importing the moved module under the local name `local`, from package `pkg`. */
    function movedLine(local: string, pkg: readonly string[], relative: boolean): string {
      const parent = move.to.slice(0, -1);
      const name = move.to[move.to.length - 1];
      const as = local === name ? '' : ` as ${local}`;
      return parent.length === 0 ? `import ${name}${as}` : `from ${moduleText(parent, pkg, relative)} import ${name}${as}`;
    }
  });
}

/** Whether `name` is used as a bare identifier outside import statements. */
function usesBareName(root: Node, name: string): boolean {
  return root.descendantsOfType('identifier').some((id) => {
    if (id === null || id.text !== name) return false;
    if (id.parent?.type === 'attribute' && id.parent.childForFieldName('attribute')?.startIndex === id.startIndex) return false;
    for (let p = id.parent; p !== null; p = p.parent) if (p.type === 'import_statement' || p.type === 'import_from_statement') return false;
    return true;
  });
}

/** Whether a string stands in the value of a module-level `__all__ = …` / `__all__ += …`. */
function inAll(n: Node): boolean {
  for (let p = n.parent; p !== null; p = p.parent) {
    if (p.type === 'assignment' || p.type === 'augmented_assignment') return p.childForFieldName('left')?.text === '__all__';
    if (p.type === 'function_definition' || p.type === 'class_definition') return false;
  }
  return false;
}

/** The statement's indentation and line ending when it stands alone on its lines, else null. */
function statementLine(source: SourceText, n: Node): { indent: string; eol: string } | null {
  const text = source.text;
  const lineStart = text.lastIndexOf('\n', n.startIndex - 1) + 1;
  const indent = text.slice(lineStart, n.startIndex);
  if (!/^[ \t]*$/.test(indent)) return null;
  const nl = text.indexOf('\n', n.endIndex);
  const tail = text.slice(n.endIndex, nl < 0 ? text.length : nl);
  if (!/^[ \t]*(#.*)?\r?$/.test(tail)) return null;
  return { indent, eol: tail.endsWith('\r') ? '\r\n' : '\n' };
}

/** The file's bytes with the edits (code-unit ranges) applied, or null when there are none. */
function splice(source: SourceText, edits: Edit[]): Buffer | null {
  if (edits.length === 0) return null;
  edits.sort((a, b) => a.start - b.start);
  const parts: Uint8Array[] = [];
  let at = 0;
  for (const e of edits) {
    const start = source.toByte(e.start);
    if (start < at) continue; // nested ranges: the outer edit already covers this one
    parts.push(source.bytes.subarray(at, start), Buffer.from(e.text, 'utf8'));
    at = source.toByte(e.end);
  }
  parts.push(source.bytes.subarray(at));
  return Buffer.concat(parts);
}
