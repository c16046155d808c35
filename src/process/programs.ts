import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

// Programs on PATH: the one lookup the sandbox probe, language engines, execution runtimes and
// the agent's shell permission check share.

/** The absolute path of an executable regular file named `program` on `path`, or null. */
export function findOnPath(program: string, path = process.env.PATH ?? ''): string | null {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, program);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}
