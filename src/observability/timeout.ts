/** A probe that got no answer in time. */
export class TimeoutError extends Error {}

/**
 * `promise`, or a TimeoutError after `ms`: for the probes of /readyz and /metrics, which must
 * answer promptly while a query may wait up to the pool's connection timeout (5 s). The query
 * itself carries on and its outcome is dropped.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
