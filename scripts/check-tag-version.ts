/**
 * Checks a release tag against its package's version, before CI builds or publishes anything.
 *
 *   npm run check-tag-version -- <tag> [--root <dir>]
 *
 * <tag> is `api/v1.2.0` or `refs/tags/api/v1.2.0`. The repository is --root, else
 * $MADA_REPO_ROOT, else the working directory. On a match stdout gets only the version, so CI can
 * capture it. Exit status: 0 match, 1 mismatch or not a release tag, 2 usage error.
 */
import { parseArgs } from 'node:util';
import { checkTagVersion, TagMismatch } from './lib/release-tag.js';

const USAGE = 'usage: npm run check-tag-version -- <tag> [--root <dir>]';

function main(args: string[]): number {
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, options: { root: { type: 'string' } } });
  } catch (error) {
    console.error(`check-tag-version: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const [tag, ...extra] = parsed.positionals;
  if (tag === undefined || tag === '' || extra.length > 0) {
    console.error(`check-tag-version: expected one tag\n${USAGE}`);
    return 2;
  }
  try {
    const checked = checkTagVersion(parsed.values.root ?? process.env.MADA_REPO_ROOT ?? process.cwd(), tag);
    console.error(`${checked.release}/v${checked.version} matches ${checked.dir}/package.json`);
    console.log(checked.version);
    return 0;
  } catch (error) {
    if (!(error instanceof TagMismatch)) throw error;
    console.error(`check-tag-version: ${error.message}`);
    return 1;
  }
}

process.exitCode = main(process.argv.slice(2));
