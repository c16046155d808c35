// Relevance sets beyond the stdlib set of bench/relevance.ts, built for issue 17 (search that
// understands prose) before any ranking change was tuned on them:
//   stdlib-2  prose and identifier queries over the Python standard library, none of them in
//             RELEVANCE_SET (which earlier ranking work had already seen);
//   tslib     prose and identifier queries over TypeScript's own declaration files
//             (node_modules/typescript/lib/lib.*.d.ts: interfaces, methods and JSDoc).
// Every third query of each set (`held: true`) is held out: ranking is tuned on the rest and the
// held-out part is reported apart, as a check that the tuning did not just fit the queries.
// Answers were written from knowledge of each library, not from what rift returns; a query lists
// several answers only when they are interchangeable for the asker (the dom and webworker copies
// of one interface, an overload set, a function and the method it wraps).

import type { RelevanceQuery } from './relevance.ts';

export interface HeldQuery extends RelevanceQuery {
  held: boolean;
}

type Spec = [kind: RelevanceQuery['kind'], query: string, answers: Array<[path: string, ...names: string[]]>];

/** Marks every third query (the 3rd, 6th, …) held out. */
function build(specs: readonly Spec[]): HeldQuery[] {
  return specs.map(([kind, query, answers], i) => ({
    kind,
    query,
    answers: answers.flatMap(([path, ...names]) => (names.length === 0 ? [{ path }] : names.map((name) => ({ path, name })))),
    held: i % 3 === 2,
  }));
}

const DOM = 'lib.dom.d.ts';
const WORKER = 'lib.webworker.d.ts';
const ES5 = 'lib.es5.d.ts';

