/** A signal that aborts when its parent does or when its time is up; `dispose` once the work is done. */
export interface Deadline {
  readonly signal: AbortSignal;
  dispose(): void;
}

/**
 * `parent` with a deadline `ms` from now. Not `AbortSignal.any([parent, AbortSignal.timeout(ms)])`:
 * Node 20 holds the sources of `any` weakly, so a timeout signal held nowhere else is collected
 * at the next garbage collection and its deadline never comes (a tool that read a sparse terabyte
 * file ran on past its timeout). Here the timer holds the controller until it fires or is disposed.
 * The reason on timeout is a `TimeoutError`, as `AbortSignal.timeout` gives.
 */
export function withDeadline(parent: AbortSignal, ms: number): Deadline {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(parent.reason);
  const timer = setTimeout(() => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms);
  if (parent.aborted) controller.abort(parent.reason);
  else parent.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    dispose() {
      clearTimeout(timer);
      parent.removeEventListener('abort', onAbort);
    },
  };
}
