// The workspace configuration, `rift.toml` at the workspace root (reference E, decisions.md).
//
// `parseConfig` turns the file's bytes into a typed, fully defaulted `WorkspaceConfig`, or throws
// one `configuration_invalid` RiftError naming the first violation. Validation order (documented
// in docs/configuration.md, and the order tests pin):
//
//   1. size (≤ CONFIG_BYTES_MAX) before anything else
//   2. UTF-8 decoding, then TOML syntax
//   3. unknown top-level keys, in file order
//   4. tables in this order: source, languages, providers.history, providers.binding,
//      search.text, search.semantic, logs, execution, hooks, projections
//   5. inside a table: its type, then unknown keys (file order), then the known keys in the
//      documented order; each key: type, then format, then bounds, then each element in order
//   6. languages: built-ins in their fixed order, then custom ids sorted; hooks: in list order,
//      a duplicate id is reported at the later hook after that hook's own keys pass
//
// Keys in the typed config mirror the TOML keys (snake_case) so a reader of the file can guess
// them. ByteSize values become bytes and Duration values become milliseconds.

import { parse, TomlDate, TomlError } from 'smol-toml';
import { resolve } from 'node:path';
import { sha256Hex } from '../core/digest.ts';
import { RiftError, type Evidence } from '../core/errors.ts';
import { GlobSet, patternViolation } from '../core/glob.ts';
import { CONFIG_BYTES_MAX, FILE_BYTES_MAX, HOOKS_MAX, SOURCE_PATTERNS_MAX, WORKSPACE_FILES_MAX } from '../core/limits.ts';
import { projectPathViolation } from '../core/path.ts';

export const CONFIG_FILE_NAME = 'rift.toml';

// ---------------------------------------------------------------------------------------------
// Types

export interface SourceConfig {
  include: string[];
  exclude: string[];
  respect_gitignore: boolean;
  /** Bytes. Larger files are skipped (not fatal). */
  max_file_bytes: number;
  /** Crossing it is `limit_exceeded` at index time. */
  max_files: number;
}

/**
 * An engine definition from `[languages.<id>].lsp`: a built-in engine by id (`lsp = "pyright"`),
 * optionally adjusted, or a custom one by command. Null fields take the built-in's values.
 */
export interface LspConfig {
  /** A built-in engine id (BUILTIN_ENGINE_IDS); null for a custom definition. */
  engine: string | null;
  /** Program found on PATH; null keeps the built-in's. */
  command: string | null;
  args: string[] | null;
  /** Sent as `initializationOptions`, TOML tables as JSON objects. */
  initialization_options: Record<string, unknown> | null;
  /** File names whose nearest directory becomes the engine's root; a file with none above it has no engine. */
  root_markers: string[] | null;
  /** Milliseconds an engine-backed change waits for the engine to confirm readiness. */
  ready_timeout: number | null;
}

export interface LanguageEntry {
  id: string;
  enabled: boolean;
  include: string[];
  exclude: string[];
  /** null: the language's built-in engine when one is found; false: no engine (`lsp = false`). */
  lsp: LspConfig | false | null;
  builtin: boolean;
}

export interface HistoryProviderConfig {
  enabled: boolean;
  max_revisions: number;
}

export interface BindingProviderConfig {
  enabled: boolean;
}

export interface SearchTextConfig {
  include: string[];
  exclude: string[];
}

export type EmbeddingProvider = 'ollama' | 'openai' | 'onnx';

export interface SearchSemanticConfig {
  enabled: boolean;
  /** The model's name on the embedding server, or (`onnx`) its directory on this machine. */
  model: string | null;
  /**
   * Which embedding API `url` speaks — Ollama's `/api/embed` or OpenAI-compatible
   * `/v1/embeddings` — or `onnx`: the model runs in this process (no `url`).
   */
  provider: EmbeddingProvider;
  /** The embedding server's base URL (`http://127.0.0.1:11434`). */
  url: string;
}

/** The absolute directory of an in-process (`onnx`) embedding model; null for the other providers. */
export function semanticModelDir(root: string, c: SearchSemanticConfig): string | null {
  return c.provider === 'onnx' && c.model !== null ? resolve(root, c.model) : null;
}

/**
 * The trust-store key of an in-process embedding model: the project's rift.toml chose files
 * this machine loads and runs, so they wait for the user's trust, per directory.
 */
export function semanticModelTrustKey(root: string, c: SearchSemanticConfig): string | null {
  const dir = semanticModelDir(root, c);
  return dir === null ? null : `semantic-model:sha256:${sha256Hex(dir)}`;
}

export type LogLevel = 'error' | 'warn' | 'info' | 'debug' | 'trace';

export interface LogsConfig {
  capture: LogLevel;
  page_records: number;
  retention_records: number;
}

export interface ExecutionConfig {
  allow: string[];
  /** Bytes. */
  max_code: number;
  /** Milliseconds. */
  max_timeout: number;
  /** Bytes per captured stream. */
  max_output: number;
  max_concurrent: number;
}

