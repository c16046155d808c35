import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { compileGlob } from '../../core/glob.ts';
import { programNames, type ProgramUse, type ShellAnalysis } from './shell.ts';

// Permission rules (reference A.8 layers 1–2, C.4): the built-in bash deny list and user rules
// `Tool(pattern)` with precedence deny > ask > allow. Bash rules match every program a command
// runs (shell.ts reads it with the shell grammar) under each of its names — as written, its
// basename, its absolute path and its real path. Path rules match the path and the file it
// really is (symlinks resolved). A deny or ask holds when any name or path matches; an allow
// only when every one does. A path inside a projection (an isolated sub-agent's copy of the
// workspace) is checked as the workspace path it stands for, so the same rules hold there.

/** Always enforced, whatever the approval mode or rules say. `*` crosses `/` here. */
export const BUILTIN_BASH_DENY: readonly string[] = [
  'sudo', 'sudo *', 'su', 'su *', 'doas', 'doas *', 'pkexec', 'pkexec *', 'run0', 'run0 *',
  'rm -rf /', 'rm -rf /*', 'rm -fr /', 'rm -fr /*', 'shutdown*', 'reboot*', 'halt*', 'poweroff*',
  'mkfs*', 'dd if=*of=/dev/*', ':(){*', 'chmod -R 777 /*', 'chown -R * /',
];

const matchers = { flat: new Map<string, (text: string) => boolean>(), path: new Map<string, (text: string) => boolean>() };

/** A matcher from core/glob.ts, compiled once per pattern; a pattern picomatch refuses matches nothing. */
function matcher(dialect: 'flat' | 'path', pattern: string): (text: string) => boolean {
  let test = matchers[dialect].get(pattern);
  if (!test) {
    try {
      test = compileGlob(pattern, dialect);
    } catch {
      test = () => false;
    }
    matchers[dialect].set(pattern, test);
  }
  return test;
}

/** A command or URL rule (core/glob.ts `flat`: only `*` is special); a pattern ending in ` *` also matches its bare prefix. */
export function flatGlobMatch(pattern: string, text: string): boolean {
  return matcher('flat', pattern)(text) || (pattern.endsWith(' *') && text === pattern.slice(0, -2));
}

/** A path rule (core/glob.ts `path`: `*` stays within one directory, `**` crosses; dot files match). */
export function pathGlobMatch(pattern: string, path: string): boolean {
  return matcher('path', pattern)(path);
}

/** `<name> <args>` for each name, with and without the assignments written before it. */
function useTexts(use: ProgramUse, names: readonly string[]): string[] {
  const tail = use.args.length > 0 ? ` ${use.args.join(' ')}` : '';
  const texts = names.map((n) => `${n}${tail}`);
  if (use.assigns.length > 0) texts.push(...names.map((n) => `${use.assigns.join(' ')} ${n}${tail}`));
  return texts;
}

/** rm's flags folded (`rm -r -f /`, `rm --recursive --force /`) into the `rm -rf <target>` form the list names. */
function rmForms(use: ProgramUse): string[] {
  if (basename(use.program) !== 'rm') return [];
  const flags = new Set<string>();
  const targets: string[] = [];
  for (const a of use.args) {
    if (a === '--recursive') flags.add('r');
    else if (a === '--force') flags.add('f');
    else if (/^-[a-zA-Z]+$/.test(a)) for (const c of a.slice(1)) flags.add(c.toLowerCase());
    else if (!a.startsWith('--')) targets.push(a.replace(/\/+$/, '') || '/');
  }
  return flags.has('r') && flags.has('f') ? targets.map((t) => `rm -rf ${t.replace(/^\/+/, '/')}`) : [];
}

/** The built-in rule a command hits: any program it runs, under any of its names, or the fork-bomb shape. */
export function builtinBashDenied(a: ShellAnalysis, cwd: string, env: NodeJS.ProcessEnv = process.env): string | null {
  if (a.recursiveFunction) return ':(){*';
  const whole = a.command.trim().replace(/\s+/g, ' ');
  for (const use of a.uses) {
    const texts = [...useTexts(use, programNames(use.program, cwd, env).all), ...rmForms(use)];
    for (const rule of BUILTIN_BASH_DENY) if (texts.some((t) => flatGlobMatch(rule, t))) return rule;
  }
  for (const rule of BUILTIN_BASH_DENY) if (flatGlobMatch(rule, whole)) return rule;
  return null;
}

export interface Rule {
  raw: string;
  tool: string;
  pattern: string | null;
}

