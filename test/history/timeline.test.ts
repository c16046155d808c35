import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { Repository, type LogEntry } from '../../src/history/git.ts';
import { classify, locateDeclaration } from '../../src/history/classify.ts';
import { timeline, type SegmentRunner, type State, type Timeline, type WalkHint } from '../../src/history/timeline.ts';
import { sha256Hex } from '../../src/core/digest.ts';
import { declarationsOfTree } from '../../src/syntax/declarations.ts';
import { WorkerPool } from '../../src/index/pool.ts';
import { initSyntax, withTree } from '../../src/syntax/runtime.ts';
import type { LanguageId } from '../../src/syntax/types.ts';
import { gitEnv } from '../helpers/git.ts';
import { removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';

// The history walk looks at a declaration again only when an edit may have changed it, and
// splits a long walk into halves walked in workers. Both must answer exactly what parsing every
// version does: the reference below parses each version whole and classifies as the walk does.

const MAX_BYTES = 1 << 20;

/** Version `i` of a file with a function, a class with two methods, and lines around them, each changing on its own schedule. */
function version(i: number): string {
  const pick = <T>(period: number, values: T[]) => values[Math.floor(i / period) % values.length];
  const imports = 'import os\n'.repeat(1 + (i % 4));
  const fBody = pick(7, ['    return x', '    return x + 1', '    y = x\n    return y', '    y = x\n    return y\n    # done']);
  const fArgs = pick(23, ['x', 'x, y=None']);
  const fDeco = pick(31, ['', '@cache\n']);
  const mBody = pick(5, ['        return self.v', '        return self.v * 2', '        v = self.v\n        return v']);
  const nBody = pick(3, ['        pass', '        return None']);
  const cls = pick(41, ['Box', 'Crate', 'Box']);
  const tail = pick(11, ['', '\n\nLIMIT = 3\n']);
  // Versions that do not parse, broken inside the function. (A version broken elsewhere and
  // otherwise clear of a declaration is taken as leaving it alone, see timeline.ts, so these are
  // versions where the methods and the class do not change.)
  const broken = i === 73 || i === 101 ? '\n    return (' : '';
  const split = pick(17, ['', 'def g():\n']);
  const m = i % 53 < 45 ? `    def m(self):\n${mBody}\n\n` : '';
  return `${imports}\n\n${fDeco}def f(${fArgs}):\n${fBody}\n${split}    z = 0${broken}\n\n\nclass ${cls}:\n${m}    def n(self):\n${nBody}\n${tail}`;
}

const VERSIONS = 150;
let root: string;
let head: string;

before(async () => {
  await initSyntax();
  root = tempWorkspace();
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: root, env: gitEnv() });
  // One fast-import stream: 150 commits of a.py (dated one hour apart), every fifth also touching b.py.
  const parts: string[] = [];
  for (let i = 0; i < VERSIONS; i++) {
    const text = version(i);
    parts.push(`commit refs/heads/main\nmark :${i + 1}\ncommitter Ada <ada@example.test> ${1_700_000_000 + i * 3600} +0000\ndata ${`v${i}`.length}\nv${i}\n`);
    if (i > 0) parts.push(`from :${i}\n`);
    parts.push(`M 100644 inline a.py\ndata ${Buffer.byteLength(text)}\n${text}\n`);
    if (i % 5 === 0) parts.push(`M 100644 inline b.py\ndata 2\n${i % 10}\n\n`);
  }
  execFileSync('git', ['fast-import', '--quiet'], { cwd: root, env: gitEnv(), input: parts.join('') });
  head = execFileSync('git', ['rev-parse', 'main'], { cwd: root, env: gitEnv(), encoding: 'utf8' }).trim();
});
after(() => removeWorkspace(root));

