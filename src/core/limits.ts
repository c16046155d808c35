// Every bound rift enforces, by name. Crossing one refuses with `limit_exceeded`.

export const FILE_BYTES_MAX = 4 * 1024 * 1024;
export const WORKSPACE_FILES_MAX = 200_000;
export const WORKSPACE_DEPTH_MAX = 64;
export const RESULTS_MAX = 1000;
export const GET_SYMBOL_LIMIT_DEFAULT = 5;
export const SEARCH_LIMIT_DEFAULT = 20;
export const NAME_LENGTH_MAX = 4096;
export const PROJECT_PATH_BYTES_MAX = 4096;
/** Bytes of one project path segment: the longest file name Linux filesystems hold (NAME_MAX). */
export const PATH_SEGMENT_BYTES_MAX = 255;
export const ID_LENGTH_MAX = 8192;
export const SYNTAX_NODES_MAX = 250_000;
export const SYNTAX_DEPTH_MAX = 512;
/**
 * Wall-clock budget of one parse. A file whose parse runs past it is stored unparsed (searchable as
 * text, `nodes` answers content_unavailable naming it); a typical 4 MiB file parses in under 1 s.
 */
export const PARSE_TIME_MAX_MS = 5000;
export const CONFIG_BYTES_MAX = 256 * 1024;
export const SOURCE_PATTERNS_MAX = 512;
export const HOOKS_MAX = 32;
export const WORKSPACE_PAGE_SOURCES_MAX = 1000;
/** How long a read waits for the first index build before `temporarily_unavailable`. */
export const INITIAL_INDEX_WAIT_MS = 120_000;
/**
 * Watcher events are coalesced for this long before an incremental batch runs. The watcher
 * already batches a burst (its callbacks come at least 50 ms apart while writes continue), so
 * this gathers only what arrives together — a callback and the drifts reads found meanwhile —
 * and adds little to an edit's way to the next read.
 */
export const WATCH_DEBOUNCE_MS = 5;
/**
 * Watcher events in one batch past which some may have been lost (the kernel's inotify queue
 * holds 16,384 by default, and the backend drops an overflow silently): the watcher is
 * resubscribed and the tree rescanned.
 */
export const WATCH_BURST_EVENTS = 1000;
/** Shortest time between two watcher resyncs; one asked for sooner runs when it has passed. */
export const WATCH_RESYNC_INTERVAL_MS = 2000;
/** First wait before a failed watcher is subscribed again (the tree is rescanned each time); doubles. */
export const WATCH_RETRY_MS = 1000;
/** Longest wait between retries of a failed watcher. */
export const WATCH_RETRY_MAX_MS = 30_000;
/** After an index update fails (the store busy past its wait, workers that keep dying), the wait before the tree is rescanned. */
export const UPDATE_RETRY_MS = 1000;
/** The longest such wait, while rescans fail too (it doubles from UPDATE_RETRY_MS). */
export const UPDATE_RETRY_MAX_MS = 30_000;
/** Largest `body` a change tool accepts (resolved bytes, inline or from `{file}`). */
export const CHANGE_BODY_BYTES_MAX = 1024 * 1024;
/** Largest `patch` body (resolved bytes). */
export const PATCH_BYTES_MAX = 4 * 1024 * 1024;
/** Most files one patch may address. */
export const PATCH_FILES_MAX = 64;
/** Most hunks one patch may carry across all its files. */
export const PATCH_HUNKS_MAX = 4096;
/** Re-parse findings reported per change. */
export const CHANGE_PARSE_DIAGNOSTICS_MAX = 16;
/** Preconditions one refusal carries. */
export const CHANGE_PRECONDITIONS_MAX = 16;
/** Text of a precondition value, in bytes. */
export const PRECONDITION_TEXT_BYTES_MAX = 256;
/** Project paths one precondition names. */
export const PRECONDITION_PATHS_MAX = 64;
/** Bytes quoted from each stream of a failed hook. */
export const HOOK_QUOTE_BYTES_MAX = 1024;
/** Bytes a hook stream is drained to before the rest is discarded (the count still runs). */
export const HOOK_DRAIN_BYTES_MAX = 64 * 1024 * 1024;
/** Edit-graph budget for counting changed lines; past it the count falls back to the changed region. */
export const LINE_DIFF_BUDGET = 4_000_000;
/** Parse worker exits in a row (no answer between them) one indexing run survives before it fails. */
export const WORKER_EXITS_MAX = 8;
/** A parse worker silent this long past its files' parse budgets is stuck: it is replaced. */
export const WORKER_STALL_MS = 30_000;
/**
 * A parse worker that has not loaded its grammars this long after it was started is stuck: it is
 * replaced. Apart from the stall clock, which starts once it is ready: on a loaded machine a
 * start alone can take longer than WORKER_STALL_MS, and counting it would replace healthy workers.
 */
