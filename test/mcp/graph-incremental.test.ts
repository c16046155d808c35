import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sha256Hex, treeRevision } from '../../src/core/digest.ts';
import { startRift, type RiftMcp } from '../helpers/mcp.ts';
import { eventually, removeWorkspace, tempWorkspace } from '../helpers/workspace.ts';
import { allFiles } from './graph-fixtures.ts';

// The binding provider maintains its edges incrementally: an edit re-resolves the edited files'
// references and those elsewhere whose meaning it can change (names declared or re-exported, the
// members a changed base brings, fields whose stated type changed). Whatever it re-resolves, the
// edges must be the ones a fresh full build of the same tree yields. A live server follows a
// sequence of edit batches across languages; after each, a second server builds a copy of the
// tree from nothing, and every declaration's outgoing relationships are compared between the two.

type Hit = { hit: { symbol: { id: string } }; traversal_path: Array<{ relationship: { kind: string; derivation: string; to: string } }> };

/**
 * Beside the seven programs, one small program per kind of edit, each with names no other one
 * uses: what one edit marks for re-resolution cannot then cover for another edit's omission.
 * Each has a consumer in a file no edit touches, which must follow the edit.
 */
const EXTRA: Record<string, string> = {
  // TypeScript: a re-export that comes to name another module's Widget.
  'inc/ts/widget-a.ts': 'export class Widget {\n  spin(): number {\n    return 1;\n  }\n}\n',
  'inc/ts/widget-b.ts': 'export class Widget {\n  spin(): number {\n    return 2;\n  }\n}\n',
  'inc/ts/registry.ts': "export { Widget } from './widget-a';\n",
  'inc/ts/use-widget.ts': "import { Widget } from './registry';\n\nexport function useWidget(w: Widget): number {\n  return w.spin();\n}\n",
  // TSX: a field whose stated type changes.
  'inc/tsx/gears.tsx': 'export class Gear {\n  turn(): number { return 1; }\n}\n\nexport class Cog {\n  turn(): number { return 2; }\n}\n',
  'inc/tsx/holder.tsx': "import { Gear, Cog } from './gears';\n\nexport class Holder {\n  part: Gear = new Gear();\n}\n",
  'inc/tsx/crank.tsx': "import { Holder } from './holder';\n\nexport function crank(h: Holder): number {\n  return h.part.turn();\n}\n",
  // JavaScript: a call to a name its module does not declare yet.
  'inc/js/tools.js': 'export function hammer() {\n  return 1;\n}\n',
  'inc/js/shed.js': "import { chisel } from './tools.js';\n\nexport function carve() {\n  return chisel();\n}\n",
  // Python: a base class that changes; a package that comes to re-export another module's blend.
  'inc/py/__init__.py': '',
  'inc/py/motors.py': 'class Motor:\n    def rev(self):\n        return 1\n\n\nclass Turbine:\n    def rev(self):\n        return 2\n',
  'inc/py/engine.py': 'from .motors import Motor, Turbine\n\n\nclass Engine(Motor):\n    pass\n',
  'inc/py/drive.py': 'from .engine import Engine\n\n\ndef drive(e: Engine):\n    return e.rev()\n',
  'inc/py/blends/__init__.py': 'from .mild import blend\n',
  'inc/py/blends/mild.py': 'def blend():\n    return 1\n',
  'inc/py/blends/bold.py': 'def blend():\n    return 2\n',
  'inc/py/cafe.py': 'from .blends import blend\n\n\ndef brew():\n    return blend()\n',
  // Rust: an impl that goes away.
  'inc/rs/src/lib.rs': 'mod lamp;\nmod room;\n',
  'inc/rs/src/lamp.rs': 'pub trait Glow {\n    fn shine(&self) -> u32 {\n        1\n    }\n}\n\npub struct Lamp;\n\nimpl Glow for Lamp {}\n',
  'inc/rs/src/room.rs': 'use crate::lamp::Lamp;\n\npub fn light(l: &Lamp) -> u32 {\n    l.shine()\n}\n',
  // Go: an embedded type that changes.
  'inc/go/car/parts.go': 'package car\n\ntype Chassis struct{}\n\nfunc (c *Chassis) Weld() {}\n\ntype Frame struct{}\n\nfunc (f *Frame) Weld() {}\n',
  'inc/go/car/car.go': 'package car\n\ntype Car struct {\n\tChassis\n}\n',
  'inc/go/car/garage.go': 'package car\n\nfunc Service(c *Car) {\n\tc.Weld()\n}\n',
  // Java: a base class that changes.
  'inc/java/plant/Valve.java': 'package plant;\n\npublic class Valve {\n    public void press() {}\n}\n',
  'inc/java/plant/Piston.java': 'package plant;\n\npublic class Piston {\n    public void press() {}\n}\n',
  'inc/java/plant/Pump.java': 'package plant;\n\npublic class Pump extends Valve {\n}\n',
  'inc/java/plant/Station.java': 'package plant;\n\npublic class Station {\n    void operate(Pump p) {\n        p.press();\n    }\n}\n',
};