/** Every version parsed whole, classified newest first as the walk classifies. */
async function reference(repo: Repository, qname: string, max: number, from = head, path = 'a.py', language: LanguageId = 'python'): Promise<string[]> {
  const log: LogEntry[] = [];
  for await (const e of repo.logEntries(from, path, max + 1)) log.push(e);
  const complete = log.length <= max;
  const states: State[] = [];
  for (const e of log) {
    const bytes = e.blob === null ? null : await repo.blob(e.blob);
    if (bytes === null) {
      states.push(null);
      continue;
    }
    const found = withTree(language, bytes, (tree, source) => locateDeclaration(language, tree, source, qname, null));
    states.push(found === null || found === 'unparseable' ? found : found.parts);
  }
  const out: string[] = [];
  const kept = complete ? log.length : max;
  for (let i = 0; i < kept; i++) {
    const after = states[i];
    if (after === 'unparseable') continue;
    let j = i + 1;
    while (j < states.length && states[j] === 'unparseable') j++;
    if (j >= states.length && !complete) continue;
    const kind = classify(j < states.length ? (states[j] as Exclude<State, 'unparseable'>) : null, after);
    if (kind) out.push(`${kind} ${log[i].summary}`);
  }
  return out;
}

const walked = async (repo: Repository, qname: string, max: number, runner?: SegmentRunner) => {
  const t = await timeline(repo, head, 'a.py', 'python', qname, max, MAX_BYTES, runner);
  return { kinds: t.versions.map((v) => `${v.kind} ${v.summary}`), t };
};

test('the walk answers as parsing every version does, for a function, methods and a renamed container, parsing fewer versions', async () => {
  const repo = (await Repository.open(root))!;
  try {
    for (const [qname, max] of [['f', 500], ['Box.m', 500], ['Box.n', 500], ['f', 40], ['Box.m', 60]] as const) {
      const expected = await reference(repo, qname, max);
      const { kinds, t } = await walked(repo, qname, max);
      assert.deepEqual(kinds, expected, `${qname} (max ${max})`);
      assert.ok(expected.length > 3, `${qname} has a history`);
      // Every version changes the file, most of them elsewhere: only a part is parsed.
      if (max === 500) assert.ok(t.stats.parsed < t.stats.commits * 0.6, `${qname}: parsed ${t.stats.parsed} of ${t.stats.commits}`);
    }
  } finally {
    repo.close();
  }
});

test('a long walk is split in halves walked in parse workers, the second started while git still lists versions when the log may reach the bound; a worker that fails leaves its half to the caller', async () => {
  const repo = (await Repository.open(root))!;
  const pool = new WorkerPool({ size: 2 });
  try {
    for (const qname of ['f', 'Box.m', 'Box.n']) {
      const inline = await walked(repo, qname, 500);
      const lanes: number[] = [];
      // A first segment that says nothing of its progress leaves the second half of the log to the second.
      const sizes0: number[] = [];
      const inWorkers = await walked(repo, qname, 500, async (job, lane, ids) => {
        lanes.push(lane);
        // The first segment starts before git has found its first version, the second once it
        // has (before its versions are known), and both are fed as git goes on.
        assert.deepEqual([job.streamed, job.blobs.length, ids.items.length, ids.done], [true, 0, 0, false], `lane ${lane}`);
        const r = await pool.walkSegment(job, lane, ids);
        sizes0[lane] = r.states.length;
        return r;
      });
      assert.deepEqual(inWorkers.kinds, inline.kinds, qname);
      assert.deepEqual(lanes, [0, 1], 'two halves, side by side');
      assert.ok(sizes0[1] >= 64 && sizes0[0] + sizes0[1] === inline.t.stats.commits, `split ${sizes0}`);
      // One that walks as fast as versions come takes what it was given (and the rest when too little is left).
      const sizes: number[] = [];
      const fast = await walked(repo, qname, 500, async (job, lane, ids, progress) => {
        if (lane === 0) {
          for (let i = 0; await ids.has(i); i = ids.items.length) progress(ids.items.length);
        }
        const r = await pool.walkSegment(job, lane, ids);
        sizes.push(r.states.length);
        return r;
      });
      assert.deepEqual(fast.kinds, inline.kinds, `${qname}: fed as fast as it walks`);
      assert.equal(sizes.reduce((a, b) => a + b), inline.t.stats.commits);
      const failing = await walked(repo, qname, 500, () => Promise.reject(new Error('worker gone')));
      assert.deepEqual(failing.kinds, inline.kinds, `${qname}: walked here when the worker fails`);
      // A log that may still reach the bound: the second segment starts once git has listed half
      // of it (a segment of its own length at least), and is fed as git goes on.
      const early: Array<[number, boolean]> = [];
      const halfway = await walked(repo, qname, 140, (job, lane, ids) => {
        early.push([lane, job.streamed]);
        return pool.walkSegment(job, lane, ids);
      });
      assert.deepEqual(halfway.kinds, (await walked(repo, qname, 140)).kinds, `${qname}: second segment started halfway`);
      assert.deepEqual(early, [[0, true], [1, true]]);
      assert.equal(halfway.t.stats.commits, 141);
      // A short walk goes to one worker whole (the second, started with the log, gets nothing).
      const short: number[] = [];
      const bounded = await walked(repo, qname, 60, async (job, lane, ids) => {
        const r = await pool.walkSegment(job, lane, ids);
        short[lane] = r.states.length;
        return r;
      });
      assert.deepEqual(bounded.kinds, (await walked(repo, qname, 60)).kinds);
      assert.deepEqual(short, [61, 0]);
    }
  } finally {
    await pool.close();
    repo.close();
  }
});