export type HookRole = 'transform' | 'validation';
export type HookKind = 'test' | 'lint' | 'build' | 'format' | 'other';
export type ChangedPathsMode = 'none' | 'append';

export interface HookGuarantee {
  kind: string;
  detail: string;
}

export interface HookConfig {
  id: string;
  program: string;
  role: HookRole;
  kind: HookKind;
  arguments: string[];
  changed_paths: ChangedPathsMode;
  /** Project path relative to the tree root; "" is the root. */
  working_directory: string;
  environment: Record<string, string>;
  timeout_ms: number;
  output_limit_bytes: number;
  /** The hook runs only when a changed path matches (empty = always). */
  include: string[];
  exclude: string[];
  guarantees: HookGuarantee[];
}

export interface ProjectionsConfig {
  max_dependencies: number;
  /** Bytes. */
  max_dependency_bytes: number;
}

export interface WorkspaceConfig {
  source: SourceConfig;
  /** Effective entries: built-ins first in their fixed order, then custom ones sorted by id. */
  languages: LanguageEntry[];
  providers: { history: HistoryProviderConfig; binding: BindingProviderConfig };
  search: { text: SearchTextConfig; semantic: SearchSemanticConfig };
  logs: LogsConfig;
  execution: ExecutionConfig;
  hooks: HookConfig[];
  projections: ProjectionsConfig;
}

// ---------------------------------------------------------------------------------------------
// Defaults and bounds

export const BUILTIN_LANGUAGE_PATTERNS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  typescript: Object.freeze(['*.ts', '*.mts', '*.cts']),
  tsx: Object.freeze(['*.tsx']),
  javascript: Object.freeze(['*.js', '*.mjs', '*.cjs', '*.jsx']),
  python: Object.freeze(['*.py', '*.pyi']),
  rust: Object.freeze(['*.rs']),
  go: Object.freeze(['*.go']),
  java: Object.freeze(['*.java']),
});

/** Language engines rift knows how to start; `lsp = "<id>"` selects one. */
export const BUILTIN_ENGINE_IDS: readonly string[] = Object.freeze(['typescript-language-server', 'pyright', 'gopls', 'rust-analyzer', 'jdtls']);

/** Built-in language ids in their fixed order. */
export const BUILTIN_LANGUAGE_IDS: readonly string[] = Object.freeze(Object.keys(BUILTIN_LANGUAGE_PATTERNS));

export const DEFAULT_SOURCE_EXCLUDE: readonly string[] = Object.freeze(['node_modules/', 'target/', '.venv/', '__pycache__/']);

export const LOG_LEVELS: readonly LogLevel[] = Object.freeze(['error', 'warn', 'info', 'debug', 'trace']);
export const HOOK_ROLES: readonly HookRole[] = Object.freeze(['transform', 'validation']);
export const HOOK_KINDS: readonly HookKind[] = Object.freeze(['test', 'lint', 'build', 'format', 'other']);
export const CHANGED_PATHS_MODES: readonly ChangedPathsMode[] = Object.freeze(['none', 'append']);

const KB = 1024;
const MB = 1024 * KB;
const GB = 1024 * MB;
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Bounds of every ranged key, inclusive. Units: bytes for ByteSize keys, ms for Duration keys. */
export const CONFIG_BOUNDS = Object.freeze({
  pattern_list_entries: SOURCE_PATTERNS_MAX,
  source_max_file_bytes: [KB, 64 * MB],
  source_max_files: [1, 1_000_000],
  history_max_revisions: [1, 100_000],
  logs_page_records: [1, 1000],
  logs_retention_records: [1, 1_000_000],
  execution_allow_entries: 64,
  execution_max_code: [1, 32 * KB],
  execution_max_timeout: [1, DAY],
  execution_max_output: [0, 16 * KB],
  execution_max_concurrent: [1, 64],
  hooks_entries: HOOKS_MAX,
  hook_arguments_entries: 64,
  hook_environment_entries: 64,
  hook_timeout_ms: [1, 3_600_000],
  hook_output_limit_bytes: [256, 4096],
  hook_guarantees_entries: 16,
  lsp_args_entries: 64,
  lsp_root_markers_entries: 16,
  lsp_ready_timeout: [0, 10 * MINUTE],
  projections_max_dependencies: [1, 1_000_000],
  projections_max_dependency_bytes: [KB, GB],
} as const);

export function defaultConfig(): WorkspaceConfig {
  return {
    source: {
      include: [],
      exclude: [...DEFAULT_SOURCE_EXCLUDE],
      respect_gitignore: true,
      max_file_bytes: FILE_BYTES_MAX,
      max_files: WORKSPACE_FILES_MAX,
    },
    languages: BUILTIN_LANGUAGE_IDS.map((id) => ({
      id,
      enabled: true,
      include: [...BUILTIN_LANGUAGE_PATTERNS[id]],
      exclude: [],
      lsp: null,
      builtin: true,
    })),
    providers: {
      history: { enabled: true, max_revisions: 500 },
      binding: { enabled: true },
    },
    search: {
      text: { include: ['**'], exclude: [] },
      semantic: { enabled: false, model: null, provider: 'ollama', url: 'http://127.0.0.1:11434' },
    },
    logs: { capture: 'info', page_records: 200, retention_records: 10_000 },
    execution: { allow: [], max_code: 16 * KB, max_timeout: 30 * SECOND, max_output: 8 * KB, max_concurrent: 2 },
    hooks: [],
    projections: { max_dependencies: 4096, max_dependency_bytes: 512 * KB },
  };
}

