import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { Repository } from '../../src/history/git.ts';
import { classify, locateDeclaration } from '../../src/history/classify.ts';
import { timeline, type SegmentRunner, type State } from '../../src/history/timeline.ts';
import { WorkerPool } from '../../src/index/pool.ts';
import { initSyntax, withTree } from '../../src/syntax/runtime.ts';
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
async function reference(repo: Repository, qname: string, max: number, from = head, path = 'a.py'): Promise<string[]> {
  const log = await repo.log(from, path, max + 1);
  const complete = log.length <= max;
  const states: State[] = [];
  for (const e of log) {
    const bytes = e.blob === null ? null : await repo.blob(e.blob);
    if (bytes === null) {
      states.push(null);
      continue;
    }
    const found = withTree('python', bytes, (tree, source) => locateDeclaration('python', tree, source, qname, null));
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

test('a long walk is split in halves walked in parse workers; a worker that fails leaves its half to the caller', async () => {
  const repo = (await Repository.open(root))!;
  const pool = new WorkerPool({ size: 2 });
  try {
    for (const qname of ['f', 'Box.m', 'Box.n']) {
      const inline = await walked(repo, qname, 500);
      const lanes: number[] = [];
      const inWorkers = await walked(repo, qname, 500, (job, lane) => {
        lanes.push(lane);
        return pool.walkSegment(job, lane);
      });
      assert.deepEqual(inWorkers.kinds, inline.kinds, qname);
      assert.deepEqual(lanes, [0, 1], 'two halves, side by side');
      const failing = await walked(repo, qname, 500, () => Promise.reject(new Error('worker gone')));
      assert.deepEqual(failing.kinds, inline.kinds, `${qname}: walked here when the worker fails`);
      // A short walk goes to one worker whole.
      const short: number[] = [];
      const bounded = await walked(repo, qname, 60, (job, lane) => {
        short.push(lane);
        return pool.walkSegment(job, lane);
      });
      assert.deepEqual(bounded.kinds, (await walked(repo, qname, 60)).kinds);
      assert.deepEqual(short, [0]);
    }
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