test('a hint from the index (the bytes\' digest, the span of the declaration holding it) spares the newest version\'s whole parse, in both segments; a hint that does not hold is passed over', async () => {
  const repo = (await Repository.open(root))!;
  const pool = new WorkerPool({ size: 2 });
  try {
    const newest = (await repo.blob((await firstEntry(repo)).blob!))!;
    const spans = withTree('python', newest, (tree, source) => declarationsOfTree('python', tree, source));
    const outer = (qname: string) => spans.find((d) => d.qualifiedName === qname)!.span;
    const runner: SegmentRunner = (job, lane, ids) => pool.walkSegment(job, lane, ids);
    for (const [qname, holder] of [['f', 'f'], ['Box.m', 'Box'], ['Box.n', 'Box']] as const) {
      const hint: WalkHint = { sha256: sha256Hex(newest), outer: outer(holder) };
      const plain = await timeline(repo, head, 'a.py', 'python', qname, 500, MAX_BYTES);
      const hinted = await timeline(repo, head, 'a.py', 'python', qname, 500, MAX_BYTES, undefined, hint);
      assert.deepEqual(hinted.versions, plain.versions, qname);
      // The newest version is parsed alone instead of whole.
      assert.equal(hinted.stats.parsed, plain.stats.parsed, `${qname}: as many parses`);
      assert.equal(hinted.stats.alone, plain.stats.alone + 1, `${qname}: one more parsed alone`);
      // Split in two segments, the second seeded from the walk's newest version (max 140: the
      // second starts halfway, see above).
      const lanes: Array<string | undefined> = [];
      const split = await timeline(repo, head, 'a.py', 'python', qname, 140, MAX_BYTES, (job, lane, ids) => {
        lanes[lane] = job.seed;
        return runner(job, lane, ids, () => undefined);
      }, hint);
      assert.deepEqual(split.versions, (await timeline(repo, head, 'a.py', 'python', qname, 140, MAX_BYTES)).versions, `${qname}: split`);
      assert.deepEqual(lanes, [undefined, (await firstEntry(repo)).blob]);
      // Other bytes, or a span that is not the holder's, and the walk parses as it would without.
      for (const wrong of [{ ...hint, sha256: sha256Hex('other bytes') }, { ...hint, outer: { start: hint.outer.start + 1, end: hint.outer.end } }, { ...hint, outer: { start: 0, end: newest.length + 10 } }]) {
        const t = await timeline(repo, head, 'a.py', 'python', qname, 500, MAX_BYTES, runner, wrong);
        assert.deepEqual(t.versions, plain.versions, `${qname}: ${JSON.stringify(wrong.outer)}`);
      }
    }
  } finally {
    await pool.close();
    repo.close();
  }
});

