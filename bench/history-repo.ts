// Generates a repository with a long history for bench/history.ts where no real one is on the
// machine: the real files of a Python standard library (3.11's top-level modules), with a history
// replayed backwards from them. Each step takes the newer version and undoes one small change
// (a statement line added, a line edited, a parameter added, a declaration introduced), so read
// forwards every commit makes one such change; every version parses without errors. Half the
// commits touch one large file (inspect.py, 124 KB), with its largest top-level function and one
// large method touched more often than the rest; the other half touch other modules. Every
// fortieth commit lands through a merge commit (a topic branch of three commits merged with
// --no-ff), so first parents and merges are part of the history. Deterministic (a seeded PRNG,
// fixed authors and dates); written with `git fast-import`, then repacked.
//
//   npx tsx bench/history-repo.ts <dir>     # LIB=<stdlib dir> STEPS=<commits> override

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { initSyntax, withTree } from '../src/syntax/runtime.ts';
import { extractDeclarations } from '../src/syntax/declarations.ts';
import type { Declaration } from '../src/syntax/types.ts';
import { pythonStdlibRoot, seededRandom } from './lib.ts';

const LIB = process.env.LIB ?? pythonStdlibRoot();
const STEPS = Number(process.env.STEPS ?? 1400);
/** The file most commits touch, and the declarations touched most in it. */
export const HISTORY_FILE = 'inspect.py';
export const HISTORY_FUNCTION = '_signature_from_callable';
export const HISTORY_METHOD = 'Signature._bind';
const TARGET_SHARE = 0.5;
const FOCUS_SHARE = 0.12;
const MERGE_EVERY = 40;
const TOPIC = 3;
const EPOCH = Date.UTC(2016, 0, 1) / 1000;
const AUTHORS = ['Ada Lovelace <ada@example.test>', 'Grace Hopper <grace@example.test>', 'Alan Turing <alan@example.test>'];

const utf8 = new TextEncoder();

interface Step {
  path: string;
  /** The file after the forward change. */
  after: string;
  message: string;
}

function parsesClean(text: string): boolean {
  return withTree('python', utf8.encode(text), (tree) => !tree.rootNode.hasError);
}

function lineRanges(text: string, decls: readonly Declaration[]): Array<{ d: Declaration; first: number; last: number }> {
  const bytes = utf8.encode(text);
  const lineOf = (offset: number) => {
    let n = 0;
    for (let i = 0; i < offset; i++) if (bytes[i] === 0x0a) n++;
    return n;
  };
  return decls.filter((d) => d.kind === 'function' || d.kind === 'method').map((d) => ({ d, first: lineOf(d.span.start), last: lineOf(d.span.end) }));
}

const indent = (line: string) => line.length - line.trimStart().length;
const balanced = (line: string) => {
  let depth = 0;
  for (const ch of line) {
    if ('([{'.includes(ch)) depth++;
    else if (')]}'.includes(ch)) depth--;
    if (depth < 0) return false;
  }
  return depth === 0;
};

/**
 * One change undone in `text` (the newer version): the older version and the forward change's
 * message, or null when the chosen change does not apply here.
 */
