import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { tempDir } from '../../../../test/helpers/temp-dirs.js';
import { openRepository } from '../../src/db/open.js';
import { CHECKPOINT_COMMITS, WalCheckpoints } from '../../src/db/wal-checkpoints.js';

/**
 * The service's SQLite log is checkpointed by a worker thread every CHECKPOINT_COMMITS commits: the
 * pages reach the database file itself, with the service open, long before its own connection,
 * which would do it on the event loop, checkpoints at its far limit.
 */
describe('SQLite log checkpoints', () => {
  it('copy committed pages into the database file, with the service still open', async () => {
    const path = join(tempDir('mada-wal-'), 'mada.db');
    const repository = await openRepository({ dialect: 'sqlite', path, url: `sqlite:///${path}` });
    onTestFinished(() => repository.close());
    const marker = `marker-${randomBytes(8).toString('hex')}`;

    await repository.audit.append({ at: new Date(), actor: 'system', action: 'user.created', target: marker, detail: {} });
    for (let i = 1; i < CHECKPOINT_COMMITS; i++) await repository.audit.append({ at: new Date(), actor: 'system', action: 'user.created', target: `user:${i}`, detail: {} });

    // About a page per append in the log: the service's own connection would wait for 16,000 (or for the close).
    await vi.waitFor(() => expect(readFileSync(path).includes(marker)).toBe(true), { timeout: 15_000, interval: 50 });
    expect((await repository.audit.list({ after: 0, limit: 10 })).map((entry) => entry.target)).toContain(marker);
  });

  it('hand checkpoints back at the first one that fails, and try no more', async () => {
    const failed = vi.fn();
    const checkpoints = new WalCheckpoints(join(tempDir('mada-wal-'), 'missing.db'), failed);
    onTestFinished(() => checkpoints.close());

    const commits = (n: number) => {
      for (let i = 0; i < n; i++) checkpoints.committed();
    };
    commits(CHECKPOINT_COMMITS);
    await vi.waitFor(() => expect(failed).toHaveBeenCalledTimes(1), { timeout: 15_000, interval: 50 });
    // Commits after the failure start no other checkpoint.
    commits(2 * CHECKPOINT_COMMITS);
    await checkpoints.close();

    expect(failed).toHaveBeenCalledTimes(1);
  });
});
