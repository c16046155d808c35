import { homedir } from 'node:os';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import picomatch from 'picomatch';

// Permission rules (reference A.8 layers 1–2, C.4): the built-in bash deny list matched per
// command segment, and user rules `Tool(pattern)` with precedence deny > ask > allow.

/** Always enforced, whatever the approval mode or rules say. `*` crosses `/` here. */
export const BUILTIN_BASH_DENY: readonly string[] = [
  'sudo', 'sudo *', 'rm -rf /', 'rm -rf /*', 'rm -fr /', 'rm -fr /*', 'shutdown*', 'reboot*', 'halt*', 'poweroff*',
  'mkfs*', 'dd if=*of=/dev/*', ':(){*', 'chmod -R 777 /*', 'chown -R * /',
];

/**
 * The command's segments as the deny check sees them: shell expansions that hide a space are
 * replaced by one, the text is split on every separator an attacker could hide a command behind
 * (`& | ; newline ( ) backtick $`), and each piece is whitespace-normalized.
 */
export function bashSegments(command: string): string[] {
  const flat = command.replace(/\$\{IFS\}|\$IFS|\$@|\$\*/g, ' ');
  return flat
    .split(/[&|;\n()`$]/)
    .map((s) => s.trim().replace(/\s+/g, ' '))
    .filter((s) => s.length > 0);
}

/** A flat glob (`*` matches anything, `/` included); a pattern ending in ` *` also matches its bare prefix. */
export function flatGlobMatch(pattern: string, text: string): boolean {
  const re = new RegExp(`^${pattern.split('*').map(escapeRe).join('.*')}$`, 's');
  if (re.test(text)) return true;
  return pattern.endsWith(' *') && text === pattern.slice(0, -2);
}

function escapeRe(s: string): string {
  return s.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
}

/** The built-in deny rule a command hits, per segment and on the whole normalized text. */
export function builtinBashDenied(command: string): string | null {
  const whole = command.replace(/\$\{IFS\}|\$IFS/g, ' ').trim().replace(/\s+/g, ' ');
  for (const candidate of [...bashSegments(command), whole]) {
    for (const rule of BUILTIN_BASH_DENY) if (flatGlobMatch(rule, candidate)) return rule;
  }
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

export class PermissionRules {
  readonly deny: Rule[];
  readonly ask: Rule[];
  allow: Rule[];
  readonly malformed: string[] = [];
  /** Compiled path globs: grep and glob consult deny for every entry they walk. */
  private readonly matchers = new Map<string, (path: string) => boolean>();

  constructor(
    lists: { allow: readonly string[]; ask: readonly string[]; deny: readonly string[] },
    private readonly cwd: string,
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

  /** deny > ask > allow. Bash allow needs every segment covered; deny and ask need any one. */
  verdict(tool: string, target: string): Verdict {
    const d = this.first(this.deny, tool, target, 'any');
    if (d) return { kind: 'deny', rule: d };
    const a = this.first(this.ask, tool, target, 'any');
    if (a) return { kind: 'ask', rule: a };
    const ok = this.first(this.allow, tool, target, 'every');
    if (ok) return { kind: 'allow', rule: ok };
    return { kind: 'none' };
  }

  /** Read-side tools consult deny only. */
  denied(tool: string, target: string): string | null {
    return this.first(this.deny, tool, target, 'any');
  }

  private first(rules: readonly Rule[], tool: string, target: string, mode: 'any' | 'every'): string | null {
    const applicable = rules.filter((r) => ruleCovers(r.tool, tool));
    if (applicable.length === 0) return null;
    if (tool === 'bash') {
      const segments = bashSegments(target);
      if (mode === 'any') {
        for (const r of applicable) {
          if (r.pattern === null || segments.some((s) => flatGlobMatch(r.pattern!, s)) || flatGlobMatch(r.pattern, target.trim())) return r.raw;
        }
        return null;
      }
      // Every segment must be covered by some allow rule (`git status && curl evil` still prompts).
      let used: string | null = null;
      for (const s of segments) {
        const r = applicable.find((x) => x.pattern === null || flatGlobMatch(x.pattern, s));
        if (!r) return null;
        used ??= r.raw;
      }
      return used;
    }
    for (const r of applicable) {
      if (r.pattern === null || this.pathMatches(r.pattern, target)) return r.raw;
    }
    return null;
  }

  /** Path globs: `*` within one directory, `**` across; the cwd-relative and the absolute path are both tried. */
  private pathMatches(pattern: string, target: string): boolean {
    const expanded = pattern.startsWith('~/') ? resolve(homedir(), pattern.slice(2)) : pattern;
    const abs = isAbsolute(target) ? target : resolve(this.cwd, target);
    const rel = relative(this.cwd, abs).split(sep).join('/');
    let test = this.matchers.get(expanded);
    if (!test) {
      test = picomatch(expanded, { dot: true });
      this.matchers.set(expanded, test);
    }
    if (test(abs)) return true;
    if (!rel.startsWith('..') && rel !== '' && test(rel)) return true;
    return false;
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
export function suggestEditRule(cwd: string, absPath: string): string {
  const rel = relative(cwd, absPath).split(sep).join('/');
  if (rel.startsWith('..') || isAbsolute(rel)) return `Edit(${absPath})`;
  const top = rel.split('/');
  return top.length > 1 ? `Edit(${top[0]}/**)` : `Edit(${rel})`;
}
