import { main } from './main.ts';

// A closed pipe (`rift symbol x | head`) ends the program quietly.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

process.exitCode = await main(process.argv.slice(2));
