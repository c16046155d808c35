import { realpathSync } from 'node:fs';
import { basename, isAbsolute, join, resolve, sep } from 'node:path';
import type { Node } from 'web-tree-sitter';
import { SHELL_COMMAND_BYTES_MAX, SHELL_NESTING_MAX } from '../../core/limits.ts';
import { findOnPath } from '../../process/programs.ts';
import { SyntaxLimitError, initShellSyntax, withShellTree } from '../../syntax/runtime.ts';

// Shell commands read with a real shell grammar (tree-sitter-bash), so the permission rules see
// every program a command runs: each simple command in every list, pipeline, subshell,
// substitution, block, loop, function body and here-doc; wrappers (`env`, `nice`, `timeout`,
// `xargs`, `sudo`, `find -exec`, …) unwrapped to the program they start; `sh -c '<literal>'`
// parsed again. What no reading of the text can settle — `eval`, a computed program name, a
// payload piped into a shell, running a file the same command writes, inline code for another
// interpreter — is reported as undecidable, never guessed.

/** One program the command starts, with its words as the shell would pass them. */
export interface ProgramUse {
  /** As written, quotes and escapes removed (`/usr/bin/curl`, `./x`, `git`). */
  program: string;
  /** Static words unquoted; a word computed at run time keeps its source text (`$HOME`). */
  args: string[];
  /** `NAME=value` prefixes (`FOO=1 make`, `env FOO=1 make`). */
  assigns: string[];
  /**
   * A wrapper that starts the next program unchanged (`nice`, `timeout`, `env`, `sh -c
   * '<literal>'`): the program it starts decides whether an allow rule covers it.
   */
  transparent: boolean;
}

export interface ShellAnalysis {
  command: string;
  uses: ProgramUse[];
  /** Why the command cannot be decided statically, in the order found; empty when it can. */
  undecidable: string[];
  /** A function that calls itself (the fork-bomb shape `:(){ :|:& };:`). */
  recursiveFunction: boolean;
}

export interface ShellContext {
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** Loads the shell grammar; `analyzeShell` needs it. */
export function initShell(): Promise<void> {
  return initShellSyntax();
}

/**
 * Every program `command` runs, and what cannot be decided. A command with a line continuation
 * is read both as written and joined, since shells drop `\<newline>` inside words.
 */
export function analyzeShell(command: string, ctx: ShellContext): ShellAnalysis {
  const w = new Walker(ctx);
  w.source(command, 0);
  const joined = command.replace(/\\\r?\n/g, '');
  if (joined !== command) w.source(joined, 0);
  w.finish();
  return { command, uses: w.uses, undecidable: [...w.undecidable], recursiveFunction: w.recursive };
}

// ---------------------------------------------------------------------------------------------
// Words

interface Word {
  /** Unquoted value when static; the source text otherwise. */
  text: string;
  static: boolean;
  /** Unquoted `* ? [` or braces: the shell may expand it into other words. */
  glob: boolean;
  raw: string;
}

const dynamicWord = (raw: string): Word => ({ text: raw, static: false, glob: false, raw });

/** Backslash removal outside quotes: `s\udo` → `sudo`. */
function unescapeBare(text: string): { value: string; glob: boolean } {
  let value = '';
  let glob = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && i + 1 < text.length) {
      value += text[++i];
      continue;
    }
    if (c === '*' || c === '?' || c === '[' || c === '{' || c === '}') glob = true;
    value += c;
  }
  return { value, glob };
}

/** Inside double quotes a backslash escapes only `$ \` " \\` and newline. */
function unescapeDouble(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, (_, c: string) => (c === '\n' ? '' : c));
}

const C_ESCAPES: Record<string, string> = { a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', "'": "'", '"': '"', '?': '?' };

/** `$'…'`: the escapes bash decodes (`\x73`, `\163`, `\u0073`, `\cX`, …). */
function decodeAnsiC(body: string): string {
  return body.replace(/\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)/gs, (_, e: string) => {
    const k = e[0];
    if (k === 'x' || k === 'u' || k === 'U') return String.fromCodePoint(Number.parseInt(e.slice(1), 16));
    if (/[0-7]/.test(k)) return String.fromCharCode(Number.parseInt(e, 8) & 0xff);
    if (k === 'c') return String.fromCharCode(e.charCodeAt(1) & 0x1f);
    return C_ESCAPES[k] ?? `\\${e}`;
  });
}

function evalWord(node: Node, env: NodeJS.ProcessEnv): Word {
  const raw = node.text;
  switch (node.type) {
    case 'command_name':
      return node.namedChildCount === 1 ? evalWord(node.namedChild(0)!, env) : dynamicWord(raw);
    case 'word': {
      if (raw.startsWith('~')) {
        const m = /^~(\/|$)/.exec(raw);
        if (!m || !env.HOME) return dynamicWord(raw);
        const rest = unescapeBare(raw.slice(1));
        return { text: env.HOME + rest.value, static: true, glob: rest.glob, raw };
      }
      const { value, glob } = unescapeBare(raw);
      return { text: value, static: true, glob, raw };
    }
    case 'number':
      return { text: raw, static: true, glob: false, raw };
    case 'raw_string':
      return { text: raw.slice(1, -1), static: true, glob: false, raw };
    case 'ansi_c_string':
      return { text: decodeAnsiC(raw.slice(2, -1)), static: true, glob: false, raw };
    case 'translated_string':
      return node.namedChildCount === 1 ? evalWord(node.namedChild(0)!, env) : dynamicWord(raw);
    case 'string':
      // The node's own text, not its parts: string_content leaves out some characters (newlines).
      if (node.namedChildren.some((c) => c !== null && c.type !== 'string_content')) return dynamicWord(raw);
      return { text: unescapeDouble(raw.slice(1, -1)), static: true, glob: false, raw };
    case 'concatenation': {
      let text = '';
      let glob = false;
      for (const c of node.children) {
        if (c === null) continue;
        const part = evalWord(c, env);
        if (!part.static) return dynamicWord(raw);
        text += part.text;
        glob ||= part.glob;
      }
      return { text, static: true, glob, raw };
    }
    default:
      return dynamicWord(raw);
  }
}