/** One edit: a file's text with `from` replaced by `to` (which must occur exactly once). */
type Edit = [path: string, from: string, to: string];

/**
 * Each batch names its followers: declarations in files the batch does not touch whose
 * relationships it changes. Unless the live graph follows, the comparison finds them; and that
 * they change at all shows the comparison is not between two unchanged graphs.
 */
const BATCHES: Array<{ name: string; edits: Edit[]; followers: string[] }> = [
  {
    name: "a re-export, a base class, an embedded type, a field's stated type, a call removed",
    edits: [
      ['inc/ts/registry.ts', "from './widget-a'", "from './widget-b'"],
      ['inc/py/engine.py', 'class Engine(Motor):', 'class Engine(Turbine):'],
      ['inc/go/car/car.go', '\tChassis\n', '\tFrame\n'],
      ['inc/tsx/holder.tsx', '  part: Gear = new Gear();', '  part: Cog = new Cog();'],
      ['go/store/store.go', '\thelper(key)\n', ''],
    ],
    followers: [
      'rift://symbol/typescript/inc/ts/use-widget.ts/useWidget',
      'rift://symbol/python/inc/py/drive.py/drive',
      'rift://symbol/go/inc/go/car/garage.go/Service',
      'rift://symbol/tsx/inc/tsx/crank.tsx/crank',
    ],
  },
  {
    name: 'a re-export back, a package re-export, a name declared later, an impl removed, a base class, calls added and removed',
    edits: [
      ['inc/ts/registry.ts', "from './widget-b'", "from './widget-a'"],
      ['inc/py/blends/__init__.py', 'from .mild import blend', 'from .bold import blend'],
      ['inc/js/tools.js', 'export function hammer() {', 'export function chisel() {\n  return hammer();\n}\n\nexport function hammer() {'],
      ['inc/rs/src/lamp.rs', 'impl Glow for Lamp {}\n', ''],
      ['inc/java/plant/Pump.java', 'extends Valve', 'extends Piston'],
      ['java/src/com/acme/App.java', '        store.find(1);\n', '        store.lookup(2);\n'],
      ['go/store/store.go', '\treturn s.lookup(key)\n', '\thelper(key)\n\treturn s.lookup(key)\n'],
    ],
    followers: [
      'rift://symbol/typescript/inc/ts/use-widget.ts/useWidget',
      'rift://symbol/python/inc/py/cafe.py/brew',
      'rift://symbol/javascript/inc/js/shed.js/carve',
      'rift://symbol/rust/inc/rs/src/room.rs/light',
      'rift://symbol/java/inc/java/plant/Station.java/Station.operate',
    ],
  },
];

function revisionOf(files: Record<string, string>): string {
  return treeRevision(
    Object.keys(files)
      .sort()
      .map((path) => ({ path, sha256: sha256Hex(files[path]) })),
  );
}

async function indexedRevision(rift: RiftMcp): Promise<string> {
  const r = await rift.client.readResource({ uri: 'rift://map' });
  return (JSON.parse((r.contents[0] as { text: string }).text) as { revision: string }).revision;
}

/**
 * Waits until `rift` has indexed exactly `files`; if it does not, fails naming the files whose
 * indexed digest differs (from rift://workspace) and the server's warnings.
 */
async function awaitIndexed(rift: RiftMcp, files: Record<string, string>): Promise<void> {
  const expected = revisionOf(files);
  try {
    await eventually(async () => ((await indexedRevision(rift)) === expected ? true : undefined), 120_000);
  } catch (e) {
    const r = await rift.client.readResource({ uri: 'rift://workspace' });
    const indexed = new Map((JSON.parse((r.contents[0] as { text: string }).text) as { source: Array<{ path: string; digest: string }> }).source.map((s) => [s.path, s.digest]));
    const differ = Object.keys(files)
      .filter((path) => indexed.get(path) !== sha256Hex(files[path]).slice(0, 8))
      .map((path) => `${path} (indexed ${indexed.get(path)}, on disk ${sha256Hex(files[path]).slice(0, 8)}, empty ${sha256Hex('').slice(0, 8)})`);
    const log = rift.stderr().split('\n').filter((l) => / (WARN|ERROR) /.test(l)).slice(-10).join(' | ');
    throw new Error(`${(e as Error).message}; indexed digests differ for ${JSON.stringify(differ)}; server log: ${log}`);
  }
}