export function parseRule(raw: string): Rule | null {
  const m = /^\s*([A-Za-z0-9_]+)\s*(?:\((.*)\))?\s*$/s.exec(raw);
  if (!m) return null;
  const pattern = m[2];
  if (pattern !== undefined) {
    if (pattern.trim() === '') return null;
    let depth = 0;
    for (const ch of pattern) {
      if (ch === '(') depth++;
      else if (ch === ')' && --depth < 0) return null;
    }
    if (depth !== 0) return null;
  }
  return { raw: raw.trim(), tool: m[1].toLowerCase(), pattern: pattern ?? null };
}

export type ToolFamily = 'read' | 'write' | 'edit' | 'bash';

/** Which rule tool names cover an action (C.4 families). */
function ruleCovers(ruleTool: string, tool: string): boolean {
  switch (ruleTool) {
    case 'edit':
      return tool === 'edit' || tool === 'write';
    case 'write':
      return tool === 'write';
    case 'read':
      return tool === 'read' || tool === 'ls' || tool === 'grep' || tool === 'glob' || tool === 'outline' || tool === 'get_symbol';
    case 'bash':
      return tool === 'bash';
    default:
      return ruleTool === tool;
  }
}

export type Verdict = { kind: 'deny' | 'ask' | 'allow'; rule: string } | { kind: 'none' };

/**
 * `<root>/.rift/projections/prj_<26 base32>/<rest>`: a projection, a copy of the workspace at
 * `<root>` (services/projection-service.ts, docs/projections.md).
 */
const PROJECTION_PATH = /^(.*)[\\/]\.rift[\\/]projections[\\/]prj_[a-z2-7]{26}(?:[\\/](.*))?$/;

/** The workspace path a path inside a projection stands for; any other path as it is. */
export function workspacePathOf(abs: string): string {
  const m = PROJECTION_PATH.exec(abs);
  if (!m) return abs;
  const root = m[1] === '' ? sep : m[1];
  return m[2] === undefined || m[2] === '' ? root : join(root, m[2]);
}

export class PermissionRules {
  readonly deny: Rule[];
  readonly ask: Rule[];
  allow: Rule[];
  readonly malformed: string[] = [];

  constructor(
    lists: { allow: readonly string[]; ask: readonly string[]; deny: readonly string[] },
    readonly cwd: string,
    /** PATH finds a bare program's file; HOME expands `~/` in path rules. */
    readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    const parse = (xs: readonly string[]) =>
      xs.flatMap((raw) => {
        const r = parseRule(raw);
        if (!r) this.malformed.push(`ignoring malformed permission rule: ${JSON.stringify(raw)}`);
        return r ? [r] : [];
      });
    this.deny = parse(lists.deny);
    this.ask = parse(lists.ask);
    this.allow = parse(lists.allow);
  }

  addAllow(raw: string): void {
    const r = parseRule(raw);
    if (r && !this.allow.some((a) => a.raw === r.raw)) this.allow.push(r);
  }

  /** A "reject always" answer: the rule denies from now on (deny wins over every allow). */
  addDeny(raw: string): void {
    const r = parseRule(raw);
    if (r && !this.deny.some((d) => d.raw === r.raw)) this.deny.push(r);
  }

  /**
   * A tool addressed by name alone (an MCP server's `<server>_<tool>`): `Mcp(<glob>)` rules match
   * the name (`Mcp(github_*)`, `Mcp(*)`), and a bare rule naming the tool matches it too; names
   * compare case-insensitively. deny > ask > allow.
   */
  toolVerdict(name: string): Verdict {
    const lower = name.toLowerCase();
    const hit = (rules: readonly Rule[]) =>
      rules.find((r) => (r.tool === 'mcp' ? r.pattern === null || flatGlobMatch(r.pattern.toLowerCase(), lower) : r.tool === lower && r.pattern === null))?.raw;
    const d = hit(this.deny);
    if (d) return { kind: 'deny', rule: d };
    const a = hit(this.ask);
    if (a) return { kind: 'ask', rule: a };
    const ok = hit(this.allow);
    return ok ? { kind: 'allow', rule: ok } : { kind: 'none' };
  }

  /** A path tool's action: deny > ask > allow, each against the path and the file it resolves to. */
  verdict(tool: string, target: string): Verdict {
    const paths = this.pathForms(target);
    const d = this.firstPath(this.deny, tool, paths, 'any');
    if (d) return { kind: 'deny', rule: d };
    const a = this.firstPath(this.ask, tool, paths, 'any');
    if (a) return { kind: 'ask', rule: a };
    const ok = this.firstPath(this.allow, tool, paths, 'every');
    if (ok) return { kind: 'allow', rule: ok };
    return { kind: 'none' };
  }

  /** Read-side tools consult deny only. */
  denied(tool: string, target: string): string | null {
    return this.firstPath(this.deny, tool, this.pathForms(target), 'any');
  }

