/**
 * The part of pino's logger the service's own modules use. A child carries its bindings on every
 * line it writes: a run's child logger puts `run_id` on everything the run causes.
 */
export interface Log {
  debug(object: object, message: string): void;
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
  child(bindings: Record<string, unknown>): Log;
}