// ---------------------------------------------------------------------------------------------
// Unit strings

const BYTE_SIZE = /^(0|[1-9][0-9]*)(b|kb|mb|gb|tb)$/;
const DURATION = /^(0|[1-9][0-9]*)(ms|s|m|h|d)$/;

const BYTE_UNITS: ReadonlyArray<readonly [string, bigint]> = [
  ['tb', 1024n ** 4n],
  ['gb', 1024n ** 3n],
  ['mb', 1024n ** 2n],
  ['kb', 1024n],
  ['b', 1n],
];
const DURATION_UNITS: ReadonlyArray<readonly [string, bigint]> = [
  ['d', 86_400_000n],
  ['h', 3_600_000n],
  ['m', 60_000n],
  ['s', 1000n],
  ['ms', 1n],
];

function parseUnit(text: string, re: RegExp, units: ReadonlyArray<readonly [string, bigint]>): bigint | null {
  const m = re.exec(text);
  if (!m) return null;
  const factor = units.find(([u]) => u === m[2])![1];
  return BigInt(m[1]) * factor;
}

function formatUnit(value: number, units: ReadonlyArray<readonly [string, bigint]>): string {
  const v = BigInt(value);
  for (const [u, f] of units) if (v !== 0n && v % f === 0n) return `${v / f}${u}`;
  return `${v}${units[units.length - 1][0]}`;
}

/** `"16kb"` → 16384 (binary units). Null when the text is not a ByteSize or exceeds 2^53. */
export function parseByteSize(text: string): number | null {
  const v = parseUnit(text, BYTE_SIZE, BYTE_UNITS);
  return v === null || v > BigInt(Number.MAX_SAFE_INTEGER) ? null : Number(v);
}

/** `"30s"` → 30000 (milliseconds). Null when the text is not a Duration or exceeds 2^53. */
export function parseDuration(text: string): number | null {
  const v = parseUnit(text, DURATION, DURATION_UNITS);
  return v === null || v > BigInt(Number.MAX_SAFE_INTEGER) ? null : Number(v);
}

/** Canonical rendering with the largest exact unit: 16384 → `"16kb"`, 0 → `"0b"`. */
export function formatByteSize(bytes: number): string {
  return formatUnit(bytes, BYTE_UNITS);
}

/** Canonical rendering with the largest exact unit: 30000 → `"30s"`, 0 → `"0ms"`. */
export function formatDuration(ms: number): string {
  return formatUnit(ms, DURATION_UNITS);
}

// ---------------------------------------------------------------------------------------------
// Errors

function invalid(field: string, violation: string, ...more: Array<readonly [string, string | number]>): RiftError {
  const evidence: Evidence = [['field', field], ['violation', violation], ...more];
  return new RiftError('configuration_invalid', evidence);
}

// ---------------------------------------------------------------------------------------------
// TOML value access

type TomlValue = unknown;
type Table = Record<string, TomlValue>;

function typeName(v: TomlValue): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'bigint') return 'integer';
  if (typeof v === 'number') return 'float';
  if (typeof v === 'boolean') return 'boolean';
  if (v instanceof TomlDate || v instanceof Date) return 'datetime';
  if (Array.isArray(v)) return 'array';
  return 'table';
}

function isTable(v: TomlValue): v is Table {
  return typeName(v) === 'table' && v !== null && typeof v === 'object';
}

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

function childPath(prefix: string, key: string): string {
  const k = BARE_KEY.test(key) ? key : JSON.stringify(key);
  return prefix === '' ? k : `${prefix}.${k}`;
}

function wrongType(field: string, expected: string, v: TomlValue): RiftError {
  return invalid(field, 'wrong_type', ['expected', expected], ['found', typeName(v)]);
}

function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

type Render = (n: bigint) => string;
const plain: Render = (n) => n.toString();
const bytesRender: Render = (n) => formatUnit(Number(n), BYTE_UNITS);
const msRender: Render = (n) => formatUnit(Number(n), DURATION_UNITS);

/**
 * Reads one TOML table. Construction rejects unknown keys (file order); each read method checks
 * type, format and bounds of one key, so the order of calls is the validation order.
 */
class TableReader {
  readonly path: string;
  private readonly table: Table;

  constructor(table: Table, path: string, known: readonly string[]) {
    this.table = table;
    this.path = path;
    for (const key of Object.keys(table)) {
      if (!known.includes(key)) throw invalid(childPath(path, key), 'unknown_key');
    }
  }

  static open(value: TomlValue, path: string, known: readonly string[]): TableReader {
    if (!isTable(value)) throw wrongType(path, 'table', value);
    return new TableReader(value, path, known);
  }