test('a log read to its end is kept: the same commit and path, with the same or a smaller bound, are listed without running git again', async () => {
  // A clone of its own, whose repository is taken away after the first reads.
  const copy = tempWorkspace();
  execFileSync('git', ['clone', '-q', root, copy], { env: gitEnv() });
  const repo = (await Repository.open(copy))!;
  const list = async (path: string, max: number) => {
    const out: string[] = [];
    for await (const e of repo.logEntries(head, path, max)) out.push(`${e.commit} ${e.blob}`);
    return out;
  };
  try {
    const whole = await list('a.py', 500);
    const bounded = await list('b.py', 10);
    assert.equal(whole.length, VERSIONS);
    renameSync(join(copy, '.git'), join(copy, 'gone'));
    assert.deepEqual(await list('a.py', 500), whole);
    assert.deepEqual(await list('a.py', 40), whole.slice(0, 40), 'a smaller bound: the first entries');
    assert.deepEqual(await list('a.py', 900), whole, 'a larger bound over a history read whole');
    assert.deepEqual(await list('b.py', 10), bounded);
    // A larger bound than a log stopped at needs git again, as does another path.
    await assert.rejects(list('b.py', 20));
    await assert.rejects(list('c.py', 10));
  } finally {
    repo.close();
    removeWorkspace(copy);
  }
});

async function firstEntry(repo: Repository): Promise<LogEntry> {
  for await (const e of repo.logEntries(head, 'a.py', 1)) return e;
  throw new Error('a.py has no history');
}

test('a log git cannot run fails the walk, and the first segment it had started ends (its worker walks on)', async () => {
  const repo = (await Repository.open(root))!;
  const pool = new WorkerPool({ size: 2 });
  try {
    const segments: Array<Promise<{ states: unknown[] }>> = [];
    const runner: SegmentRunner = (job, lane, ids) => {
      const segment = pool.walkSegment(job, lane, ids);
      segments.push(segment);
      return segment;
    };
    await assert.rejects(timeline(repo, 'no-such-revision', 'a.py', 'python', 'f', 500, MAX_BYTES, runner), /git log failed/);
    assert.equal(segments.length, 1, 'the first segment had started');
    // Its versions were ended (a segment left waiting for more would never answer).
    assert.deepEqual((await segments[0]).states, []);
    // The worker that held it answers the next walk.
    assert.deepEqual((await walked(repo, 'f', 500, runner)).kinds, (await walked(repo, 'f', 500)).kinds);
  } finally {
    await pool.close();
    repo.close();
  }
});

test('an edit inside the outermost declaration holding it is looked at by parsing that declaration alone, and a split one by parsing the file', async () => {
  // One change per version: inside f's body, inside C.m's body, or f split in two by a
  // `def g():` line inside its body (the part parsed alone then holds two declarations).
  const text = (i: number) => {
    const fBody = `    a = ${Math.floor(i / 3) % 5}\n${i % 6 === 2 ? 'def g():\n' : ''}    return a`;
    const mBody = `        return ${Math.floor((i + 2) / 3) % 4}`;
    return `import os\n\n\ndef f(x):\n${fBody}\n\n\nclass C:\n    def m(self):\n${mBody}\n\n    def n(self):\n        pass\n`;
  };
  const parts: string[] = [];
  for (let i = 0; i < 40; i++) {
    parts.push(`commit refs/heads/alone\nmark :${i + 1}\ncommitter Ada <ada@example.test> ${1_700_000_000 + i * 3600} +0000\ndata ${`w${i}`.length}\nw${i}\n`);
    if (i > 0) parts.push(`from :${i}\n`);
    parts.push(`M 100644 inline alone.py\ndata ${Buffer.byteLength(text(i))}\n${text(i)}\n`);
  }
  execFileSync('git', ['fast-import', '--quiet'], { cwd: root, env: gitEnv(), input: parts.join('') });
  const tip = execFileSync('git', ['rev-parse', 'alone'], { cwd: root, env: gitEnv(), encoding: 'utf8' }).trim();
  const repo = (await Repository.open(root))!;
  try {
    for (const qname of ['f', 'C.m', 'g']) {
      const t = await timeline(repo, tip, 'alone.py', 'python', qname, 100, MAX_BYTES);
      assert.deepEqual(t.versions.map((v) => `${v.kind} ${v.summary}`), await reference(repo, qname, 100, tip, 'alone.py'), qname);
      if (qname !== 'g') assert.ok(t.stats.alone > 0 && t.stats.alone < t.stats.parsed, `${qname}: ${t.stats.alone} of ${t.stats.parsed} parsed alone`);
    }
  } finally {
    repo.close();
  }
});

