/**
 * The database cannot do the work right now (server down or restarting, connection lost, disk
 * full, locked too long): a condition of the deployment, not of the request, so clients get
 * 503 and may retry. The cause stays for the log; it never reaches a client.
 */
export class DatabaseUnavailableError extends Error {
  constructor(
    /** The driver's own error (never drizzle's wrapper, whose message carries the SQL and parameters). */
    readonly driverError: Error,
  ) {
    super('Database unavailable');
    this.name = 'DatabaseUnavailableError';
  }

  /** What is safe to log: the driver's code and message. */
  get logFields(): { code: unknown; reason: string } {
    return { code: (this.driverError as { code?: unknown }).code, reason: this.driverError.message };
  }
}

/** Socket-level failures of the pg driver (the server is gone or unreachable). */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * PostgreSQL SQLSTATEs: class 08 (connection exception), 57P01..57P03 (administrator or crash
 * shutdown, cannot connect now: a server stopping or starting), 53300 (too many connections).
 */
const isUnavailableSqlState = (code: string): boolean => /^08[0-9A-Z]{3}$/.test(code) || ['57P01', '57P02', '57P03', '53300'].includes(code);

/** better-sqlite3 codes: disk full, I/O failure (any extended IOERR), a lock held past busy_timeout. */
const isUnavailableSqliteCode = (code: string): boolean =>
  code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_BUSY') || code === 'SQLITE_CANTOPEN';

/** pg and pg-pool report a lost or timed-out connection in the message alone, without a code. */
const LOST_CONNECTION = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;

function* causes(error: unknown): Generator<unknown> {
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 8; depth++) {
    yield current;
    current = (current as { cause?: unknown }).cause;
  }
}

function isUnavailable(error: unknown): boolean {
  if (error instanceof DatabaseUnavailableError) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || isUnavailableSqlState(code) || isUnavailableSqliteCode(code))) return true;
  // An AggregateError (connecting to every address of a host) carries the socket errors inside.
  if (error instanceof AggregateError && error.errors.some(isUnavailable)) return true;
  return LOST_CONNECTION.test(error.message);
}

/**
 * The typed error for a driver failure that means the database is unavailable (drizzle wraps
 * driver errors, so the whole cause chain is looked at); undefined for anything else.
 */
export function asDatabaseUnavailable(error: unknown): DatabaseUnavailableError | undefined {
  if (error instanceof DatabaseUnavailableError) return error;
  for (const candidate of causes(error)) if (isUnavailable(candidate)) return new DatabaseUnavailableError(candidate as Error);
  return undefined;
}
