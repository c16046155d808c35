import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RiftError } from '../../src/core/errors.ts';
import { CONFIG_BYTES_MAX } from '../../src/core/limits.ts';
import {
  BUILTIN_LANGUAGE_IDS,
  BUILTIN_LANGUAGE_PATTERNS,
  defaultConfig,
  formatByteSize,
  formatDuration,
  languageFor,
  parseByteSize,
  parseConfig,
  parseDuration,
  type WorkspaceConfig,
} from '../../src/config/workspace-config.ts';

const enc = new TextEncoder();

function cfg(text: string): WorkspaceConfig {
  return parseConfig(enc.encode(text));
}

function failure(text: string | Uint8Array): RiftError {
  const bytes = typeof text === 'string' ? enc.encode(text) : text;
  try {
    parseConfig(bytes);
  } catch (e) {
    assert.ok(e instanceof RiftError, `expected RiftError, got ${String(e)}`);
    assert.equal(e.code, 'configuration_invalid');
    assert.equal(e.retry, 'operator_action');
    return e;
  }
  assert.fail(`expected configuration_invalid for:\n${typeof text === 'string' ? text : '<bytes>'}`);
}

function ev(e: RiftError): Record<string, string> {
  return Object.fromEntries(e.evidence.map(([k, v]) => [k, String(v)]));
}

/** Asserts the first violation names `field` with `violation` (and any extra evidence given). */
function bad(text: string, field: string, violation: string, extra: Record<string, string> = {}): RiftError {
  const e = failure(text);
  const got = ev(e);
  assert.equal(got.field, field, e.message);
  assert.equal(got.violation, violation, e.message);
  for (const [k, v] of Object.entries(extra)) assert.equal(got[k], v, e.message);
  assert.ok(e.message.startsWith(`the workspace configuration failed validation: field ${field}, violation ${violation}`), e.message);
  return e;
}

// ---------------------------------------------------------------------------------------------
// Defaults

test('an empty file yields exactly the defaults', () => {
  assert.deepEqual(cfg(''), defaultConfig());
  assert.deepEqual(cfg('# only a comment\n#:schema https://example.invalid/rift.schema.json\n'), defaultConfig());
});

test('defaults match the documented values', () => {
  const d = defaultConfig();
  assert.deepEqual(d.source, {
    include: [],
    exclude: ['node_modules/', 'target/', '.venv/', '__pycache__/'],
    respect_gitignore: true,
    max_file_bytes: 4 * 1024 * 1024,
    max_files: 200_000,
  });
  assert.deepEqual(
    d.languages.map((l) => l.id),
    ['typescript', 'tsx', 'javascript', 'python', 'rust', 'go', 'java'],
  );
  assert.deepEqual([...BUILTIN_LANGUAGE_IDS], d.languages.map((l) => l.id));
  assert.deepEqual(d.languages[0], {
    id: 'typescript',
    enabled: true,
    include: ['*.ts', '*.mts', '*.cts'],
    exclude: [],
    lsp: null,
    builtin: true,
  });
  assert.deepEqual(d.languages[2].include, ['*.js', '*.mjs', '*.cjs', '*.jsx']);
  assert.deepEqual(d.languages[3].include, ['*.py', '*.pyi']);
  for (const l of d.languages) assert.deepEqual(l.include, [...BUILTIN_LANGUAGE_PATTERNS[l.id]]);
  assert.deepEqual(d.providers, { history: { enabled: true, max_revisions: 500 }, binding: { enabled: true } });
  assert.deepEqual(d.search, { text: { include: ['**'], exclude: [] }, semantic: { enabled: false, model: null, provider: 'ollama', url: 'http://127.0.0.1:11434' } });
  assert.deepEqual(d.logs, { capture: 'info', page_records: 200, retention_records: 10_000 });
  assert.deepEqual(d.execution, { allow: [], max_code: 16384, max_timeout: 30_000, max_output: 8192, max_concurrent: 2 });
  assert.deepEqual(d.hooks, []);
  assert.deepEqual(d.projections, { max_dependencies: 4096, max_dependency_bytes: 512 * 1024 });
});

test('defaultConfig returns a fresh object each time', () => {
  const a = defaultConfig();
  a.source.exclude.push('x/');
  a.languages[0].include.push('*.x');
  assert.deepEqual(defaultConfig().source.exclude, ['node_modules/', 'target/', '.venv/', '__pycache__/']);
  assert.deepEqual(defaultConfig().languages[0].include, ['*.ts', '*.mts', '*.cts']);
});

// ---------------------------------------------------------------------------------------------
// Round trips