/** `NAME=value` as a word: static when the value is. */
function assignmentWord(node: Node, env: NodeJS.ProcessEnv): Word {
  const name = node.childForFieldName('name')?.text ?? '';
  const value = node.childForFieldName('value');
  if (!value) return { text: `${name}=`, static: true, glob: false, raw: node.text };
  const v = evalWord(value, env);
  return v.static ? { text: `${name}=${v.text}`, static: true, glob: v.glob, raw: node.text } : dynamicWord(node.text);
}

// ---------------------------------------------------------------------------------------------
// Options of wrappers and interpreters

interface OptSpec {
  /** Short options that take a value (`-n 5`, `-n5`). */
  values?: string;
  /** Long options that take a value as the next word when written without `=`. */
  longValues?: readonly string[];
}

/**
 * The index of the first operand from `start`, skipping options per `spec`; `--` ends the
 * options. -1 when an option is computed at run time (its meaning cannot be known).
 */
function firstOperand(words: readonly Word[], start: number, spec: OptSpec): number {
  let i = start;
  while (i < words.length) {
    const w = words[i];
    if (!w.static) return -1;
    const t = w.text;
    if (t === '--') return i + 1;
    if (t.startsWith('--')) {
      const name = t.slice(2).split('=')[0];
      i += !t.includes('=') && spec.longValues?.includes(name) ? 2 : 1;
      continue;
    }
    if (t.startsWith('-') && t.length > 1) {
      let skip = 1;
      for (let k = 1; k < t.length; k++) {
        if (spec.values?.includes(t[k])) {
          if (k === t.length - 1) skip = 2;
          break;
        }
      }
      i += skip;
      continue;
    }
    return i;
  }
  return i;
}

/** The value of an option wherever it stands (`-c X`, `-cX`, `--command=X`, `--command X`). */
function optionValue(words: readonly Word[], short: string | null, long: readonly string[]): { word: Word | null; found: boolean } {
  for (let i = 1; i < words.length; i++) {
    const t = words[i].text;
    if (!words[i].static) continue;
    if (t === '--') break;
    for (const l of long) {
      if (t === `--${l}`) return { word: words[i + 1] ?? null, found: true };
      if (t.startsWith(`--${l}=`)) return { word: { ...words[i], text: t.slice(l.length + 3) }, found: true };
    }
    // A short option may close a cluster of flags (`-qc CMD`) or carry its value (`-cCMD`).
    const at = short && /^-[A-Za-z0-9]/.test(t) ? t.indexOf(short, 1) : -1;
    if (at > 0) return at === t.length - 1 ? { word: words[i + 1] ?? null, found: true } : { word: { ...words[i], text: t.slice(at + 1) }, found: true };
  }
  return { word: null, found: false };
}

const hasOption = (words: readonly Word[], ...opts: string[]): boolean => words.some((w, i) => i > 0 && w.static && opts.includes(w.text));

/** How each wrapper's own options end and where the program it starts begins. */
interface Wrapper {
  spec: OptSpec;
  /** Operands the wrapper itself takes before the program (timeout's duration, chroot's root). */
  operands?: number;
  transparent: boolean;
  /** What it starts when no program follows: nothing (a listing), or an interactive shell. */
  bare?: 'nothing' | 'shell';
}

const WRAPPERS: Record<string, Wrapper> = {
  nice: { spec: { values: 'n', longValues: ['adjustment'] }, transparent: true },
  timeout: { spec: { values: 'sk', longValues: ['signal', 'kill-after'] }, operands: 1, transparent: true },
  nohup: { spec: {}, transparent: true },
  stdbuf: { spec: { values: 'ioe', longValues: ['input', 'output', 'error'] }, transparent: true },
  ionice: { spec: { values: 'cn', longValues: ['class', 'classdata'] }, transparent: true },
  chrt: { spec: { values: 'T', longValues: ['sched-runtime', 'sched-period', 'sched-deadline'] }, operands: 1, transparent: true },
  taskset: { spec: { values: '' }, operands: 1, transparent: true },
  setsid: { spec: {}, transparent: true },
  time: { spec: { values: 'fo', longValues: ['format', 'output'] }, transparent: true },
  builtin: { spec: {}, transparent: true },
  exec: { spec: { values: 'a' }, transparent: true },
  nsenter: { spec: { values: 'tSGrwe', longValues: ['target', 'setuid', 'setgid', 'root', 'wd', 'env'] }, transparent: false, bare: 'shell' },
  unshare: { spec: { values: 'SGRw', longValues: ['setuid', 'setgid', 'root', 'wd', 'map-user', 'map-group', 'map-users', 'map-groups', 'propagation'] }, transparent: false, bare: 'shell' },
  chroot: { spec: { longValues: ['userspec', 'groups'] }, operands: 1, transparent: false, bare: 'shell' },
  setpriv: {
    spec: { longValues: ['reuid', 'regid', 'ruid', 'rgid', 'euid', 'egid', 'groups', 'inh-caps', 'ambient-caps', 'bounding-set', 'securebits', 'pdeathsig', 'selinux-label', 'apparmor-profile', 'landlock-access', 'landlock-rule', 'rlimit'] },
    transparent: false,
  },
  sudo: { spec: { values: 'CDghprtTUu', longValues: ['close-from', 'chdir', 'group', 'host', 'prompt', 'role', 'type', 'command-timeout', 'other-user', 'user'] }, transparent: false, bare: 'shell' },
  doas: { spec: { values: 'uC' }, transparent: false, bare: 'shell' },
  pkexec: { spec: { longValues: ['user'] }, transparent: false, bare: 'shell' },
  run0: { spec: { values: 'uDg', longValues: ['user', 'group', 'chdir', 'setenv', 'property', 'description', 'slice', 'nice', 'unit', 'machine', 'background'] }, transparent: false, bare: 'shell' },
  'systemd-run': { spec: { values: 'pEuM', longValues: ['unit', 'property', 'description', 'slice', 'uid', 'gid', 'nice', 'setenv', 'working-directory', 'machine', 'on-calendar', 'timer-property', 'path-property', 'socket-property'] }, transparent: false },
  strace: { spec: { values: 'abeEIoOpPsSuUX' }, transparent: true },
  ltrace: { spec: { values: 'aAeEfFlnopsSuxX' }, transparent: true },
  valgrind: { spec: {}, transparent: true },
  fakeroot: { spec: { values: 'lsib', longValues: ['lib', 'faked'] }, transparent: true },
  unbuffer: { spec: {}, transparent: true },
  'xvfb-run': { spec: { values: 'nspfe', longValues: ['server-num', 'server-args', 'auth-file', 'error-file', 'xauth-protocol'] }, transparent: true },
  'dbus-run-session': { spec: { longValues: ['config-file', 'dbus-daemon'] }, transparent: true },
  'ssh-agent': { spec: { values: 'aEPt' }, transparent: true },
  catchsegv: { spec: {}, transparent: true },
  chronic: { spec: {}, transparent: true },
  busybox: { spec: {}, transparent: true, bare: 'nothing' },
  toybox: { spec: {}, transparent: true, bare: 'nothing' },
};

