// Bounded concurrency for the tree walks (the walk itself and gitignore discovery).

/**
 * Run queued jobs with at most `concurrency` in flight; a job may enqueue more. Resolves when
 * the queue is drained; the first failure stops scheduling and is rethrown once in-flight
 * jobs have settled.
 */
export async function drainQueue<T>(queue: T[], concurrency: number, run: (job: T) => Promise<void>): Promise<void> {
  let active = 0;
  let failed = false;
  let failure: unknown;
  await new Promise<void>((resolve) => {
    const pump = (): void => {
      while (!failed && active < concurrency && queue.length > 0) {
        const job = queue.pop() as T;
        active++;
        run(job).then(
          () => {
            active--;
            pump();
          },
          (e: unknown) => {
            if (!failed) {
              failed = true;
              failure = e;
            }
            active--;
            pump();
          },
        );
      }
      if (active === 0 && (failed || queue.length === 0)) resolve();
    };
    pump();
  });
  if (failed) throw failure;
}
