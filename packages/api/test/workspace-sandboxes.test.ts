import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadSettings, type Settings } from '../src/settings.js';
import { toolPathSandbox } from '../src/tool-paths.js';
import { PathHiddenError, PathOutsideError } from '../src/tools/sandbox/paths.js';
import { UserNotFoundError } from '../src/users/errors.js';
import type { User } from '../src/users/user-directory.js';
import { WorkspaceSandboxes } from '../src/workspace-sandboxes.js';

/** A directory of users as UserDirectory answers: each with the workspace paths it resolved. */
const usersWith = (paths: Record<string, string[]>) => ({
  get: async (id: string): Promise<User> => {
    const workspacePaths = paths[id];
    if (!workspacePaths) throw new UserNotFoundError();
    return { id, role: 'member', disabled: false, createdAt: null, workspacePaths, quotas: { maxConcurrentRuns: 0, maxRunsPerDay: 0, maxTokensPerDay: 0 }, source: 'stored' };
  },
});

describe('WorkspaceSandboxes', () => {
  let base: string;
  let settings: Settings;
  let alice: string;

  beforeEach(() => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'mada-workspace-unit-')));
    alice = join(base, 'alice');
    mkdirSync(alice);
    writeFileSync(join(alice, 'rules.toml'), '[[rules]]\ntool = "bash"\nmatch = "make deploy"\naction = "ask"\n');
    // The service's data, settings and rules inside alice's workspace: still hidden or protected there.
    settings = loadSettings({ DATA_DIR: join(alice, 'data'), APPROVAL_RULES_FILE: join(alice, 'rules.toml'), LLM_BASE_URL: 'http://127.0.0.1:9' }, base);
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it('gives a user whose workspace is ALLOWED_PATHS the very sandbox every run had before', async () => {
    const workspaces = new WorkspaceSandboxes(usersWith({ local: settings.allowedPaths }), settings, alice);
    const shared = toolPathSandbox(settings, alice);
    const workspace = await workspaces.of('local');
    expect([workspace.roots, workspace.hiddenPaths, workspace.protectedFiles]).toEqual([shared.roots, shared.hiddenPaths, shared.protectedFiles]);
    expect(await workspaces.of('local')).toBe(workspace);
  });

  it("confines a user to their own paths, with the service's data hidden and its settings protected", async () => {
    const workspaces = new WorkspaceSandboxes(usersWith({ alice: [alice] }), settings, alice);
    const workspace = await workspaces.of('alice');
    expect(workspace.roots).toEqual([alice]);
    expect(workspace.resolve('notes.txt', alice)).toBe(join(alice, 'notes.txt'));
    expect(() => workspace.resolve(join(base, 'elsewhere.txt'), alice)).toThrow(PathOutsideError);
    expect(() => workspace.resolve('data/mada.db', alice)).toThrow(PathHiddenError);
    expect(() => workspace.resolve('.env', alice)).toThrow(PathHiddenError);
    expect(workspace.isProtectedFile(join(alice, 'rules.toml'))).toBe(true);
  });

  it('reads the paths afresh, and refuses a user it does not know', async () => {
    const paths: Record<string, string[]> = { alice: [alice] };
    const workspaces = new WorkspaceSandboxes(usersWith(paths), settings, alice);
    expect((await workspaces.of('alice')).roots).toEqual([alice]);
    paths.alice = [base];
    expect((await workspaces.of('alice')).roots).toEqual([base]);
    await expect(workspaces.of('nobody')).rejects.toThrow(UserNotFoundError);
  });
});