export const TSLIB_SET: readonly HeldQuery[] = build([
  // ---- prose ----------------------------------------------------------------------------------
  ['prose', 'remove whitespace from both ends of a string', [[ES5, 'String.trim']]],
  ['prose', 'find the last element that satisfies a condition', [['lib.es2023.array.d.ts', 'Array.findLast']]],
  ['prose', 'flatten nested arrays into one array', [['lib.es2019.array.d.ts', 'Array.flat']]],
  ['prose', 'convert a javascript value to a json string', [[ES5, 'JSON.stringify']]],
  ['prose', 'pad the start of a string to a given length', [['lib.es2017.string.d.ts', 'String.padStart']]],
  ['prose', 'wait until all promises have settled', [['lib.es2020.promise.d.ts', 'PromiseConstructor.allSettled']]],
  ['prose', 'prevent modification of an object', [[ES5, 'ObjectConstructor.freeze']]],
  ['prose', 'deep copy a value using the structured clone algorithm', [[DOM, 'structuredClone']]],
  ['prose', 'schedule a function to run after a delay', [[DOM, 'setTimeout'], [WORKER, 'setTimeout']]],
  ['prose', 'make a type whose properties are all optional', [[ES5, 'Partial']]],
  ['prose', 'the return type of a function type', [[ES5, 'ReturnType']]],
  ['prose', 'generate a cryptographically random uuid', [[DOM, 'Crypto.randomUUID'], [WORKER, 'Crypto.randomUUID']]],
  ['prose', 'compute a hash digest of binary data', [[DOM, 'SubtleCrypto.digest'], [WORKER, 'SubtleCrypto.digest']]],
  ['prose', 'parse a string into an integer', [[ES5, 'parseInt']]],
  ['prose', 'encode a string for use in a url component', [[ES5, 'encodeURIComponent']]],
  ['prose', 'store a value in local storage by key', [[DOM, 'Storage.setItem']]],
  ['prose', 'add a new entry to the browser session history', [[DOM, 'History.pushState']]],
  ['prose', 'copy text to the clipboard', [[DOM, 'Clipboard.writeText']]],
  ['prose', 'get the position and size of an element on screen', [[DOM, 'Element.getBoundingClientRect']]],
  ['prose', 'observe changes to the size of an element', [[DOM, 'ResizeObserver']]],
  ['prose', 'watch for changes being made to the dom tree', [[DOM, 'MutationObserver']]],
  ['prose', 'cancel an in flight fetch request', [[DOM, 'AbortController'], [WORKER, 'AbortController']]],
  ['prose', 'number of milliseconds since the unix epoch', [[ES5, 'DateConstructor.now', 'Date.getTime']]],
  ['prose', 'format a number with a fixed number of decimal places', [[ES5, 'Number.toFixed']]],
  ['prose', 'check whether a value is a safe integer', [['lib.es2015.core.d.ts', 'NumberConstructor.isSafeInteger']]],
  ['prose', 'locale sensitive pluralization rules', [['lib.es2018.intl.d.ts', 'Intl.PluralRules']]],
  ['prose', 'split text into graphemes words or sentences', [['lib.es2022.intl.d.ts', 'Intl.Segmenter']]],
  ['prose', 'hold a reference to an object without preventing garbage collection', [['lib.es2021.weakref.d.ts', 'WeakRef']]],
  ['prose', 'run a callback when an object is garbage collected', [['lib.es2021.weakref.d.ts', 'FinalizationRegistry']]],
  ['prose', 'group array elements by a key into an object', [['lib.es2024.object.d.ts', 'ObjectConstructor.groupBy']]],
  ['prose', 'read the contents of a file as text in the browser', [[DOM, 'FileReader.readAsText']]],
  ['prose', 'register a service worker script', [[DOM, 'ServiceWorkerContainer.register']]],
  ['prose', 'parse an html string into a document', [[DOM, 'DOMParser.parseFromString']]],
  ['prose', 'get the computed css styles of an element', [[DOM, 'Window.getComputedStyle', 'getComputedStyle']]],
  ['prose', 'send data to a server in the background when the page unloads', [[DOM, 'Navigator.sendBeacon']]],
  ['prose', 'sorted copy of an array without changing the original', [['lib.es2023.array.d.ts', 'Array.toSorted']]],
  // ---- identifiers ----------------------------------------------------------------------------
  ['identifier', 'padStart', [['lib.es2017.string.d.ts', 'String.padStart']]],
  ['identifier', 'structuredClone', [[DOM, 'structuredClone']]],
  ['identifier', 'fromEntries', [['lib.es2019.object.d.ts', 'ObjectConstructor.fromEntries']]],
  ['identifier', 'querySelector', [[DOM, 'ParentNode.querySelector']]],
  ['identifier', 'getElementById', [[DOM, 'NonElementParentNode.getElementById', 'Document.getElementById']]],
  ['identifier', 'IntersectionObserver', [[DOM, 'IntersectionObserver']]],
  ['identifier', 'replaceAll', [['lib.es2021.string.d.ts', 'String.replaceAll']]],
  ['identifier', 'NonNullable', [[ES5, 'NonNullable']]],
  ['identifier', 'allSettled', [['lib.es2020.promise.d.ts', 'PromiseConstructor.allSettled']]],
  ['identifier', 'getRandomValues', [[DOM, 'Crypto.getRandomValues'], [WORKER, 'Crypto.getRandomValues']]],
  ['identifier', 'Array flatMap', [['lib.es2019.array.d.ts', 'Array.flatMap']]],
  ['identifier', 'findLastIndex', [['lib.es2023.array.d.ts', 'Array.findLastIndex']]],
  ['identifier', 'Intl RelativeTimeFormat', [['lib.es2020.intl.d.ts', 'Intl.RelativeTimeFormat']]],
  ['identifier', 'JSON parse', [[ES5, 'JSON.parse']]],
  ['identifier', 'AbortSignal', [[DOM, 'AbortSignal'], [WORKER, 'AbortSignal']]],
  ['identifier', 'isWellFormed', [['lib.es2024.string.d.ts', 'String.isWellFormed']]],
  ['identifier', 'hasOwn', [['lib.es2022.object.d.ts', 'ObjectConstructor.hasOwn']]],
  ['identifier', 'DataView getUint32', [[ES5, 'DataView.getUint32']]],
  ['identifier', 'createTreeWalker', [[DOM, 'Document.createTreeWalker']]],
  ['identifier', 'toReversed', [['lib.es2023.array.d.ts', 'Array.toReversed']]],
  ['identifier', 'Atomics wait', [['lib.es2017.sharedmemory.d.ts', 'Atomics.wait'], ['lib.es2020.sharedmemory.d.ts', 'Atomics.wait']]],
  ['identifier', 'ProxyHandler', [['lib.es2015.proxy.d.ts', 'ProxyHandler']]],
]);

