import { boundHeapGrowth } from '../core/heap.ts';
import { main } from './main.ts';

// Every rift process (commands, the shared server, agents) keeps its heap near what it holds.
boundHeapGrowth();

// A closed pipe (`rift symbol x | head`) ends the program quietly.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

process.exitCode = await main(process.argv.slice(2));
