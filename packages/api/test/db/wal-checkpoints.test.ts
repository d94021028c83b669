import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { tempDir } from '../../../../test/helpers/temp-dirs.js';
import { openRepository } from '../../src/db/open.js';
import { CHECKPOINT_DELAY_MS, WalCheckpoints } from '../../src/db/wal-checkpoints.js';

/**
 * The service's SQLite log is checkpointed by a worker thread a moment after commits: the pages
 * reach the database file itself long before the log holds SQLite's 1,000 (the service's own
 * connection, which would do it on the event loop, only checkpoints past a far limit).
 */
describe('SQLite log checkpoints', () => {
  it('copy committed pages into the database file after a few commits, with the service still open', async () => {
    const path = join(tempDir('mada-wal-'), 'mada.db');
    const repository = await openRepository({ dialect: 'sqlite', path, url: `sqlite:///${path}` });
    onTestFinished(() => repository.close());
    const marker = `marker-${randomBytes(8).toString('hex')}`;

    await repository.audit.append({ at: new Date(), actor: 'system', action: 'user.created', target: marker, detail: {} });

    // A few pages in the log: SQLite's own checkpoint would wait for 1,000 (or for the close).
    await vi.waitFor(() => expect(readFileSync(path).includes(marker)).toBe(true), { timeout: 15_000, interval: 50 });
    expect((await repository.audit.list({ after: 0, limit: 10 })).map((entry) => entry.target)).toContain(marker);
  });

  it('hand checkpoints back at the first one that fails, and try no more', async () => {
    const failed = vi.fn();
    const checkpoints = new WalCheckpoints(join(tempDir('mada-wal-'), 'missing.db'), failed);
    onTestFinished(() => checkpoints.close());

    checkpoints.committed();
    await vi.waitFor(() => expect(failed).toHaveBeenCalledTimes(1), { timeout: 15_000, interval: 50 });
    // A commit after the failure starts no other checkpoint: nothing is tried again after the delay.
    checkpoints.committed();
    await new Promise((resolve) => setTimeout(resolve, 3 * CHECKPOINT_DELAY_MS));

    expect(failed).toHaveBeenCalledTimes(1);
  });
});