/** Commits `texts` (oldest first) of `path` on a new branch `ref`, one a version; returns its tip. */
function commitVersions(ref: string, path: string, texts: string[]): string {
  const parts: string[] = [];
  texts.forEach((text, i) => {
    parts.push(`commit refs/heads/${ref}\nmark :${i + 1}\ncommitter Ada <ada@example.test> ${1_700_000_000 + i * 3600} +0000\ndata ${`${ref}${i}`.length}\n${ref}${i}\n`);
    if (i > 0) parts.push(`from :${i}\n`);
    parts.push(`M 100644 inline ${path}\ndata ${Buffer.byteLength(text)}\n${text}\n`);
  });
  execFileSync('git', ['fast-import', '--quiet'], { cwd: root, env: gitEnv(), input: parts.join('') });
  return execFileSync('git', ['rev-parse', ref], { cwd: root, env: gitEnv(), encoding: 'utf8' }).trim();
}

/** Versions of a file made of parts, each commit changing two of them at random (seeded), so most edits reach past one declaration. */
function multiPlaceVersions(count: number, render: (state: number[]) => string, parts: number): string[] {
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  const state = new Array<number>(parts).fill(0);
  const texts: string[] = [];
  for (let i = 0; i < count; i++) {
    for (let k = 0; k < 2; k++) state[(next() >>> 12) % parts]++;
    texts.push(render(state));
  }
  return texts;
}

/**
 * Commits each case's versions (language, path, texts oldest first, names walked) on a branch of
 * its own (`prefix-language`) and checks every name's walk (bound 200) against parsing every
 * version whole; `check` sees each walk with what parsing whole expects.
 */
async function walkedAsReference(
  prefix: string,
  cases: Array<[LanguageId, string, string[], string[]]>,
  check: (language: LanguageId, qname: string, t: Timeline, expected: string[]) => void,
): Promise<void> {
  const repo = (await Repository.open(root))!;
  try {
    for (const [language, path, texts, names] of cases) {
      const tip = commitVersions(`${prefix}-${language}`, path, texts);
      for (const qname of names) {
        const t = await timeline(repo, tip, path, language, qname, 200, MAX_BYTES);
        const expected = await reference(repo, qname, 200, tip, path, language);
        assert.deepEqual(t.versions.map((v) => `${v.kind} ${v.summary}`), expected, `${language} ${qname}`);
        check(language, qname, t, expected);
      }
    }
  } finally {
    repo.close();
  }
}

