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

parentPort!.on('message', async (req: Request) => {
  await ready;
  const results: ParseOutcome[] = [];
  const transfer: ArrayBuffer[] = [];
  for (const item of req.items) {
    const r = runParseItem(req.root, req.maxFileBytes, item);
    if (r.ok && r.bytes) {
      // Copy into a standalone buffer so it can be transferred without cloning.
      const copy = new Uint8Array(r.bytes.byteLength);
      copy.set(r.bytes);
      r.bytes = copy;
      transfer.push(copy.buffer);
    }
    results.push(r);
  }
  parentPort!.postMessage({ id: req.id, results }, transfer);
});
