import { createInterface } from 'node:readline';
import { resolve } from 'node:path';
import { pendingTrust, trustAnswered } from '../agent/extensions/project-trust.ts';
import { TrustStore } from '../agent/policy/trust.ts';
import { parse, WORKSPACE } from './args.ts';

// `rift trust [--workspace DIR] [--list]`: the trust questions `rift --serve` asks, on a
// terminal, for people who run the agent headless (`rift -p` never asks). Each item is one
// trust/skip question; only `trust` (or y/yes) persists anything.

export async function runTrust(argv: readonly string[]): Promise<number> {
  const { values } = parse(argv, { ...WORKSPACE, list: { type: 'boolean' } }, 0);
  const cwd = resolve(values.workspace ?? '.');
  const store = TrustStore.user();
  const requests = pendingTrust(cwd, store);
  const out = (s: string) => process.stdout.write(s);
  if (requests.length === 0) {
    out(`nothing in ${cwd} waits for trust\n`);
    return 0;
  }
  const show = (i: number) => {
    const r = requests[i];
    out(`\n${i + 1}. ${r.question}\n${r.detail.map((d) => `   ${d}`).join('\n')}\n`);
  };
  if (values.list || !process.stdin.isTTY) {
    requests.forEach((_, i) => show(i));
    if (!values.list) {
      process.stderr.write('\nrift trust: answer these on a terminal (stdin is not one); nothing was trusted\n');
      return 1;
    }
    return 0;
  }
  const rl = createInterface({ input: process.stdin, terminal: false });
  // Lines typed ahead stay queued for the next question; end of input skips the rest (fail-safe).
  const lines = rl[Symbol.asyncIterator]();
  try {
    for (let i = 0; i < requests.length; i++) {
      show(i);
      out('   trust / skip [skip]: ');
      const next = await lines.next();
      if (next.done) {
        out('\n   end of input: this and the rest are skipped\n');
        break;
      }
      if (!trustAnswered(next.value)) {
        out('   skipped\n');
        continue;
      }
      for (const k of requests[i].keys) store.add(k);
      out(`   trusted (recorded in ${store.path})\n`);
    }
  } finally {
    rl.close();
  }
  return 0;
}