  /**
   * A bash command: deny and ask hold when any program it runs matches under any of its names
   * (or the whole text does); allow needs every program it runs (wrappers that only start the
   * next one aside) to match as written or at its absolute path, and nothing left undecided.
   */
  bashVerdict(a: ShellAnalysis): Verdict {
    const named = a.uses.map((use) => ({ use, names: programNames(use.program, this.cwd, this.env) }));
    const whole = a.command.trim().replace(/\s+/g, ' ');
    const matchAny = (rules: readonly Rule[]): string | null => {
      for (const r of rules.filter((x) => x.tool === 'bash')) {
        if (r.pattern === null || flatGlobMatch(r.pattern, whole)) return r.raw;
        if (named.some(({ use, names }) => useTexts(use, names.all).some((t) => flatGlobMatch(r.pattern!, t)))) return r.raw;
      }
      return null;
    };
    const d = matchAny(this.deny);
    if (d) return { kind: 'deny', rule: d };
    const k = matchAny(this.ask);
    if (k) return { kind: 'ask', rule: k };
    const allow = this.allow.filter((x) => x.tool === 'bash');
    const bare = allow.find((r) => r.pattern === null);
    if (bare && a.undecidable.length === 0) return { kind: 'allow', rule: bare.raw };
    const decisive = named.filter(({ use }) => !use.transparent);
    if (a.undecidable.length > 0 || decisive.length === 0) return { kind: 'none' };
    let used: string | null = null;
    for (const { use, names } of decisive) {
      // A path program (`./ls`) is allowed only by a rule naming that path, never by its basename.
      const own = [names.written, ...(names.absolute && names.absolute !== names.written ? [names.absolute] : [])];
      const texts = useTexts(use, own);
      const r = allow.find((x) => texts.some((t) => flatGlobMatch(x.pattern!, t)));
      if (!r) return { kind: 'none' };
      used ??= r.raw;
    }
    return used ? { kind: 'allow', rule: used } : { kind: 'none' };
  }

  private firstPath(rules: readonly Rule[], tool: string, paths: readonly string[], mode: 'any' | 'every'): string | null {
    for (const r of rules) {
      if (!ruleCovers(r.tool, tool)) continue;
      if (r.pattern === null) return r.raw;
      const hit = mode === 'any' ? paths.some((p) => this.pathMatches(r.pattern!, p)) : paths.every((p) => this.pathMatches(r.pattern!, p));
      if (hit) return r.raw;
    }
    return null;
  }

  /** The absolute path as named, and the file it is: symlinks resolved along the deepest part that exists. */
  private pathForms(target: string): string[] {
    const named = isAbsolute(target) ? resolve(target) : resolve(this.cwd, target);
    const abs = workspacePathOf(named);
    const real = workspacePathOf(realTarget(named));
    return real === abs ? [abs] : [abs, real];
  }

  /** Path globs: the cwd-relative and the absolute path are both tried. */
  private pathMatches(pattern: string, abs: string): boolean {
    const home = this.env.HOME ?? homedir();
    const expanded = pattern.startsWith('~/') ? resolve(home, pattern.slice(2)) : pattern;
    if (pathGlobMatch(expanded, abs)) return true;
    const rel = relative(this.cwd, abs).split(sep).join('/');
    return !rel.startsWith('..') && rel !== '' && !isAbsolute(rel) && pathGlobMatch(expanded, rel);
  }
}

/** `abs` with every symlink resolved; a part that does not exist yet is kept as named below the deepest real ancestor. */
function realTarget(abs: string): string {
  let head = abs;
  const tail: string[] = [];
  for (;;) {
    try {
      return tail.length === 0 ? realpathSync.native(head) : join(realpathSync.native(head), ...tail.reverse());
    } catch {
      const parent = dirname(head);
      if (parent === head) return abs;
      tail.push(basename(head));
      head = parent;
    }
  }
}

/** `git push origin main` → `git push *`; `ls -la` → `ls *`; `FOO=1 make` → `FOO=1 make *` (A.8). */
export function suggestBashPattern(command: string): string {
  const tokens = command.trim().split(/\s+/);
  const prefix: string[] = [];
  while (tokens.length > 1 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(tokens[0])) prefix.push(tokens.shift()!);
  const program = tokens[0] ?? '';
  const second = tokens[1];
  const head = second !== undefined && /^[a-z][a-z0-9-]*$/.test(second) ? `${program} ${second}` : program;
  return `${[...prefix, head].join(' ')} *`;
}

/** A work-area rule for "always allow": the top directory of the path, or the file itself at the root. */
export function suggestEditRule(cwd: string, named: string): string {
  const absPath = workspacePathOf(named);
  const rel = relative(cwd, absPath).split(sep).join('/');
  if (rel.startsWith('..') || isAbsolute(rel)) return `Edit(${absPath})`;
  const top = rel.split('/');
  return top.length > 1 ? `Edit(${top[0]}/**)` : `Edit(${rel})`;
}
