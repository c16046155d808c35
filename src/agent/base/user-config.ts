import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// Writes an "always allow" answer into the user config's permissions.allow. Only the user
// file is ever written: allow rules are user-only (reference C.1).

export function persistAllowRule(configDir: string, rule: string): void {
  const path = join(configDir, 'config.json');
  let cfg: Record<string, unknown> = {};
  if (existsSync(path)) {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`${path} does not hold a JSON object`);
    cfg = parsed as Record<string, unknown>;
  }
  const perms = (cfg.permissions && typeof cfg.permissions === 'object' ? cfg.permissions : {}) as Record<string, unknown>;
  const allow = Array.isArray(perms.allow) ? (perms.allow as unknown[]) : [];
  if (allow.includes(rule)) return;
  cfg.permissions = { ...perms, allow: [...allow, rule] };
  mkdirSync(configDir, { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(cfg, null, 2)}\n`);
  renameSync(tmp, path);
}
