import { parentPort } from 'node:worker_threads';
import { initSyntax } from '../syntax/runtime.ts';
import { runParseItem, type ParseItem, type ParseOutcome } from './parse-job.ts';

// Worker thread entry: parses batches sent by WorkerPool.

interface Request {
  id: number;
  root: string;
  maxFileBytes: number;
  items: ParseItem[];
}

const ready = initSyntax();
// The pool starts a batch's stall clock only once the worker says it can parse (see WorkerSlot).
void ready.then(() => parentPort!.postMessage({ ready: true }));

parentPort!.on('message', async (req: Request) => {
  await ready;
  const results: ParseOutcome[] = req.items.map((item) => runParseItem(req.root, req.maxFileBytes, item));
  parentPort!.postMessage({ id: req.id, results });
});
