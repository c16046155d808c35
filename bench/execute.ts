// The execute benchmark: the execution copy's refresh and one evaluation's overhead, each beside
// a peer in the same run.
//
//   npx tsx bench/execute.ts [--no-write] [--tree DIR] [--runs N]
//
// Tree: a copy of the Python standard library (or --tree).
//   1. refresh of the execution copy (workspace/exec-copy.ts) from nothing, against
//      `cp -a --reflink=auto` of the same tree;
//   2. a warm refresh with nothing changed, and one after 10 files changed, against `cp -au`
//      (copies what is newer);
//   3. one `execute` of `javascript` printing one line, through the MCP SDK client over stdio
//      (median of N), against spawning `node -e` directly and under the same bubblewrap argv.
// Writes the `## Execute (bench/execute.ts)` section of docs/benchmarks.md unless --no-write.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, utimesSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultConfig } from '../src/config/workspace-config.ts';
import { probeSandbox, sandboxArgv } from '../src/process/sandbox.ts';
import { refreshExecutionCopy } from '../src/workspace/exec-copy.ts';
import { sourcePolicy } from '../src/workspace/visibility.ts';
import { connectRift, copyTree, fmtMs, forEachFile, median, pythonStdlibRoot, skipStdlibNoise, treeSize, writeSection } from './lib.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOC = join(ROOT, 'docs', 'benchmarks.md');
const HEADING = '## Execute (bench/execute.ts)';

const args = process.argv.slice(2);
const write = !args.includes('--no-write');
const flag = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const runs = Number(flag('--runs') ?? 20);

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

function timeCommand(cmd: string, argv: string[]): number {
  const start = process.hrtime.bigint();
  const r = spawnSync(cmd, argv, { stdio: 'ignore' });
  if (r.status !== 0) throw new Error(`${cmd} ${argv.slice(0, 3).join(' ')} failed: ${r.status}`);
  return ms(start);
}

const work = mkdtempSync(join(tmpdir(), 'rift-bench-exec-'));
const tree = join(work, 'tree');
copyTree(flag('--tree') ?? pythonStdlibRoot(), tree, skipStdlibNoise);
writeFileSync(join(tree, 'rift.toml'), '[execution]\nallow = ["javascript"]\n');
const size = treeSize(tree);
const policy = sourcePolicy(defaultConfig());
const copyDir = join(tree, '.rift', 'exec', 'workspace');
const manifest = join(tree, '.rift', 'exec', 'workspace.manifest.json');

let start = process.hrtime.bigint();
const cold = await refreshExecutionCopy(tree, tree, copyDir, manifest, policy);
const coldMs = ms(start);
const cpCold = timeCommand('cp', ['-a', '--reflink=auto', tree, join(work, 'cp-copy')]);

start = process.hrtime.bigint();
await refreshExecutionCopy(tree, tree, copyDir, manifest, policy);
const warmMs = ms(start);
const cpWarm = timeCommand('cp', ['-au', `${tree}/.`, join(work, 'cp-copy')]);

const touched: string[] = [];
forEachFile(tree, (p) => {
  if (touched.length < 10 && p.endsWith('.py')) touched.push(p);
});
const later = new Date(Date.now() + 5000);
for (const p of touched) {
  appendFileSync(p, '\n# edited\n');
  utimesSync(p, later, later);
}
start = process.hrtime.bigint();
const edited = await refreshExecutionCopy(tree, tree, copyDir, manifest, policy);
const editedMs = ms(start);
const cpEdited = timeCommand('cp', ['-au', `${tree}/.`, join(work, 'cp-copy')]);

const rift = await connectRift(tree, { standalone: true });
// The server indexes the tree at start; a resource read waits for the whole build, so the timed calls do not share the CPU with it.
await rift.client.readResource({ uri: 'rift://workspace' }, { timeout: 600_000 });
const call = { language: 'javascript', block: { source: 'console.log(1)' } };
const first = await rift.call('execute', call);
const sandbox = (first.sandbox as { kind: string }).kind;
const calls: number[] = [];
for (let i = 0; i < runs; i++) {
  start = process.hrtime.bigint();
  await rift.call('execute', call);
  calls.push(ms(start));
}
await rift.close();
const direct: number[] = [];
const wrapped: number[] = [];
const probe = probeSandbox();
for (let i = 0; i < runs; i++) {
  direct.push(timeCommand(process.execPath, ['-e', 'console.log(1)']));
  if (probe.available) wrapped.push(timeCommand(probe.binary!, sandboxArgv(probe.binary!, { writable: [copyDir], protected: [], network: false, cwd: copyDir }, [process.execPath, '-e', 'console.log(1)']).slice(1)));
}
rmSync(work, { recursive: true, force: true });

const body = `Tree: ${flag('--tree') ?? 'the Python standard library'}, ${size.files} files, ${(size.bytes / 1024 / 1024).toFixed(0)} MB (${cold.copied} copied: the visible ones). One run on this machine (2 cores, shared).

| step | rift | peer |
|---|---|---|
| first refresh of the execution copy | ${fmtMs(coldMs)} | \`cp -a --reflink=auto\`: ${fmtMs(cpCold)} |
| warm refresh, nothing changed | ${fmtMs(warmMs)} | \`cp -au\`: ${fmtMs(cpWarm)} |
| refresh after 10 files changed (${edited.copied} copied) | ${fmtMs(editedMs)} | \`cp -au\`: ${fmtMs(cpEdited)} |
| one \`execute\` of \`console.log(1)\` over MCP stdio (median of ${runs}; sandbox: ${sandbox}; refresh included) | ${fmtMs(median(calls))} | \`node -e\` spawned directly: ${fmtMs(median(direct))}${wrapped.length ? `; under the same bwrap argv: ${fmtMs(median(wrapped))}` : ''} |

The refresh walks the tree under the visibility rules and hashes only files whose stat changed
(each copied file is read once for \`snapshot.tree_revision\`); \`cp\` neither filters nor hashes.
`;
process.stdout.write(body);
if (write) writeSection(DOC, HEADING, body);