test('every key of every table round-trips', () => {
  const c = cfg(`
[source]
include = ["src/", "lib/**/*.ts"]
exclude = ["dist/"]
respect_gitignore = false
max_file_bytes = "1mb"
max_files = 5000

[languages.typescript]
enabled = false
include = ["*.ts"]
exclude = ["*.d.ts"]
lsp = "typescript-language-server"

[languages.markdown]
include = ["*.md", "README"]

[providers.history]
enabled = false
max_revisions = 42

[providers.binding]
enabled = false

[search.text]
include = ["src/**"]
exclude = ["*.lock"]

[search.semantic]
enabled = true
model = "minishlab/potion-retrieval-32M:v1"
provider = "openai"
url = "http://127.0.0.1:8080/"

[logs]
capture = "trace"
page_records = 1000
retention_records = 1

[execution]
allow = ["python", "typescript:tsx"]
max_code = "32kb"
max_timeout = "1d"
max_output = "0b"
max_concurrent = 64

[[hooks]]
id = "tests"
program = "npm"
role = "transform"
kind = "format"
arguments = ["run", "fmt"]
changed_paths = "append"
working_directory = "packages/app"
environment = { CI = "1", "NODE_OPTIONS" = "--no-warnings" }
timeout_ms = 3600000
output_limit_bytes = 256
include = ["*.ts"]
exclude = ["vendor/"]
guarantees = [{ kind = "formatted", detail = "prettier ran over the changed files" }]

[[hooks]]
id = "lint"
program = "./scripts/lint.sh"

[projections]
max_dependencies = 1000000
max_dependency_bytes = "1gb"
`);
  assert.deepEqual(c.source, {
    include: ['src/', 'lib/**/*.ts'],
    exclude: ['dist/'],
    respect_gitignore: false,
    max_file_bytes: 1024 * 1024,
    max_files: 5000,
  });
  assert.deepEqual(c.languages[0], {
    id: 'typescript',
    enabled: false,
    include: ['*.ts'],
    exclude: ['*.d.ts'],
    lsp: { engine: 'typescript-language-server', command: null, args: null, initialization_options: null, root_markers: null, ready_timeout: null },
    builtin: true,
  });
  assert.deepEqual(c.languages[1], defaultConfig().languages[1]);
  assert.deepEqual(c.languages.at(-1), {
    id: 'markdown',
    enabled: true,
    include: ['*.md', 'README'],
    exclude: [],
    lsp: null,
    builtin: false,
  });
  assert.deepEqual(c.providers, { history: { enabled: false, max_revisions: 42 }, binding: { enabled: false } });
  assert.deepEqual(c.search, {
    text: { include: ['src/**'], exclude: ['*.lock'] },
    semantic: { enabled: true, model: 'minishlab/potion-retrieval-32M:v1', provider: 'openai', url: 'http://127.0.0.1:8080' },
  });
  assert.deepEqual(c.logs, { capture: 'trace', page_records: 1000, retention_records: 1 });
  assert.deepEqual(c.execution, {
    allow: ['python', 'typescript:tsx'],
    max_code: 32 * 1024,
    max_timeout: 86_400_000,
    max_output: 0,
    max_concurrent: 64,
  });
  assert.deepEqual(c.hooks, [
    {
      id: 'tests',
      program: 'npm',
      role: 'transform',
      kind: 'format',
      arguments: ['run', 'fmt'],
      changed_paths: 'append',
      working_directory: 'packages/app',
      environment: { CI: '1', NODE_OPTIONS: '--no-warnings' },
      timeout_ms: 3_600_000,
      output_limit_bytes: 256,
      include: ['*.ts'],
      exclude: ['vendor/'],
      guarantees: [{ kind: 'formatted', detail: 'prettier ran over the changed files' }],
    },
    {
      id: 'lint',
      program: './scripts/lint.sh',
      role: 'validation',
      kind: 'other',
      arguments: [],
      changed_paths: 'none',
      working_directory: '',
      environment: {},
      timeout_ms: 120_000,
      output_limit_bytes: 4096,
      include: [],
      exclude: [],
      guarantees: [],
    },
  ]);
  assert.deepEqual(c.projections, { max_dependencies: 1_000_000, max_dependency_bytes: 1024 ** 3 });
});

test('setting source.exclude replaces the default list; omitting a key keeps its default', () => {
  assert.deepEqual(cfg('[source]\nexclude = []\n').source.exclude, []);
  assert.deepEqual(cfg('[source]\nexclude = ["out/"]\n').source.exclude, ['out/']);
  const c = cfg('[source]\nmax_files = 7\n');
  assert.deepEqual(c.source.exclude, ['node_modules/', 'target/', '.venv/', '__pycache__/']);
  assert.equal(c.source.max_file_bytes, 4 * 1024 * 1024);
});

test('custom languages are ordered by id after the built-ins', () => {
  const c = cfg('[languages.zig]\ninclude = ["*.zig"]\n[languages.markdown]\ninclude = ["*.md"]\n[languages.java]\nenabled = false\n');
  assert.deepEqual(
    c.languages.map((l) => `${l.id}:${l.builtin}:${l.enabled}`),
    [
      'typescript:true:true',
      'tsx:true:true',
      'javascript:true:true',
      'python:true:true',
      'rust:true:true',
      'go:true:true',
      'java:true:false',
      'markdown:false:true',
      'zig:false:true',
    ],
  );
});

test('a dotted language table is an unknown key inside the language entry', () => {
  bad('[languages.c.h]\ninclude = ["*.h"]\n', 'languages.c.h', 'unknown_key');
});

// ---------------------------------------------------------------------------------------------
// File-level failures

test('a file over 256 KiB is refused before parsing', () => {
  const bytes = new Uint8Array(CONFIG_BYTES_MAX + 1).fill(0x23); // '#' — would parse as a comment
  const e = failure(bytes);
  assert.deepEqual(e.evidence, [
    ['file', 'rift.toml'],
    ['bytes', CONFIG_BYTES_MAX + 1],
    ['bytes_max', 262144],
  ]);
  assert.equal(
    e.message,
    'the workspace configuration failed validation: file rift.toml, bytes 262145, bytes_max 262144; correct the reported configuration field, then retry',
  );
  // Exactly at the bound is accepted.
  const atBound = new Uint8Array(CONFIG_BYTES_MAX).fill(0x23);
  assert.deepEqual(parseConfig(atBound), defaultConfig());
});

