import type { Logger as DrizzleLogger } from 'drizzle-orm/logger';

/** With DEBUG=true every statement is echoed (docs/api.md, "Settings": `DEBUG`). */
export function statementLogger(log: (entry: { sql: string; params: unknown[] }) => void): DrizzleLogger {
  return { logQuery: (query, params) => log({ sql: query, params }) };
}
