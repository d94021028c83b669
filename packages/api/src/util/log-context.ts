import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Fields for every log line written on behalf of the work in progress (a run's `run_id`), found
 * by code that is shared by all runs and not handed a logger of its own, such as the model
 * client's retry hook.
 */
const context = new AsyncLocalStorage<Readonly<Record<string, unknown>>>();

/** Runs `work` with `fields` added to those of the work around it. */
export function withLogFields<T>(fields: Readonly<Record<string, unknown>>, work: () => T): T {
  return context.run({ ...context.getStore(), ...fields }, work);
}

/** The fields of the work in progress; none outside any. */
export const logFields = (): Readonly<Record<string, unknown>> => context.getStore() ?? {};
