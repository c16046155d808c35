// The search relevance set: queries over the Python standard library, each with the
// declaration (or file) a developer asking it would want. Shared by the relevance test
// (test/index/relevance.test.ts, over a subset of the stdlib) and bench/search.ts (over the
// whole stdlib without site-packages).
//
// The answers were written from knowledge of the stdlib, not from what rift returns. A query
// may list more than one answer only when they are interchangeable for the asker (urlparse vs
// urlsplit); it still counts as one relevant item: the first hit matching any answer gives
// the reciprocal rank, and recall@10 is the share of queries with such a hit in the top 10.
//
// A symbol answer matches a symbol hit with that path and qualified name; a file answer
// (no `name`) matches any hit, symbol or file, in that file.

import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Engine } from '../src/services/engine.ts';

export interface Answer {
  /** Path relative to the stdlib root. */
  path: string;
  /** Qualified name of the declaration; absent for a file-level answer. */
  name?: string;
}

export interface RelevanceQuery {
  query: string;
  kind: 'prose' | 'identifier';
  answers: Answer[];
}

const a = (path: string, ...names: string[]): Answer[] => (names.length === 0 ? [{ path }] : names.map((name) => ({ path, name })));

export const RELEVANCE_SET: readonly RelevanceQuery[] = [
  // ---- prose: what the developer wants to do ------------------------------------------------
  { kind: 'prose', query: 'parse a url into components', answers: a('urllib/parse.py', 'urlparse', 'urlsplit') },
  { kind: 'prose', query: 'compute a sha256 digest of a file', answers: a('hashlib.py', 'file_digest') },
  { kind: 'prose', query: 'read a csv file into dictionaries', answers: a('csv.py', 'DictReader') },
  { kind: 'prose', query: 'pretty print a nested data structure', answers: a('pprint.py', 'pprint', 'pformat', 'PrettyPrinter') },
  { kind: 'prose', query: 'follow http redirects', answers: a('urllib/request.py', 'HTTPRedirectHandler', 'HTTPRedirectHandler.redirect_request') },
  { kind: 'prose', query: 'copy a directory tree recursively', answers: a('shutil.py', 'copytree') },
  { kind: 'prose', query: 'create a temporary directory that is deleted automatically', answers: a('tempfile.py', 'TemporaryDirectory') },
  { kind: 'prose', query: 'wrap long text to a fixed width', answers: a('textwrap.py', 'wrap', 'fill', 'TextWrapper') },
  { kind: 'prose', query: 'run a command and capture its output', answers: a('subprocess.py', 'run', 'check_output') },
  { kind: 'prose', query: 'parse command line arguments', answers: a('argparse.py', 'ArgumentParser', 'ArgumentParser.parse_args') },
  { kind: 'prose', query: 'encode bytes as base64', answers: a('base64.py', 'b64encode', 'standard_b64encode') },
  { kind: 'prose', query: 'generate a random uuid', answers: a('uuid.py', 'uuid4') },
  { kind: 'prose', query: 'median of a list of numbers', answers: a('statistics.py', 'median') },
  { kind: 'prose', query: 'unified diff between two lists of lines', answers: a('difflib.py', 'unified_diff') },
  { kind: 'prose', query: 'read an ini configuration file', answers: a('configparser.py', 'ConfigParser', 'RawConfigParser', 'RawConfigParser.read') },
  { kind: 'prose', query: 'cache the results of a function', answers: a('functools.py', 'lru_cache', 'cache') },
  { kind: 'prose', query: 'send an email message over smtp', answers: a('smtplib.py', 'SMTP.send_message', 'SMTP.sendmail', 'SMTP') },
  {
    kind: 'prose',
    query: 'parse an email message from bytes',
    answers: [...a('email/__init__.py', 'message_from_bytes'), ...a('email/parser.py', 'BytesParser', 'BytesParser.parsebytes')],
  },
  { kind: 'prose', query: 'serve files from the current directory over http', answers: a('http/server.py', 'SimpleHTTPRequestHandler') },
  { kind: 'prose', query: 'rotate log files when they get too large', answers: a('logging/handlers.py', 'RotatingFileHandler') },
  { kind: 'prose', query: 'run coroutines concurrently and wait for all results', answers: a('asyncio/tasks.py', 'gather') },
  { kind: 'prose', query: 'extract all files from a zip archive', answers: a('zipfile.py', 'ZipFile.extractall') },
  { kind: 'prose', query: 'add a file to a tar archive', answers: a('tarfile.py', 'TarFile.add') },
  { kind: 'prose', query: 'escape special characters in a regular expression', answers: a('re/__init__.py', 'escape') },
  { kind: 'prose', query: 'format a datetime as an iso 8601 string', answers: a('datetime.py', 'datetime.isoformat', 'date.isoformat') },
  {
    kind: 'prose',
    query: 'decode a json string into python objects',
    answers: [...a('json/__init__.py', 'loads'), ...a('json/decoder.py', 'JSONDecoder.decode')],
  },
  { kind: 'prose', query: 'count how many times each item occurs', answers: a('collections/__init__.py', 'Counter') },
  { kind: 'prose', query: 'pick a random element from a sequence', answers: a('random.py', 'Random.choice') },
  { kind: 'prose', query: 'substitute placeholders in a string template', answers: a('string.py', 'Template', 'Template.substitute') },
  { kind: 'prose', query: 'home directory of the current user', answers: [...a('pathlib.py', 'Path.home'), ...a('posixpath.py', 'expanduser')] },
  { kind: 'prose', query: 'guess the mime type of a file from its name', answers: a('mimetypes.py', 'guess_type', 'MimeTypes.guess_type') },
  { kind: 'prose', query: 'python software foundation license agreement', answers: a('LICENSE.txt') },

  // ---- identifiers and partial identifiers ---------------------------------------------------
  { kind: 'identifier', query: 'urlsplit', answers: a('urllib/parse.py', 'urlsplit') },
  { kind: 'identifier', query: 'JSONDecoder', answers: a('json/decoder.py', 'JSONDecoder') },
  { kind: 'identifier', query: 'namedtuple', answers: a('collections/__init__.py', 'namedtuple') },
  { kind: 'identifier', query: 'shutil copytree', answers: a('shutil.py', 'copytree') },
  { kind: 'identifier', query: 'ArgumentParser add_argument', answers: a('argparse.py', '_ActionsContainer.add_argument') },
  { kind: 'identifier', query: 'TemporaryDirectory', answers: a('tempfile.py', 'TemporaryDirectory') },
  { kind: 'identifier', query: 'OrderedDict', answers: a('collections/__init__.py', 'OrderedDict') },
  { kind: 'identifier', query: 'HTTPConnection.request', answers: a('http/client.py', 'HTTPConnection.request') },
  { kind: 'identifier', query: 'urlencode', answers: a('urllib/parse.py', 'urlencode') },
  { kind: 'identifier', query: 'getLogger', answers: a('logging/__init__.py', 'getLogger') },
  { kind: 'identifier', query: 'basicConfig', answers: a('logging/__init__.py', 'basicConfig') },
  { kind: 'identifier', query: 'SequenceMatcher ratio', answers: a('difflib.py', 'SequenceMatcher.ratio') },
  { kind: 'identifier', query: 'create_subprocess_exec', answers: a('asyncio/subprocess.py', 'create_subprocess_exec') },
  { kind: 'identifier', query: 'run_until_complete', answers: a('asyncio/base_events.py', 'BaseEventLoop.run_until_complete') },
  { kind: 'identifier', query: 'assertEqual', answers: a('unittest/case.py', 'TestCase.assertEqual') },
  { kind: 'identifier', query: 'b64decode', answers: a('base64.py', 'b64decode') },
  { kind: 'identifier', query: 'quote_plus', answers: a('urllib/parse.py', 'quote_plus') },
  { kind: 'identifier', query: 'DictWriter', answers: a('csv.py', 'DictWriter') },
  { kind: 'identifier', query: 'HTTPRedirect', answers: a('urllib/request.py', 'HTTPRedirectHandler') },
  { kind: 'identifier', query: 'RotatingFile', answers: a('logging/handlers.py', 'RotatingFileHandler') },
  { kind: 'identifier', query: 'JSONEncoder default', answers: a('json/encoder.py', 'JSONEncoder.default') },
  { kind: 'identifier', query: 'fromisoformat', answers: a('datetime.py', 'datetime.fromisoformat', 'date.fromisoformat', 'time.fromisoformat') },
  { kind: 'identifier', query: 'lru_cache', answers: a('functools.py', 'lru_cache') },
  { kind: 'identifier', query: 'shutil which', answers: a('shutil.py', 'which') },
  { kind: 'identifier', query: 'make_archive', answers: a('shutil.py', 'make_archive') },
  { kind: 'identifier', query: 'copyfileobj', answers: a('shutil.py', 'copyfileobj') },
  { kind: 'identifier', query: 'message_from', answers: a('email/__init__.py', 'message_from_string', 'message_from_bytes', 'message_from_file') },
  { kind: 'identifier', query: 'ZipFile extract', answers: a('zipfile.py', 'ZipFile.extract') },
  { kind: 'identifier', query: 'dataclass field', answers: a('dataclasses.py', 'field') },
  { kind: 'identifier', query: 'parse_qs', answers: a('urllib/parse.py', 'parse_qs') },
  { kind: 'identifier', query: 'Popen communicate', answers: a('subprocess.py', 'Popen.communicate') },
  { kind: 'identifier', query: 'pathlib glob', answers: a('pathlib.py', 'Path.glob') },
  { kind: 'identifier', query: 'csv Sniffer', answers: a('csv.py', 'Sniffer') },
];

