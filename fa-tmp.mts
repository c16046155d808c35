import { firstAnswer } from './bench/lib.ts';
import { cpSync, rmSync } from 'node:fs';
const which = process.argv[2];
for (let i = 0; i < 3; i++) {
  if (which !== '/tmp/tiny') { rmSync('/tmp/fa-sl', { recursive: true, force: true }); cpSync(which, '/tmp/fa-sl', { recursive: true }); }
  console.log(JSON.stringify(await firstAnswer('/work/main/bin/rift.js', which === '/tmp/tiny' ? which : '/tmp/fa-sl', process.argv[3])));
  await new Promise((r) => setTimeout(r, 1000));
}