test('edits reaching past the outermost declaration, or starting before it, are looked at by parsing it alone where it is found again, answering as parsing every version does', async () => {
  // Python: imports, a module-level `f` now and then declared above the real one (which then is
  // `f~2`), f's decorator, docs above it, its multi-line signature and its body, a comment at
  // column 0 after it, a class whose method changes (another `m` now and then declared above it),
  // a function after them. Go: a method with its doc comment, its receiver type and a function.
  const py = (s: number[]) => {
    const pick = (i: number, values: string[]) => values[s[i] % values.length];
    return [
      'import os\n'.repeat(1 + (s[0] % 3)),
      pick(1, ['', '', '', 'def f():\n    pass\n\n']),
      '\n',
      pick(2, ['', '# Docs for f.\n', '@cache\n']),
      `def f(\n    x,\n${pick(3, ['', '    y=None,\n'])}) -> int:\n    a = ${s[4] % 5}\n${pick(5, ['', '    # trailing note\n'])}    return a\n`,
      pick(6, ['', '\n# A comment at the top level.\n']),
      `\n\nclass C:\n${pick(9, ['', '', '    def m(self):\n        return -1\n\n'])}    def m(self):\n        return ${s[7] % 4}\n\n    def n(self):\n        pass\n`,
      `\n\ndef g():\n    return ${s[8] % 3}\n`,
    ].join('');
  };
  const go = (s: number[]) => {
    const pick = (i: number, values: string[]) => values[s[i] % values.length];
    return [
      `package p\n\nimport "os"\n${pick(0, ['', 'import "io"\n'])}\ntype Command struct {\n\tName string\n${pick(1, ['', '\tArgs []string\n'])}}\n\n`,
      pick(2, ['', '// Run runs it.\n']),
      `func (c *Command) Run(${pick(3, ['', 'x int'])}) error {\n\tn := ${s[4] % 5}\n\t_ = n\n\treturn nil\n}\n\n`,
      `func helper() int {\n\treturn ${s[5] % 4}\n}\n`,
    ].join('');
  };
  // TypeScript and Java: a class whose method changes inside and around it (a decorator or an
  // annotation, its parameters, a comment in its body, another `m` now and then declared above it).
  const ts = (s: number[]) => {
    const pick = (i: number, values: string[]) => values[s[i] % values.length];
    return [
      `import { a } from './a';\n${pick(0, ['', "import { b } from './b';\n"])}\n`,
      `export class Box {\n  private x = ${s[1] % 3};\n\n`,
      pick(2, ['', '', '  m(): number {\n    return -1;\n  }\n\n']),
      pick(3, ['', '  @log\n']),
      `  m(${pick(4, ['', 'y: number'])}): number {\n    const a = ${s[5] % 5};\n${pick(6, ['', '    // note\n'])}    return a;\n  }\n\n`,
      `  n(): void {\n    return;\n  }\n}\n\n`,
      `export function g(): number {\n  return ${s[7] % 3};\n}\n`,
    ].join('');
  };
  const java = (s: number[]) => {
    const pick = (i: number, values: string[]) => values[s[i] % values.length];
    return [
      `package p;\n\nimport java.util.List;\n${pick(0, ['', 'import java.util.Map;\n'])}\n`,
      `public class Box {\n  private int x = ${s[1] % 3};\n\n`,
      pick(2, ['', '', '  int m(String s) {\n    return -1;\n  }\n\n']),
      pick(3, ['', '  @Override\n']),
      `  int m(${pick(4, ['', 'int y'])}) {\n    int a = ${s[5] % 5};\n${pick(6, ['', '    // note\n'])}    return a;\n  }\n\n`,
      `  void n() {\n  }\n}\n`,
    ].join('');
  };
  const alone = new Map<LanguageId, number>();
  await walkedAsReference(
    'multi',
    [
      ['python', 'multi.py', multiPlaceVersions(120, py, 10), ['f', 'C.m', 'C.n', 'g']],
      ['go', 'multi.go', multiPlaceVersions(120, go, 6), ['Command.Run', 'helper', 'Command']],
      ['typescript', 'multi.ts', multiPlaceVersions(120, ts, 8), ['Box.m', 'Box.n', 'g']],
      ['java', 'Multi.java', multiPlaceVersions(120, java, 7), ['Box.m', 'Box.n']],
    ],
    (language, qname, t, expected) => {
      // C.n and Box.n never change after they are introduced; the others do, often.
      assert.ok(expected.length > (qname.endsWith('.n') ? 0 : 5), `${language} ${qname} has a history: ${expected.join(", ")}`);
      alone.set(language, (alone.get(language) ?? 0) + t.stats.alone);
    },
  );
  for (const [language, n] of alone) assert.ok(n > 20, `${language}: ${n} versions parsed alone`);
});