test('a TOML syntax error names the file and the parser detail with line and column', () => {
  const e = failure('[source]\ninclude = [\n');
  const got = ev(e);
  assert.equal(got.file, 'rift.toml');
  assert.match(got.detail, /at line \d+ column \d+$/);
  assert.ok(!got.detail.includes('\n'));
  const dup = ev(failure('[logs]\ncapture = "info"\ncapture = "warn"\n'));
  assert.match(dup.detail, /redefine.* at line 3 column \d+$/);
});

test('bytes that are not UTF-8 are refused', () => {
  const e = failure(new Uint8Array([0x61, 0x20, 0x3d, 0x20, 0x22, 0xff, 0x22]));
  assert.equal(ev(e).file, 'rift.toml');
  assert.match(ev(e).detail, /UTF-8/);
});

// ---------------------------------------------------------------------------------------------
// Unknown keys, in every table

test('unknown keys are refused in every table with the full dotted path', () => {
  const cases: Array<[string, string]> = [
    ['server = 1\n', 'server'],
    ['[server]\nblocking_slots = 4\n', 'server'],
    ['[source]\nexclud = []\n', 'source.exclud'],
    ['[languages.typescript]\nextensions = []\n', 'languages.typescript.extensions'],
    ['[languages.markdown]\ninclude = ["*.md"]\nsyntax = true\n', 'languages.markdown.syntax'],
    ['[providers]\nlsp = {}\n', 'providers.lsp'],
    ['[providers.history]\ndepth = 3\n', 'providers.history.depth'],
    ['[providers.binding]\nmode = "x"\n', 'providers.binding.mode'],
    ['[search]\nembedding = "x"\n', 'search.embedding'],
    ['[search.text]\nmax = 1\n', 'search.text.max'],
    ['[search.semantic]\nweights = "x"\n', 'search.semantic.weights'],
    ['[logs]\nlevel = "info"\n', 'logs.level'],
    ['[execution]\nmax_memory = "1mb"\n', 'execution.max_memory'],
    ['[[hooks]]\nid = "a"\nprogram = "x"\ntype = "command"\n', 'hooks[0].type'],
    ['[[hooks]]\nid = "a"\nprogram = "x"\n[[hooks]]\nid = "b"\nprogram = "x"\ndeterminism = "best_effort"\n', 'hooks[1].determinism'],
    ['[[hooks]]\nid = "a"\nprogram = "x"\nguarantees = [{ kind = "k", detail = "d", scope = "s" }]\n', 'hooks[0].guarantees[0].scope'],
    ['[projections]\nmax_files = 1\n', 'projections.max_files'],
    ['"odd key" = 1\n', '"odd key"'],
  ];
  for (const [text, field] of cases) bad(text, field, 'unknown_key');
});

test('an unknown key is reported before a bad value in the same table', () => {
  bad('[source]\nmax_files = 0\nbogus = 1\n', 'source.bogus', 'unknown_key');
});

// ---------------------------------------------------------------------------------------------
// Types and missing keys

test('wrong types name the field, the expected and the found type', () => {
  bad('source = 1\n', 'source', 'wrong_type', { expected: 'table', found: 'integer' });
  bad('[source]\ninclude = "src/"\n', 'source.include', 'wrong_type', { expected: 'array', found: 'string' });
  bad('[source]\ninclude = ["a", 1]\n', 'source.include[1]', 'wrong_type', { expected: 'string', found: 'integer' });
  bad('[source]\nrespect_gitignore = "yes"\n', 'source.respect_gitignore', 'wrong_type', { expected: 'boolean' });
  bad('[source]\nmax_files = 1.0\n', 'source.max_files', 'wrong_type', { expected: 'integer', found: 'float' });
  bad('[source]\nmax_files = "10"\n', 'source.max_files', 'wrong_type', { expected: 'integer', found: 'string' });
  bad('[source]\nmax_file_bytes = 4096\n', 'source.max_file_bytes', 'wrong_type', { expected: 'byte size string' });
  bad('[execution]\nmax_timeout = 30\n', 'execution.max_timeout', 'wrong_type', { expected: 'duration string' });
  bad('languages = []\n', 'languages', 'wrong_type', { expected: 'table', found: 'array' });
  bad('[languages]\nrust = true\n', 'languages.rust', 'wrong_type', { expected: 'table', found: 'boolean' });
  bad('[languages.rust]\nlsp = 1\n', 'languages.rust.lsp', 'wrong_type', { expected: 'string, false or table' });
  bad('[hooks]\nid = "x"\n', 'hooks', 'wrong_type', { expected: 'array of tables', found: 'table' });
  bad('hooks = ["x"]\n', 'hooks[0]', 'wrong_type', { expected: 'table', found: 'string' });
  bad('[[hooks]]\nid = "a"\nprogram = "x"\nenvironment = { A = 1 }\n', 'hooks[0].environment.A', 'wrong_type', {
    expected: 'string',
  });
  bad('[[hooks]]\nid = "a"\nprogram = "x"\ntimeout_ms = 1979-05-27\n', 'hooks[0].timeout_ms', 'wrong_type', {
    found: 'datetime',
  });
  bad('[logs]\ncapture = 3\n', 'logs.capture', 'wrong_type', { expected: 'string' });
  bad('[search.semantic]\nenabled = 1\n', 'search.semantic.enabled', 'wrong_type');
  bad('[providers]\nhistory = 1\n', 'providers.history', 'wrong_type', { expected: 'table' });
});

