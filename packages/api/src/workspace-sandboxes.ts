import type { WorkspaceSource } from './agents/run-context.js';
import type { Settings } from './settings.js';
import { toolPathSandbox, workspaceSandbox } from './tool-paths.js';
import type { PathSandbox } from './tools/sandbox/paths.js';
import type { User } from './users/user-directory.js';

/**
 * Each user's workspace as a tool sandbox (TEAMS.md section 9): the user's resolved workspace
 * paths, with what no tool may see or change hidden and protected as for ALLOWED_PATHS. Users whose
 * workspace is ALLOWED_PATHS (local mode, API_KEYS users, stored users given none) share one
 * sandbox, exactly the one every run had before workspaces.
 */
export class WorkspaceSandboxes implements WorkspaceSource {
  private readonly shared: PathSandbox;

  constructor(
    private readonly users: { get(id: string): Promise<User> },
    private readonly settings: Settings,
    private readonly startDir: string,
  ) {
    this.shared = toolPathSandbox(settings, startDir);
  }

  /** Read afresh on every call: an admin's change to the paths applies to the user's next run. */
  async of(userId: string): Promise<PathSandbox> {
    const { workspacePaths } = await this.users.get(userId);
    if (sameList(workspacePaths, this.settings.allowedPaths)) return this.shared;
    return workspaceSandbox(workspacePaths, this.settings, this.startDir);
  }
}

const sameList = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((item, index) => item === b[index]);
