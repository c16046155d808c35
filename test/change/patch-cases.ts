import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { applyFilePatch } from '../../src/change/patch-apply.ts';
import { parsePatch } from '../../src/change/patch-parse.ts';
import { isRefusal } from '../../src/change/refusal.ts';

// Generated `patch` conformance cases with `git apply --recount` as the oracle (issue 4).
// Each case builds real files, edits them, takes `git diff`, then perturbs what the patch
// meets: shifted header positions, miscounted headers, CRLF sources under LF diffs, files
// without a final newline, creations, deletions, multi-hunk multi-file patches.

export interface Outcome {
  ok: boolean;
  /** path → bytes after (null = deleted), when ok. */
  files?: Map<string, Buffer | null>;
  /** Refusal class when not ok. */
  reason?: 'mismatch' | 'exists' | 'missing' | 'other';
  detail?: string;
}

export interface Case {
  name: string;
  tags: string[];
  patch: string;
  /** Sources as rift meets them (path → bytes; absent = missing). */
  sources: Map<string, Buffer>;
  /** Sources as git meets them (LF-normalized for CRLF cases). */
  gitSources: Map<string, Buffer>;
  /** Convert git's result the way the spec normalizes endings (LF → CRLF for CRLF sources). */
  crlf: boolean;
}

class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0 || 1;
  }
  next(): number {
    // xorshift32
    let x = this.s;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.s = x >>> 0;
    return this.s / 0x100000000;
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(0, xs.length - 1)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

const COMMON = ['}', '', '    return value;', '  end', '    }', '// ---'];

function makeLines(rng: Rng, n: number, tag: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    out.push(rng.chance(0.15) ? rng.pick(COMMON) : `${tag} line ${i} ${rng.int(0, 999)}`);
  }
  return out;
}

function edit(rng: Rng, lines: string[], sites: number): string[] {
  const out = [...lines];
  for (let k = 0; k < sites; k++) {
    const at = rng.int(0, Math.max(0, out.length - 1));
    const op = rng.int(0, 2);
    if (op === 0 && out.length > 0) out.splice(at, rng.int(1, 3), ...Array.from({ length: rng.int(1, 3) }, (_, i) => `changed ${k}.${i} ${rng.int(0, 9999)}`));
    else if (op === 1) out.splice(at, 0, ...Array.from({ length: rng.int(1, 4) }, (_, i) => `added ${k}.${i} ${rng.int(0, 9999)}`));
    else if (out.length > 2) out.splice(at, rng.int(1, 2));
  }
  return out;
}

const join_ = (lines: string[], finalNewline: boolean) => (lines.length === 0 ? '' : lines.join('\n') + (finalNewline ? '\n' : ''));
const toCrlf = (b: Buffer) => Buffer.from(b.toString('latin1').replace(/\r?\n/g, '\r\n'), 'latin1');