test('missing required keys are named', () => {
  bad('[[hooks]]\nprogram = "npm"\n', 'hooks[0].id', 'missing_key');
  bad('[[hooks]]\nid = "t"\n', 'hooks[0].program', 'missing_key');
  bad('[[hooks]]\nid = "t"\nprogram = "x"\nguarantees = [{ kind = "k" }]\n', 'hooks[0].guarantees[0].detail', 'missing_key');
  bad('[[hooks]]\nid = "t"\nprogram = "x"\nguarantees = [{ detail = "d" }]\n', 'hooks[0].guarantees[0].kind', 'missing_key');
  bad('[languages.markdown]\nenabled = true\n', 'languages.markdown.include', 'missing_key');
});

// ---------------------------------------------------------------------------------------------
// Bounds

test('every ranged key refuses values outside its range, naming value and range', () => {
  const cases: Array<[string, string, string, string]> = [
    ['[source]\nmax_file_bytes = "1023b"\n', 'source.max_file_bytes', '1023b', '1kb..64mb'],
    ['[source]\nmax_file_bytes = "65mb"\n', 'source.max_file_bytes', '65mb', '1kb..64mb'],
    ['[source]\nmax_files = 0\n', 'source.max_files', '0', '1..1000000'],
    ['[source]\nmax_files = 1000001\n', 'source.max_files', '1000001', '1..1000000'],
    ['[providers.history]\nmax_revisions = 0\n', 'providers.history.max_revisions', '0', '1..100000'],
    ['[providers.history]\nmax_revisions = 100001\n', 'providers.history.max_revisions', '100001', '1..100000'],
    ['[logs]\npage_records = 0\n', 'logs.page_records', '0', '1..1000'],
    ['[logs]\npage_records = 1001\n', 'logs.page_records', '1001', '1..1000'],
    ['[logs]\nretention_records = -1\n', 'logs.retention_records', '-1', '1..1000000'],
    ['[execution]\nmax_code = "0b"\n', 'execution.max_code', '0b', '1b..32kb'],
    ['[execution]\nmax_code = "64kb"\n', 'execution.max_code', '64kb', '1b..32kb'],
    ['[execution]\nmax_timeout = "0ms"\n', 'execution.max_timeout', '0ms', '1ms..1d'],
    ['[execution]\nmax_timeout = "25h"\n', 'execution.max_timeout', '25h', '1ms..1d'],
    ['[execution]\nmax_output = "17kb"\n', 'execution.max_output', '17kb', '0b..16kb'],
    ['[execution]\nmax_concurrent = 0\n', 'execution.max_concurrent', '0', '1..64'],
    ['[execution]\nmax_concurrent = 65\n', 'execution.max_concurrent', '65', '1..64'],
    ['[[hooks]]\nid = "a"\nprogram = "x"\ntimeout_ms = 0\n', 'hooks[0].timeout_ms', '0', '1..3600000'],
    ['[[hooks]]\nid = "a"\nprogram = "x"\ntimeout_ms = 3600001\n', 'hooks[0].timeout_ms', '3600001', '1..3600000'],
    ['[[hooks]]\nid = "a"\nprogram = "x"\noutput_limit_bytes = 255\n', 'hooks[0].output_limit_bytes', '255', '256..4096'],
    ['[[hooks]]\nid = "a"\nprogram = "x"\noutput_limit_bytes = 4097\n', 'hooks[0].output_limit_bytes', '4097', '256..4096'],
    ['[projections]\nmax_dependencies = 0\n', 'projections.max_dependencies', '0', '1..1000000'],
    ['[projections]\nmax_dependency_bytes = "1tb"\n', 'projections.max_dependency_bytes', '1tb', '1kb..1gb'],
    ['[projections]\nmax_dependency_bytes = "512b"\n', 'projections.max_dependency_bytes', '512b', '1kb..1gb'],
    // Integers past 2^64 neither throw nor wrap.
    ['[source]\nmax_files = 99999999999999999999999\n', 'source.max_files', '99999999999999999999999', '1..1000000'],
    ['[execution]\nmax_code = "99999999999999999999tb"\n', 'execution.max_code', '99999999999999999999tb', '1b..32kb'],
  ];
  for (const [text, field, value, range] of cases) bad(text, field, 'limit_out_of_range', { value, range });
});

test('the reference example renders exactly', () => {
  const e = bad('[execution]\nmax_code = "64kb"\n', 'execution.max_code', 'limit_out_of_range');
  assert.equal(
    e.message,
    'the workspace configuration failed validation: field execution.max_code, violation limit_out_of_range, value 64kb, range 1b..32kb; correct the reported configuration field, then retry',
  );
});

test('range edges are accepted', () => {
  const c = cfg(`
[source]
max_file_bytes = "64mb"
max_files = 1
[execution]
max_code = "1b"
max_timeout = "1ms"
max_output = "16kb"
max_concurrent = 1
[projections]
max_dependency_bytes = "1kb"
`);
  assert.equal(c.source.max_file_bytes, 64 * 1024 * 1024);
  assert.equal(c.source.max_files, 1);
  assert.equal(c.execution.max_code, 1);
  assert.equal(c.execution.max_timeout, 1);
  assert.equal(c.execution.max_output, 16384);
  assert.equal(c.projections.max_dependency_bytes, 1024);
});