export const WORKER_START_MAX_MS = 300_000;
/**
 * Parsing a serving engine's idle parse worker spends on samples once its grammars are loaded,
 * so its first real parses run optimized code (src/syntax/warm.ts); stopped by any request.
 */
export const PARSER_WARM_MS = 150;
/** Languages a parse worker warms on, the tree's most common first. */
export const WARM_LANGUAGES_MAX = 3;
/** How often rift may try to bring its commit-graph for history walks up to a new commit (src/history/commit-graph.ts). */
export const COMMIT_GRAPH_RETRY_MS = 60_000;
/** Heap of one parse worker: past it the worker alone ends (and is replaced), never the process. */
export const PARSE_WORKER_HEAP_MB = 1024;
/** Files one search may parse on demand through `paths.force_include`. */
export const FORCE_INCLUDE_FILES_MAX = 256;
/**
 * Largest request rift reads: an HTTP body at `rift server`, a line of stdio MCP at `rift mcp`
 * (a 4 MiB patch survives JSON escaping). A longer stdio line is drained unread and answered
 * `limit_exceeded`; the server goes on serving.
 */
export const SERVER_REQUEST_BYTES_MAX = 32 * 1024 * 1024;
/** A workspace server with no request for this long exits (`rift server --idle-timeout`). */
export const SERVER_IDLE_MS_DEFAULT = 30 * 60_000;
/** How long `rift mcp` and the agent wait for a workspace server to start and answer. */
export const SERVER_START_WAIT_MS = 30_000;
/** Longest shell command the agent's permission check parses; a longer one cannot be checked. */
export const SHELL_COMMAND_BYTES_MAX = 64 * 1024;
/** Deepest `sh -c '<literal>'` nesting the permission check follows before it gives up. */
export const SHELL_NESTING_MAX = 8;
/** How long an engine-backed change waits for a language engine to confirm readiness (overridable per engine). */
export const ENGINE_READY_WAIT_MS = 30_000;
/** Longest a single request to a language engine may take before it is cancelled. */
export const ENGINE_REQUEST_TIMEOUT_MS = 60_000;
/** How long `initialize` may take before the engine counts as failed to start. */
export const ENGINE_START_TIMEOUT_MS = 30_000;
/** How long a change waits for the engine's diagnostics of the files it wrote. */
export const ENGINE_DIAGNOSTICS_WAIT_MS = 10_000;
/** Engine diagnostics attached to one change result. */
export const ENGINE_DIAGNOSTICS_MAX = 64;
/** Documents kept open in one engine; the least recently synced is closed beyond it. */
export const ENGINE_OPEN_DOCUMENTS_MAX = 512;
/** First delay before restarting a crashed engine; it doubles per consecutive crash. */
export const ENGINE_RESTART_BACKOFF_MS = 250;
/** Longest delay between restarts of a crashing engine. */
export const ENGINE_RESTART_BACKOFF_MAX_MS = 30_000;
/** Consecutive crashes (without reaching readiness) after which an engine is left failed. */
export const ENGINE_RESTARTS_MAX = 5;
/** How long shutdown waits for an engine to exit before killing it. */
export const ENGINE_SHUTDOWN_WAIT_MS = 3_000;
/** Bytes of an engine's stderr kept for the log when it exits. */
export const ENGINE_STDERR_BYTES_MAX = 4096;
/** Files one engine-proposed edit may touch. */
export const ENGINE_EDIT_FILES_MAX = 1000;
/** Surviving occurrences of an old name reported after a rename. */
export const RENAME_SURVIVORS_MAX = 100;
/** Python references a move could not rewrite, reported as warnings. */
export const MOVE_UNREWRITTEN_MAX = 100;
/** References named by a `no_references` refusal or a forced removal's warning. */
export const REMOVE_REFERENCES_REPORTED_MAX = 64;
/** How long a change waits for the tree's cross-process lock before `temporarily_unavailable`. */
export const CHANGE_LOCK_WAIT_MS = 30_000;
/** Longest pause between two attempts to take the tree lock (the backoff starts at 1 ms). */
export const CHANGE_LOCK_BACKOFF_MAX_MS = 16;
/** Changes the tree's change log keeps so other processes can refresh what they missed. */
export const CHANGE_LOG_ENTRIES_MAX = 4096;
/**
 * How long a write to `.rift/rift.db` waits while another rift process on the tree writes (the
 * SQLite busy timeout) before it fails (a change then answers `storage_failure`, io SQLITE_BUSY):
 * one write batch, or an end-of-build merge of a large tree, holds the database for seconds at most.
 */