  field(key: string): string {
    return childPath(this.path, key);
  }

  has(key: string): boolean {
    return Object.prototype.hasOwnProperty.call(this.table, key);
  }

  raw(key: string): TomlValue {
    return this.has(key) ? this.table[key] : undefined;
  }

  require(key: string): void {
    if (!this.has(key)) throw invalid(this.field(key), 'missing_key');
  }

  bool(key: string, fallback: boolean): boolean {
    if (!this.has(key)) return fallback;
    const v = this.table[key];
    if (typeof v !== 'boolean') throw wrongType(this.field(key), 'boolean', v);
    return v;
  }

  integer(key: string, fallback: number, [min, max]: readonly [number, number]): number {
    if (!this.has(key)) return fallback;
    const v = this.table[key];
    if (typeof v !== 'bigint') throw wrongType(this.field(key), 'integer', v);
    checkRange(this.field(key), v, v.toString(), min, max, plain);
    return Number(v);
  }

  private unit(
    key: string,
    fallback: number,
    [min, max]: readonly [number, number],
    re: RegExp,
    units: ReadonlyArray<readonly [string, bigint]>,
    kind: 'byte_size' | 'duration',
    render: Render,
  ): number {
    if (!this.has(key)) return fallback;
    const v = this.table[key];
    const expected = kind === 'byte_size' ? 'byte size string' : 'duration string';
    if (typeof v !== 'string') throw wrongType(this.field(key), expected, v);
    const n = parseUnit(v, re, units);
    if (n === null) throw invalid(this.field(key), `${kind}_invalid`, ['value', v]);
    checkRange(this.field(key), n, v, min, max, render);
    return Number(n);
  }

  byteSize(key: string, fallback: number, bounds: readonly [number, number]): number {
    return this.unit(key, fallback, bounds, BYTE_SIZE, BYTE_UNITS, 'byte_size', bytesRender);
  }

  duration(key: string, fallback: number, bounds: readonly [number, number]): number {
    return this.unit(key, fallback, bounds, DURATION, DURATION_UNITS, 'duration', msRender);
  }

  /** A string key; `undefined` when absent. */
  string(key: string): string | undefined {
    if (!this.has(key)) return undefined;
    const v = this.table[key];
    if (typeof v !== 'string') throw wrongType(this.field(key), 'string', v);
    return v;
  }

  choice<T extends string>(key: string, allowed: readonly T[], fallback: T): T {
    const v = this.string(key);
    if (v === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(v)) {
      throw invalid(this.field(key), 'value_not_allowed', ['value', v], ['allowed', allowed.join('|')]);
    }
    return v as T;
  }

  /** An array, bounded in length; each element is handed to `each` with its indexed field path. */
  array<T>(key: string, maxEntries: number, each: (v: TomlValue, field: string) => T): T[] | undefined {
    if (!this.has(key)) return undefined;
    const v = this.table[key];
    const field = this.field(key);
    if (!Array.isArray(v)) throw wrongType(field, 'array', v);
    if (v.length > maxEntries) throw countOutOfRange(field, v.length, maxEntries);
    return v.map((e, i) => each(e, `${field}[${i}]`));
  }

  strings(key: string, maxEntries: number, check?: (s: string, field: string) => void): string[] | undefined {
    return this.array(key, maxEntries, (e, field) => {
      if (typeof e !== 'string') throw wrongType(field, 'string', e);
      check?.(e, field);
      return e;
    });
  }

  patterns(key: string): string[] | undefined {
    return this.strings(key, SOURCE_PATTERNS_MAX, checkPattern);
  }
}

function checkRange(field: string, n: bigint, shown: string, min: number, max: number, render: Render): void {
  if (n < BigInt(min) || n > BigInt(max)) {
    throw invalid(field, 'limit_out_of_range', ['value', shown], ['range', `${render(BigInt(min))}..${render(BigInt(max))}`]);
  }
}

function countOutOfRange(field: string, count: number, max: number): RiftError {
  return invalid(field, 'limit_out_of_range', ['count', count], ['range', `0..${max}`]);
}

function checkPattern(pattern: string, field: string): void {
  const violation = patternViolation(pattern);
  if (violation) throw invalid(field, 'path_pattern_invalid', ['pattern', pattern], ['reason', violation]);
}

function hasNul(s: string): boolean {
  return s.includes('\u0000');
}

// ---------------------------------------------------------------------------------------------
// Tables

