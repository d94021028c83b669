import type { GitlinkReport, GitlinkWatch } from './gitlink-guard.js';
import type { ProtectedSnapshot } from './protected-snapshot.js';
import type { CensusReport, RepositoryWatch } from './repository-census.js';

export interface PutBack {
  restored: string[];
  census: CensusReport;
  gitlinkReport: GitlinkReport;
}

/**
 * What the command changed that it may not, put back by each guard in turn: the protected files,
 * the other repositories, the gitlinks. Each guard runs even when one before it failed, so one
 * guard's fault never leaves what another guards planted; the first fault is thrown after all ran.
 * `protectedPaths` are the snapshot's, byte strings (util/byte-path.ts).
 */
export async function putBack(
  snapshot: ProtectedSnapshot,
  protectedPaths: readonly string[],
  repositories: Pick<RepositoryWatch, 'check'> | undefined,
  gitlinks: Pick<GitlinkWatch, 'check'> | undefined,
): Promise<PutBack> {
  const faults: unknown[] = [];
  const guarded = async <T>(check: () => T | Promise<T>, otherwise: T): Promise<T> => {
    try {
      return await check();
    } catch (error) {
      faults.push(error);
      return otherwise;
    }
  };
  const restored = await guarded(() => snapshot.restore(), []);
  const census = repositories === undefined ? NOTHING_IN_CENSUS : await guarded(() => repositories.check(protectedPaths), NOTHING_IN_CENSUS);
  const gitlinkReport = gitlinks === undefined ? NOTHING_IN_GITLINKS : await guarded(() => gitlinks.check(), NOTHING_IN_GITLINKS);
  if (faults.length > 0) throw faults[0];
  return { restored: [...restored, ...census.restored], census, gitlinkReport };
}

const NOTHING_IN_CENSUS: CensusReport = { restored: [], removed: [], overCap: false, maxDirectories: 0 };
const NOTHING_IN_GITLINKS: GitlinkReport = { removed: [], unreadable: [], headMoved: [] };