function undoOne(text: string, ranges: ReturnType<typeof lineRanges>, random: () => number, focus: string[]): { older: string; message: string } | null {
  const lines = text.split('\n');
  const focused = ranges.filter((r) => focus.includes(r.d.qualifiedName));
  const r = focused.length > 0 && random() < FOCUS_SHARE * 2 ? focused[Math.floor(random() * focused.length)] : ranges[Math.floor(random() * ranges.length)];
  if (!r) return null;
  const name = r.d.qualifiedName;
  const op = random();
  const body = Array.from({ length: r.last - r.first }, (_, i) => r.first + 1 + i);
  if (op < 0.45) {
    // A statement line was added.
    const candidates = body.filter((i) => {
      const s = lines[i].trim();
      if (s === '' || /[:(,[{\\]$/.test(s) || /^[)\]}]/.test(s) || !balanced(s) || /^(return|raise|pass|continue|break|else|elif|except|finally)\b/.test(s)) return false;
      const next = lines.slice(i + 1).find((l) => l.trim() !== '');
      const prev = lines[i - 1] ?? '';
      if (next !== undefined && indent(next) > indent(lines[i])) return false;
      if (prev.trim().endsWith(':') && (next === undefined || indent(next) !== indent(lines[i]))) return false;
      return true;
    });
    if (candidates.length === 0) return null;
    const i = candidates[Math.floor(random() * candidates.length)];
    lines.splice(i, 1);
    return { older: lines.join('\n'), message: `${name}: add a statement` };
  }
  if (op < 0.85) {
    // A line was edited: a number changed, or a comment added at its end.
    const candidates = body.filter((i) => /\b\d+\b/.test(lines[i]) || (lines[i].trim() !== '' && !lines[i].includes('#') && balanced(lines[i]) && !/["'\\]/.test(lines[i])));
    if (candidates.length === 0) return null;
    const i = candidates[Math.floor(random() * candidates.length)];
    const numbered = /\b(\d+)\b/.exec(lines[i]);
    if (numbered && random() < 0.5) {
      lines[i] = lines[i].slice(0, numbered.index) + String(Number(numbered[1]) + 1) + lines[i].slice(numbered.index + numbered[1].length);
      return { older: lines.join('\n'), message: `${name}: adjust a constant` };
    }
    if (lines[i].includes('#')) return null;
    lines[i] = `${lines[i]}  # see below`;
    return { older: lines.join('\n'), message: `${name}: drop a stale comment` };
  }
  if (op < 0.93) {
    // A parameter was removed (older: one more keyword parameter).
    const header = lines.slice(r.first, r.last + 1).findIndex((l) => /^\s*def .*\):\s*$/.test(l) || /^\s*def .*\) -> .*:\s*$/.test(l));
    if (header < 0) return null;
    const i = r.first + header;
    const close = lines[i].lastIndexOf(')');
    if (lines[i].slice(0, close).includes('**')) return null;
    lines[i] = `${lines[i].slice(0, close)}, _compat=None${lines[i].slice(close)}`;
    return { older: lines.join('\n'), message: `${name}: remove the _compat parameter` };
  }
  if (focus.includes(name) || r.d.kind !== 'function') return null;
  // A declaration was introduced (older: without it and the blank lines after it).
  let end = r.last + 1;
  while (end < lines.length && lines[end].trim() === '') end++;
  lines.splice(r.first, end - r.first);
  return { older: lines.join('\n'), message: `add ${name}` };
}

function main(): void {
  const out = process.argv[2];
  if (!out) throw new Error('usage: history-repo.ts <dir>');
  if (existsSync(out)) throw new Error(`${out} exists`);
  const files = new Map<string, string>();
  for (const f of readdirSync(LIB).sort()) {
    if (!f.endsWith('.py')) continue;
    const text = readFileSync(join(LIB, f), 'utf8');
    if (Buffer.byteLength(text) < 400_000) files.set(f, text);
  }
  if (!files.has(HISTORY_FILE)) throw new Error(`${LIB} holds no ${HISTORY_FILE}`);
  const others = [...files.keys()].filter((f) => f !== HISTORY_FILE);
  const random = seededRandom(13);
  const steps: Step[] = [];
  const current = new Map(files);
  const rangesOf = new Map<string, ReturnType<typeof lineRanges>>();
  let attempts = 0;
  while (steps.length < STEPS) {
    if (++attempts > STEPS * 20) throw new Error('too many changes did not apply');
    const path = random() < TARGET_SHARE ? HISTORY_FILE : others[Math.floor(random() * others.length)];
    const text = current.get(path)!;
    let ranges = rangesOf.get(path);
    if (!ranges) {
      ranges = lineRanges(text, extractDeclarations('python', utf8.encode(text)).declarations);
      rangesOf.set(path, ranges);
    }
    const undone = undoOne(text, ranges, random, path === HISTORY_FILE ? [HISTORY_FUNCTION, HISTORY_METHOD] : []);
    if (!undone || !parsesClean(undone.older)) continue;
    steps.push({ path, after: text, message: undone.message });
    current.set(path, undone.older);
    rangesOf.delete(path);
    if (steps.length % 100 === 0) process.stderr.write(`${steps.length} changes\n`);
  }
  steps.reverse();

  mkdirSync(out, { recursive: true });
  execFileSync('git', ['init', '-q', '-b', 'main', out]);
  const chunks: Buffer[] = [];
  const emit = (s: string | Buffer) => chunks.push(typeof s === 'string' ? Buffer.from(s) : s);
  const data = (s: string) => {
    const b = Buffer.from(s);
    emit(`data ${b.length}\n`);
    emit(b);
    emit('\n');
  };
  let mark = 0;
  let n = 0;
  const commit = (ref: string, message: string, changes: Array<[string, string]>, parents: number[]): number => {
    mark++;
    n++;
    const author = AUTHORS[n % AUTHORS.length];
    const when = `${EPOCH + n * 5400} +0000`;
    emit(`commit ${ref}\nmark :${mark}\nauthor ${author} ${when}\ncommitter ${author} ${when}\n`);
    data(message);
    if (parents[0] !== undefined) emit(`from :${parents[0]}\n`);
    for (const p of parents.slice(1)) emit(`merge :${p}\n`);
    for (const [path, text] of changes) {
      emit(`M 100644 inline ${path}\n`);
      data(text);
    }
    return mark;
  };
  let main = commit('refs/heads/main', 'import the standard library modules', [...current.entries()].sort(), []);
  let topics = 0;
  for (let i = 0; i < steps.length; ) {
    if (i > 0 && i % MERGE_EVERY === 0 && i + TOPIC <= steps.length) {
      const ref = `refs/heads/topic-${++topics}`;
      let tip = main;
      for (const s of steps.slice(i, i + TOPIC)) tip = commit(ref, s.message, [[s.path, s.after]], [tip]);
      // The merge's tree is the topic's tip: the first parent's tree plus the topic's changes.
      const last = new Map<string, string>();
      for (const s of steps.slice(i, i + TOPIC)) last.set(s.path, s.after);
      main = commit('refs/heads/main', `Merge branch 'topic-${topics}'`, [...last.entries()], [main, tip]);
      i += TOPIC;
      continue;
    }
    main = commit('refs/heads/main', steps[i].message, [[steps[i].path, steps[i].after]], [main]);
    i++;
  }
  execFileSync('git', ['fast-import', '--quiet'], { cwd: out, input: Buffer.concat(chunks), maxBuffer: 1 << 30 });
  execFileSync('git', ['checkout', '-q', '-f', 'main'], { cwd: out });
  // fast-import writes each blob as a delta against whatever object it wrote before (its manual
  // says to repack after a large import): deltas computed again, as a clone from a server has.
  execFileSync('git', ['repack', '-a', '-d', '-f', '-q'], { cwd: out });
  execFileSync('git', ['gc', '-q'], { cwd: out });
  process.stdout.write(`${out}: ${n} commits, ${topics} merges, ${steps.filter((s) => s.path === HISTORY_FILE).length} changes to ${HISTORY_FILE}\n`);
}

// Imported by bench/history.ts for the names above; generates only when run.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await initSyntax();
  main();
}
