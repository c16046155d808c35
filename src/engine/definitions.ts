import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { sha256Hex } from '../core/digest.ts';
import { ENGINE_READY_WAIT_MS } from '../core/limits.ts';
import type { LanguageEntry } from '../config/workspace-config.ts';
import { findOnPath } from '../process/programs.ts';

// Engine definitions: what to start for a language (`[languages.<id>].lsp`, docs/languages.md).
// Two engines ship with rift as npm dependencies and are started with this Node; the others are
// used when their program is on PATH. A definition names its root markers: the nearest directory
// holding one becomes the engine's root, and a file with none above it has no engine.

export interface EngineDefinition {
  /** The engine's name in results, warnings and states. */
  name: string;
  /** The program to run: an absolute path, or a name found on PATH. */
  command: string;
  args: string[];
  initializationOptions: Record<string, unknown>;
  rootMarkers: string[];
  readyTimeoutMs: number;
  /**
   * How diagnostics are obtained: `push` waits for textDocument/publishDiagnostics; `tsserver`
   * asks tsserver through typescript-language-server, which publishes nothing when a file's
   * diagnostics stay empty, so waiting for a push cannot tell "clean" from "not yet checked".
   */
  diagnostics: 'push' | 'tsserver';
}

interface Builtin {
  /** An npm package shipped with rift: its script runs under this Node. */
  npm?: { package: string; script: string };
  /** Otherwise a program looked up on PATH. */
  program?: string;
  args: string[];
  rootMarkers: string[];
  initializationOptions?: Record<string, unknown>;
  diagnostics?: 'tsserver';
}

// `{state}` in an argument expands to a per-engine directory under `.rift/engines/`.
const BUILTINS: Readonly<Record<string, Builtin>> = {
  'typescript-language-server': { npm: { package: 'typescript-language-server', script: 'lib/cli.mjs' }, args: ['--stdio'], rootMarkers: [], diagnostics: 'tsserver' },
  pyright: { npm: { package: 'pyright', script: 'langserver.index.js' }, args: ['--stdio'], rootMarkers: [] },
  gopls: { program: 'gopls', args: [], rootMarkers: ['go.work', 'go.mod'] },
  'rust-analyzer': { program: 'rust-analyzer', args: [], rootMarkers: ['Cargo.toml'] },
  jdtls: { program: 'jdtls', args: ['-data', '{state}'], rootMarkers: ['pom.xml', 'build.gradle', 'build.gradle.kts', 'settings.gradle', '.project'] },
};

/** The engine a built-in language uses when its entry names none. */
const DEFAULT_ENGINE: Readonly<Record<string, string>> = {
  typescript: 'typescript-language-server',
  tsx: 'typescript-language-server',
  javascript: 'typescript-language-server',
  python: 'pyright',
  go: 'gopls',
  rust: 'rust-analyzer',
  java: 'jdtls',
};

const require = createRequire(import.meta.url);

function npmScript(pkg: string, script: string): string | null {
  try {
    return join(dirname(require.resolve(`${pkg}/package.json`)), script);
  } catch {
    return null;
  }
}

export type Resolution = { definition: EngineDefinition } | { engine: string | null; reason: string };

/** Whether the user trusts a project's engine definition, asked by its `engineTrustKey`. */
export type EngineTrust = (key: string) => boolean;

/**
 * The trust-store key of a language's engine definition when the project chose what it runs —
 * a `command`, `args` or `initialization_options` (engines take programs to run from their
 * options too, e.g. tsserver's path) — else null: a built-in id, `lsp = false`, root markers and
 * a ready timeout only select or bound what rift itself runs. The key covers the whole
 * definition, so an edited one waits for trust again.
 */
export function engineTrustKey(entry: LanguageEntry): string | null {
  const l = entry.lsp;
  if (!l || (l.command === null && l.args === null && l.initialization_options === null)) return null;
  return `language-engine:${entry.id}:sha256:${sha256Hex(JSON.stringify(l))}`;
}

/** What a project's engine definition asks to run, for the trust question. */
export function engineTrustLine(entry: LanguageEntry): string {
  const l = entry.lsp || null;
  const program = l?.command ?? l?.engine ?? DEFAULT_ENGINE[entry.id] ?? entry.id;
  const line = [program, ...(l?.args ?? [])].join(' ');
  return `[languages.${entry.id}].lsp: \`${line}\`${l?.initialization_options ? ` with initialization_options ${JSON.stringify(l.initialization_options)}` : ''}`;
}

/**
 * The engine definition a language entry selects, or why it has none. A definition the project
 * chose (`engineTrustKey`) resolves only once the user trusts it: until then nothing is started.
 */
export function resolveDefinition(entry: LanguageEntry, trusted: EngineTrust): Resolution {
  if (entry.lsp === false) return { engine: null, reason: `[languages.${entry.id}] sets lsp = false` };
  const custom = entry.lsp;
  const base = custom ? custom.engine : (DEFAULT_ENGINE[entry.id] ?? null);
  if (custom === null && base === null) return { engine: null, reason: `no language engine is configured for ${entry.id} ([languages.${entry.id}].lsp)` };
  const builtin = base ? BUILTINS[base] : null;
  const name = base ?? custom!.command!;
  const key = engineTrustKey(entry);
  if (key !== null && !trusted(key)) {
    return {
      engine: name,
      reason: `${engineTrustLine(entry)} in rift.toml runs a program this machine has not trusted; run \`rift trust\` in the workspace to allow it`,
    };
  }
  let command: string;
  let args: string[];
  if (custom?.command) {
    const found = findOnPath(custom.command);
    if (!found) return { engine: name, reason: `${custom.command} was not found on PATH` };
    command = found;
    args = custom.args ?? (builtin && !builtin.npm ? builtin.args : []);
  } else if (builtin?.npm) {
    const script = npmScript(builtin.npm.package, builtin.npm.script);
    if (!script) return { engine: name, reason: `${builtin.npm.package} is not installed beside rift (npm ci installs it)` };
    command = process.execPath;
    args = [script, ...(custom?.args ?? builtin.args)];
  } else {
    // A definition without a command names a built-in engine (configuration validation).
    const program = builtin!.program!;
    const found = findOnPath(program);
    if (!found) return { engine: name, reason: `${program} was not found on PATH (docs/languages.md has install recipes)` };
    command = found;
    args = custom?.args ?? builtin!.args;
  }
  return {
    definition: {
      name,
      command,
      args,
      initializationOptions: custom?.initialization_options ?? builtin?.initializationOptions ?? {},
      rootMarkers: custom?.root_markers ?? builtin?.rootMarkers ?? [],
      readyTimeoutMs: custom?.ready_timeout ?? ENGINE_READY_WAIT_MS,
      diagnostics: builtin?.diagnostics ?? 'push',
    },
  };
}

/** The LSP `languageId` of a file in a rift language. */
export function lspLanguageId(language: string, path: string): string {
  if (language === 'tsx') return 'typescriptreact';
  if (language === 'javascript') return path.endsWith('.jsx') ? 'javascriptreact' : 'javascript';
  return language;
}
