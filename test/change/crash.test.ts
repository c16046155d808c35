import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundled } from '../support/bundle.ts';
import { removeWorkspace, tempWorkspace, writeFiles } from '../helpers/workspace.ts';

// Crash safety through the journal (issue 10, "Must show"): a process applying changes through
// the real ChangeService is SIGKILLed at random instants, 200 times per scenario — multi-file
// patches, move_file, and patches whose transform hook rewrites every file — over trees whose
// file count and path depth vary. After each kill the next process starts (recovering what the
// dead one left), and every file is wholly old or wholly new: all of one change or none of it,
// nothing lost, nothing stray, no change directory left behind.

const KILLS = 200;
const CONFIGS = [
  { files: 1, depth: 1, lines: 4 },
  { files: 4, depth: 3, lines: 40 },
  { files: 8, depth: 6, lines: 4 },
  { files: 16, depth: 2, lines: 1200 },
];
const child = bundled(fileURLToPath(new URL('./fixtures/change-loop.ts', import.meta.url)));
const PATH = `${dirname(process.execPath)}:${process.env.PATH ?? ''}`;

// Rewrites each file it is handed in upper case, in two halves with a pause between, so a kill
// can leave a file torn mid-hook: recovery must still bring back a whole one. (perl starts in a
// few milliseconds, where node would dominate the run.)
const UPPER = 'for $p (@ARGV) { open F, "<", $p; local $/; $t = uc <F>; close F; $h = int(length($t) / 2); open F, ">", $p; print F substr($t, 0, $h); close F; select(undef, undef, undef, 0.002); open F, ">>", $p; print F substr($t, $h); close F }';
// The files stay out of the full-text index: re-indexing megabytes of text after each change
// would make up most of a change's time, and the kills are about publication, not indexing.
const CONFIG = '[search.text]\nexclude = ["*.txt"]\n';
const HOOK = `[[hooks]]\nid = "upper"\nrole = "transform"\nkind = "format"\nprogram = "perl"\narguments = ["-e", '${UPPER}']\nchanged_paths = "append"\ninclude = ["*.txt"]\n`;

type Scenario = 'patch' | 'hooks' | 'move';

/** Version `tag` of file `i`: a first line naming both, then filler the hook's upper-casing leaves alone. */
function text(tag: string, i: number, lines: number): string {
  let s = `${tag} version of file ${i}\n`;
  for (let k = 1; k < lines; k++) s += `${i}:${k} ${'0123456789'.repeat(6)}\n`;
  return s;
}

function dirs(depth: number, side: string): string {
  return Array.from({ length: depth }, (_, d) => `${side}${d}`).join('/');
}

interface Tree {
  root: string;
  spec: string;
  check: (round: number) => void;
}

function makeTree(scenario: Scenario, config: (typeof CONFIGS)[number]): Tree {
  const root = tempWorkspace();
  const spec = join(dirname(root), `${root.split('/').pop()}-spec.json`);
  const files: Record<string, string> = {};
  if (scenario === 'move') {
    const homes = Array.from({ length: config.files }, (_, i) => ({ left: `${dirs(config.depth, 'l')}/f${i}.txt`, right: `${dirs(config.depth, 'r')}/f${i}.txt`, bytes: text('m', i, config.lines) }));
    for (const h of homes) files[h.left] = h.bytes;
    files['rift.toml'] = CONFIG;
    writeFiles(root, files);
    writeFileSync(spec, JSON.stringify({ scenario, files: homes.map(({ left, right }) => ({ left, right })) }));
    return {
      root,
      spec,
      check(round) {
        const found = listFiles(root).sort();
        const expected = ['rift.toml'];
        for (const h of homes) {
          const at = [h.left, h.right].filter((p) => existsSync(join(root, p)));
          assert.equal(at.length, 1, `round ${round}: ${h.left} is in ${at.length} places`);
          assert.equal(readFileSync(join(root, at[0]), 'utf8'), h.bytes, `round ${round}: ${at[0]} lost bytes`);
          expected.push(at[0]);
        }
        assert.deepEqual(found, expected.sort(), `round ${round}: stray or missing files`);
      },
    };
  }
  const versions = Array.from({ length: config.files }, (_, i) => ({ path: `${dirs(config.depth, 'd')}/f${i}.txt`, a: text('a', i, config.lines), b: text('b', i, config.lines) }));
  const shown = (s: string) => (scenario === 'hooks' ? s.toUpperCase() : s);
  for (const v of versions) files[v.path] = shown(v.a);
  files['rift.toml'] = scenario === 'hooks' ? CONFIG + HOOK : CONFIG;
  writeFiles(root, files);
  writeFileSync(spec, JSON.stringify({ scenario, files: versions }));
  return {
    root,
    spec,
    check(round) {
      const states = versions.map((v) => {
        const now = readFileSync(join(root, v.path), 'utf8');
        const state = now === shown(v.a) ? 'a' : now === shown(v.b) ? 'b' : 'torn';
        assert.notEqual(state, 'torn', `round ${round}: ${v.path} is neither wholly old nor wholly new`);
        return state;
      });
      assert.equal(new Set(states).size, 1, `round ${round}: one change landed on some files only (${states.join('')})`);
      assert.deepEqual(listFiles(root).sort(), Object.keys(files).sort(), `round ${round}: stray or missing files`);
    },
  };
}