const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'ksh93', 'mksh', 'pdksh', 'ash', 'yash', 'posh', 'rbash', 'fish', 'csh', 'tcsh']);

/** Interpreters whose options carry program text inline; all of them read a program from stdin without a script. */
interface Interpreter {
  /** Short option letters that take code (in a cluster too: `-ne`). */
  inline: string;
  longInline?: readonly string[];
  /** Options whose value is not code (python's `-W x`); `-m`-like ones end the options. */
  values?: string;
  /** An option naming a module or file to run, so stdin is not the program. */
  runs?: string;
}

const INTERPRETERS: Array<[RegExp, Interpreter]> = [
  [/^(python|pypy)[0-9.]*$/, { inline: 'c', values: 'WXQ', runs: 'm' }],
  [/^perl[0-9.]*$/, { inline: 'eE', values: 'IMmdDxC' }],
  [/^ruby[0-9.]*$/, { inline: 'e', values: 'IrECFT' }],
  [/^(node|nodejs)$/, { inline: 'ep', longInline: ['eval', 'print'], values: 'r' }],
  [/^bun$/, { inline: 'e', longInline: ['eval', 'print'], values: 'r' }],
  [/^php[0-9.]*$/, { inline: 'rBRE', values: 'cdz', runs: 'fF' }],
  [/^(lua|luajit)[0-9.]*$/, { inline: 'e', values: 'l' }],
  [/^Rscript$/, { inline: 'e' }],
  [/^osascript$/, { inline: 'e', values: 'l' }],
  [/^(tclsh|wish)[0-9.]*$/, { inline: '' }],
  [/^expect$/, { inline: 'c', runs: 'f' }],
  [/^dc$/, { inline: 'e', longInline: ['expression'], runs: 'f' }],
  [/^(pwsh|powershell)$/, { inline: 'cCeE', longInline: ['command', 'encodedcommand'], runs: 'fF' }],
];

/** Options after which an interpreter runs no program at all (it prints and exits, or finds its own files). */
const INFORMATIONAL = new Set(['--version', '-v', '-V', '--help', '-h', '-version', '--test', '--check']);

/** Options of editors and debuggers that run commands of their own. */
const COMMAND_OPTIONS: Record<string, RegExp> = {
  vim: /^(\+|-c$|--cmd$|-S|-s$|-u$)/,
  vi: /^(\+|-c$|--cmd$|-S|-s$|-u$)/,
  nvim: /^(\+|-c$|--cmd$|-S|-s$|-u$|-l$)/,
  ex: /^(\+|-c$|--cmd$|-S|-s$|-u$)/,
  view: /^(\+|-c$|--cmd$|-S|-u$)/,
  gvim: /^(\+|-c$|--cmd$|-S|-u$)/,
  emacs: /^(--eval|-l$|--load|-f$|--funcall|--batch|-batch|-x$|--script)/,
  gdb: /^(-ex$|-iex$|--ex|--eval-command|--init-eval-command|-x$|--command|-batch$|--batch)/,
  tar: /^(--to-command|--checkpoint-action|--use-compress-program|-I$|--rsh-command|--info-script|--new-volume-script|-F$)/,
  rsync: /^(-e$|--rsh|--rsync-path|-e.)/,
  ssh: /^(-o|-F$)/i,
  scp: /^(-S$|-o|-F$)/,
  sftp: /^(-S$|-D$|-o|-F$)/,
  zip: /^(-TT|--unzip-command)/,
  man: /^(-P$|--pager|-H)/,
  make: /^(--eval)/,
  parallel: /./,
  at: /./,
  batch: /./,
  tmux: /./,
  screen: /./,
  mapfile: /^-C/,
  readarray: /^-C/,
  complete: /^-[CF]/,
  compgen: /^-[CF]/,
  bind: /^-x/,
  fc: /./,
  enable: /./,
};

/** Variables that make an ordinary program run something else (the loader, the shell, git, the pager). */
const DANGEROUS_VARIABLES = new Set([
  'PATH', 'IFS', 'ENV', 'BASH_ENV', 'SHELLOPTS', 'BASHOPTS', 'PS4', 'PROMPT_COMMAND', 'CDPATH', 'GLOBIGNORE',
  'EDITOR', 'VISUAL', 'PAGER', 'MANPAGER', 'LESSOPEN', 'LESSCLOSE', 'BROWSER', 'SHELL',
  'NODE_OPTIONS', 'PERL5OPT', 'PERL5LIB', 'RUBYOPT', 'PYTHONSTARTUP', 'PYTHONINSPECT',
  'SSH_ASKPASS', 'SUDO_ASKPASS', 'GIT_SSH', 'GIT_SSH_COMMAND', 'GIT_EXTERNAL_DIFF', 'GIT_PAGER', 'GIT_EDITOR',
  'GIT_SEQUENCE_EDITOR', 'GIT_ASKPASS', 'GIT_EXEC_PATH', 'GIT_PROXY_COMMAND', 'GIT_CONFIG', 'GIT_CONFIG_COUNT',
  'GIT_CONFIG_PARAMETERS', 'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_SYSTEM', 'GIT_DIR', 'GIT_TEMPLATE_DIR',
]);
const DANGEROUS_PREFIXES = ['LD_', 'DYLD_', 'BASH_FUNC_', 'GIT_CONFIG_KEY_', 'GIT_CONFIG_VALUE_'];

