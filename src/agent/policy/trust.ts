import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { userDirs } from '../base/config.ts';

// The trust store (reference D, B.13): `trusted-hooks.json` in the user data folder, a JSON
// array of strings. Plugin manifests are keyed `plugin:<name>:<manifest text>`; project
// post-edit hooks by their raw command string. Only the user's own choices ever add to it.

export class TrustStore {
  constructor(readonly path: string) {}

  /** The store every front end shares: `<user data>/trusted-hooks.json`. */
  static user(env: NodeJS.ProcessEnv = process.env): TrustStore {
    return new TrustStore(join(userDirs(env).data, 'trusted-hooks.json'));
  }

  private read(): string[] {
    try {
      const v = JSON.parse(readFileSync(this.path, 'utf8')) as unknown;
      return Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];
    } catch {
      return [];
    }
  }

  has(key: string): boolean {
    return this.read().includes(key);
  }

  add(key: string): void {
    const keys = this.read();
    if (keys.includes(key)) return;
    keys.push(key);
    mkdirSync(dirname(this.path), { recursive: true });
    const tmp = `${this.path}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(keys, null, 2)}\n`);
    renameSync(tmp, this.path);
  }
}

/**
 * Whether the user's trust store holds `key`, read afresh at each question, so a `rift trust` in
 * another process counts at once (servers ask it before starting a project's language engine).
 */
export function userTrusts(key: string): boolean {
  return TrustStore.user().has(key);
}