/** Every file below the root, `.rift` excepted. */
function listFiles(root: string, dir = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
    const p = dir ? `${dir}/${e.name}` : e.name;
    if (p === '.rift') continue;
    if (e.isDirectory()) out.push(...listFiles(root, p));
    else out.push(p);
  }
  return out;
}

/** What a kill left: nothing, a change directory (killed while staging), or its intent record too (mid-publication or mid-hook). */
function leftover(root: string): 'none' | 'staging' | 'intent' {
  const dir = join(root, '.rift', 'changes');
  if (!existsSync(dir) || readdirSync(dir).length === 0) return 'none';
  return readdirSync(dir).some((id) => existsSync(join(dir, id, 'intent.json'))) ? 'intent' : 'staging';
}

/**
 * Starts a child, waits until it has recovered, runs `check`, lets it change the tree, and
 * kills it at a random instant of a change cycle: after `after` changes completed, plus a
 * uniform share of the cycle time measured so far (`cycle`, updated in place).
 */
function round(tree: Tree, check: () => void, kill: { after: number; cycle: number[] } | null): Promise<void> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [child, tree.root, tree.spec], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, PATH, RIFT_LOG: 'error' } });
    let err = '';
    let failure: unknown = null;
    let ready = false;
    let done = 0;
    let last = 0;
    const arm = () => setTimeout(() => p.kill('SIGKILL'), Math.random() * 1.5 * median(kill!.cycle));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.stdout.on('data', (d: Buffer) => {
      if (!ready) {
        ready = true;
        try {
          check();
          assert.deepEqual(existsSync(join(tree.root, '.rift', 'changes')) ? readdirSync(join(tree.root, '.rift', 'changes')) : [], [], 'recovery left a change directory');
        } catch (e) {
          failure = e;
          p.kill('SIGKILL');
          return;
        }
        if (kill === null) {
          p.kill('SIGKILL');
          return;
        }
        last = performance.now();
        p.stdin.write('go\n');
        if (kill.after === 0) arm();
        return;
      }
      for (const c of d.toString()) {
        if (c !== '.') continue;
        const now = performance.now();
        kill!.cycle.push(now - last);
        last = now;
        if (++done === kill!.after) arm();
      }
    });
    p.on('exit', (_code, signal) => {
      if (failure) reject(failure);
      else if (signal === 'SIGKILL') resolve();
      else reject(new Error(`the child exited on its own: ${err}`));
    });
  });
}

function median(xs: number[]): number {
  if (xs.length === 0) return 50;
  const s = [...xs.slice(-32)].sort((a, b) => a - b);
  return s[s.length >> 1];
}

/** Kill counts by what the kill interrupted. */
type Interrupted = Record<'none' | 'staging' | 'intent', number>;

async function killRuns(scenario: Scenario): Promise<Interrupted> {
  const seen: Interrupted = { none: 0, staging: 0, intent: 0 };
  const per = KILLS / CONFIGS.length;
  for (const config of CONFIGS) {
    const tree = makeTree(scenario, config);
    try {
      const cycle: number[] = [];
      for (let r = 0; r < per; r++) {
        if (r > 0) seen[leftover(tree.root)]++;
        await round(tree, () => tree.check(r), { after: r % 2, cycle });
      }
      seen[leftover(tree.root)]++;
      await round(tree, () => tree.check(per), null);
    } finally {
      removeWorkspace(tree.root);
      removeWorkspace(tree.spec);
    }
  }
  return seen;
}

describe('crash safety', () => {
  test(`${KILLS} SIGKILLs per scenario (patch, hooks, move_file) leave every change whole or absent`, async () => {
    const scenarios: Scenario[] = ['patch', 'hooks', 'move'];
    const seen = await Promise.all(scenarios.map((s) => killRuns(s)));
    // The kills must have met changes in flight, or recovery had nothing to prove.
    for (const [i, s] of scenarios.entries()) assert.ok(seen[i].staging + seen[i].intent > 0, `${s}: some kill landed inside a change (${JSON.stringify(seen[i])})`);
    assert.ok(seen.reduce((n, x) => n + x.intent, 0) > 0, `some kill landed after an intent record was written (${JSON.stringify(seen)})`);
  });
});