export const STDLIB2_SET: readonly HeldQuery[] = build([
  // ---- prose ----------------------------------------------------------------------------------
  ['prose', 'delete a directory and everything in it', [['shutil.py', 'rmtree']]],
  ['prose', 'how much free space is left on the disk', [['shutil.py', 'disk_usage']]],
  ['prose', 'create a directory and any missing parents', [['os.py', 'makedirs']]],
  ['prose', 'find files matching a wildcard pattern', [['glob.py', 'glob']]],
  ['prose', 'the n largest items of a collection', [['heapq.py', 'nlargest']]],
  ['prose', 'insert into a sorted list keeping it sorted', [['bisect.py', 'insort_right']]],
  ['prose', 'fix some arguments of a function and get a new callable', [['functools.py', 'partial']]],
  ['prose', 'ignore a specific exception inside a with block', [['contextlib.py', 'suppress']]],
  ['prose', 'send print output to a different file temporarily', [['contextlib.py', 'redirect_stdout']]],
  ['prose', 'generate a secure random token for a password reset link', [['secrets.py', 'token_urlsafe', 'token_hex']]],
  ['prose', 'split a shell command line into words', [['shlex.py', 'split']]],
  ['prose', 'run a function once after some seconds in another thread', [['threading.py', 'Timer']]],
  ['prose', 'open a tcp connection to a host and port', [['socket.py', 'create_connection']]],
  ['prose', 'download the contents of a url', [['urllib/request.py', 'urlopen']]],
  ['prose', 'escape html special characters', [['html/__init__.py', 'escape']]],
  ['prose', 'make a deep copy of an object', [['copy.py', 'deepcopy']]],
  ['prose', 'get the parameters a function accepts', [['inspect.py', 'signature']]],
  ['prose', 'format the current exception and its traceback as a string', [['traceback.py', 'format_exc']]],
  ['prose', 'measure how long a small snippet of code takes to run', [['timeit.py', 'timeit']]],
  ['prose', 'is a year a leap year', [['calendar.py', 'isleap']]],
  ['prose', 'parse a toml document', [['tomllib/_parser.py', 'loads', 'load']]],
  ['prose', 'exact rational number arithmetic', [['fractions.py', 'Fraction']]],
  ['prose', 'standard deviation of a sample', [['statistics.py', 'stdev']]],
  ['prose', 'shuffle a list in place randomly', [['random.py', 'Random.shuffle']]],
  ['prose', 'remove common leading indentation from text', [['textwrap.py', 'dedent']]],
  ['prose', 'suggest similar words for a misspelled one', [['difflib.py', 'get_close_matches']]],
  ['prose', 'convert a dataclass instance to a dictionary', [['dataclasses.py', 'asdict']]],
  ['prose', 'temporary file with a name that is removed when closed', [['tempfile.py', 'NamedTemporaryFile']]],
  ['prose', 'recursively list files under a directory matching a pattern', [['pathlib.py', 'Path.rglob']]],
  ['prose', 'change the extension of a file path', [['pathlib.py', 'PurePath.with_suffix']]],
  ['prose', 'split a filename into its name and extension', [['posixpath.py', 'splitext']]],
  ['prose', 'compare two directories', [['filecmp.py', 'dircmp']]],
  ['prose', 'start a new log file every day at midnight', [['logging/handlers.py', 'TimedRotatingFileHandler']]],
  ['prose', 'configure logging from a dictionary', [['logging/config.py', 'dictConfig']]],
  ['prose', 'options that cannot be used together on the command line', [['argparse.py', '_ActionsContainer.add_mutually_exclusive_group']]],
  ['prose', 'cancel an awaitable if it takes too long', [['asyncio/tasks.py', 'wait_for']]],
  ['prose', 'limit how many coroutines run at the same time', [['asyncio/locks.py', 'Semaphore']]],
  ['prose', 'run functions in a pool of threads', [['concurrent/futures/thread.py', 'ThreadPoolExecutor']]],
  ['prose', 'parse an http cookie header', [['http/cookies.py', 'SimpleCookie']]],
  ['prose', 'split an email address into name and address', [['email/utils.py', 'parseaddr']]],
  ['prose', 'attach a file to an email', [['email/message.py', 'MIMEPart.add_attachment']]],
  ['prose', 'derive a key from a password with many iterations', [['hashlib.py', 'pbkdf2_hmac']]],
  ['prose', 'parse a date from a string with a format', [['datetime.py', 'datetime.strptime']]],
  ['prose', 'replace a function with a fake object during a test', [['unittest/mock.py', 'patch']]],
  ['prose', 'sort items in dependency order', [['graphlib.py', 'TopologicalSorter']]],
  ['prose', 'check whether a website allows crawling a page', [['urllib/robotparser.py', 'RobotFileParser']]],
  ['prose', 'convert rgb color to hue saturation value', [['colorsys.py', 'rgb_to_hsv']]],
  ['prose', 'compute a property once and remember it', [['functools.py', 'cached_property']]],
  // ---- identifiers ----------------------------------------------------------------------------
  ['identifier', 'rmtree', [['shutil.py', 'rmtree']]],
  ['identifier', 'nlargest', [['heapq.py', 'nlargest']]],
  ['identifier', 'bisect_left', [['bisect.py', 'bisect_left']]],
  ['identifier', 'ExitStack', [['contextlib.py', 'ExitStack']]],
  ['identifier', 'token_hex', [['secrets.py', 'token_hex']]],
  ['identifier', 'shlex quote', [['shlex.py', 'quote']]],
  ['identifier', 'PriorityQueue', [['queue.py', 'PriorityQueue']]],
  ['identifier', 'create_default_context', [['ssl.py', 'create_default_context']]],
  ['identifier', 'deepcopy', [['copy.py', 'deepcopy']]],
  ['identifier', 'getsource', [['inspect.py', 'getsource']]],
  ['identifier', 'catch_warnings', [['warnings.py', 'catch_warnings']]],
  ['identifier', 'monthrange', [['calendar.py', 'monthrange']]],
  ['identifier', 'ip_network', [['ipaddress.py', 'ip_network']]],
  ['identifier', 'capwords', [['string.py', 'capwords']]],
  ['identifier', 'TypedDict', [['typing.py', 'TypedDict']]],
  ['identifier', 'ChainMap', [['collections/__init__.py', 'ChainMap']]],
  ['identifier', 'WeakValueDictionary', [['weakref.py', 'WeakValueDictionary']]],
  ['identifier', 'mkstemp', [['tempfile.py', 'mkstemp']]],
  ['identifier', 'read_text', [['pathlib.py', 'Path.read_text']]],
  ['identifier', 'relpath', [['posixpath.py', 'relpath']]],
  ['identifier', 'writestr', [['zipfile.py', 'ZipFile.writestr']]],
  ['identifier', 'SysLogHandler', [['logging/handlers.py', 'SysLogHandler']]],
  ['identifier', 'add_subparsers', [['argparse.py', 'ArgumentParser.add_subparsers']]],
  ['identifier', 'ProcessPoolExecutor', [['concurrent/futures/process.py', 'ProcessPoolExecutor']]],
  ['identifier', 'formatdate', [['email/utils.py', 'formatdate']]],
  ['identifier', 'urlsafe_b64encode', [['base64.py', 'urlsafe_b64encode']]],
  ['identifier', 'uuid5', [['uuid.py', 'uuid5']]],
  ['identifier', 'MagicMock', [['unittest/mock.py', 'MagicMock']]],
  ['identifier', 'itemgetter', [['operator.py', 'itemgetter']]],
  ['identifier', 'urljoin', [['urllib/parse.py', 'urljoin']]],
  ['identifier', 'singledispatch', [['functools.py', 'singledispatch']]],
  ['identifier', 'getboolean', [['configparser.py', 'RawConfigParser.getboolean']]],
]);

