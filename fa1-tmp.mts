import { firstAnswer } from './bench/lib.ts';
import { cpSync, rmSync } from 'node:fs';
rmSync('/tmp/fa-sl', { recursive: true, force: true }); cpSync('/tmp/sl', '/tmp/fa-sl', { recursive: true });
const t0 = Date.now();
console.log(new Date(t0).toISOString(), JSON.stringify(await firstAnswer('/work/main/bin/rift.js', '/tmp/fa-sl', process.argv[2] ?? 'ArgumentParser')));