/**
 * The stdlib entries (relative to its root) the relevance test copies: every module an answer
 * lives in, plus distractors that share words and names with the answers (`pipes.Template`,
 * `plistlib.loads`, `_bootsubprocess.run`, the events-loop ABC, the tests of the answered
 * modules …).
 */
export const TEST_SUBSET: readonly string[] = [
  // answers
  'LICENSE.txt', 'argparse.py', 'asyncio', 'base64.py', 'collections', 'configparser.py', 'csv.py', 'dataclasses.py',
  'datetime.py', 'difflib.py', 'email', 'functools.py', 'hashlib.py', 'http', 'json', 'logging', 'mimetypes.py',
  'pathlib.py', 'posixpath.py', 'pprint.py', 'random.py', 're', 'shutil.py', 'smtplib.py', 'statistics.py', 'string.py',
  'subprocess.py', 'tarfile.py', 'tempfile.py', 'textwrap.py', 'unittest', 'urllib', 'uuid.py', 'zipfile.py',
  // distractors
  '_bootsubprocess.py', 'contextlib.py', 'enum.py', 'fnmatch.py', 'genericpath.py', 'glob.py', 'gzip.py', 'hmac.py',
  'html', 'inspect.py', 'ntpath.py', 'os.py', 'pipes.py', 'plistlib.py', 'secrets.py', 'socket.py', 'ssl.py',
  'threading.py', 'tomllib', 'traceback.py', 'typing.py', 'wsgiref', 'xmlrpc',
  'test/test_csv.py', 'test/test_shutil.py', 'test/test_urlparse.py', 'test/test_logging.py', 'test/test_tempfile.py',
];