const TOP_LEVEL_KEYS = ['source', 'languages', 'providers', 'search', 'logs', 'execution', 'hooks', 'projections'];
const SOURCE_KEYS = ['include', 'exclude', 'respect_gitignore', 'max_file_bytes', 'max_files'];
const LANGUAGE_KEYS = ['enabled', 'include', 'exclude', 'lsp'];
const LSP_KEYS = ['engine', 'command', 'args', 'initialization_options', 'root_markers', 'ready_timeout'];
const PROVIDERS_KEYS = ['history', 'binding'];
const HISTORY_KEYS = ['enabled', 'max_revisions'];
const BINDING_KEYS = ['enabled'];
const SEARCH_KEYS = ['text', 'semantic'];
const SEARCH_TEXT_KEYS = ['include', 'exclude'];
const SEARCH_SEMANTIC_KEYS = ['enabled', 'model', 'provider', 'url'];
const LOGS_KEYS = ['capture', 'page_records', 'retention_records'];
const EXECUTION_KEYS = ['allow', 'max_code', 'max_timeout', 'max_output', 'max_concurrent'];
const HOOK_KEYS = [
  'id',
  'program',
  'role',
  'kind',
  'arguments',
  'changed_paths',
  'working_directory',
  'environment',
  'timeout_ms',
  'output_limit_bytes',
  'include',
  'exclude',
  'guarantees',
];
const GUARANTEE_KEYS = ['kind', 'detail'];
const PROJECTIONS_KEYS = ['max_dependencies', 'max_dependency_bytes'];

const LANGUAGE_ID = /^[a-z][a-z0-9._-]{0,63}$/;
const ENGINE_ID = /^[A-Za-z0-9._-]{1,64}$/;
const HOOK_ID = /^[A-Za-z0-9._-]{1,64}$/;
const MODEL_ID = /^[A-Za-z0-9._/:-]{1,128}$/;
/** A model directory: 1..1024 characters, no control characters. */
const modelDirValid = (v: string) => v.length >= 1 && v.length <= 1024 && ![...v].some((c) => c < ' ' || c === '\x7f');

/** An `http:` or `https:` URL without credentials (they would end up in logs). */
function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.username === '' && u.password === '';
  } catch {
    return false;
  }
}
const SELECTOR_PART = '[a-z0-9][a-z0-9._+-]{0,63}';
const LANGUAGE_SELECTOR = new RegExp(`^${SELECTOR_PART}(?::${SELECTOR_PART})?$`);

/** Absolute or platform-specific program paths: `/x`, `\x`, `C:…`, any backslash. */
export function isAbsoluteProgram(program: string): boolean {
  return program.startsWith('/') || /^[A-Za-z]:/.test(program) || program.includes('\\');
}

function readSource(value: TomlValue | undefined, d: SourceConfig): SourceConfig {
  if (value === undefined) return d;
  const t = TableReader.open(value, 'source', SOURCE_KEYS);
  return {
    include: t.patterns('include') ?? d.include,
    exclude: t.patterns('exclude') ?? d.exclude,
    respect_gitignore: t.bool('respect_gitignore', d.respect_gitignore),
    max_file_bytes: t.byteSize('max_file_bytes', d.max_file_bytes, CONFIG_BOUNDS.source_max_file_bytes),
    max_files: t.integer('max_files', d.max_files, CONFIG_BOUNDS.source_max_files),
  };
}

function readLanguages(value: TomlValue | undefined, defaults: LanguageEntry[]): LanguageEntry[] {
  if (value === undefined) return defaults;
  if (!isTable(value)) throw wrongType('languages', 'table', value);
  const custom = Object.keys(value)
    .filter((id) => !BUILTIN_LANGUAGE_IDS.includes(id))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const out: LanguageEntry[] = [];
  for (const d of defaults) {
    const has = Object.prototype.hasOwnProperty.call(value, d.id);
    out.push(has ? readLanguage(value[d.id], d.id, d) : d);
  }
  for (const id of custom) {
    const field = childPath('languages', id);
    if (!LANGUAGE_ID.test(id)) throw invalid(field, 'language_id_invalid', ['id', id]);
    out.push(readLanguage(value[id], id, null));
  }
  return out;
}

function readLanguage(value: TomlValue, id: string, d: LanguageEntry | null): LanguageEntry {
  const t = TableReader.open(value, childPath('languages', id), LANGUAGE_KEYS);
  const enabled = t.bool('enabled', d?.enabled ?? true);
  let include: string[];
  if (d) {
    include = t.patterns('include') ?? d.include;
  } else {
    t.require('include');
    include = t.patterns('include')!;
    if (include.length === 0) throw invalid(t.field('include'), 'language_include_empty');
  }
  const exclude = t.patterns('exclude') ?? d?.exclude ?? [];
  const lsp = t.has('lsp') ? readLsp(t.raw('lsp'), t.field('lsp')) : (d?.lsp ?? null);
  return { id, enabled, include, exclude, lsp, builtin: d !== null };
}

function checkEngineId(value: string, field: string): string {
  if (!ENGINE_ID.test(value)) throw invalid(field, 'engine_id_invalid', ['value', value]);
  if (!BUILTIN_ENGINE_IDS.includes(value)) {
    throw invalid(field, 'engine_unknown', ['value', value], ['allowed', BUILTIN_ENGINE_IDS.join('|')]);
  }
  return value;
}

