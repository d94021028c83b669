/**
 * Node 24.19 made node::ObjectWrap unregister an environment cleanup hook in its destructor, and
 * better-sqlite3 12 (the last line that builds on Node 20) derives its statements from ObjectWrap:
 * a statement collected by a garbage collection that runs outside JavaScript (idle time, exit)
 * aborts the process. better-sqlite3 13 fixes it but needs Node 22.
 */
const FIRST_AFFECTED = [24, 19] as const;

/** The start-up warning for the embedded SQLite database on this Node version, if it needs one. */
export function sqliteRuntimeWarning(nodeVersion: string): string | undefined {
  const [major = 0, minor = 0] = nodeVersion.split('.').map(Number);
  const affected = major > FIRST_AFFECTED[0] || (major === FIRST_AFFECTED[0] && minor >= FIRST_AFFECTED[1]);
  if (!affected) return undefined;
  return `Node ${nodeVersion} can abort the service while it uses the embedded SQLite database (better-sqlite3 statements collected outside JavaScript); run it on Node 20, 22 or 24.18, or set DATABASE_URL to PostgreSQL`;
}