function dangerousVariable(name: string): boolean {
  return DANGEROUS_VARIABLES.has(name) || DANGEROUS_PREFIXES.some((p) => name.startsWith(p));
}

/** git configuration keys whose value is run as a command. */
const GIT_COMMAND_KEY = /^(alias\..*|core\.(pager|editor|sshcommand|fsmonitor|hookspath|askpass|gitproxy)|.*\.(command|cmd|program|helper|textconv|clean|smudge|process)|diff\.external|sequence\.editor|gpg\..*|credential\..*|uploadpack\..*|remote\..*\.(uploadpack|receivepack|vcs)|include\..*|includeif\..*|protocol\..*)$/i;

/** Options of git subcommands that name a program for git to run. */
const GIT_RUNS_OPTION: Record<string, RegExp> = {
  fetch: /^--upload-pack/,
  pull: /^--upload-pack/,
  push: /^--(receive-pack|exec)/,
  clone: /^(--upload-pack|-u$|--template|--config|-c$)/,
  'ls-remote': /^(--upload-pack|-u$)/,
  archive: /^--exec/,
};

/** An awk program that starts commands: `system()`, a pipe, or getline from a command. */
const AWK_RUNS = /system\s*\(|\||getline/;
/** GNU sed's `e` command, or the `e` flag of `s///`. */
const SED_RUNS = /(^|[;\n{}])\s*([0-9$,~+]+|\/(?:[^/\\\n]|\\.)*\/)?\s*!?\s*e(\s|$|;)|(^|[;\n{}])\s*([0-9$,~+]+|\/(?:[^/\\\n]|\\.)*\/)?\s*!?\s*s(.)(?:(?!\6)[^\\\n]|\\.)*\6(?:(?!\6)[^\\\n]|\\.)*\6[gpiImM0-9w]*e/;
/** A literal bash may evaluate as an array subscript in arithmetic (`[[ x -eq 'a[$(cmd)]' ]]`). */
const SUBSCRIPT_INJECTION = /\[[^\]]*(\$\(|`|\$\{)/;

// ---------------------------------------------------------------------------------------------
// The walk

interface Written {
  abs: string;
  raw: string;
}

class Walker {
  readonly uses: ProgramUse[] = [];
  readonly undecidable = new Set<string>();
  recursive = false;
  private readonly written: Written[] = [];
  private dynamicWrite = false;
  private readonly executed: Array<{ abs: string; raw: string; how: string }> = [];
  private readonly cdTargets: string[] = [];
  private dynamicCd = false;
  /** Names of the functions being walked, innermost last (a call to one of them is recursion). */
  private readonly functions: string[] = [];

  constructor(private readonly ctx: ShellContext) {}

  private flag(reason: string): void {
    this.undecidable.add(reason);
  }

  /** Parses one shell text and walks it; `depth` counts `sh -c` levels. */
  source(text: string, depth: number): void {
    if (depth > SHELL_NESTING_MAX) return this.flag(`shell commands nested more than ${SHELL_NESTING_MAX} levels deep`);
    if (Buffer.byteLength(text) > SHELL_COMMAND_BYTES_MAX) return this.flag(`the command is longer than ${SHELL_COMMAND_BYTES_MAX} bytes`);
    try {
      withShellTree(text, (tree) => {
        if (tree.rootNode.hasError) this.flag('the command does not parse as a shell command');
        this.visit(tree.rootNode, depth);
      });
    } catch (e) {
      if (!(e instanceof SyntaxLimitError)) throw e;
      this.flag(`the command's syntax tree is too large (${e.limit} ${e.observed})`);
    }
  }

  private visitChildren(node: Node, depth: number): void {
    for (const c of node.children) if (c !== null) this.visit(c, depth);
  }

  private visit(node: Node, depth: number): void {
    switch (node.type) {
      case 'command':
        return this.command(node, depth);
      case 'function_definition': {
        const name = node.childForFieldName('name')?.text ?? '';
        this.functions.push(name);
        this.visitChildren(node, depth);
        this.functions.pop();
        return;
      }
      case 'variable_assignment':
        this.assignment(node);
        return this.visitChildren(node, depth);
      case 'declaration_command':
        this.declaration(node);
        return this.visitChildren(node, depth);
      case 'file_redirect':
        this.redirect(node);
        return this.visitChildren(node, depth);
      case 'raw_string':
      case 'string_content':
      case 'word':
        if (SUBSCRIPT_INJECTION.test(node.text)) this.flag('a literal that bash may evaluate as an array subscript, running the command inside it');
        return;
      default:
        return this.visitChildren(node, depth);
    }
  }

  private assignment(node: Node): void {
    const name = node.childForFieldName('name');
    if (!name || name.type !== 'variable_name') return this.flag(`an assignment to a computed name (${node.text})`);
    if (dangerousVariable(name.text)) this.flag(`it sets ${name.text}, which changes what later programs run`);
  }

  /** `export`/`declare`/`local`/`readonly`/`typeset`: a computed word could assign anything. */
  private declaration(node: Node): void {
    for (const c of node.namedChildren) {
      if (c === null || c.type === 'variable_assignment' || c.type === 'variable_name') continue;
      const w = evalWord(c, this.ctx.env);
      if (!w.static) return this.flag(`${node.child(0)?.text ?? 'declare'} with a computed argument (${w.raw})`);
      const m = /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(w.text);
      if (m && dangerousVariable(m[1])) this.flag(`it sets ${m[1]}, which changes what later programs run`);
    }
  }

  private redirect(node: Node): void {
    const op = node.children.find((c) => c !== null && !c.isNamed)?.text ?? '';
    if (!/^(>|>>|>\||&>|&>>|<>|>&)$/.test(op)) return;
    const dest = node.childForFieldName('destination');
    if (!dest) return;
    if (op === '>&' && /^\d+$|^-$/.test(dest.text)) return;
    this.write(evalWord(dest, this.ctx.env));
  }

  private write(w: Word): void {
    if (!w.static || w.glob) {
      this.dynamicWrite = true;
      return;
    }
    this.written.push({ abs: resolve(this.ctx.cwd, w.text), raw: w.text });
  }

  private command(node: Node, depth: number): void {
    const assigns: string[] = [];
    const words: Word[] = [];
    for (const c of node.children) {
      if (c === null) continue;
      if (c.type === 'variable_assignment' && words.length === 0) {
        this.assignment(c);
        assigns.push(c.text);
        this.visitChildren(c, depth);
        continue;
      }
      if (c.type === 'variable_assignment') {
        // After the program name `x=y` is an ordinary word (`alias t=touch`, `make CC=gcc`).
        this.visitChildren(c, depth);
        words.push(assignmentWord(c, this.ctx.env));
        continue;
      }
      this.visit(c, depth);
      if (c.type === 'file_redirect' || c.type === 'herestring_redirect' || c.type === 'heredoc_redirect' || !c.isNamed) continue;
      words.push(evalWord(c, this.ctx.env));
    }
    this.argv(words, assigns, depth, {});
  }

  /**
   * One simple command as words. `appended`: a wrapper adds words of its own at run time
   * (xargs, find -exec); `replace`: the placeholder it substitutes (`{}`).
   */
  private argv(words: Word[], assigns: string[], depth: number, o: { appended?: boolean; replace?: string }): void {
    if (words.length === 0) return;
    const name = words[0];
    if (!name.static) {
      this.guess(words, assigns);
      return this.flag(`the program name is computed when the command runs (${name.raw})`);
    }
    if (name.glob) return this.flag(`the program name is a pattern the shell expands (${name.raw})`);
    if (o.replace && name.text.includes(o.replace)) return this.flag(`the program name is supplied at run time (${name.raw})`);
    if (/[^\x20-\x7e]/.test(name.text)) return this.flag(`the program name ${JSON.stringify(name.text)} has a character outside printable ASCII (a look-alike or hidden character)`);
    // A word holding the wrapper's placeholder is only known when the wrapper runs.
    if (o.replace) words = words.map((w) => (w.text.includes(o.replace!) ? dynamicWord(w.raw) : w));
    const args = words.slice(1).map((w) => (w.static ? w.text : w.raw));
    const use: ProgramUse = { program: name.text, args, assigns, transparent: false };
    this.uses.push(use);
    if (this.functions.includes(name.text)) this.recursive = true;
    if (name.text.includes('/')) this.executed.push({ abs: resolve(this.ctx.cwd, name.text), raw: name.text, how: 'runs' });
    const base = basename(name.text);
    const inner = (from: number, transparent: boolean, extra: { appended?: boolean; replace?: string } = o) => {
      use.transparent = transparent;
      this.argv(words.slice(from), [], depth, extra);
    };

    const wrapper = WRAPPERS[base];
    if (wrapper) {
      if (base === 'ionice' && hasOption(words, '-p', '--pid')) return;
      if (base === 'taskset' && words.some((w, i) => i > 0 && w.static && /^-[a-z]*p/.test(w.text))) return;
      if (base === 'chrt' && words.some((w, i) => i > 0 && w.static && /^-[a-zA-Z]*p/.test(w.text))) return;
      let at = firstOperand(words, 1, wrapper.spec);
      if (at < 0) return this.flag(`${base} with an option computed at run time`);
      if (base === 'sudo') {
        while (at < words.length && words[at].static && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[at].text)) at++;
      }
      at += wrapper.operands ?? 0;
      if (at >= words.length) {
        if (wrapper.bare === 'shell') this.flag(`${base} without a program starts an interactive shell`);
        return;
      }
      return inner(at, wrapper.transparent);
    }
    if (SHELLS.has(base)) return this.shell(words, use, depth, o);
    for (const [re, spec] of INTERPRETERS) if (re.test(base)) return this.interpreter(words, spec, o);

    switch (base) {
      case 'env':
        return this.env(words, use, depth, o);
      case 'command': {
        if (hasOption(words, '-v', '-V')) return;
        const at = firstOperand(words, 1, {});
        return at < 0 ? this.flag('command with an option computed at run time') : inner(at, true);
      }
      case 'coproc':
        // `coproc NAME cmd` or `coproc cmd`: the first word may be either, so both readings count.
        use.transparent = true;
        this.argv(words.slice(1), [], depth, o);
        if (words.length > 2) this.argv(words.slice(2), [], depth, o);
        return;
      case 'xargs':
        return this.xargs(words, use, depth);
      case 'find':
        return this.find(words, depth);
      case 'eval':
        return this.flag('eval runs a string as a command');
      case '.':
      case 'source': {
        const file = words[1];
        if (!file || !file.static) return this.flag(`${base} of a file named at run time`);
        this.executed.push({ abs: resolve(this.ctx.cwd, file.text), raw: file.text, how: base });
        return;
      }
      case 'alias':
        if (words.slice(1).some((w) => !w.static || w.text.includes('='))) this.flag('alias redefines what a command name runs');
        return;
      case 'hash':
        if (hasOption(words, '-p')) this.flag('hash -p binds a command name to another program');
        return;
      case 'trap':
        return this.trap(words, depth);
      case 'su':
      case 'runuser':
      case 'sg':
        return this.switchUser(base, words, use, depth);
      case 'flock':
        return this.flock(words, use, depth, o);
      case 'watch':
        return this.watch(words, use, depth);
      case 'script': {
        const c = optionValue(words, 'c', ['command']);
        if (c.found) this.literal(c.word, 'script -c', use, depth);
        return;
      }
      case 'cd':
      case 'pushd': {
        const dir = words[1];
        if (!dir || !dir.static || dir.text === '-') this.dynamicCd = true;
        else this.cdTargets.push(resolve(this.ctx.cwd, dir.text));
        return;
      }
      case 'awk':
      case 'gawk':
      case 'mawk':
      case 'nawk':
        return this.awk(words);
      case 'sed':
        return this.sed(words);
      case 'git':
        return this.git(words, depth);
      case 'tee':
        for (const w of words.slice(1)) if (!(w.static && w.text.startsWith('-'))) this.write(w);
        return;
      case 'cp':
      case 'mv':
      case 'install':
      case 'ln':
        return this.copy(words);
      case 'dd':
        for (const w of words.slice(1)) if (w.static && w.text.startsWith('of=')) this.write({ ...w, text: w.text.slice(3) });
        return;
      case 'curl': {
        const out = optionValue(words, 'o', ['output']);
        if (out.word) this.write(out.word);
        if (hasOption(words, '-O', '--remote-name', '-J', '--remote-name-all')) this.dynamicWrite = true;
        return;
      }
      case 'wget': {
        const out = optionValue(words, 'O', ['output-document']);
        if (out.word) this.write(out.word);
        else this.dynamicWrite = true;
        return;
      }
      case 'tar':
      case 'unzip':
      case 'patch':
      case 'cpio':
        this.dynamicWrite = true;
        break;
      case 'npx':
      case 'npm': {
        this.runsFile('package.json', base);
        const c = optionValue(words, 'c', ['call']);
        if (c.found) this.literal(c.word, `${base} -c`, use, depth);
        return;
      }
      case 'yarn':
      case 'pnpm':
        return this.runsFile('package.json', base);
      case 'make':
      case 'gmake': {
        const file = optionValue(words, 'f', ['file', 'makefile']);
        if (file.found) {
          if (!file.word?.static || file.word.text === '-') return this.flag(`${base} reading a makefile from standard input or a name computed at run time`);
          this.runsFile(file.word.text, base);
        } else for (const f of ['GNUmakefile', 'makefile', 'Makefile']) this.runsFile(f, base);
        break;
      }
      default:
        if (/^ld(-linux[\w.-]*|-musl[\w.-]*)?\.so(\.\d+)?$/.test(base)) {
          const at = firstOperand(words, 1, { longValues: ['library-path', 'inhibit-rpath', 'audit', 'preload', 'argv0'] });
          if (at < 0) return this.flag('the loader with an option computed at run time');
          return at < words.length ? inner(at, false) : undefined;
        }
    }
    const risky = COMMAND_OPTIONS[base];
    if (risky && words.slice(1).some((w) => !w.static || risky.test(w.text))) this.flag(`${base} with an option that runs commands of its own`);
  }

  /**
   * A computed program name hiding a space (`sudo${IFS}id`, `s"u"do$IFS-i`): the words it most
   * likely splits into join the uses, so a deny rule still sees them (the command stays undecidable).
   */
  private guess(words: Word[], assigns: string[]): void {
    const flat = words
      .map((w) => (w.static ? w.text : w.raw))
      .join(' ')
      .replace(/\$\{IFS\}|\$IFS\b|\$\{IFS[:#%][^}]*\}/g, ' ')
      .replace(/["'\\]/g, '');
    const [program, ...args] = flat.split(/\s+/).filter((t) => t !== '');
    if (program && program !== words[0].raw && !/[$`(){}]/.test(program)) this.uses.push({ program, args, assigns, transparent: false });
  }

  /** The program runs code from `file` (a makefile, package.json scripts): writing it in the same command is caught in finish(). */
  private runsFile(file: string, how: string): void {
    this.executed.push({ abs: resolve(this.ctx.cwd, file), raw: file, how });
  }

  /** A shell string given literally (`sh -c '…'`): parsed again; anything else cannot be read. */
  private literal(word: Word | null, what: string, use: ProgramUse, depth: number, appended = false): void {
    if (word === null) {
      if (appended) this.flag(`${what} takes its command string from its input`);
      return;
    }
    if (!word.static) return this.flag(`${what} runs a command string computed at run time (${word.raw})`);
    use.transparent = true;
    this.source(word.text, depth + 1);
  }

  private shell(words: Word[], use: ProgramUse, depth: number, o: { appended?: boolean }): void {
    let commandMode = false;
    let stdin = false;
    let operand: Word | null = null;
    let i = 1;
    for (; i < words.length; i++) {
      const w = words[i];
      if (!w.static) {
        if (commandMode || !w.raw.startsWith('-')) {
          operand = w;
          break;
        }
        return this.flag(`a shell with options computed at run time (${w.raw})`);
      }
      const t = w.text;
      if (t === '--' || t === '-') {
        if (t === '-') stdin = true;
        i++;
        operand = words[i] ?? null;
        break;
      }
      if (t.startsWith('--')) {
        const long = t.slice(2).split('=')[0];
        if (long === 'rcfile' || long === 'init-file') return this.flag(`${use.program} --${long} runs the commands of a file`);
        if (long === 'command') {
          commandMode = true;
          if (t.includes('=')) {
            operand = { ...w, text: t.slice(t.indexOf('=') + 1) };
            break;
          }
        }
        continue;
      }
      if ((t.startsWith('-') || t.startsWith('+')) && t.length > 1) {
        for (const ch of t.slice(1)) {
          if (ch === 'c') commandMode = true;
          else if (ch === 's' || ch === 'i') stdin = true;
          else if (ch === 'o' || ch === 'O') i++;
        }
        continue;
      }
      operand = w;
      break;
    }
    if (commandMode) return this.literal(operand, `${basename(use.program)} -c`, use, depth, o.appended);
    if (operand !== null && !stdin) {
      if (!operand.static) return this.flag(`a shell running a script named at run time (${operand.raw})`);
      this.executed.push({ abs: resolve(this.ctx.cwd, operand.text), raw: operand.text, how: basename(use.program) });
      return;
    }
    if (o.appended) return this.flag(`${basename(use.program)} takes its script from words supplied at run time`);
    this.flag('a shell reading its commands from standard input (a pipe, here-doc or redirect)');
  }

  private interpreter(words: Word[], spec: Interpreter, o: { appended?: boolean }): void {
    const name = basename(words[0].text);
    for (let i = 1; i < words.length; i++) {
      const w = words[i];
      if (!w.static) return this.flag(`${name} with an argument computed at run time before its program (${w.raw})`);
      const t = w.text;
      if (t === '--') {
        if (i + 1 < words.length) return;
        break;
      }
      if (t.startsWith('--') && t.length > 2) {
        const long = t.slice(2).split('=')[0].toLowerCase();
        if (spec.longInline?.includes(long)) return this.flag(`${name} --${long} runs inline code`);
        continue;
      }
      if (t.startsWith('-') && t.length > 1) {
        for (let k = 1; k < t.length; k++) {
          const ch = t[k];
          if (spec.inline.includes(ch)) return this.flag(`${name} -${ch} runs inline code`);
          if (spec.runs?.includes(ch)) return;
          if (spec.values?.includes(ch)) {
            if (k === t.length - 1) i++;
            break;
          }
        }
        continue;
      }
      // A script file: its program is in the file, which is caught if this command writes it.
      this.runsFile(t, name);
      return;
    }
    if (words.slice(1).some((w) => INFORMATIONAL.has(w.text))) return;
    this.flag(o.appended ? `${name} takes its program from words supplied at run time` : `${name} reading its program from standard input`);
  }

  private env(words: Word[], use: ProgramUse, depth: number, o: { appended?: boolean; replace?: string }): void {
    let i = 1;
    const assigns: string[] = [];
    for (; i < words.length; i++) {
      const w = words[i];
      if (!w.static) return this.flag(`env with an argument computed at run time (${w.raw})`);
      const t = w.text;
      if (t === '-S' || t.startsWith('-S') || t.startsWith('--split-string')) return this.flag('env -S splits a string into a command');
      if (t === '--') {
        i++;
        break;
      }
      if (t === '-u' || t === '-C' || t === '--unset' || t === '--chdir') {
        i++;
        continue;
      }
      if (t.startsWith('-')) continue;
      const m = /^([^=]+)=/.exec(t);
      if (!m) break;
      if (dangerousVariable(m[1])) this.flag(`it sets ${m[1]}, which changes what later programs run`);
      assigns.push(t);
    }
    use.transparent = true;
    if (i < words.length) this.argv(words.slice(i), assigns, depth, o);
  }

  private xargs(words: Word[], use: ProgramUse, depth: number): void {
    let replace: string | undefined;
    let i = 1;
    for (; i < words.length; i++) {
      const w = words[i];
      if (!w.static) return this.flag(`xargs with an option computed at run time (${w.raw})`);
      const t = w.text;
      if (t === '--') {
        i++;
        break;
      }
      if (!t.startsWith('-') || t === '-') break;
      if (t === '-I') {
        replace = words[++i]?.text;
        continue;
      }
      if (t.startsWith('-I')) replace = t.slice(2);
      else if (t.startsWith('-i')) replace = t.length > 2 ? t.slice(2) : '{}';
      else if (t.startsWith('--replace')) replace = t.includes('=') ? t.slice(t.indexOf('=') + 1) : '{}';
      else if (/^-[adELnPs]$/.test(t)) i++;
      else if (/^--(arg-file|delimiter|eof|max-lines|max-args|max-procs|max-chars|process-slot-var)$/.test(t)) i++;
    }
    use.transparent = false;
    // Without a program xargs runs echo; with one, it appends the words it reads.
    if (i < words.length) this.argv(words.slice(i), [], depth, { appended: replace === undefined, replace });
  }

  private find(words: Word[], depth: number): void {
    for (let i = 1; i < words.length; i++) {
      const w = words[i];
      if (!w.static || !/^-(exec|execdir|ok|okdir)$/.test(w.text)) continue;
      let end = i + 1;
      while (end < words.length && !(words[end].static && (words[end].text === ';' || words[end].text === '+'))) end++;
      this.argv(words.slice(i + 1, end), [], depth, { replace: '{}', appended: words[end]?.text === '+' });
      i = end;
    }
    if (words.some((w) => w.static && /^-f(print|print0|printf|ls)$/.test(w.text))) this.dynamicWrite = true;
  }

  private trap(words: Word[], depth: number): void {
    let i = 1;
    while (i < words.length && words[i].static && /^-[lp-]*$/.test(words[i].text) && words[i].text !== '-') i++;
    const action = words[i];
    if (!action || i + 1 >= words.length) return;
    if (action.static && (action.text === '' || action.text === '-')) return;
    if (!action.static) return this.flag(`trap with an action computed at run time (${action.raw})`);
    this.source(action.text, depth + 1);
  }

  private switchUser(base: string, words: Word[], use: ProgramUse, depth: number): void {
    const c = optionValue(words, 'c', ['command']);
    if (c.found) return this.literal(c.word, `${base} -c`, use, depth);
    if (base === 'sg') {
      const at = firstOperand(words, 1, {});
      if (at >= 0 && at + 1 < words.length) return this.literal(words[at + 1], 'sg', use, depth);
    }
    if (base === 'runuser') {
      const dash = words.findIndex((w, i) => i > 0 && w.static && w.text === '--');
      if (dash > 0 && dash + 1 < words.length) return this.argv(words.slice(dash + 1), [], depth, {});
    }
    this.flag(`${base} without a command starts a shell`);
  }

  private flock(words: Word[], use: ProgramUse, depth: number, o: { appended?: boolean; replace?: string }): void {
    const c = optionValue(words, 'c', ['command']);
    if (c.found) return this.literal(c.word, 'flock -c', use, depth);
    const at = firstOperand(words, 1, { values: 'wE', longValues: ['timeout', 'conflict-exit-code'] });
    if (at < 0) return this.flag('flock with an option computed at run time');
    use.transparent = true;
    if (at + 1 < words.length) this.argv(words.slice(at + 1), [], depth, o);
  }

  private watch(words: Word[], use: ProgramUse, depth: number): void {
    const at = firstOperand(words, 1, { values: 'nq', longValues: ['interval', 'equexit'] });
    if (at < 0) return this.flag('watch with an option computed at run time');
    const rest = words.slice(at);
    if (rest.length === 0) return;
    use.transparent = true;
    if (hasOption(words.slice(0, at), '-x', '--exec')) return this.argv(rest, [], depth, {});
    // watch joins its words and hands them to `sh -c`.
    if (rest.some((w) => !w.static)) return this.flag('watch runs a command string computed at run time');
    this.source(rest.map((w) => w.text).join(' '), depth + 1);
  }

  private awk(words: Word[]): void {
    const inline = optionValue(words, 'e', ['source']);
    if (inline.found) {
      if (!inline.word?.static || AWK_RUNS.test(inline.word.text)) this.flag('an awk program that runs commands');
      return;
    }
    if (optionValue(words, 'f', ['file']).found) return;
    const at = firstOperand(words, 1, { values: 'vFf', longValues: ['assign', 'field-separator'] });
    const program = at >= 0 ? words[at] : undefined;
    if (at < 0 || (program && (!program.static || AWK_RUNS.test(program.text)))) this.flag('an awk program that runs commands');
  }

  private sed(words: Word[]): void {
    const scripts: Word[] = [];
    let fromFile = false;
    for (let i = 1; i < words.length; i++) {
      const t = words[i].text;
      if (t === '-e' || t === '--expression') scripts.push(words[++i] ?? dynamicWord(''));
      else if (t.startsWith('--expression=')) scripts.push({ ...words[i], text: t.slice(13) });
      else if (t === '-f' || t.startsWith('--file')) fromFile = true;
      else if (t === '-i' || t.startsWith('--in-place') || /^-[a-zA-Z]*i/.test(t)) {
        for (const f of words.slice(i + 1)) if (f.static && !f.text.startsWith('-')) this.write(f);
      }
    }
    if (scripts.length === 0 && !fromFile) {
      const at = firstOperand(words, 1, { values: 'lf', longValues: ['line-length', 'file'] });
      if (at < 0) return this.flag('sed with an option computed at run time');
      if (at < words.length) scripts.push(words[at]);
    }
    if (scripts.some((s) => !s.static || SED_RUNS.test(s.text))) this.flag('a sed script that may run commands (the e command)');
  }

  private git(words: Word[], depth: number): void {
    let i = 1;
    for (; i < words.length; i++) {
      const w = words[i];
      if (!w.static) return this.flag(`git with an option computed at run time (${w.raw})`);
      const t = w.text;
      if (t === '-c') {
        const kv = words[++i];
        if (!kv?.static || GIT_COMMAND_KEY.test(kv.text.split('=')[0])) return this.flag('git -c sets a key whose value git runs as a command');
        continue;
      }
      if (t.startsWith('--config-env') || t.startsWith('--exec-path')) return this.flag(`git ${t.split('=')[0]} changes what git runs`);
      if (t === '-C' || t === '--git-dir' || t === '--work-tree' || t === '--namespace') {
        i++;
        continue;
      }
      if (!t.startsWith('-')) break;
    }
    const sub = words[i]?.text;
    const rest = words.slice(i + 1);
    const runs = sub ? GIT_RUNS_OPTION[sub] : undefined;
    if (runs && rest.some((w) => !w.static || runs.test(w.text))) return this.flag(`git ${sub} with an option that runs a program`);
    switch (sub) {
      case 'config':
        if (rest.some((w) => !w.static || GIT_COMMAND_KEY.test(w.text))) this.flag('git config sets a key whose value git runs as a command');
        return;
      case 'rebase': {
        const x = optionValue([words[0], ...rest], 'x', ['exec']);
        if (x.found) this.literal(x.word, 'git rebase --exec', { program: 'git', args: [], assigns: [], transparent: false }, depth);
        return;
      }
      case 'bisect':
        if (rest[0]?.text === 'run') this.argv(rest.slice(1), [], depth, {});
        return;
      case 'submodule':
        if (rest.some((w) => w.text === 'foreach')) this.flag('git submodule foreach runs a command string in every submodule');
        return;
      case 'filter-branch':
      case 'difftool':
      case 'mergetool':
        this.flag(`git ${sub} runs commands of its own`);
        return;
    }
  }

  private copy(words: Word[]): void {
    const target = optionValue(words, 't', ['target-directory']);
    const operands = words.slice(1).filter((w) => !(w.static && w.text.startsWith('-')));
    if (target.found) {
      if (!target.word?.static) this.dynamicWrite = true;
      else for (const src of operands.filter((w) => w !== target.word)) this.write({ ...src, text: join(target.word.text, basename(src.text)) });
      return;
    }
    const dest = operands.at(-1);
    if (!dest || operands.length < 2) return;
    this.write(dest);
    // A directory destination receives each source under its own name.
    for (const src of operands.slice(0, -1)) if (src.static) this.write({ ...dest, text: join(dest.text, basename(src.text)) });
  }

  /** Checks that need the whole command: files run after being written in it, writes into .git. */
  finish(): void {
    for (const e of this.executed) {
      if (/^\/(dev|proc)\//.test(e.abs)) this.flag(`${e.how} ${e.raw}: a device or process file, whose content is supplied at run time`);
      const same = this.written.some((w) => w.abs === e.abs || basename(w.raw) === basename(e.raw));
      if (same) this.flag(`${e.how} ${e.raw} after writing it in the same command`);
      else if (this.dynamicWrite) this.flag(`${e.how} ${e.raw} in a command that also writes files named at run time`);
    }
    for (const w of this.written) {
      if (w.abs.split(sep).includes('.git')) this.flag(`it writes inside .git (${w.raw}), where hooks and configuration run as code`);
      else if (!isAbsolute(w.raw) && this.cdTargets.some((d) => d.split(sep).includes('.git'))) this.flag(`it writes inside .git (${w.raw}), where hooks and configuration run as code`);
      else if (!isAbsolute(w.raw) && this.dynamicCd) this.flag(`it writes ${w.raw} after changing to a directory named at run time`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Program names as the rules see them

export interface ProgramNames {
  /** As written (`./t`, `/usr/bin/curl`, `curl`). */
  written: string;
  /** The absolute path: PATH lookup for a bare name, cwd-relative otherwise; null when not found. */
  absolute: string | null;
  /** Every name a deny rule may use: written, basename, absolute path, its real path and that basename. */
  all: string[];
}

export function programNames(program: string, cwd: string, env: NodeJS.ProcessEnv): ProgramNames {
  const absolute = program.includes('/') ? resolve(cwd, program) : findOnPath(program, env.PATH ?? '');
  const all = new Set([program, basename(program)]);
  if (absolute) {
    all.add(absolute);
    try {
      const real = realpathSync.native(absolute);
      all.add(real);
      all.add(basename(real));
    } catch {
      // a program that does not exist (yet) has no real path
    }
  }
  return { written: program, absolute, all: [...all] };
}
