import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditLog } from '../packages/api/src/audit/audit-log.js';
import { openRepository } from '../packages/api/src/db/open.js';
import { absolute, type Bench } from './harness.js';

const ENTRIES = 10_000;

/**
 * Appending 10,000 audit entries (each in a transaction of its own, as a change writes one) and
 * verifying the whole chain, on SQLite: verification must stay within 2 s at this scale.
 */
const bench: Bench = async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mada-bench-audit-'));
  const repository = await openRepository({ dialect: 'sqlite', path: join(dir, 'mada.db'), url: `sqlite:///${join(dir, 'mada.db')}` });
  try {
    const log = new AuditLog(repository.audit);
    const appendStart = performance.now();
    for (let i = 0; i < ENTRIES; i++) {
      await log.append({ at: new Date(), actor: `user-${i % 50}`, action: 'key.created', target: `key:${i}`, detail: { user: `user-${i % 50}`, name: 'laptop', prefix: 'mada_0000000', expiresAt: null } });
    }
    const appendMs = performance.now() - appendStart;
    const verifyStart = performance.now();
    const verified = await log.verify();
    const verifyMs = performance.now() - verifyStart;
    if (!verified.ok || verified.entries !== ENTRIES) throw new Error(`the chain did not verify: ${JSON.stringify(verified)}`);
    const perEntry = (ms: number) => ((ms * 1000) / ENTRIES).toFixed(1);
    return [
      absolute(
        `verifying ${ENTRIES.toLocaleString('en')} audit entries (SQLite)`,
        'appending them',
        appendMs,
        verifyMs,
        'ms',
        2000,
        `${perEntry(verifyMs)} µs per entry verified, ${perEntry(appendMs)} µs per entry appended`,
      ),
    ];
  } finally {
    await repository.close();
    rmSync(dir, { recursive: true, force: true });
  }
};

export default bench;