test('list lengths are bounded', () => {
  const many = (n: number, f: (i: number) => string) => `[${Array.from({ length: n }, (_, i) => f(i)).join(', ')}]`;
  bad(`[source]\ninclude = ${many(513, (i) => `"d${i}/"`)}\n`, 'source.include', 'limit_out_of_range', {
    count: '513',
    range: '0..512',
  });
  assert.equal(cfg(`[source]\ninclude = ${many(512, (i) => `"d${i}/"`)}\n`).source.include.length, 512);
  bad(`[execution]\nallow = ${many(65, (i) => `"l${i}"`)}\n`, 'execution.allow', 'limit_out_of_range', { count: '65' });
  const hooks = Array.from({ length: 33 }, (_, i) => `[[hooks]]\nid = "h${i}"\nprogram = "x"\n`).join('');
  bad(hooks, 'hooks', 'limit_out_of_range', { count: '33', range: '0..32' });
  bad(`[[hooks]]\nid = "a"\nprogram = "x"\narguments = ${many(65, () => '"a"')}\n`, 'hooks[0].arguments', 'limit_out_of_range');
  const env = `{ ${Array.from({ length: 65 }, (_, i) => `K${i} = "v"`).join(', ')} }`;
  bad(`[[hooks]]\nid = "a"\nprogram = "x"\nenvironment = ${env}\n`, 'hooks[0].environment', 'limit_out_of_range', {
    count: '65',
  });
  const g = many(17, () => '{ kind = "k", detail = "d" }');
  bad(`[[hooks]]\nid = "a"\nprogram = "x"\nguarantees = ${g}\n`, 'hooks[0].guarantees', 'limit_out_of_range');
});

// ---------------------------------------------------------------------------------------------
// Unit strings

test('ByteSize and Duration parse to bytes and milliseconds', () => {
  assert.equal(parseByteSize('0b'), 0);
  assert.equal(parseByteSize('16kb'), 16384);
  assert.equal(parseByteSize('4mb'), 4 * 1024 * 1024);
  assert.equal(parseByteSize('1gb'), 1024 ** 3);
  assert.equal(parseByteSize('2tb'), 2 * 1024 ** 4);
  for (const bad of ['16KiB', '16KB', '007b', '00b', '16', 'kb', '1.5kb', ' 1kb', '1kb ', '-1kb', '1 kb', '']) {
    assert.equal(parseByteSize(bad), null, bad);
  }
  assert.equal(parseDuration('0ms'), 0);
  assert.equal(parseDuration('1ms'), 1);
  assert.equal(parseDuration('30s'), 30_000);
  assert.equal(parseDuration('2m'), 120_000);
  assert.equal(parseDuration('1h'), 3_600_000);
  assert.equal(parseDuration('1d'), 86_400_000);
  for (const bad of ['30', '30S', '030s', '1.5s', '1w', '1sec', '1 s', '']) assert.equal(parseDuration(bad), null, bad);
});

test('canonical rendering picks the largest exact unit', () => {
  assert.equal(formatByteSize(16384), '16kb');
  assert.equal(formatByteSize(1025), '1025b');
  assert.equal(formatByteSize(0), '0b');
  assert.equal(formatByteSize(1024 ** 3), '1gb');
  assert.equal(formatDuration(30_000), '30s');
  assert.equal(formatDuration(90_000), '90s');
  assert.equal(formatDuration(86_400_000), '1d');
  assert.equal(formatDuration(1500), '1500ms');
});

test('malformed unit strings are refused in the file', () => {
  bad('[execution]\nmax_code = "16KiB"\n', 'execution.max_code', 'byte_size_invalid', { value: '16KiB' });
  bad('[execution]\nmax_output = "007b"\n', 'execution.max_output', 'byte_size_invalid', { value: '007b' });
  bad('[source]\nmax_file_bytes = "4 mb"\n', 'source.max_file_bytes', 'byte_size_invalid');
  bad('[execution]\nmax_timeout = "30sec"\n', 'execution.max_timeout', 'duration_invalid', { value: '30sec' });
  bad('[execution]\nmax_timeout = "030s"\n', 'execution.max_timeout', 'duration_invalid');
});

// ---------------------------------------------------------------------------------------------
// Patterns, selectors, ids, enums

test('invalid glob patterns name the indexed field and the pattern', () => {
  const e = bad('[source]\ninclude = ["src/", "lib/", "["]\n', 'source.include[2]', 'path_pattern_invalid', {
    pattern: '[',
    reason: 'invalid_glob',
  });
  assert.ok(e.message.includes('field source.include[2], violation path_pattern_invalid, pattern ['));
  bad('[source]\nexclude = ["/abs"]\n', 'source.exclude[0]', 'path_pattern_invalid', { reason: 'absolute' });
  bad('[source]\nexclude = [""]\n', 'source.exclude[0]', 'path_pattern_invalid', { reason: 'empty' });
  bad('[languages.rust]\ninclude = ["a\\\\b"]\n', 'languages.rust.include[0]', 'path_pattern_invalid', {
    reason: 'backslash',
  });
  bad('[languages.rust]\nexclude = ["../x"]\n', 'languages.rust.exclude[0]', 'path_pattern_invalid', {
    reason: 'dot_segment',
  });
  bad('[search.text]\ninclude = ["["]\n', 'search.text.include[0]', 'path_pattern_invalid');
  bad('[search.text]\nexclude = ["C:/x"]\n', 'search.text.exclude[0]', 'path_pattern_invalid');
  bad('[[hooks]]\nid = "a"\nprogram = "x"\ninclude = ["["]\n', 'hooks[0].include[0]', 'path_pattern_invalid');
  bad('[[hooks]]\nid = "a"\nprogram = "x"\nexclude = ["/"]\n', 'hooks[0].exclude[0]', 'path_pattern_invalid');
});

