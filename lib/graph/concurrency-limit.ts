/** Runs at most `limit` of the given async functions at once; the rest wait in FIFO order. */
export function concurrencyLimit(limit: number): <T>(fn: () => Promise<T>) => Promise<T> {
  if (!(limit >= 1)) throw new RangeError(`concurrency limit must be >= 1, got ${limit}`);
  let active = 0;
  const waiting: Array<() => void> = [];
  const release = (): void => {
    active--;
    const next = waiting.shift();
    if (next) next();
  };
  return <T>(fn: () => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const start = (): void => {
        active++;
        let p: Promise<T>;
        try {
          p = fn();
        } catch (err) {
          p = Promise.reject(err);
        }
        p.then(resolve, reject).finally(release);
      };
      if (active < limit) start();
      else waiting.push(start);
    });
}