/** Every declaration the server holds: its names all contain one of these characters. */
async function declarations(rift: RiftMcp): Promise<string[]> {
  const ids = new Set<string>();
  for (const ch of 'abcdefghijklmnopqrstuvwxyz_') {
    const r = (await rift.call('get_symbol', { name: ch, include: [], limit: 1000 })) as { hits: Array<{ symbol: { id: string } }>; pagination: { total_pages: number } };
    assert.equal(r.pagination.total_pages, 1);
    for (const h of r.hits) ids.add(h.symbol.id);
  }
  return [...ids].sort();
}

/**
 * A declaration's outgoing relationships as `kind derivation target` lines. A depth-1 walk
 * reports one hop per neighbour (the first kind in order), so the kinds that share a neighbour
 * with an earlier one (an import beside the call it explains, a reference beside a construction)
 * are walked on their own too.
 */
async function relationships(rift: RiftMcp, seed: string): Promise<string[]> {
  const lines = new Set<string>();
  for (const facets of [[], ['imports'], ['references']]) {
    const r = (await rift.call('search', { traversal: { seed, facets }, limit: 1000 })) as { results: Hit[] };
    for (const h of r.results) {
      const { kind, derivation, to } = h.traversal_path[0].relationship;
      assert.equal(to, h.hit.symbol.id);
      lines.add(`${kind} ${derivation} ${to}`);
    }
  }
  return [...lines].sort();
}

/** Runs `f` over `items`, a few at a time. */
async function pooled<T, R>(items: readonly T[], f: (item: T) => Promise<R>, width = 4): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await f(items[i]);
      }
    }),
  );
  return out;
}

/** The relationships of every declaration of a fresh build of `root`'s tree beside the live server's: the ones that differ. */
async function compareWithFreshBuild(root: string, files: Record<string, string>, live: RiftMcp) {
  const copy = tempWorkspace();
  cpSync(root, copy, { recursive: true, filter: (src) => !src.split('/').includes('.rift') });
  const fresh = await startRift(copy, {}, { standalone: true });
  try {
    await awaitIndexed(fresh, files);
    const seeds = await declarations(fresh);
    assert.deepEqual(await declarations(live), seeds);
    const [mine, built] = await Promise.all([pooled(seeds, (s) => relationships(live, s)), pooled(seeds, (s) => relationships(fresh, s))]);
    const differences = seeds
      .map((seed, i) => ({ seed, live: mine[i], fresh: built[i] }))
      .filter((d) => JSON.stringify(d.live) !== JSON.stringify(d.fresh))
      .map((d) => ({ seed: d.seed, only_live: d.live.filter((x) => !d.fresh.includes(x)), only_fresh: d.fresh.filter((x) => !d.live.includes(x)) }));
    return { seeds, differences };
  } finally {
    await fresh.close();
    removeWorkspace(copy);
  }
}

// The batches run in order over one live server (standalone: its graph is the one under test).
describe('incrementally maintained edges equal a fresh build', () => {
  const files: Record<string, string> = { ...allFiles(), ...EXTRA };
  const state = {} as { root: string; live: RiftMcp };
  before(async () => {
    state.root = tempWorkspace(files);
    state.live = await startRift(state.root, {}, { standalone: true });
    await awaitIndexed(state.live, files);
  });
  after(async () => {
    await state.live.close();
    removeWorkspace(state.root);
  });

  for (const [n, batch] of BATCHES.entries()) {
    test(`batch ${n + 1}: ${batch.name}`, async () => {
      const before = await pooled(batch.followers, (s) => relationships(state.live, s));
      for (const [path, from, to] of batch.edits) {
        assert.ok(!batch.followers.some((f) => f.includes(`/${path}/`)), `${path} holds no follower`);
        const text = readFileSync(join(state.root, path), 'utf8');
        assert.equal(text.split(from).length, 2, `${path}: the edit's anchor occurs once`);
        files[path] = text.replace(from, to);
        writeFileSync(join(state.root, path), files[path]);
      }
      await awaitIndexed(state.live, files);

      const { seeds, differences } = await compareWithFreshBuild(state.root, files, state.live);
      assert.deepEqual(differences, []);
      for (const [i, seed] of batch.followers.entries()) {
        assert.ok(seeds.includes(seed), seed);
        assert.notDeepEqual(await relationships(state.live, seed), before[i], `${seed} follows the batch`);
      }
    });
  }
});
