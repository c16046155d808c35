import { Readable, Writable } from 'node:stream';
import { ndJsonStream } from '@agentclientprotocol/sdk';
import { AcpServer, type AcpOptions } from './server.ts';

// Wiring for `rift acp`: the ACP agent on stdin/stdout (one JSON-RPC message a line), logs on
// stderr. It runs until the editor closes the connection; then every session is saved and
// closed, its MCP servers and background tasks stopped.

export async function runAcp(o: AcpOptions): Promise<number> {
  const server = new AcpServer(o);
  const connection = server.app().connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>));
  await connection.closed.catch((e: Error) => o.log(`acp: connection closed: ${e.message}`));
  await server.closeAll();
  return 0;
}
