import { describe, expect, it } from 'vitest';
import { sqliteRuntimeWarning } from '../../src/db/sqlite-runtime.js';

describe('the start-up warning about the embedded SQLite database', () => {
  it.each(['20.20.2', '22.23.2', '24.18.1'])('is not given on Node %s', (version) => {
    expect(sqliteRuntimeWarning(version)).toBeUndefined();
  });

  it.each(['24.19.0', '24.21.0', '26.1.0'])('names Node %s and the ways out', (version) => {
    expect(sqliteRuntimeWarning(version)).toMatch(new RegExp(`^Node ${version.replaceAll('.', '\\.')} can abort the service .* Node 20, 22 or 24\\.18, or set DATABASE_URL to PostgreSQL$`));
  });
});