/** Where this machine's Python keeps its standard library, or why it cannot be found. */
export function pythonStdlib(): { root: string } | { error: string } {
  const r = spawnSync('python3', ['-c', 'import sysconfig;print(sysconfig.get_paths()["stdlib"])'], { encoding: 'utf8', timeout: 10_000 });
  if (r.error || r.status !== 0) return { error: r.error?.message ?? r.stderr.trim() };
  return { root: r.stdout.trim() };
}

/**
 * Copies the test subset of the stdlib at `stdlib` into `dst` (which must exist), skipping
 * bytecode caches and a package's own `test`/`tests` directories. Returns the entries copied.
 */
export function copyRelevanceSubset(stdlib: string, dst: string): string[] {
  const copied: string[] = [];
  for (const entry of TEST_SUBSET) {
    const from = join(stdlib, entry);
    if (!existsSync(from)) continue;
    mkdirSync(dirname(join(dst, entry)), { recursive: true });
    cpSync(from, join(dst, entry), { recursive: true, filter: (p) => p === from || !/\/(tests?|__pycache__)$/.test(p.slice(from.length)) });
    copied.push(entry);
  }
  return copied;
}

export interface Ranked {
  path: string;
  /** Qualified name for a symbol hit; absent for a file hit. */
  name?: string;
}

/** 1-based rank of the first hit matching any answer, or 0 when none of `hits` does. */
export function firstRelevantRank(q: RelevanceQuery, hits: readonly Ranked[]): number {
  for (const [i, h] of hits.entries()) {
    if (q.answers.some((ans) => ans.path === h.path && (ans.name === undefined || ans.name === h.name))) return i + 1;
  }
  return 0;
}

export interface Scored {
  query: RelevanceQuery;
  rank: number;
  top: Ranked[];
  ms: number;
}

export interface Metrics {
  queries: number;
  mrr: number;
  recall: number;
  byKind: Record<RelevanceQuery['kind'], { queries: number; mrr: number; recall: number }>;
}

/** MRR@k and recall@k over scored queries (ranks beyond k already mapped to 0). */
export function metrics(scored: readonly Scored[]): Metrics {
  const of = (list: readonly Scored[]) => ({
    queries: list.length,
    mrr: list.length === 0 ? 0 : list.reduce((s, x) => s + (x.rank > 0 ? 1 / x.rank : 0), 0) / list.length,
    recall: list.length === 0 ? 0 : list.filter((x) => x.rank > 0).length / list.length,
  });
  const all = of(scored);
  return {
    ...all,
    byKind: {
      prose: of(scored.filter((s) => s.query.kind === 'prose')),
      identifier: of(scored.filter((s) => s.query.kind === 'identifier')),
    },
  };
}

/** A hit's display label: `path#qualified.name` or `path` for a file hit. */
export function label(h: Ranked): string {
  return h.name === undefined ? h.path : `${h.path}#${h.name}`;
}

/** Whether the indexed tree holds at least one of the query's answers (a symbol answer needs the declaration). */
export function answerIndexed(engine: Engine, q: RelevanceQuery): boolean {
  const store = engine.indexer.store;
  return q.answers.some((ans) =>
    ans.name === undefined ? store.file(ans.path) !== null : store.symbolsOfFile(ans.path).some((s) => s.qname === ans.name),
  );
}

/** Runs every query through `search` (limit `k`) and scores it. */
export async function runRelevance(engine: Engine, set: readonly RelevanceQuery[], k = 10): Promise<Scored[]> {
  const out: Scored[] = [];
  for (const query of set) {
    const started = performance.now();
    const r = await engine.search.search({ query: query.query, limit: k });
    const ms = performance.now() - started;
    const top: Ranked[] = r.results.slice(0, k).map((h) => (h.hit.target === 'symbol' ? { path: h.path, name: h.hit.symbol.name } : { path: h.path }));
    out.push({ query, rank: firstRelevantRank(query, top), top, ms });
  }
  return out;
}
