import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// Writes an "always allow" answer into the user config's permissions.allow (and a "reject
// always" one into permissions.deny). Only the user file is ever written: allow rules are
// user-only (reference C.1).

export function persistRule(configDir: string, rule: string, list: 'allow' | 'deny'): void {
  const path = join(configDir, 'config.json');
  let cfg: Record<string, unknown> = {};
  if (existsSync(path)) {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`${path} does not hold a JSON object`);
    cfg = parsed as Record<string, unknown>;
  }
  const perms = (cfg.permissions && typeof cfg.permissions === 'object' ? cfg.permissions : {}) as Record<string, unknown>;
  const rules = Array.isArray(perms[list]) ? (perms[list] as unknown[]) : [];
  if (rules.includes(rule)) return;
  cfg.permissions = { ...perms, [list]: [...rules, rule] };
  mkdirSync(configDir, { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(cfg, null, 2)}\n`);
  renameSync(tmp, path);
}
