import { GitlinkGuard } from './sandbox/gitlink-guard.js';
import { SandboxProbes } from './sandbox/launcher.js';
import { ProtectedBaselines } from './sandbox/protected-snapshot.js';
import { CensusCoordinator, type SandboxActivityStore } from './sandbox/census-coordinator.js';
import { RepositoryCensus } from './sandbox/repository-census.js';
import { Toolchains } from './sandbox/tool-sandbox.js';
import { SearchBackendChoice } from './search/select.js';

/**
 * What the tools learn of this machine once and then trust: whether the sandbox works here (and
 * its network), where the toolchains it shows live, which search backend runs unconfined, the
 * git repositories under the allowed paths as the service last saw them, and the gitlinks it took
 * out of their indexes. Built at start-up by the composition root (services.ts), never kept in
 * module scope: each service, and each test, has its own, for its whole life.
 */
export interface ToolHost {
  sandboxes: SandboxProbes;
  toolchains: Toolchains;
  searchBackend: SearchBackendChoice;
  /** The census `bash` checks every repository against after each command; the file tools' hard-link refusal reads it. */
  repositories: RepositoryCensus;
  /**
   * `bash` has it check the indexes around each command. Its worker threads start with the first
   * check; the composition root closes them at shutdown.
   */
  gitlinks: GitlinkGuard;
  /** The protected files as they were before the running commands: every command's put-back restores to them. */
  protectedFiles: ProtectedBaselines;
}

export interface ToolHostOptions {
  /**
   * Where service replicas sharing a directory record their `bash` commands and first censuses
   * (the PostgreSQL database); none for one process (SQLite), which needs no more than its census.
   */
  sandboxActivity?: SandboxActivityStore | undefined;
}

export const createToolHost = (options: ToolHostOptions = {}): ToolHost => ({
  sandboxes: new SandboxProbes(),
  toolchains: new Toolchains(),
  searchBackend: new SearchBackendChoice(),
  repositories: new RepositoryCensus({ coordinator: new CensusCoordinator(options.sandboxActivity) }),
  gitlinks: new GitlinkGuard(),
  protectedFiles: new ProtectedBaselines(),
});
