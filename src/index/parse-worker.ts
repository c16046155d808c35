import { parentPort, workerData } from 'node:worker_threads';
import { Feed } from '../history/feed.ts';
import { Repository } from '../history/git.ts';
import { walkSegment, type SegmentJob } from '../history/timeline.ts';
import { PARSER_WARM_MS } from '../core/limits.ts';
import { initSyntax } from '../syntax/runtime.ts';
import { warmParser } from '../syntax/warm.ts';
import { parseBytes, runParseItem, type ParseItem, type ParseOutcome } from './parse-job.ts';

// Worker thread entry: parses batches sent by WorkerPool, blobs of a revision, and walks
// segments of a declaration's history (reading the versions through a repository of its own).

type Request =
  | { id: number; root: string; maxFileBytes: number; items: ParseItem[] }
  | { id: number; blob: { item: ParseItem; bytes: Uint8Array; sha256: string } }
  | { id: number; walk: SegmentJob }
  | { id: number; more: Array<string | null>; end?: boolean };

const ready = initSyntax();
const repositories = new Map<string, Repository>();
/** The versions of streamed walks still arriving, by request id. */
const feeds = new Map<number, Feed<string | null>>();
/** Whether a request has arrived: a warm-up in progress stops at once. */
let asked = false;
// The pool starts a batch's stall clock only once the worker says it can parse (see WorkerSlot).
void ready.then(() => {
  parentPort!.postMessage({ ready: true });
  // A serving engine's worker, idle once its grammars are loaded, warms its parser (see warm.ts).
  const languages = (workerData as { warm?: string[] } | null)?.warm ?? [];
  if (languages.length > 0 && !asked) {
    const started = performance.now();
    void warmParser(languages, PARSER_WARM_MS, () => asked).then((parses) => parentPort!.postMessage({ warmed: { parses, ms: performance.now() - started } }));
  }
});

parentPort!.on('message', async (req: Request) => {
  asked = true;
  if ('more' in req) {
    const feed = feeds.get(req.id);
    feed?.push(req.more);
    if (req.end) feed?.end();
    return;
  }
  if ('walk' in req) {
    // Registered before anything is awaited: the versions after the first arrive right behind.
    const ids = new Feed<string | null>();
    ids.push(req.walk.blobs);
    if (req.walk.streamed) feeds.set(req.id, ids);
    else ids.end();
    await ready;
    // A failed walk is answered, not thrown: the caller walks the segment itself.
    try {
      // The caller found the repository.
      let repo = repositories.get(req.walk.cwd);
      if (!repo) repositories.set(req.walk.cwd, (repo = Repository.at(req.walk.cwd, req.walk.prefix)));
      // Started while git lists the first versions.
      repo.prepareReads();
      const walked = (n: number) => parentPort!.postMessage({ id: req.id, walked: n });
      parentPort!.postMessage({ id: req.id, walk: await walkSegment(repo, req.walk, ids, walked) });
    } catch (e) {
      parentPort!.postMessage({ id: req.id, error: e instanceof Error ? e.message : String(e) });
    } finally {
      feeds.delete(req.id);
    }
    return;
  }
  await ready;
  if ('blob' in req) {
    parentPort!.postMessage({ id: req.id, outcome: parseBytes(req.blob.item, req.blob.bytes, req.blob.sha256, 0) });
    return;
  }
  const results: ParseOutcome[] = req.items.map((item) => runParseItem(req.root, req.maxFileBytes, item));
  parentPort!.postMessage({ id: req.id, results });
});
