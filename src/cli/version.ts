import { createRequire } from 'node:module';

/** The package's version: what `--version`, `ready` and the workspace server's lock report. */
export const VERSION: string = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
