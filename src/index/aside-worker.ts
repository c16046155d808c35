import { parentPort, workerData } from 'node:worker_threads';
import { Store } from './store.ts';
import { RelationGraph } from './graph/graph.ts';
import { closeBuild, type AsideReply, type AsideRequest } from './aside.ts';

// Worker thread entry: a build's closing work on `.rift/rift.db` over a connection of its own
// (see aside.ts). Each step commits on its own; until the resolve pass commits, the serving
// thread's connection reads the graph as it was.

const request = workerData as AsideRequest;
let reply: AsideReply;
let store: Store | null = null;
try {
  store = Store.openFile(request.file, request.root);
  const graph = new RelationGraph(store.tables());
  if (request.resolve !== null) graph.load(request.resolve.job);
  closeBuild(store, graph, request.finish, request.resolve);
  reply = { ok: true };
} catch (e) {
  const code = (e as { code?: unknown }).code;
  reply = { ok: false, message: e instanceof Error ? e.message : String(e), ...(typeof code === 'string' ? { code } : {}) };
} finally {
  try {
    store?.close();
  } catch {
    // the outcome is what is reported
  }
}
parentPort!.postMessage(reply);
