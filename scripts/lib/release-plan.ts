import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ChangelogError, releaseChangelog } from './changelog.js';
import type { Git } from './git.js';
import { PackageVersionError, setPackageVersion } from './package-version.js';
import { compareSemVer, parseSemVer } from './semver.js';

/** The repository is not in a state to release from; nothing has been changed. */
export class ReleaseRefusal extends Error {}

/** Release names (the tag prefix) and where each package lives. */
export const PACKAGES: Readonly<Record<string, string>> = { api: 'packages/api', cli: 'packages/cli' };

export interface FileChange {
  /** Relative to the repository root, with forward slashes, as git names it. */
  path: string;
  before: string;
  after: string;
}

export interface ReleasePlan {
  release: string;
  packageName: string;
  previous: string;
  version: string;
  tag: string;
  branch: string;
  remote: string;
  /** The commit the release commit must sit directly on. */
  parent: string;
  message: string;
  tagMessage: string;
  changes: FileChange[];
}

export interface ReleaseRequest {
  release: string;
  version: string;
  date: string;
  remote?: string;
}

function readPackageFile(root: string, path: string): string {
  const absolute = join(root, path);
  if (!existsSync(absolute)) throw new ReleaseRefusal(`${path} not found`);
  return readFileSync(absolute, 'utf8');
}

function readManifest(path: string, text: string): { name?: string; version?: string } {
  try {
    return JSON.parse(text) as { name?: string; version?: string };
  } catch (error) {
    throw new ReleaseRefusal(`${path} is not valid JSON: ${(error as Error).message}`);
  }
}

function checkRepository(git: Git): { branch: string; parent: string } {
  const branch = git.currentBranch();
  if (branch === undefined) throw new ReleaseRefusal('HEAD is detached: check out the branch to release from');
  const parent = git.head();
  if (parent === undefined) throw new ReleaseRefusal('the repository has no commits yet');
  const changes = git.changes();
  if (changes.length > 0) {
    throw new ReleaseRefusal(`the working tree is not clean; commit or stash first:\n${changes.map((c) => `  ${c}`).join('\n')}`);
  }
  return { branch, parent };
}

function checkVersion(current: string, next: string, path: string): void {
  const currentVersion = parseSemVer(current);
  const nextVersion = parseSemVer(next);
  if (!currentVersion) throw new ReleaseRefusal(`${path} has version "${current}", which is not semantic versioning`);
  if (!nextVersion) throw new ReleaseRefusal(`"${next}" is not a semantic version`);
  if (compareSemVer(nextVersion, currentVersion) <= 0) {
    throw new ReleaseRefusal(`version ${next} is not greater than the current version ${current}`);
  }
}

/** Turns the editors' complaints about a file into a refusal naming the file. */
function inFile<T>(path: string, edit: () => T): T {
  try {
    return edit();
  } catch (error) {
    if (error instanceof ChangelogError || error instanceof PackageVersionError) {
      throw new ReleaseRefusal(`${path}: ${error.message}`);
    }
    throw error;
  }
}

/** Checks everything that can be checked before touching a file, and computes the new files. */
export function planRelease(git: Git, root: string, request: ReleaseRequest): ReleasePlan {
  const dir = PACKAGES[request.release];
  if (dir === undefined) throw new ReleaseRefusal(`unknown package "${request.release}"`);
  const { branch, parent } = checkRepository(git);

  const packagePath = `${dir}/package.json`;
  const changelogPath = `${dir}/CHANGELOG.md`;
  const packageText = readPackageFile(root, packagePath);
  const manifest = readManifest(packagePath, packageText);
  checkVersion(String(manifest.version), request.version, packagePath);

  const tag = `${request.release}/v${request.version}`;
  if (git.tagExists(tag)) throw new ReleaseRefusal(`tag ${tag} already exists`);

  const changelogText = readPackageFile(root, changelogPath);
  const released = inFile(changelogPath, () => releaseChangelog(changelogText, request.version, request.date));
  const packageAfter = inFile(packagePath, () => setPackageVersion(packageText, request.version));
  const packageName = manifest.name ?? request.release;
  return {
    release: request.release,
    packageName,
    previous: String(manifest.version),
    version: request.version,
    tag,
    branch,
    remote: request.remote ?? git.tryRun('config', '--get', `branch.${branch}.remote`) ?? 'origin',
    parent,
    message: `release(${request.release}): ${request.version}`,
    tagMessage: `${packageName} ${request.version}\n\n${released.notes}\n`,
    changes: [
      { path: packagePath, before: packageText, after: packageAfter },
      { path: changelogPath, before: changelogText, after: released.text },
    ],
  };
}
