// The environment a program rift runs for an untrusted caller starts with: only the variables a
// runtime needs to find programs, the user's home and locale, never the rest of rift's own
// environment (API keys, tokens, credentials helpers, RIFT_* settings). `execute` uses it.

const KEPT = new Set(['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'TERM', 'TZ']);
const LOCALE = /^LC_[A-Z_]+$/;

/** The variables of `env` a scrubbed run keeps. */
export function scrubbedEnvironment(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && (KEPT.has(k) || LOCALE.test(k))) out[k] = v;
  return out;
}