test('language ids, engine ids and models are checked', () => {
  bad('[languages.Markdown]\ninclude = ["*.md"]\n', 'languages.Markdown', 'language_id_invalid', { id: 'Markdown' });
  bad('[languages."my lang"]\ninclude = ["*.x"]\n', 'languages."my lang"', 'language_id_invalid');
  bad('[languages.9x]\ninclude = ["*.x"]\n', 'languages.9x', 'language_id_invalid');
  bad(`[languages.${'a'.repeat(65)}]\ninclude = ["*.x"]\n`, `languages.${'a'.repeat(65)}`, 'language_id_invalid');
  assert.equal(cfg(`[languages.${'a'.repeat(64)}]\ninclude = ["*.x"]\n`).languages.at(-1)!.id, 'a'.repeat(64));
  bad('[languages.markdown]\ninclude = []\n', 'languages.markdown.include', 'language_include_empty');
  bad('[languages.rust]\nlsp = ""\n', 'languages.rust.lsp', 'engine_id_invalid', { value: '' });
  bad('[languages.rust]\nlsp = "rust analyzer"\n', 'languages.rust.lsp', 'engine_id_invalid');
  bad(`[languages.rust]\nlsp = "${'a'.repeat(65)}"\n`, 'languages.rust.lsp', 'engine_id_invalid');
  bad('[search.semantic]\nmodel = ""\n', 'search.semantic.model', 'embedding_model_invalid');
  bad('[search.semantic]\nmodel = "a b"\n', 'search.semantic.model', 'embedding_model_invalid');
  bad(`[search.semantic]\nmodel = "${'m'.repeat(129)}"\n`, 'search.semantic.model', 'embedding_model_invalid');
  bad('[search.semantic]\nurl = "ftp://127.0.0.1/"\n', 'search.semantic.url', 'embedding_url_invalid');
  bad('[search.semantic]\nurl = "http://user:secret@127.0.0.1/"\n', 'search.semantic.url', 'embedding_url_invalid');
  bad('[search.semantic]\nurl = "not a url"\n', 'search.semantic.url', 'embedding_url_invalid');
  bad('[search.semantic]\nprovider = "local"\n', 'search.semantic.provider', 'value_not_allowed');
  // The in-process provider's model is a directory: any path but control characters, and required once enabled.
  bad('[search.semantic]\nenabled = true\nprovider = "onnx"\n', 'search.semantic.model', 'embedding_model_required');
  bad('[search.semantic]\nprovider = "onnx"\nmodel = "models/a\\tb"\n', 'search.semantic.model', 'embedding_model_invalid');
  bad(`[search.semantic]\nprovider = "onnx"\nmodel = "${'m'.repeat(1025)}"\n`, 'search.semantic.model', 'embedding_model_invalid');
  assert.deepEqual(cfg('[search.semantic]\nenabled = true\nprovider = "onnx"\nmodel = "/home/me/My Models/all-MiniLM-L6-v2"\n').search.semantic, {
    enabled: true, model: '/home/me/My Models/all-MiniLM-L6-v2', provider: 'onnx', url: 'http://127.0.0.1:11434',
  });
  assert.equal(cfg('[search.semantic]\nprovider = "onnx"\n').search.semantic.provider, 'onnx', 'not enabled: no model needed');
  // A built-in may be narrowed to nothing: it then selects no file.
  assert.deepEqual(cfg('[languages.go]\ninclude = []\n').languages[5].include, []);
});

test('execution selectors must be lowercase name or name:dialect', () => {
  assert.deepEqual(cfg('[execution]\nallow = ["python", "javascript:node", "c++"]\n').execution.allow, [
    'python',
    'javascript:node',
    'c++',
  ]);
  for (const s of ['Python', '', 'a:b:c', ':x', 'x:', 'py thon', 'ts:TSX']) {
    bad(`[execution]\nallow = ["ok", ${JSON.stringify(s)}]\n`, 'execution.allow[1]', 'language_selector_invalid', {
      selector: s,
    });
  }
});

test('enumerated values name what is allowed', () => {
  bad('[logs]\ncapture = "verbose"\n', 'logs.capture', 'value_not_allowed', {
    value: 'verbose',
    allowed: 'error|warn|info|debug|trace',
  });
  bad('[[hooks]]\nid = "a"\nprogram = "x"\nrole = "check"\n', 'hooks[0].role', 'value_not_allowed', {
    allowed: 'transform|validation',
  });
  bad('[[hooks]]\nid = "a"\nprogram = "x"\nkind = "deploy"\n', 'hooks[0].kind', 'value_not_allowed', {
    allowed: 'test|lint|build|format|other',
  });
  bad('[[hooks]]\nid = "a"\nprogram = "x"\nchanged_paths = "prepend"\n', 'hooks[0].changed_paths', 'value_not_allowed');
});

// ---------------------------------------------------------------------------------------------
// Hooks

