import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGES } from './release-plan.js';
import { parseSemVer } from './semver.js';

/** The tag does not name a release of a package at the version its package.json holds. */
export class TagMismatch extends Error {}

export interface ReleaseTag {
  release: string;
  version: string;
  /** The package directory, relative to the repository root. */
  dir: string;
}

/** `api/v1.2.0` (or `refs/tags/api/v1.2.0`, as CI names it) split into package and version. */
export function parseReleaseTag(tag: string): ReleaseTag {
  const name = tag.replace(/^refs\/tags\//, '');
  const match = /^([^/]+)\/v(.+)$/.exec(name);
  if (!match) throw new TagMismatch(`"${name}" is not a release tag <package>/v<version>`);
  const release = match[1]!;
  const version = match[2]!;
  const dir = PACKAGES[release];
  if (dir === undefined) throw new TagMismatch(`"${name}" names no known package (known: ${Object.keys(PACKAGES).join(', ')})`);
  if (!parseSemVer(version)) throw new TagMismatch(`"${name}" carries "${version}", which is not a semantic version`);
  return { release, version, dir };
}

/**
 * Checks that the package a tag names has the tag's version in the package.json under `root`
 * (in CI, the checkout of the tagged commit), and returns that version.
 */
export function checkTagVersion(root: string, tag: string): ReleaseTag {
  const parsed = parseReleaseTag(tag);
  const path = `${parsed.dir}/package.json`;
  if (!existsSync(join(root, path))) throw new TagMismatch(`${path} not found`);
  let manifest: { version?: unknown };
  try {
    manifest = JSON.parse(readFileSync(join(root, path), 'utf8')) as { version?: unknown };
  } catch (error) {
    throw new TagMismatch(`${path} is not valid JSON: ${(error as Error).message}`);
  }
  if (manifest.version !== parsed.version) {
    throw new TagMismatch(
      `tag ${parsed.release}/v${parsed.version} does not match ${path}, whose version is ${JSON.stringify(manifest.version)}; ` +
        'release with `npm run release`, which bumps the version before it tags',
    );
  }
  return parsed;
}