// werkzeug: prose and identifier queries over pallets/werkzeug (the whole repository: src/,
// tests/, docs/, examples/), written from its documentation before rift answered any of them
// and never tuned on — the set ranking changes are checked against, held-out part included.
const WZ = 'src/werkzeug';
const overloads = (name: string, n: number) => [name, ...Array.from({ length: n - 1 }, (_, i) => `${name}~${i + 2}`)];

export const WERKZEUG_SET: readonly HeldQuery[] = build([
  // ---- prose ----------------------------------------------------------------------------------
  ['prose', 'hash a password for storing it', [[`${WZ}/security.py`, 'generate_password_hash']]],
  ['prose', 'verify a password against a stored hash', [[`${WZ}/security.py`, 'check_password_hash']]],
  ['prose', 'make an uploaded file name safe to store on disk', [[`${WZ}/utils.py`, 'secure_filename']]],
  ['prose', 'join a directory and an untrusted path without escaping it', [[`${WZ}/security.py`, 'safe_join']]],
  ['prose', 'return a response that redirects the client to another url', [[`${WZ}/utils.py`, 'redirect']]],
  ['prose', 'raise an http error for a status code', [[`${WZ}/exceptions.py`, 'abort']]],
  ['prose', 'send a file from a directory to the client', [[`${WZ}/utils.py`, 'send_from_directory']]],
  ['prose', 'format a timestamp for an http header', [[`${WZ}/http.py`, 'http_date']]],
  ['prose', 'parse a cookie header into a dict', [[`${WZ}/http.py`, 'parse_cookie']]],
  ['prose', 'build a set-cookie header', [[`${WZ}/http.py`, 'dump_cookie']]],
  ['prose', 'parse a header value with options like content type', [[`${WZ}/http.py`, 'parse_options_header']]],
  ['prose', 'import an object from a dotted string path', [[`${WZ}/utils.py`, 'import_string']]],
  ['prose', 'start a development server with automatic reloading', [[`${WZ}/serving.py`, 'run_simple']]],
  ['prose', 'trust forwarded headers from a reverse proxy', [[`${WZ}/middleware/proxy_fix.py`, 'ProxyFix']]],
  ['prose', 'serve static files from a folder as wsgi middleware', [[`${WZ}/middleware/shared_data.py`, 'SharedDataMiddleware']]],
  ['prose', 'combine several wsgi applications under different url prefixes', [[`${WZ}/middleware/dispatcher.py`, 'DispatcherMiddleware']]],
  ['prose', 'profile each request and print timing statistics', [[`${WZ}/middleware/profiler.py`, 'ProfilerMiddleware']]],
  ['prose', 'dictionary that holds several values per key', [[`${WZ}/datastructures/structures.py`, 'MultiDict']]],
  ['prose', 'uploaded file in a form submission', [[`${WZ}/datastructures/file_storage.py`, 'FileStorage']]],
  ['prose', 'save an uploaded file to disk', [[`${WZ}/datastructures/file_storage.py`, 'FileStorage.save']]],
  ['prose', 'proxy to an object bound to the current context', [[`${WZ}/local.py`, 'LocalProxy']]],
  ['prose', 'match a url path to an endpoint', [[`${WZ}/routing/map.py`, ...overloads('MapAdapter.match', 3)]]],
  ['prose', 'build a url for an endpoint with arguments', [[`${WZ}/routing/map.py`, 'MapAdapter.build']]],
  ['prose', 'convert an internationalized url to ascii', [[`${WZ}/urls.py`, 'iri_to_uri']]],
  ['prose', 'reconstruct the full url of the current request', [[`${WZ}/wsgi.py`, 'get_current_url']]],
  ['prose', 'limit how many bytes can be read from the input stream', [[`${WZ}/wsgi.py`, 'LimitedStream']]],
  ['prose', 'generate a self signed certificate for https in development', [[`${WZ}/serving.py`, 'make_ssl_devcert', 'generate_adhoc_ssl_context', 'generate_adhoc_ssl_pair']]],
  ['prose', 'simulate requests to a wsgi application in tests', [[`${WZ}/test.py`, 'Client']]],
  ['prose', 'compute an etag for response data', [[`${WZ}/http.py`, 'generate_etag']]],
  ['prose', 'check whether a resource changed since the client cached it', [[`${WZ}/http.py`, 'is_resource_modified']]],
  ['prose', 'pick the best match from the accept header', [[`${WZ}/datastructures/accept.py`, ...overloads('Accept.best_match', 3)]]],
  ['prose', 'a property computed once per instance and cached', [[`${WZ}/utils.py`, 'cached_property']]],
  // ---- identifiers ----------------------------------------------------------------------------
  ['identifier', 'secure_filename', [[`${WZ}/utils.py`, 'secure_filename']]],
  ['identifier', 'MultiDict', [[`${WZ}/datastructures/structures.py`, 'MultiDict']]],
  ['identifier', 'ImmutableMultiDict', [[`${WZ}/datastructures/structures.py`, 'ImmutableMultiDict']]],
  ['identifier', 'ProxyFix', [[`${WZ}/middleware/proxy_fix.py`, 'ProxyFix']]],
  ['identifier', 'run_simple', [[`${WZ}/serving.py`, 'run_simple']]],
  ['identifier', 'parse_options_header', [[`${WZ}/http.py`, 'parse_options_header']]],
  ['identifier', 'EnvironBuilder', [[`${WZ}/test.py`, 'EnvironBuilder']]],
  ['identifier', 'Headers add_header', [[`${WZ}/datastructures/headers.py`, 'Headers.add_header']]],
  ['identifier', 'MapAdapter build', [[`${WZ}/routing/map.py`, 'MapAdapter.build']]],
  ['identifier', 'FileStorage save', [[`${WZ}/datastructures/file_storage.py`, 'FileStorage.save']]],
  ['identifier', 'LocalStack', [[`${WZ}/local.py`, 'LocalStack']]],
  ['identifier', 'BadRequest', [[`${WZ}/exceptions.py`, 'BadRequest']]],
  ['identifier', 'iter_rules', [[`${WZ}/routing/map.py`, 'Map.iter_rules']]],
  ['identifier', 'dump_cookie', [[`${WZ}/http.py`, 'dump_cookie']]],
  ['identifier', 'Response set_cookie', [[`${WZ}/sansio/response.py`, 'Response.set_cookie']]],
  ['identifier', 'get_current_url', [[`${WZ}/wsgi.py`, 'get_current_url']]],
]);