/** Real `git diff` between two trees (path → text; null = absent), with `a/` `b/` project paths. */
function realDiff(before: Map<string, string | null>, after: Map<string, string | null>): string {
  const dir = mkdtempSync(join(tmpdir(), 'rift-oracle-diff-'));
  try {
    mkdirSync(join(dir, 'before'));
    mkdirSync(join(dir, 'after'));
    for (const [p, t] of before) if (t !== null) write(join(dir, 'before'), p, t);
    for (const [p, t] of after) if (t !== null) write(join(dir, 'after'), p, t);
    const r = spawnSync('git', ['diff', '--no-index', '--no-renames', '--no-color', 'before', 'after'], {
      cwd: dir,
      encoding: 'latin1',
      env: { ...process.env, HOME: dir, GIT_CONFIG_NOSYSTEM: '1' },
    });
    if (r.status !== 0 && r.status !== 1) throw new Error(`git diff failed: ${r.stderr}`);
    return r.stdout.replace(/(^|\s)a\/before\//gm, '$1a/').replace(/(^|\s)b\/after\//gm, '$1b/');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function write(dir: string, p: string, t: string | Buffer): void {
  mkdirSync(dirname(join(dir, p)), { recursive: true });
  writeFileSync(join(dir, p), t);
}

/** Rewrites every `@@` header: counts and/or starts scrambled (bodies untouched). */
function scrambleHeaders(rng: Rng, patch: string, counts: boolean, starts: boolean): string {
  return patch.replace(/^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/gm, (_m, os, oc, ns, nc) => {
    let o = Number(os);
    let n = Number(ns);
    let ocn = oc === undefined ? 1 : Number(oc);
    let ncn = nc === undefined ? 1 : Number(nc);
    if (counts) {
      ocn = Math.max(0, ocn + rng.int(-3, 3));
      ncn = Math.max(0, ncn + rng.int(-3, 3));
    }
    if (starts) {
      const d = rng.int(-6, 6);
      o = Math.max(1, o + d);
      n = Math.max(1, n + d);
    }
    return `@@ -${o},${ocn} +${n},${ncn} @@`;
  });
}

export function generateCases(count: number, seed = 4): Case[] {
  const rng = new Rng(seed);
  const kinds = ['modify', 'shift', 'miscount', 'crlf', 'no_newline', 'create', 'delete', 'multi', 'drift_multi', 'header_starts'] as const;
  const cases: Case[] = [];
  for (let i = 0; i < count; i++) {
    const kind = kinds[i % kinds.length];
    const tags: string[] = [kind];
    const nFiles = kind === 'multi' || kind === 'drift_multi' ? rng.int(2, 4) : 1;
    const before = new Map<string, string | null>();
    const after = new Map<string, string | null>();
    for (let f = 0; f < nFiles; f++) {
      const path = f === 0 ? `src/file${i}.txt` : `pkg/m${f}/file${i}_${f}.txt`;
      const lines = makeLines(rng, rng.int(12, 90), `f${f}`);
      const finalNl = kind === 'no_newline' ? rng.chance(0.5) : true;
      if (kind === 'create' && f === 0) {
        before.set(path, null);
        after.set(path, join_(lines, rng.chance(0.85)));
        continue;
      }
      before.set(path, join_(lines, finalNl));
      if (kind === 'delete' && f === 0) {
        after.set(path, null);
        continue;
      }
      let edited = edit(rng, lines, rng.int(1, kind === 'drift_multi' || kind === 'multi' ? 5 : 4));
      // Touch the end of the file too, so a missing final newline shows in the diff.
      if (kind === 'no_newline' && rng.chance(0.6)) edited = [...edited, `tail ${rng.int(0, 99)}`];
      const afterNl = kind === 'no_newline' ? rng.chance(0.5) : true;
      after.set(path, join_(edited, afterNl));
    }
    let patch = realDiff(before, after);
    if (patch.trim() === '') continue;
    if (kind === 'miscount') patch = scrambleHeaders(rng, patch, true, false);
    if (kind === 'header_starts') patch = scrambleHeaders(rng, patch, rng.chance(0.5), true);

    const sources = new Map<string, Buffer>();
    for (const [p, t] of before) {
      if (t === null) continue;
      let text = t;
      if (kind === 'shift' || kind === 'drift_multi') {
        // Lines the diff never saw, above everything: every header position is now off.
        const extra = makeLines(rng, rng.int(1, 12), 'shift').map((l) => `${l} ${p}`);
        text = extra.join('\n') + '\n' + text;
        tags.push('shifted');
      }
      sources.set(p, Buffer.from(text, 'latin1'));
    }
    const crlf = kind === 'crlf';
    const gitSources = new Map(sources);
    if (crlf) for (const [p, b] of sources) sources.set(p, toCrlf(b));
    if (kind === 'create' && rng.chance(0.2)) {
      // The creation target already exists: both must refuse.
      const p = [...before.keys()][0];
      sources.set(p, Buffer.from('already here\n'));
      gitSources.set(p, Buffer.from('already here\n'));
      tags.push('exists');
    }
    if (kind === 'modify' && rng.chance(0.25)) {
      // Drift the source under the diff: one context/deleted line no longer matches.
      const p = [...sources.keys()][0];
      const hunkLine = /^[ -](.+)$/m.exec(patch.split(/^@@.*$/m)[1] ?? '');
      if (hunkLine) {
        const drifted = Buffer.from(sources.get(p)!.toString('latin1').split(hunkLine[1]).join(hunkLine[1] + ' drifted'), 'latin1');
        sources.set(p, drifted);
        gitSources.set(p, drifted);
        tags.push('drifted');
      }
    }
    cases.push({ name: `case ${i} (${tags.join(', ')})`, tags, patch, sources, gitSources, crlf });
  }
  return cases;
}

export function runGit(c: Case): Outcome {
  const dir = mkdtempSync(join(tmpdir(), 'rift-oracle-apply-'));
  try {
    for (const [p, b] of c.gitSources) write(dir, p, b);
    writeFileSync(join(dir, '.patch'), Buffer.from(c.patch, 'latin1'));
    const r = spawnSync('git', ['apply', '--recount', '.patch'], { cwd: dir, encoding: 'latin1', env: { ...process.env, HOME: dir, GIT_CONFIG_NOSYSTEM: '1', GIT_CEILING_DIRECTORIES: dirname(dir) } });
    if (r.status !== 0) {
      const err = r.stderr;
      const reason = /already exists/.test(err) ? 'exists' : /does not exist|No such file/.test(err) ? 'missing' : /patch does not apply|while searching for/.test(err) ? 'mismatch' : 'other';
      return { ok: false, reason, detail: err.trim().split('\n').slice(0, 3).join(' | ') };
    }
    const files = new Map<string, Buffer | null>();
    for (const p of touchedPaths(c.patch)) {
      const abs = join(dir, p);
      files.set(p, existsSync(abs) ? (c.crlf ? toCrlf(readFileSync(abs)) : readFileSync(abs)) : null);
    }
    return { ok: true, files };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function touchedPaths(patch: string): string[] {
  const out = new Set<string>();
  for (const m of patch.matchAll(/^(?:---|\+\+\+) (?:a\/|b\/)(\S+)$/gm)) out.add(m[1]);
  return [...out].sort();
}

export function runRift(c: Case): Outcome {
  try {
    const files = new Map<string, Buffer | null>();
    for (const fp of parsePatch(Buffer.from(c.patch, 'latin1'))) {
      const path = fp.newPath ?? fp.oldPath!;
      files.set(path, applyFilePatch(fp, c.sources.get(path) ?? null));
    }
    return { ok: true, files };
  } catch (e) {
    if (!isRefusal(e)) return { ok: false, reason: 'other', detail: (e as Error).message };
    const pre = e.result.preconditions[0];
    const reason = pre?.kind === 'source_unchanged' ? 'mismatch' : pre?.kind === 'target_exists' ? (pre.expected.value === false ? 'exists' : 'missing') : 'other';
    return { ok: false, reason, detail: pre ? `${String(pre.expected.value)} / ${String(pre.observed.value)}` : e.result.reason };
  }
}

export type Verdict = 'agree_applied' | 'agree_refused' | 'differs' | 'rift_only' | 'git_only' | 'reason_differs';

export function compare(git: Outcome, rift: Outcome): Verdict {
  if (git.ok && rift.ok) {
    for (const [p, b] of git.files!) {
      const r = rift.files!.get(p) ?? null;
      if (b === null ? r !== null : r === null || !b.equals(r)) return 'differs';
    }
    return 'agree_applied';
  }
  if (!git.ok && !rift.ok) return git.reason === rift.reason ? 'agree_refused' : 'reason_differs';
  return git.ok ? 'git_only' : 'rift_only';
}

/** Whether git would pin some hunk to a file edge (its match_beginning / match_end rules). */
export function gitAnchors(patch: string): boolean {
  const hunks = patch.split(/^(?=@@ )/m).slice(1);
  return hunks.some((h) => {
    const m = /^@@ -(\d+)/.exec(h);
    const body = h.split('\n').slice(1).filter((l) => /^[ +-]/.test(l) && !/^(---|\+\+\+) /.test(l));
    return (m !== null && Number(m[1]) <= 1) || (body.length > 0 && !body[body.length - 1].startsWith(' '));
  });
}