test('hook ids, programs and environment keys are checked', () => {
  bad('[[hooks]]\nid = ""\nprogram = "x"\n', 'hooks[0].id', 'hook_id_invalid', { id: '' });
  bad('[[hooks]]\nid = "run tests"\nprogram = "x"\n', 'hooks[0].id', 'hook_id_invalid');
  bad(`[[hooks]]\nid = "${'a'.repeat(65)}"\nprogram = "x"\n`, 'hooks[0].id', 'hook_id_invalid');
  bad('[[hooks]]\nid = "a"\nprogram = "x"\n[[hooks]]\nid = "a"\nprogram = "y"\n', 'hooks[1].id', 'hook_id_duplicate', {
    id: 'a',
  });
  bad('[[hooks]]\nid = "a"\nprogram = ""\n', 'hooks[0].program', 'hook_program_empty', { id: 'a' });
  bad('[[hooks]]\nid = "a"\nprogram = "   "\n', 'hooks[0].program', 'hook_program_empty');
  for (const program of ['/usr/bin/npm', '\\\\server\\\\x', 'C:npm', 'c:/tools/npm.exe', 'bin\\\\npm']) {
    bad(`[[hooks]]\nid = "a"\nprogram = "x"\n[[hooks]]\nid = "b"\nprogram = "${program}"\n`, 'hooks[1].program', 'hook_executable_absolute', {
      id: 'b',
    });
  }
  bad('[[hooks]]\nid = "a"\nprogram = "x"\nenvironment = { "A=B" = "1" }\n', 'hooks[0].environment', 'hook_environment_key_invalid', {
    id: 'a',
    key: 'A=B',
  });
  bad('[[hooks]]\nid = "a"\nprogram = "x"\nenvironment = { "" = "1" }\n', 'hooks[0].environment', 'hook_environment_key_invalid', {
    key: '',
  });
  bad('[[hooks]]\nid = "a"\nprogram = "x"\nenvironment = { "A\\u0000" = "1" }\n', 'hooks[0].environment', 'hook_environment_key_invalid');
  bad('[[hooks]]\nid = "a"\nprogram = "x"\narguments = ["ok", "a\\u0000b"]\n', 'hooks[0].arguments[1]', 'nul_character');
});

test('hook working directories are project paths', () => {
  assert.equal(cfg('[[hooks]]\nid = "a"\nprogram = "x"\nworking_directory = "pkg/a"\n').hooks[0].working_directory, 'pkg/a');
  bad('[[hooks]]\nid = "a"\nprogram = "x"\nworking_directory = "../up"\n', 'hooks[0].working_directory', 'project_path_invalid', {
    reason: 'dot_segment',
  });
  bad('[[hooks]]\nid = "a"\nprogram = "x"\nworking_directory = "/tmp"\n', 'hooks[0].working_directory', 'project_path_invalid', {
    reason: 'absolute',
  });
  bad('[[hooks]]\nid = "a"\nprogram = "x"\nworking_directory = ".rift/x"\n', 'hooks[0].working_directory', 'project_path_invalid', {
    reason: 'rift_state',
  });
});

test('hook guarantees bound kind and detail lengths', () => {
  bad('[[hooks]]\nid = "a"\nprogram = "x"\nguarantees = [{ kind = "", detail = "d" }]\n', 'hooks[0].guarantees[0].kind', 'limit_out_of_range', {
    length: '0',
    range: '1..64',
  });
  bad(
    `[[hooks]]\nid = "a"\nprogram = "x"\nguarantees = [{ kind = "k", detail = "d" }, { kind = "k", detail = "${'d'.repeat(1025)}" }]\n`,
    'hooks[0].guarantees[1].detail',
    'limit_out_of_range',
    { length: '1025', range: '1..1024' },
  );
  const ok = cfg(`[[hooks]]\nid = "a"\nprogram = "x"\nguarantees = [{ kind = "k", detail = "${'é'.repeat(1024)}" }]\n`);
  assert.equal(ok.hooks[0].guarantees[0].detail.length, 1024);
});

test('an environment key named __proto__ is an ordinary variable', () => {
  const c = cfg('[[hooks]]\nid = "a"\nprogram = "x"\nenvironment = { "__proto__" = "1", constructor = "2" }\n');
  assert.deepEqual(Object.keys(c.hooks[0].environment), ['__proto__', 'constructor']);
  assert.equal(Object.getPrototypeOf(c.hooks[0].environment), Object.prototype);
});

// ---------------------------------------------------------------------------------------------
// Order

test('the first violation in the documented order wins', () => {
  // Tables are checked source → languages → providers → search → logs → execution → hooks →
  // projections, regardless of where they appear in the file.
  bad('[projections]\nmax_dependencies = 0\n[source]\nmax_files = 0\n', 'source.max_files', 'limit_out_of_range');
  bad('[[hooks]]\nid = ""\nprogram = "x"\n[execution]\nmax_code = "0b"\n', 'execution.max_code', 'limit_out_of_range');
  bad('[logs]\npage_records = 0\n[providers.history]\nmax_revisions = 0\n', 'providers.history.max_revisions', 'limit_out_of_range');
  // Unknown top-level keys come before any table.
  bad('[source]\nmax_files = 0\n[serverx]\n', 'serverx', 'unknown_key');
  // Inside a table: known keys in documented order (include before max_files).
  bad('[source]\nmax_files = 0\ninclude = ["["]\n', 'source.include[0]', 'path_pattern_invalid');
  // Built-in languages before custom ones; custom ones by sorted id.
  bad('[languages.zz]\ninclude = []\n[languages.aa]\ninclude = []\n', 'languages.aa.include', 'language_include_empty');
  bad('[languages.aa]\ninclude = []\n[languages.rust]\nlsp = "a b"\n', 'languages.rust.lsp', 'engine_id_invalid');
  // Hooks: a hook's own keys before the duplicate check; earlier hooks first.
  bad('[[hooks]]\nid = "a"\nprogram = "x"\n[[hooks]]\nid = "a"\nprogram = "/x"\n', 'hooks[1].program', 'hook_executable_absolute');
  // Hook keys: id → program → … (program checked before environment).
  bad('[[hooks]]\nid = "a"\nenvironment = { "=" = "x" }\nprogram = ""\n', 'hooks[0].program', 'hook_program_empty');
});

// ---------------------------------------------------------------------------------------------
// languageFor

