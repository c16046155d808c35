import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

// Deterministic git fixtures: a fixed author and committer, dates one hour apart from a fixed
// epoch, no line-ending conversion, no user or system configuration.

const EPOCH = Date.UTC(2024, 0, 1) / 1000;

export interface GitFixture {
  /** Runs git in the repository and returns its trimmed stdout. */
  git: (...args: string[]) => string;
  /**
   * Writes files (null deletes), commits them all with `message` and returns the full commit id.
   * Commit `n` (from 1) is dated `EPOCH + n` hours.
   */
  commit: (message: string, files: Record<string, string | null>) => string;
}

export function gitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
  return {
    ...env,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: 'Ada Lovelace',
    GIT_AUTHOR_EMAIL: 'ada@example.test',
    GIT_COMMITTER_NAME: 'Ada Lovelace',
    GIT_COMMITTER_EMAIL: 'ada@example.test',
  };
}

/** `git init -b main` in `repo` (created when absent). */
export function gitFixture(repo: string): GitFixture {
  mkdirSync(repo, { recursive: true });
  let n = 0;
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'core.autocrlf=false', ...args], { cwd: repo, env: gitEnv(), encoding: 'utf8' }).trim();
  git('init', '-q', '-b', 'main');
  return {
    git,
    commit(message, files) {
      for (const [path, text] of Object.entries(files)) {
        const abs = join(repo, path);
        if (text === null) rmSync(abs, { force: true });
        else {
          mkdirSync(dirname(abs), { recursive: true });
          writeFileSync(abs, text);
        }
      }
      n++;
      const date = `@${EPOCH + n * 3600} +0000`;
      execFileSync('git', ['-c', 'core.autocrlf=false', 'add', '-A'], { cwd: repo, env: gitEnv() });
      execFileSync('git', ['-c', 'core.autocrlf=false', 'commit', '-q', '--allow-empty', '-m', message], {
        cwd: repo,
        env: { ...gitEnv(), GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date },
      });
      return git('rev-parse', 'HEAD');
    },
  };
}

/** The RFC 3339 committer time of fixture commit `n`. */
export function fixtureTime(n: number): string {
  return new Date((EPOCH + n * 3600) * 1000).toISOString().replace('.000Z', '+00:00');
}
