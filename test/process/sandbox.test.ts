import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { probeSandbox, sandboxArgv } from '../../src/process/sandbox.ts';

// The sandbox's private /tmp hides the rest of /tmp, but a program that lives under /tmp (a
// server script in a checkout there, with its modules beside it) still runs, read-only.

const probe = probeSandbox();
const skip = probe.available ? false : `bubblewrap cannot sandbox commands on this machine: ${probe.reason}`;

test('a program under /tmp runs in the sandbox with its folder beside it, read-only; the rest of /tmp stays hidden', { skip }, () => {
  const checkout = mkdtempSync('/tmp/rift-sandbox-program-');
  const other = mkdtempSync('/tmp/rift-sandbox-other-');
  const work = mkdtempSync('/var/tmp/rift-sandbox-work-');
  try {
    mkdirSync(join(checkout, 'lib'));
    writeFileSync(join(checkout, 'lib', 'helper.mjs'), 'export const word = "beside";\n');
    writeFileSync(join(other, 'secret.txt'), 'hidden\n');
    writeFileSync(
      join(checkout, 'main.mjs'),
      [
        "import { existsSync, writeFileSync } from 'node:fs';",
        "import { word } from './lib/helper.mjs';",
        `console.log(word, existsSync(${JSON.stringify(join(other, 'secret.txt'))}));`,
        `try { writeFileSync(${JSON.stringify(join(checkout, 'out.txt'))}, 'x'); console.log('wrote'); } catch (e) { console.log(e.code); }`,
      ].join('\n'),
    );
    const argv = sandboxArgv(probe.binary!, { writable: [work], protected: [], network: false, cwd: work }, [process.execPath, join(checkout, 'main.mjs')]);
    const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.stdout.trim().split('\n'), ['beside false', 'EROFS']);
  } finally {
    for (const d of [checkout, other, work]) rmSync(d, { recursive: true, force: true });
  }
});