test('languageFor picks the first enabled entry whose include matches and exclude does not', () => {
  const d = defaultConfig();
  assert.equal(languageFor(d, 'src/a.ts')?.id, 'typescript');
  assert.equal(languageFor(d, 'src/a.d.mts')?.id, 'typescript');
  assert.equal(languageFor(d, 'web/App.tsx')?.id, 'tsx');
  assert.equal(languageFor(d, 'web/App.jsx')?.id, 'javascript');
  assert.equal(languageFor(d, 'x.pyi')?.id, 'python');
  assert.equal(languageFor(d, 'crates/a/src/lib.rs')?.id, 'rust');
  assert.equal(languageFor(d, 'cmd/main.go')?.id, 'go');
  assert.equal(languageFor(d, 'A.java')?.id, 'java');
  assert.equal(languageFor(d, 'README.md'), null);
  assert.equal(languageFor(d, 'justfile'), null);

  const c = cfg(`
[languages.typescript]
exclude = ["*.d.ts"]
[languages.python]
enabled = false
[languages.just]
include = ["justfile", "*.just"]
[languages.docker]
include = ["Dockerfile", "docker/*.dockerfile"]
[languages.shell]
include = ["bin/*"]
exclude = ["bin/*.js"]
`);
  assert.equal(languageFor(c, 'types/a.d.ts'), null);
  assert.equal(languageFor(c, 'src/a.ts')?.id, 'typescript');
  assert.equal(languageFor(c, 'a.py'), null);
  assert.equal(languageFor(c, 'justfile')?.id, 'just');
  assert.equal(languageFor(c, 'tools/justfile')?.id, 'just');
  assert.equal(languageFor(c, 'Dockerfile')?.id, 'docker');
  assert.equal(languageFor(c, 'svc/Dockerfile')?.id, 'docker');
  assert.equal(languageFor(c, 'docker/api.dockerfile')?.id, 'docker');
  assert.equal(languageFor(c, 'x/docker/api.dockerfile'), null);
  assert.equal(languageFor(c, 'bin/rift')?.id, 'shell');
  assert.equal(languageFor(c, 'bin/rift.js')?.id, 'javascript');
  assert.equal(languageFor(c, 'bin/rift')?.builtin, false);
});

test('languageFor prefers built-ins, then custom entries in id order', () => {
  const c = cfg('[languages.zeta]\ninclude = ["*.ts", "*.x"]\n[languages.alpha]\ninclude = ["*.x"]\n');
  assert.equal(languageFor(c, 'a.ts')?.id, 'typescript');
  assert.equal(languageFor(c, 'a.x')?.id, 'alpha');
});

// ---------------------------------------------------------------------------------------------
// Language engines ([languages.<id>].lsp)

test('lsp takes false, a built-in engine id, or a definition table', () => {
  assert.equal(cfg('[languages.python]\nlsp = false\n').languages[3].lsp, false);
  assert.deepEqual(cfg('[languages.python]\nlsp = "pyright"\n').languages[3].lsp, {
    engine: 'pyright', command: null, args: null, initialization_options: null, root_markers: null, ready_timeout: null,
  });
  const custom = cfg(`
[languages.python.lsp]
command = "pylsp"
args = ["--check-parent-process"]
initialization_options = { plugins = { rope = { enabled = true } }, depth = 3 }
root_markers = ["pyproject.toml", "setup.cfg"]
ready_timeout = "2s"
`).languages[3].lsp;
  assert.deepEqual(custom, {
    engine: null,
    command: 'pylsp',
    args: ['--check-parent-process'],
    initialization_options: { plugins: { rope: { enabled: true } }, depth: 3 },
    root_markers: ['pyproject.toml', 'setup.cfg'],
    ready_timeout: 2000,
  });
  const adjusted = cfg('[languages.typescript.lsp]\nengine = "typescript-language-server"\nready_timeout = "0ms"\n').languages[0].lsp;
  assert.deepEqual(adjusted && { engine: adjusted.engine, ready_timeout: adjusted.ready_timeout }, { engine: 'typescript-language-server', ready_timeout: 0 });
});

test('engine definitions are checked: known ids, a command name, markers, the readiness bound', () => {
  bad('[languages.python]\nlsp = "pylance"\n', 'languages.python.lsp', 'engine_unknown', { value: 'pylance', allowed: 'typescript-language-server|pyright|gopls|rust-analyzer|jdtls' });
  bad('[languages.python]\nlsp = true\n', 'languages.python.lsp', 'wrong_type', { expected: 'string, false or table', found: 'boolean' });
  bad('[languages.python.lsp]\nargs = []\n', 'languages.python.lsp', 'engine_command_missing');
  bad('[languages.python.lsp]\ncommand = "/usr/bin/pylsp"\n', 'languages.python.lsp.command', 'engine_command_not_a_name', { command: '/usr/bin/pylsp' });
  bad('[languages.python.lsp]\ncommand = "bin/pylsp"\n', 'languages.python.lsp.command', 'engine_command_not_a_name');
  bad('[languages.python.lsp]\ncommand = " "\n', 'languages.python.lsp.command', 'engine_command_empty');
  bad('[languages.python.lsp]\ncommand = "pylsp"\nbogus = 1\n', 'languages.python.lsp.bogus', 'unknown_key');
  bad('[languages.python.lsp]\ncommand = "pylsp"\nroot_markers = ["a/b"]\n', 'languages.python.lsp.root_markers[0]', 'root_marker_invalid', { value: 'a/b' });
  bad('[languages.python.lsp]\ncommand = "pylsp"\nready_timeout = "11m"\n', 'languages.python.lsp.ready_timeout', 'limit_out_of_range', { range: '0ms..10m' });
  bad('[languages.python.lsp]\ncommand = "pylsp"\ninitialization_options = 3\n', 'languages.python.lsp.initialization_options', 'wrong_type', { expected: 'table' });
});