/** `lsp = false`, `lsp = "<engine id>"`, or a `[languages.<id>.lsp]` table. */
function readLsp(value: TomlValue, field: string): LspConfig | false {
  if (value === false) return false;
  if (typeof value === 'string') {
    return { engine: checkEngineId(value, field), command: null, args: null, initialization_options: null, root_markers: null, ready_timeout: null };
  }
  if (!isTable(value)) throw wrongType(field, 'string, false or table', value);
  const t = new TableReader(value, field, LSP_KEYS);
  const engineText = t.string('engine');
  const engine = engineText === undefined ? null : checkEngineId(engineText, t.field('engine'));
  const command = t.string('command') ?? null;
  if (command === null && engine === null) throw invalid(field, 'engine_command_missing');
  if (command !== null) {
    if (command.trim().length === 0) throw invalid(t.field('command'), 'engine_command_empty');
    if (isAbsoluteProgram(command) || command.includes('/')) throw invalid(t.field('command'), 'engine_command_not_a_name', ['command', command]);
    if (hasNul(command)) throw invalid(t.field('command'), 'nul_character');
  }
  const args =
    t.strings('args', CONFIG_BOUNDS.lsp_args_entries, (s, f) => {
      if (hasNul(s)) throw invalid(f, 'nul_character');
    }) ?? null;
  let initialization_options: Record<string, unknown> | null = null;
  if (t.has('initialization_options')) {
    const raw = t.raw('initialization_options');
    if (!isTable(raw)) throw wrongType(t.field('initialization_options'), 'table', raw);
    initialization_options = toJson(raw) as Record<string, unknown>;
  }
  const root_markers =
    t.strings('root_markers', CONFIG_BOUNDS.lsp_root_markers_entries, (s, f) => {
      if (s.length === 0 || s.includes('/') || s.includes('\\') || s === '.' || s === '..' || hasNul(s)) {
        throw invalid(f, 'root_marker_invalid', ['value', s]);
      }
    }) ?? null;
  const ready_timeout = t.has('ready_timeout') ? t.duration('ready_timeout', 0, CONFIG_BOUNDS.lsp_ready_timeout) : null;
  return { engine, command, args, initialization_options, root_markers, ready_timeout };
}