export const STORE_BUSY_WAIT_MS = 30_000;

/**
 * A wait in milliseconds: `limit`, or the environment variable `name` when it holds a
 * non-negative integer (tests shorten waits this way: RIFT_STORE_BUSY_WAIT_MS,
 * RIFT_CHANGE_LOCK_WAIT_MS, RIFT_WATCH_DEBOUNCE_MS, RIFT_WATCH_RESYNC_INTERVAL_MS).
 */
export function msFromEnv(name: string, limit: number): number {
  const raw = process.env[name];
  const value = Number(raw);
  return raw && Number.isInteger(value) && value >= 0 ? value : limit;
}

/** The busy wait of a store connection (STORE_BUSY_WAIT_MS unless a test shortens it). */
export const storeBusyWaitMs = (): number => msFromEnv('RIFT_STORE_BUSY_WAIT_MS', STORE_BUSY_WAIT_MS);
/** Longest pause between two attempts to open an index store other processes hold busy (the backoff starts at 1 ms). */
export const STORE_OPEN_BACKOFF_MAX_MS = 50;

/** How long the one-time probe of bubblewrap may take before the OS sandbox counts as unusable. */
export const SANDBOX_PROBE_TIMEOUT_MS = 5000;

/** How long `execute` waits for another evaluation's refresh of the same execution copy before `temporarily_unavailable`. */
export const EXECUTE_REFRESH_LOCK_WAIT_MS = 30_000;
/** Bytes one stream of an evaluation may carry before the run is killed (the first [execution].max_output are kept). */
export const EXECUTE_DRAIN_BYTES_MAX = 64 * 1024 * 1024;

// MCP servers as the agent's tools, and the ACP front end.
/** How long the agent waits for one MCP server to start and list its tools (reference B.11). */
export const MCP_START_TIMEOUT_MS = 30_000;
/** Each request to an MCP server the agent uses, a tool call included (reference B.11). */
export const MCP_REQUEST_TIMEOUT_MS = 60_000;
/** Tools one MCP server may offer the model; the rest are not registered (with a warning). */
export const MCP_TOOLS_PER_SERVER_MAX = 128;
/** Longest tool name a model provider accepts; a longer `<server>_<tool>` is not registered. */
export const TOOL_NAME_CHARS_MAX = 64;
/** Bytes of an MCP tool result the model sees; past it the middle is cut, with a note saying so. */
export const MCP_RESULT_BYTES_MAX = 50_000;
/** Bytes of a stdio MCP server's stderr kept to explain why it failed. */
export const MCP_STDERR_TAIL_BYTES = 2000;
/** Largest file an ACP tool call shows as a diff (old or new text); larger ones show only their location. */
export const ACP_DIFF_BYTES_MAX = 1024 * 1024;