test('a method whose edit starts before it (its class, or the file above) is parsed by its own lines where it and its holders are found again, unless a holder is closed, reopened or renamed before it or a same-named one is added', async () => {
  // Each commit changes two parts, so most edits of the method start above it: the imports, a
  // function before the class, the class's header or a field. Now and then a part closes the
  // class before the method and opens another (the method is then another class's), declares
  // another method of its name above it, or decorates it.
  const py = (s: number[]) => {
    const pick = (i: number, values: string[]) => values[s[i] % values.length];
    return [
      'import os\n'.repeat(1 + (s[0] % 3)),
      `\n\ndef f():\n    return ${s[1] % 4}\n\n\n`,
      pick(2, ['class C:\n', 'class C:\n', 'class C(Base):\n']),
      `    limit = ${s[3] % 5}\n\n`,
      pick(4, ['', '', '', '    def m(self):\n        return -1\n\n', 'class D:\n    pass\n\n']),
      pick(5, ['', '', '    @cache\n']),
      `    def m(self${pick(7, ['', ', x=None'])}):\n        return ${s[6] % 4}\n\n`,
      `    class Inner:\n        size = ${s[8] % 3}\n\n        def k(self):\n            return ${s[9] % 5}\n\n    def n(self):\n        pass\n`,
    ].join('');
  };
  const ts = (s: number[]) => {
    const pick = (i: number, values: string[]) => values[s[i] % values.length];
    return [
      `import { a } from './a';\n${pick(0, ['', "import { b } from './b';\n"])}\n`,
      `function f(): number {\n  return ${s[1] % 4};\n}\n\n`,
      pick(2, ['export class Box {\n', 'export class Box {\n', 'export class Box extends Base {\n']),
      `  private x = ${s[3] % 5};\n\n`,
      pick(4, ['', '', '', '  m(): number {\n    return -1;\n  }\n\n', '}\n\nclass D {\n']),
      pick(5, ['', '', '  @log\n']),
      `  m(${pick(7, ['', 'y: number'])}): number {\n    return ${s[6] % 4};\n  }\n\n  n(): void {\n    return;\n  }\n}\n`,
    ].join('');
  };
  const java = (s: number[]) => {
    const pick = (i: number, values: string[]) => values[s[i] % values.length];
    return [
      `package p;\n\nimport java.util.List;\n${pick(0, ['', 'import java.util.Map;\n'])}\n`,
      pick(2, ['public class Box {\n', 'public class Box {\n', 'public class Box extends Base {\n']),
      `  private int x = ${s[3] % 5};\n\n  static int f() {\n    return ${s[1] % 4};\n  }\n\n`,
      pick(4, ['', '', '', '  int m(String s) {\n    return -1;\n  }\n\n', '}\n\nclass D {\n']),
      pick(5, ['', '', '  @Override\n']),
      `  int m(${pick(7, ['', 'int y'])}) {\n    return ${s[6] % 4};\n  }\n\n  void n() {\n  }\n}\n`,
    ].join('');
  };
  await walkedAsReference(
    'held',
    [
      ['python', 'held.py', multiPlaceVersions(160, py, 10), ['C.m', 'C.Inner.k', 'D.m', 'C.n']],
      ['typescript', 'held.ts', multiPlaceVersions(160, ts, 8), ['Box.m', 'D.m', 'Box.n']],
      ['java', 'Held.java', multiPlaceVersions(160, java, 8), ['Box.m', 'D.m', 'Box.n']],
    ],
    (language, qname, t, expected) => {
      assert.ok(expected.length > 2, `${language} ${qname} has a history: ${expected.join(', ')}`);
      // The methods that change are parsed by their own lines often (a fifth of their parses at
      // least), mostly after an edit starting above them (the edits are seeded, see above).
      if ((qname.endsWith('.m') && !qname.startsWith('D')) || qname === 'C.Inner.k') assert.ok(t.stats.nested > t.stats.parsed / 5, `${language} ${qname}: ${t.stats.nested} of ${t.stats.parsed} parsed by its own lines`);
    },
  );
});

test('a walk on a thread that has not loaded the grammars loads them itself (a caller with no workers, or whose worker failed)', async () => {
  // A fresh process: nothing in it has parsed before the walk.
  const script = `
    import { Repository } from ${JSON.stringify(new URL('../../src/history/git.ts', import.meta.url).href)};
    import { timeline } from ${JSON.stringify(new URL('../../src/history/timeline.ts', import.meta.url).href)};
    const repo = await Repository.open(process.argv[1]);
    const t = await timeline(repo, process.argv[2], 'a.py', 'python', 'Box.m', 500, ${MAX_BYTES});
    repo.close();
    process.stdout.write(JSON.stringify(t.versions.map((v) => v.kind + ' ' + v.summary)));`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, root, head], { encoding: 'utf8' });
  const repo = (await Repository.open(root))!;
  try {
    assert.deepEqual(JSON.parse(out), await reference(repo, 'Box.m', 500));
  } finally {
    repo.close();
  }
});
