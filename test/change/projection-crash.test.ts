import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundled } from '../support/bundle.ts';
import { removeWorkspace, tempWorkspace, writeFiles } from '../helpers/workspace.ts';

// Publication under SIGKILL (issue 16, "Must show"): a process publishing projections through the
// real ProjectionService is killed at random instants, 200 times. Each publication rewrites files,
// creates files in new directories, and deletes files so that a directory empties and is pruned
// (rule 166). After each kill the next process starts (recovering what the dead one left) and the
// workspace is wholly the old tree or wholly the new one: every file at the same version, no file
// or directory stray or missing, no change in flight.

const KILLS = 200;
const FILES = 6;
const child = bundled(fileURLToPath(new URL('./fixtures/publish-loop.ts', import.meta.url)));

const text = (tag: string, i: number) => `${tag} version of file ${i}\n${`${i} filler\n`.repeat(20)}`;

/** Every file and every directory below `root`, `.rift` left out. */
function listTree(root: string, dir = '', out = { files: [] as string[], dirs: [] as string[] }): { files: string[]; dirs: string[] } {
  for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
    const p = dir ? `${dir}/${e.name}` : e.name;
    if (p === '.rift') continue;
    if (e.isDirectory()) {
      out.dirs.push(p);
      listTree(root, p, out);
    } else out.files.push(p);
  }
  return out;
}

/** The directories holding `files`, every ancestor included. */
function dirsOf(files: readonly string[]): string[] {
  const dirs = new Set<string>();
  for (const f of files) {
    const parts = f.split('/').slice(0, -1);
    for (let i = 1; i <= parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  }
  return [...dirs].sort();
}

function median(xs: number[]): number {
  if (xs.length === 0) return 100;
  const s = [...xs.slice(-32)].sort((a, b) => a - b);
  return s[s.length >> 1];
}

describe('projection crash safety', () => {
  test(`${KILLS} SIGKILLs during publish leave the workspace wholly old or wholly new`, async () => {
    const root = tempWorkspace();
    const spec = join(dirname(root), `${root.split('/').pop()}-publish.json`);
    const versions: Array<{ path: string; a: string | null; b: string | null }> = Array.from({ length: FILES }, (_, i) => ({
      path: `d${i % 3}/sub/f${i}.txt`,
      a: text('a', i),
      b: text('b', i),
    }));
    // From a to b: `gone/` empties and goes, `old.txt` goes, `made/deep/` comes; from b to a the reverse.
    versions.push({ path: 'gone/only.txt', a: 'the only file of gone/\n', b: null });
    versions.push({ path: 'old.txt', a: 'deleted in b\n', b: null });
    versions.push({ path: 'made/deep/new.txt', a: null, b: 'created in b\nwith its directories\n' });
    const files: Record<string, string> = { 'rift.toml': '[search.text]\nexclude = ["*.txt"]\n' };
    for (const v of versions) if (v.a !== null) files[v.path] = v.a;
    const expected = (state: 'a' | 'b') => {
      const paths = ['rift.toml', ...versions.filter((v) => v[state] !== null).map((v) => v.path)].sort();
      return { files: paths, dirs: dirsOf(paths) };
    };
    writeFiles(root, files);
    writeFileSync(spec, JSON.stringify({ files: versions }));
    const check = (round: number) => {
      const states = versions.map((v) => {
        let now: string | null = null;
        try {
          now = readFileSync(join(root, v.path), 'utf8');
        } catch {
          // absent
        }
        // An absent file (null) is the version that has none.
        const state = now === v.a ? 'a' : now === v.b ? 'b' : 'torn';
        assert.notEqual(state, 'torn', `round ${round}: ${v.path} is neither wholly old nor wholly new`);
        return state;
      });
      assert.equal(new Set(states).size, 1, `round ${round}: a publication landed on some files only (${states.join('')})`);
      const tree = listTree(root);
      const want = expected(states[0] as 'a' | 'b');
      assert.deepEqual(tree.files.sort(), want.files, `round ${round}: stray or missing files`);
      assert.deepEqual(tree.dirs.sort(), want.dirs, `round ${round}: stray or missing directories`);
      const changes = join(root, '.rift', 'changes');
      assert.deepEqual(existsSync(changes) ? readdirSync(changes) : [], [], `round ${round}: recovery left a change directory`);
    };
    const cycle: number[] = [];
    let inFlight = 0;
    let flips = 0;
    let last = 'a';
    try {
      for (let r = 0; r <= KILLS; r++) {
        await new Promise<void>((resolve, reject) => {
          const p = spawn(process.execPath, [child, root, spec], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, RIFT_LOG: 'error' } });
          let err = '';
          let failure: unknown = null;
          let ready = false;
          let t = 0;
          p.stderr.on('data', (d: Buffer) => (err += d.toString()));
          p.stdout.on('data', (d: Buffer) => {
            if (!ready) {
              ready = true;
              try {
                check(r);
                const now = readFileSync(join(root, versions[0].path), 'utf8') === versions[0].a ? 'a' : 'b';
                if (now !== last) flips++;
                last = now;
              } catch (e) {
                failure = e;
                p.kill('SIGKILL');
                return;
              }
              if (r === KILLS) {
                p.kill('SIGKILL');
                return;
              }
              t = performance.now();
              p.stdin.write('go\n');
              // After the first publication's cost is known, kill anywhere inside a cycle.
              setTimeout(() => p.kill('SIGKILL'), Math.random() * 1.5 * median(cycle) + (r % 2) * median(cycle));
              return;
            }
            for (const c of d.toString()) {
              if (c !== '.') continue;
              const now = performance.now();
              cycle.push(now - t);
              t = now;
            }
          });
          p.on('exit', (_code, signal) => {
            if (existsSync(join(root, '.rift', 'changes')) && readdirSync(join(root, '.rift', 'changes')).length > 0) inFlight++;
            if (failure) reject(failure);
            else if (signal === 'SIGKILL') resolve();
            else reject(new Error(`the child exited on its own: ${err}`));
          });
        });
      }
    } finally {
      removeWorkspace(root);
      removeWorkspace(spec);
    }
    // The kills must have met publications in flight and publications that landed, or the run proved nothing.
    assert.ok(inFlight > 0, 'some kill landed inside a publication');
    assert.ok(flips > 0, 'some publication landed between kills');
  });
});