// The terminal UI (src/tui).
/** Prompts kept in the input history (Up/Down), across sessions. */
export const INPUT_HISTORY_MAX = 500;
/** Rows the live region may use at most: Ink redraws everything once its output fills the screen. */
export const LIVE_ROWS_MAX = 40;
/** Rows of a streaming reply's unfinished paragraph shown live (finished lines go to the transcript). */
export const STREAM_TAIL_ROWS_MAX = 6;
/** Sessions listed by /sessions and the /resume picker. */
export const SESSIONS_SHOWN_MAX = 20;
/** Diff lines /diff shows per file. */
export const DIFF_LINES_SHOWN_MAX = 200;
/** Frame interval of the TUI's render scheduler (≈30 frames a second). */
export const FRAME_MS = 33;
/** Longest command line `rift --serve` reads from stdin; a longer one is dropped with a warning. */
export const SERVE_LINE_BYTES_MAX = 16 * 1024 * 1024;
/** Longest line of a model server's streamed reply (NDJSON or SSE). */
export const MODEL_STREAM_LINE_BYTES_MAX = 16 * 1024 * 1024;
/** How long the startup check of the model (and a model switch's) may take in all, retries included. */
export const PREFLIGHT_TIMEOUT_MS = 5_000;
/** Damaged stores kept under `.rift/` (as `rift.db.damaged-<time>`) after being set aside; older ones are removed. */
export const DAMAGED_STORES_KEPT = 2;
/** Most hops one traversal walks (`traversal.depth`). */
export const TRAVERSAL_DEPTH_MAX = 8;
/** Most symbols one traversal visits before it stops with `traversal_truncated`. */
export const TRAVERSAL_NODES_MAX = 1000;
/** Log events waiting for the writer; past it, events are dropped and the drop is recorded. */
export const LOG_QUEUE_MAX = 512;
/** How long an admitted log event waits before the writer runs. */
export const LOG_FLUSH_MS = 50;
/** Hubs `rift://map` lists. */
export const MAP_HUBS_MAX = 20;
/** Directory levels `rift://map` modules unfold; deeper directories fold into their ancestor at this depth. */
export const MAP_MODULE_DEPTH = 3;
/**
 * `rift://map` is computed ahead of reads after each index publication only while computing it
 * took at most this long: on a large tree (its entry points and hubs read every file's
 * `__main__` calls and every graph edge: seconds at 70k files) a computation ahead of each edit
 * would hold the thread answering reads, so the next read of the map computes it instead.
 */
export const MAP_AHEAD_MS = 250;
/** Files whose verified on-disk state the store remembers, so a repeat read takes only a span. */
export const VERIFIED_FILES_MAX = 65_536;
/** Entries (files, links, submodules) a revision's tree may list before a revision read refuses. */
export const REVISION_TREE_ENTRIES_MAX = 65_536;
/** Output one git command (a tree listing, a history walk) may produce. */
export const GIT_OUTPUT_BYTES_MAX = 256 * 1024 * 1024;
/** Revision snapshots kept at once; the least recently used goes first. */
export const REVISION_SNAPSHOTS_MAX = 8;
/** Bytes all kept revision snapshots may hold together (their indexes and the blob bytes they serve). */
export const REVISION_SNAPSHOT_BYTES_MAX = 512 * 1024 * 1024;
/** Parsed blobs kept by content for reuse across revisions, least recently used first out. */
export const REVISION_BLOBS_MAX = 200_000;
/** Bytes of parsed blobs kept for reuse across revisions. */
export const REVISION_BLOB_BYTES_MAX = 512 * 1024 * 1024;
/** Declarations sent to the embedding server in one request while the semantic tier prepares. */
export const SEMANTIC_BATCH_SIZE = 32;
/** Bytes of a declaration's source (from its start) that its embedded text carries. */
export const SEMANTIC_TEXT_BYTES_MAX = 2048;
/** Declarations the semantic lane hands to fusion per query. */
export const SEMANTIC_CANDIDATES_MAX = 100;
/** How long one embedding request may take before the tier is declared unavailable. */
export const EMBED_TIMEOUT_MS = 60_000;
/** Projections `projection_list` returns per page by default (`limit` may ask for up to 1000). */
export const PROJECTION_LIST_DEFAULT = 100;
/** Change records `rift://changes` lists per page. */
export const CHANGES_PAGE_RECORDS = 100;
/** Entries one page of a `rift://fs` directory listing holds. */
export const FS_PAGE_ENTRIES = 1000;
/** Bytes one `rift://fs` range read returns: the most `length` may ask for, and its default. */
export const FS_READ_BYTES_MAX = 1024 * 1024;
/** Candidates one `rift swarm` runs at once (with `--explore`, the hot copies count). */
export const SWARM_CANDIDATES_MAX = 8;
/** How long one swarm candidate may run before it is stopped and reported as timed out. */
export const SWARM_CANDIDATE_TIMEOUT_MS = 30 * 60_000;
/** How long a task's test command may run in a candidate's tree. */
export const SWARM_TEST_TIMEOUT_MS = 10 * 60_000;
/** Bytes of one candidate's patch the judge is shown; the rest is cut with a note. */
export const SWARM_JUDGE_PATCH_BYTES_MAX = 24 * 1024;
/** Bytes a saved candidate patch may hold. */
export const SWARM_PATCH_BYTES_MAX = 64 * 1024 * 1024;
/** How long `rift merge` waits for the tree lock. */
export const MERGE_LOCK_WAIT_MS = 10_000;