/** A TOML value as plain JSON: integers become numbers, dates ISO strings. */
function toJson(v: TomlValue): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof TomlDate || v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return v.map(toJson);
  if (isTable(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, e] of Object.entries(v)) Object.defineProperty(out, k, { value: toJson(e), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return v;
}

function readProviders(value: TomlValue | undefined, d: WorkspaceConfig['providers']): WorkspaceConfig['providers'] {
  if (value === undefined) return d;
  const p = TableReader.open(value, 'providers', PROVIDERS_KEYS);
  let history = d.history;
  if (p.has('history')) {
    const t = TableReader.open(p.raw('history'), 'providers.history', HISTORY_KEYS);
    history = {
      enabled: t.bool('enabled', d.history.enabled),
      max_revisions: t.integer('max_revisions', d.history.max_revisions, CONFIG_BOUNDS.history_max_revisions),
    };
  }
  let binding = d.binding;
  if (p.has('binding')) {
    const t = TableReader.open(p.raw('binding'), 'providers.binding', BINDING_KEYS);
    binding = { enabled: t.bool('enabled', d.binding.enabled) };
  }
  return { history, binding };
}

function readSearch(value: TomlValue | undefined, d: WorkspaceConfig['search']): WorkspaceConfig['search'] {
  if (value === undefined) return d;
  const s = TableReader.open(value, 'search', SEARCH_KEYS);
  let text = d.text;
  if (s.has('text')) {
    const t = TableReader.open(s.raw('text'), 'search.text', SEARCH_TEXT_KEYS);
    text = { include: t.patterns('include') ?? d.text.include, exclude: t.patterns('exclude') ?? d.text.exclude };
  }
  let semantic = d.semantic;
  if (s.has('semantic')) {
    const t = TableReader.open(s.raw('semantic'), 'search.semantic', SEARCH_SEMANTIC_KEYS);
    const enabled = t.bool('enabled', d.semantic.enabled);
    const provider = t.choice('provider', ['ollama', 'openai', 'onnx'] as const, d.semantic.provider);
    const model = t.string('model');
    // For the in-process provider the model is a directory on this machine; for the others, a name.
    if (model !== undefined && (provider === 'onnx' ? !modelDirValid(model) : !MODEL_ID.test(model))) {
      throw invalid(t.field('model'), 'embedding_model_invalid', ['value', model]);
    }
    if (provider === 'onnx' && enabled && model === undefined) throw invalid(t.field('model'), 'embedding_model_required');
    const url = t.string('url');
    if (url !== undefined && !isHttpUrl(url)) throw invalid(t.field('url'), 'embedding_url_invalid', ['value', url]);
    semantic = { enabled, model: model ?? d.semantic.model, provider, url: url?.replace(/\/+$/, '') ?? d.semantic.url };
  }
  return { text, semantic };
}

function readLogs(value: TomlValue | undefined, d: LogsConfig): LogsConfig {
  if (value === undefined) return d;
  const t = TableReader.open(value, 'logs', LOGS_KEYS);
  return {
    capture: t.choice('capture', LOG_LEVELS, d.capture),
    page_records: t.integer('page_records', d.page_records, CONFIG_BOUNDS.logs_page_records),
    retention_records: t.integer('retention_records', d.retention_records, CONFIG_BOUNDS.logs_retention_records),
  };
}

function readExecution(value: TomlValue | undefined, d: ExecutionConfig): ExecutionConfig {
  if (value === undefined) return d;
  const t = TableReader.open(value, 'execution', EXECUTION_KEYS);
  const allow =
    t.strings('allow', CONFIG_BOUNDS.execution_allow_entries, (s, field) => {
      if (!LANGUAGE_SELECTOR.test(s)) throw invalid(field, 'language_selector_invalid', ['selector', s]);
    }) ?? d.allow;
  return {
    allow,
    max_code: t.byteSize('max_code', d.max_code, CONFIG_BOUNDS.execution_max_code),
    max_timeout: t.duration('max_timeout', d.max_timeout, CONFIG_BOUNDS.execution_max_timeout),
    max_output: t.byteSize('max_output', d.max_output, CONFIG_BOUNDS.execution_max_output),
    max_concurrent: t.integer('max_concurrent', d.max_concurrent, CONFIG_BOUNDS.execution_max_concurrent),
  };
}

function readHooks(value: TomlValue | undefined): HookConfig[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw wrongType('hooks', 'array of tables', value);
  if (value.length > HOOKS_MAX) throw countOutOfRange('hooks', value.length, HOOKS_MAX);
  const seen = new Set<string>();
  return value.map((entry, i) => {
    const hook = readHook(entry, `hooks[${i}]`);
    if (seen.has(hook.id)) throw invalid(`hooks[${i}].id`, 'hook_id_duplicate', ['id', hook.id]);
    seen.add(hook.id);
    return hook;
  });
}

function readHook(value: TomlValue, path: string): HookConfig {
  const t = TableReader.open(value, path, HOOK_KEYS);

  t.require('id');
  const id = t.string('id')!;
  if (!HOOK_ID.test(id)) throw invalid(t.field('id'), 'hook_id_invalid', ['id', id]);

  t.require('program');
  const program = t.string('program')!;
  if (program.trim().length === 0) throw invalid(t.field('program'), 'hook_program_empty', ['id', id]);
  if (isAbsoluteProgram(program)) {
    throw invalid(t.field('program'), 'hook_executable_absolute', ['id', id], ['program', program]);
  }
  if (hasNul(program)) throw invalid(t.field('program'), 'nul_character', ['id', id]);

  const role = t.choice('role', HOOK_ROLES, 'validation');
  const kind = t.choice('kind', HOOK_KINDS, 'other');
  const args =
    t.strings('arguments', CONFIG_BOUNDS.hook_arguments_entries, (s, field) => {
      if (hasNul(s)) throw invalid(field, 'nul_character', ['id', id]);
    }) ?? [];
  const changed_paths = t.choice('changed_paths', CHANGED_PATHS_MODES, 'none');

  const working_directory = t.string('working_directory') ?? '';
  if (working_directory !== '') {
    const violation = projectPathViolation(working_directory);
    if (violation) {
      throw invalid(t.field('working_directory'), 'project_path_invalid', ['value', working_directory], ['reason', violation]);
    }
  }

  const environment: Record<string, string> = {};
  if (t.has('environment')) {
    const envField = t.field('environment');
    const env = t.raw('environment');
    if (!isTable(env)) throw wrongType(envField, 'table', env);
    const keys = Object.keys(env);
    if (keys.length > CONFIG_BOUNDS.hook_environment_entries) {
      throw countOutOfRange(envField, keys.length, CONFIG_BOUNDS.hook_environment_entries);
    }
    for (const key of keys) {
      if (key.length === 0 || key.includes('=') || hasNul(key)) {
        throw invalid(envField, 'hook_environment_key_invalid', ['id', id], ['key', key]);
      }
      const v = env[key];
      const field = childPath(envField, key);
      if (typeof v !== 'string') throw wrongType(field, 'string', v);
      if (hasNul(v)) throw invalid(field, 'nul_character', ['id', id]);
      Object.defineProperty(environment, key, { value: v, enumerable: true, writable: true, configurable: true });
    }
  }

  const timeout_ms = t.integer('timeout_ms', 120_000, CONFIG_BOUNDS.hook_timeout_ms);
  const output_limit_bytes = t.integer('output_limit_bytes', 4096, CONFIG_BOUNDS.hook_output_limit_bytes);
  const include = t.patterns('include') ?? [];
  const exclude = t.patterns('exclude') ?? [];

  const guarantees =
    t.array('guarantees', CONFIG_BOUNDS.hook_guarantees_entries, (g, field) => {
      const gt = TableReader.open(g, field, GUARANTEE_KEYS);
      gt.require('kind');
      const gKind = gt.string('kind')!;
      const kindLength = codePoints(gKind);
      if (kindLength < 1 || kindLength > 64) {
        throw invalid(gt.field('kind'), 'limit_out_of_range', ['length', kindLength], ['range', '1..64']);
      }
      gt.require('detail');
      const detail = gt.string('detail')!;
      const detailLength = codePoints(detail);
      if (detailLength < 1 || detailLength > 1024) {
        throw invalid(gt.field('detail'), 'limit_out_of_range', ['length', detailLength], ['range', '1..1024']);
      }
      return { kind: gKind, detail };
    }) ?? [];

  return {
    id,
    program,
    role,
    kind,
    arguments: args,
    changed_paths,
    working_directory,
    environment,
    timeout_ms,
    output_limit_bytes,
    include,
    exclude,
    guarantees,
  };
}

function readProjections(value: TomlValue | undefined, d: ProjectionsConfig): ProjectionsConfig {
  if (value === undefined) return d;
  const t = TableReader.open(value, 'projections', PROJECTIONS_KEYS);
  return {
    max_dependencies: t.integer('max_dependencies', d.max_dependencies, CONFIG_BOUNDS.projections_max_dependencies),
    max_dependency_bytes: t.byteSize(
      'max_dependency_bytes',
      d.max_dependency_bytes,
      CONFIG_BOUNDS.projections_max_dependency_bytes,
    ),
  };
}

// ---------------------------------------------------------------------------------------------
// Entry point

function syntaxDetail(e: TomlError): string {
  const first = e.message.split('\n', 1)[0].replace(/^Invalid TOML document:\s*/, '');
  return `${first} at line ${e.line} column ${e.column}`;
}

/** Parse and validate the bytes of `rift.toml`. Throws `configuration_invalid` (RiftError). */
export function parseConfig(bytes: Uint8Array): WorkspaceConfig {
  if (bytes.byteLength > CONFIG_BYTES_MAX) {
    throw new RiftError('configuration_invalid', [
      ['file', CONFIG_FILE_NAME],
      ['bytes', bytes.byteLength],
      ['bytes_max', CONFIG_BYTES_MAX],
    ]);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new RiftError('configuration_invalid', [
      ['file', CONFIG_FILE_NAME],
      ['detail', 'the file is not valid UTF-8'],
    ]);
  }
  let doc: Table;
  try {
    // Integers always arrive as bigint, so `1.0` (a float) is told apart from `1` and large
    // integers never lose precision or throw.
    doc = parse(text, { integersAsBigInt: true }) as Table;
  } catch (e) {
    if (e instanceof TomlError) {
      throw new RiftError('configuration_invalid', [
        ['file', CONFIG_FILE_NAME],
        ['detail', syntaxDetail(e)],
      ]);
    }
    throw new RiftError('configuration_invalid', [
      ['file', CONFIG_FILE_NAME],
      ['detail', e instanceof Error ? e.message.split('\n', 1)[0] : String(e)],
    ]);
  }

  const top = new TableReader(doc, '', TOP_LEVEL_KEYS);
  const d = defaultConfig();
  const source = readSource(top.raw('source'), d.source);
  const languages = readLanguages(top.raw('languages'), d.languages);
  const providers = readProviders(top.raw('providers'), d.providers);
  const search = readSearch(top.raw('search'), d.search);
  const logs = readLogs(top.raw('logs'), d.logs);
  const execution = readExecution(top.raw('execution'), d.execution);
  const hooks = readHooks(top.raw('hooks'));
  const projections = readProjections(top.raw('projections'), d.projections);
  return { source, languages, providers, search, logs, execution, hooks, projections };
}

// ---------------------------------------------------------------------------------------------
// Language selection

interface CompiledLanguage {
  entry: LanguageEntry;
  include: GlobSet;
  exclude: GlobSet;
}

const compiledLanguages = new WeakMap<WorkspaceConfig, CompiledLanguage[]>();

function compileLanguages(config: WorkspaceConfig): CompiledLanguage[] {
  let compiled = compiledLanguages.get(config);
  if (!compiled) {
    compiled = config.languages
      .filter((entry) => entry.enabled)
      .map((entry) => ({ entry, include: new GlobSet(entry.include), exclude: new GlobSet(entry.exclude) }));
    compiledLanguages.set(config, compiled);
  }
  return compiled;
}

/**
 * The effective language entry of a project-relative file path: the first enabled entry whose
 * include matches and whose exclude does not, or null. Compiled GlobSets are cached per config
 * object, so treat configs as immutable.
 */
export function languageFor(config: WorkspaceConfig, path: string): LanguageEntry | null {
  for (const c of compileLanguages(config)) {
    if (c.include.matches(path) && !c.exclude.matches(path)) return c.entry;
  }
  return null;
}

/** Deep-freeze a config (the loader freezes what it hands out; callers must not mutate it). */
export function freezeConfig(config: WorkspaceConfig): WorkspaceConfig {
  const freeze = (v: unknown): void => {
    if (v === null || typeof v !== 'object' || Object.isFrozen(v)) return;
    Object.freeze(v);
    for (const k of Object.keys(v)) freeze((v as Record<string, unknown>)[k]);
  };
  freeze(config);
  return config;
}
